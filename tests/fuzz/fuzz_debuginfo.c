/* Debug information (DWARF, through elfutils' libdw) as the native unwinder
 * reads it: where the evaluator function keeps its frame and instruction
 * pointer, from the location lists of its variables. Input: the address
 * asked about (8 bytes), then an ELF file with its debug information.
 *
 * parsers: src/target/native/varloc.c
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "native/varloc.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	uint64_t addr;
	memcpy(&addr, data, 8);
	char path[64];
	int fd = fuzz_file(data + 8, size - 8, path, sizeof path);
	static const char *const names[VARLOC_VARS] = {"frame", "next_instr"};
	/* no debug file is looked for elsewhere: only the input's own */
	char debug_path[] = "/nonexistent-fuzz-debug";
	struct varloc_table t;
	if (varloc_table_read(&t, path, debug_path, addr, "_PyEval_EvalFrameDefault", names)) {
		fuzz_say("found: %u and %u spans\n", t.nspans[0], t.nspans[1]);
		for (int v = 0; v < VARLOC_VARS; v++) {
			for (uint32_t i = 0; i < t.nspans[v]; i++) {
				fuzz_check(i == 0 || t.spans[v][i - 1].lo <= t.spans[v][i].lo);
				varloc_table_at(&t, v, t.spans[v][i].lo);
			}
			varloc_table_at(&t, v, addr);
		}
	}
	varloc_table_free(&t);
	close(fd);
	return 0;
}
