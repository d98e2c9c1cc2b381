/* Core files (dump --core): the headers and notes (NT_FILE's mappings,
 * NT_PRSTATUS's threads and registers, NT_PRPSINFO, NT_AUXV), then its
 * memory as a target reads it, and attaching to the process it holds.
 *
 * The mapped files are looked for under a root this target makes for each
 * input from the input's own bytes: an input may end with pieces of files
 * (see below), written there sparsely. With none, the root is empty and
 * only the core's bytes are input; with the pieces of the interpreter a
 * core maps (its ELF header, section table and section names), attaching
 * reads its .PyRuntime section, the core's copy of the runtime there and
 * the build IDs of the files against the core's copies of their first
 * pages; with greenlet's module's symbols and version file, the greenlet
 * reader finds its objects in the core's writable segments.
 *
 *   input:  CORE  PIECE...  FILES_AT(u64 LE)  "TTCFILE1"
 *   PIECE:  PATHLEN(u16 LE)  PATH  OFFSET(u64 LE)  LEN(u32 LE)  BYTES
 *
 * parsers: src/target/mem/corefile.c src/target/target.c src/target/async/greenlets.c
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "mem/corefile.h"
#include "readall.h"
#include "target.h"

#define FILES_MAGIC "TTCFILE1"
#define MAX_MADE 64          /* files and directories made for one input */
#define MAX_FILE_END (64u << 20)

static char root[64];
static char made[MAX_MADE][1024];   /* what to remove, in the order made */
static size_t nmade;

static void
remove_root(void)
{
	if (root[0])
		rmdir(root);
}

/* Empty the root again: what the last input made, newest first. */
static void
clear_root(void)
{
	while (nmade > 0) {
		const char *p = made[--nmade];
		if (unlink(p) != 0)
			rmdir(p);
	}
}

static uint64_t
le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* root + path made (its directories with it); false when it cannot be or
 * the path leaves the root. */
static bool
make_path(const char *path, char *full, size_t len)
{
	if (path[0] != '/' || strstr(path, "/../") || strstr(path, "//") ||
	    (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0))
		return false;
	if ((size_t)snprintf(full, len, "%s%s", root, path) >= len)
		return false;
	for (char *s = full + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		bool fresh = mkdir(full, 0700) == 0;
		if (fresh && nmade < MAX_MADE)
			snprintf(made[nmade++], sizeof made[0], "%s", full);
		*s = '/';
		if (!fresh && errno != EEXIST)
			return false;
	}
	return true;
}

/* Writes the pieces in data[0, size) under the root. */
static void
write_pieces(const uint8_t *data, size_t size)
{
	size_t at = 0;
	while (size - at >= 2 && nmade < MAX_MADE) {
		size_t plen = (size_t)le(data + at, 2);
		at += 2;
		if (plen == 0 || plen > 400 || size - at < plen + 12)
			return;
		char path[512], full[1024];
		memcpy(path, data + at, plen);
		path[plen] = '\0';
		at += plen;
		uint64_t off = le(data + at, 8);
		size_t len = (size_t)le(data + at + 8, 4);
		at += 12;
		if (len > size - at || off > MAX_FILE_END || len > MAX_FILE_END - off ||
		    memchr(path, '\0', plen) || !make_path(path, full, sizeof full))
			return;
		int fd = open(full, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return;
		/* recorded before it is known whether it was new: unlinking a
		 * file twice is harmless */
		snprintf(made[nmade++], sizeof made[0], "%s", full);
		bool whole = pwrite(fd, data + at, len, (off_t)off) == (ssize_t)len;
		close(fd);
		if (!whole)
			return;
		at += len;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!root[0]) {
		snprintf(root, sizeof root, "/tmp/tt-fuzz-core-XXXXXX");
		if (!mkdtemp(root))
			abort();
		atexit(remove_root);
	}
	size_t core_size = size;
	if (size >= 16 && memcmp(data + size - 8, FILES_MAGIC, 8) == 0) {
		uint64_t files_at = le(data + size - 16, 8);
		if (files_at <= size - 16) {
			core_size = (size_t)files_at;
			write_pieces(data + files_at, size - 16 - (size_t)files_at);
		}
	}
	char path[64];
	int fd = fuzz_file(data, core_size, path, sizeof path);
	struct corefile c;
	struct tt_error err;
	if (corefile_open(&c, path, root, &err) == TT_OK) {
		fuzz_check_str(c.fname, sizeof c.fname);
		fuzz_check_str(c.psargs, sizeof c.psargs);
		size_t same = 0;
		for (size_t i = 0; i < c.nmaps; i++) {
			fuzz_check(c.maps[i].path != NULL);
			same += corefile_check_map(&c, i) == CORE_FILE_SAME;
		}
		char files_root[512];
		corefile_files_root(&c, files_root, sizeof files_root);
		fuzz_check_str(files_root, sizeof files_root);
		struct remote_backend b = corefile_backend(&c);
		for (size_t i = 0; i < c.nloads && i < 16; i++) {
			uint8_t buf[64];
			struct remote_seg seg = {c.loads[i].vaddr, buf, sizeof buf};
			b.readv(b.ctx, &seg, 1);
			corefile_anon_code(&c, c.loads[i].vaddr);
		}
		struct target t;
		tt_status st = target_attach_core(&t, &c, &err);
		uint32_t n = 0;
		if (st == TT_OK) {
			struct target_thread threads[64];
			target_list_threads(&t, threads, 64, &n);
			fuzz_check(n <= 64);
		}
		fuzz_say("core: %zu mappings (%zu files as the core has them), %zu segments; "
			 "attach: %s%s; %u threads\n", c.nmaps, same, c.nloads,
			 st == TT_OK ? "ok, " : err.msg, st == TT_OK ? t.binary : "", n);
		if (st == TT_OK)
			readall(&t, &(struct readall_at){0}, READ_GREENLETS);
		corefile_close(&c);
	}
	close(fd);
	clear_root();
	return 0;
}
