/* Core files (dump --core): the headers and notes (NT_FILE's mappings,
 * NT_PRSTATUS's threads and registers, NT_PRPSINFO, NT_AUXV), then its
 * memory as a target reads it, and attaching to the process it holds. The
 * mapped files are looked for under a root that does not exist: only the
 * core's own bytes are input.
 *
 * parsers: src/target/mem/corefile.c src/target/target.c
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "mem/corefile.h"
#include "target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file(data, size, path, sizeof path);
	struct corefile c;
	struct tt_error err;
	if (corefile_open(&c, path, "/nonexistent-fuzz-root", &err) == TT_OK) {
		fuzz_check_str(c.fname, sizeof c.fname);
		fuzz_check_str(c.psargs, sizeof c.psargs);
		for (size_t i = 0; i < c.nmaps; i++) {
			fuzz_check(c.maps[i].path != NULL);
			corefile_check_map(&c, i);
		}
		char root[512];
		corefile_files_root(&c, root, sizeof root);
		fuzz_check_str(root, sizeof root);
		struct remote_backend b = corefile_backend(&c);
		for (size_t i = 0; i < c.nloads && i < 16; i++) {
			uint8_t buf[64];
			struct remote_seg seg = {c.loads[i].vaddr, buf, sizeof buf};
			b.readv(b.ctx, &seg, 1);
			corefile_anon_code(&c, c.loads[i].vaddr);
		}
		struct target t;
		target_attach_core(&t, &c, &err);
		corefile_close(&c);
	}
	close(fd);
	return 0;
}
