/* Unit tests for the /proc/PID/maps parser. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <errno.h>
#include <fcntl.h>

#include "mem/procmaps.h"
#include "readfile.h"
#include "tap.h"

/* Lines as a 6.x kernel prints them (anonymous mappings keep the trailing
 * space after the inode). */
static void
test_good_lines(void)
{
	struct map_entry e;

	tap_ok(procmaps_parse_line("7f9177239000-7f917725f000 r--p 00000000 fe:00 332835"
				   "                     /usr/lib/x86_64-linux-gnu/libc.so.6\n", &e) &&
	       e.start == 0x7f9177239000ull && e.end == 0x7f917725f000ull && e.offset == 0 &&
	       strcmp(e.perms, "r--p") == 0 && !e.deleted &&
	       strcmp(e.path, "/usr/lib/x86_64-linux-gnu/libc.so.6") == 0,
	       "file mapping: addresses, perms, offset and path");

	tap_ok(procmaps_parse_line("7f917725f000-7f91773b5000 r-xp 00026000 fe:00 332835"
				   "                     /usr/lib/x86_64-linux-gnu/libc.so.6", &e) &&
	       e.offset == 0x26000 && strcmp(e.perms, "r-xp") == 0 &&
	       strcmp(e.path, "/usr/lib/x86_64-linux-gnu/libc.so.6") == 0,
	       "file mapping without a newline, non-zero offset");

	tap_ok(procmaps_parse_line("7f9177114000-7f91771d8000 rw-p 00000000 00:00 0 \n", &e) &&
	       e.start == 0x7f9177114000ull && e.end == 0x7f91771d8000ull && e.path[0] == '\0' &&
	       !e.deleted && strcmp(e.perms, "rw-p") == 0,
	       "anonymous mapping (trailing space) has an empty path");
	tap_ok(procmaps_parse_line("7f9177114000-7f91771d8000 rw-p 00000000 00:00 0", &e) &&
	       e.path[0] == '\0',
	       "anonymous mapping without trailing space or newline has an empty path");

	tap_ok(procmaps_parse_line("5641543a3000-5641543c4000 rw-p 00000000 00:00 0"
				   "                          [heap]\n", &e) &&
	       strcmp(e.path, "[heap]") == 0 && e.start == 0x5641543a3000ull,
	       "[heap]");
	tap_ok(procmaps_parse_line("7ffd5e3f1000-7ffd5e3f3000 r-xp 00000000 00:00 0"
				   "                          [vdso]\n", &e) &&
	       strcmp(e.path, "[vdso]") == 0 && strcmp(e.perms, "r-xp") == 0,
	       "[vdso]");
	tap_ok(procmaps_parse_line("7f3c2a000000-7f3c2a200000 rw-p 00000000 00:00 0"
				   "                          [anon:cpython obmalloc]\n", &e) &&
	       strcmp(e.path, "[anon:cpython obmalloc]") == 0,
	       "named anonymous mapping with a space in its name");

	tap_ok(procmaps_parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
				   "                  [vsyscall]\n", &e) &&
	       e.start == 0xffffffffff600000ull && e.end == 0xffffffffff601000ull &&
	       strcmp(e.perms, "--xp") == 0 && strcmp(e.path, "[vsyscall]") == 0,
	       "64-bit addresses with all 16 digits");
	tap_ok(procmaps_parse_line("0-ffffffffffffffff r--s 7fffffffffffffff 00:00 0 /x", &e) &&
	       e.start == 0 && e.end == UINT64_MAX && e.offset == 0x7fffffffffffffffull &&
	       strcmp(e.perms, "r--s") == 0,
	       "extreme values: start 0, end 2^64-1, large offset, shared mapping");
	tap_ok(procmaps_parse_line("00400000-00401000 R-XP 0000ABCD 08:01 12 /bin/x", &e) &&
	       e.start == 0x400000 && e.offset == 0xabcd,
	       "8-digit addresses and upper-case hex");

	tap_ok(procmaps_parse_line("7f00000000-7f00001000 r--p 00000000 fe:00 42"
				   "                         /home/me/My Projects/lib with spaces.so\n",
				   &e) &&
	       strcmp(e.path, "/home/me/My Projects/lib with spaces.so") == 0 && !e.deleted,
	       "path with spaces is kept whole");
	tap_ok(procmaps_parse_line("7f00000000-7f00001000 r--p 00000000 fe:00 42 /tmp/a  b \n",
				   &e) &&
	       strcmp(e.path, "/tmp/a  b ") == 0,
	       "path with double and trailing spaces is kept byte for byte");

	tap_ok(procmaps_parse_line("7f00000000-7f00001000 r-xp 00001000 fe:00 99"
				   "                         /usr/lib/libpython3.15.so.1.0 (deleted)\n",
				   &e) &&
	       e.deleted && strcmp(e.path, "/usr/lib/libpython3.15.so.1.0") == 0,
	       "\" (deleted)\" suffix: flag set, suffix stripped");
	tap_ok(procmaps_parse_line("7f00000000-7f00001000 rw-s 00000000 00:01 1234"
				   "                       /memfd:jit code (deleted)", &e) &&
	       e.deleted && strcmp(e.path, "/memfd:jit code") == 0,
	       "memfd with a space in its name, deleted, no newline");
	tap_ok(procmaps_parse_line("7f00000000-7f00001000 r--p 00000000 fe:00 9 /x (deleted) (deleted)\n",
				   &e) &&
	       e.deleted && strcmp(e.path, "/x (deleted)") == 0,
	       "only one \" (deleted)\" suffix is stripped");
	tap_ok(procmaps_parse_line("7f00000000-7f00001000 r--p 00000000 fe:00 9 /tmp/(deleted)\n",
				   &e) &&
	       !e.deleted && strcmp(e.path, "/tmp/(deleted)") == 0,
	       "\"(deleted)\" without the space is part of the name");
	tap_ok(procmaps_parse_line("7f00000000-7f00001000 r--p 00000000 fe:00 9 /tmp/x (deleted)y\n",
				   &e) &&
	       !e.deleted && strcmp(e.path, "/tmp/x (deleted)y") == 0,
	       "\" (deleted)\" not at the end is part of the name");

	/* A path longer than the buffer is cut, NUL-terminated. */
	char line[1200];
	int n = snprintf(line, sizeof line, "1000-2000 r--p 00000000 fe:00 1 /");
	for (int i = 0; i < 700; i++)
		line[n++] = (char)('a' + i % 26);
	memcpy(line + n, " (deleted)\n", 12);
	tap_ok(procmaps_parse_line(line, &e) && e.deleted &&
	       strlen(e.path) == sizeof e.path - 1 && e.path[0] == '/' &&
	       memcmp(e.path + 1, "abcdefghijklmnopqrstuvwxyz", 26) == 0,
	       "a 701-byte deleted path is cut to %zu bytes", sizeof e.path - 1);

	/* Paths around the buffer size: kept up to 511 bytes, cut beyond. */
	for (size_t plen = sizeof e.path - 2; plen <= sizeof e.path + 1; plen++) {
		n = snprintf(line, sizeof line, "1000-2000 r--p 00000000 fe:00 1 ");
		memset(line + n, 'p', plen);
		line[n + (int)plen] = '\0';
		size_t want = plen < sizeof e.path - 1 ? plen : sizeof e.path - 1;
		tap_ok(procmaps_parse_line(line, &e) && strlen(e.path) == want && !e.deleted,
		       "a %zu-byte path is kept as %zu bytes", plen, want);
	}

	/* The output is cleared between calls. */
	procmaps_parse_line("1000-2000 r--p 00000000 fe:00 1 /old (deleted)", &e);
	tap_ok(procmaps_parse_line("3000-4000 rw-p 00000000 00:00 0 ", &e) && !e.deleted &&
	       e.path[0] == '\0' && e.start == 0x3000,
	       "a parse clears the path and deleted flag of the previous one");
}

/* A line for a TAP description: newlines shown as \n, at most 60 bytes. */
static const char *
printable(const char *s)
{
	static char buf[64];
	size_t o = 0;
	for (; *s && o < 60; s++) {
		if (*s == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}

static void
test_bad_lines(void)
{
	static const char *const bad[] = {
		"",
		"\n",
		"garbage",
		"7f00000000 7f00001000 r--p 00000000 fe:00 1 /x",      /* no dash */
		"7f00000000_7f00001000 r--p 00000000 fe:00 1 /x",      /* wrong separator */
		"-7f00001000 r--p 00000000 fe:00 1 /x",                /* no start */
		"7f00000000- r--p 00000000 fe:00 1 /x",                /* no end */
		"7g00000000-7f00001000 r--p 00000000 fe:00 1 /x",      /* bad hex in start */
		"7f00000000-7f0000z000 r--p 00000000 fe:00 1 /x",      /* bad hex in end */
		"7f00000000-7f00001000 r--p 0000x000 fe:00 1 /x",      /* bad hex in offset */
		"7f00000000-7f00001000 r--p zz fe:00 1 /x",            /* no offset */
		"1ffffffffffffffff-2ffffffffffffffff r--p 0 0:0 0 /x", /* 17 digits */
		"1000-1ffffffffffffffff r--p 0 0:0 0 /x",              /* 17-digit end */
		"1000-2000 r--p 10000000000000000 0:0 0 /x",           /* 17-digit offset */
		"2000-1000 r--p 00000000 fe:00 1 /x",                  /* end before start */
		"7f00000000-7f00001000",                               /* too short */
		"7f00000000-7f00001000\n",
		"7f00000000-7f00001000 ",
		"7f00000000-7f00001000 r-",
		"7f00000000-7f00001000 r-x\n",
		"7f00000000-7f00001000 r-xp",
		"7f00000000-7f00001000 r-xp\n",
		"7f00000000-7f00001000 r-xp ",
		"7f00000000-7f00001000 r-xpx 00000000 fe:00 1 /x",     /* 5 perm chars */
		"7f00000000-7f00001000  r-xp 00000000 fe:00 1 /x",     /* double space */
		"7f00000000-7f00001000 r-xp 00000000",                 /* no dev */
		" 7f00000000-7f00001000 r-xp 00000000 fe:00 1 /x",     /* leading space */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct map_entry e;
		bool ok = procmaps_parse_line(bad[i], &e);
		if (ok)
			tap_diag("accepted: start %llx end %llx perms '%s' offset %llx path '%s'",
				 (unsigned long long)e.start, (unsigned long long)e.end, e.perms,
				 (unsigned long long)e.offset, e.path);
		tap_ok(!ok, "malformed line %zu is rejected: \"%s\"", i, printable(bad[i]));
	}

	/* Every prefix of a good line parses or is rejected, and never reads
	 * past its NUL (an exactly sized heap copy for AddressSanitizer). */
	static const char good[] = "7f9177239000-7f917725f000 r--p 00001000 fe:00 332835"
				   "                     /usr/lib/libc.so.6 (deleted)\n";
	int consistent = 1;
	for (size_t k = 0; k <= sizeof good - 1; k++) {
		char *p = malloc(k + 1);
		if (!p)
			abort();
		memcpy(p, good, k);
		p[k] = '\0';
		struct map_entry e;
		bool ok = procmaps_parse_line(p, &e);
		/* Up to "... r--p 00001000" (no space after the offset) it must
		 * fail; once the offset is followed by a space it may succeed. */
		if (k < 40 && ok) {
			tap_diag("prefix of %zu bytes accepted", k);
			consistent = 0;
		}
		if (ok && (e.start != 0x7f9177239000ull || e.end != 0x7f917725f000ull ||
			   e.offset != 0x1000 || strlen(e.path) > k))
			consistent = 0;
		free(p);
	}
	tap_ok(consistent, "every prefix of a maps line is rejected or parsed consistently");
}

static void
test_parse_text(void)
{
	static const char text[] =
		"55d0c0a00000-55d0c0a01000 r--p 00000000 fe:00 1001                      /usr/bin/python3.15\n"
		"55d0c0a01000-55d0c0c00000 r-xp 00001000 fe:00 1001                      /usr/bin/python3.15\n"
		"this line is garbage\n"
		"55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0                          [heap]\n"
		"\n"
		"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
		"7f0000100000-7f0000200000 r-xp 00000000 fe:00 77                         /opt/my lib/x.so (deleted)\n"
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]";
	struct proc_maps maps;
	struct tt_error err = {0};
	tt_status st = procmaps_parse(text, &maps, &err);
	tap_ok(st == TT_OK && maps.count == 6, "procmaps_parse: 6 good lines of 8 (got %zu)",
	       maps.count);
	if (st == TT_OK && maps.count == 6) {
		tap_ok(strcmp(maps.entries[0].path, "/usr/bin/python3.15") == 0 &&
		       maps.entries[0].start == 0x55d0c0a00000ull &&
		       maps.entries[1].offset == 0x1000 &&
		       strcmp(maps.entries[1].perms, "r-xp") == 0,
		       "procmaps_parse: the executable's two mappings");
		tap_ok(strcmp(maps.entries[2].path, "[heap]") == 0 &&
		       maps.entries[3].path[0] == '\0' &&
		       strcmp(maps.entries[4].path, "/opt/my lib/x.so") == 0 &&
		       maps.entries[4].deleted && !maps.entries[3].deleted,
		       "procmaps_parse: heap, anonymous, deleted path with a space");
		tap_ok(strcmp(maps.entries[5].path, "[stack]") == 0 &&
		       maps.entries[5].end == 0x7ffd00021000ull,
		       "procmaps_parse: last line without a newline");
		bool sorted = true;
		for (size_t i = 1; i < maps.count; i++)
			sorted &= maps.entries[i].start >= maps.entries[i - 1].end;
		tap_ok(sorted, "procmaps_parse: entries stay in file order");
	} else {
		for (int i = 0; i < 4; i++)
			tap_ok(0, "procmaps_parse: (skipped, wrong count)");
	}
	procmaps_free(&maps);
	tap_ok(maps.entries == NULL && maps.count == 0, "procmaps_free clears the list");

	st = procmaps_parse("", &maps, &err);
	tap_ok(st == TT_OK && maps.count == 0, "procmaps_parse: empty text gives no entries");
	procmaps_free(&maps);
	st = procmaps_parse("\n\n\nnot a map\n", &maps, &err);
	tap_ok(st == TT_OK && maps.count == 0, "procmaps_parse: only garbage gives no entries");
	procmaps_free(&maps);

	/* Enough lines to grow the array several times. */
	size_t n = 1000;
	char *big = malloc(n * 80 + 1);
	if (!big)
		abort();
	size_t o = 0;
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(big + o, "%llx-%llx rw-p %08zx 00:00 0 /lib%zu.so\n",
				     (unsigned long long)(0x10000 + i * 0x1000),
				     (unsigned long long)(0x11000 + i * 0x1000), i, i);
	st = procmaps_parse(big, &maps, &err);
	bool ok = st == TT_OK && maps.count == n;
	for (size_t i = 0; ok && i < n; i++) {
		char want[32];
		snprintf(want, sizeof want, "/lib%zu.so", i);
		ok = maps.entries[i].start == 0x10000 + i * 0x1000 && maps.entries[i].offset == i &&
		     strcmp(maps.entries[i].path, want) == 0;
	}
	tap_ok(ok, "procmaps_parse: 1000 lines all kept in order");
	procmaps_free(&maps);
	free(big);
}

static int a_static_variable = 42;

static void
test_read_self(void)
{
	struct proc_maps maps;
	struct tt_error err = {0};
	tt_status st = procmaps_read(getpid(), &maps, &err);
	tap_ok(st == TT_OK && maps.count > 5, "procmaps_read of this process: %zu mappings (%s)",
	       maps.count, st == TT_OK ? "ok" : err.msg);
	int local = 0;
	uintptr_t data = (uintptr_t)&a_static_variable, stack = (uintptr_t)&local;
	bool found_data = false, found_stack = false;
	for (size_t i = 0; st == TT_OK && i < maps.count; i++) {
		const struct map_entry *e = &maps.entries[i];
		if (data >= e->start && data < e->end && e->perms[0] == 'r' && e->perms[1] == 'w')
			found_data = true;
		if (stack >= e->start && stack < e->end && e->perms[1] == 'w')
			found_stack = true;
	}
	tap_ok(found_data && found_stack,
	       "procmaps_read: a static variable and a local lie in writable mappings");
	if (st == TT_OK)
		procmaps_free(&maps);
	(void)a_static_variable;

	st = procmaps_read(0x3ffffff0, &maps, &err);
	tap_ok(st == TT_ENOPROC, "procmaps_read of a pid that does not exist is TT_ENOPROC (%d)",
	       (int)st);
}

static void
test_basename(void)
{
	tap_ok(strcmp(procmaps_basename("/usr/lib/x86_64-linux-gnu/libpython3.15.so.1.0"),
		      "libpython3.15.so.1.0") == 0, "basename of a library path");
	tap_ok(strcmp(procmaps_basename("/usr/bin/python3.13"), "python3.13") == 0,
	       "basename of an executable path");
	tap_ok(strcmp(procmaps_basename("python3"), "python3") == 0, "basename without a slash");
	tap_ok(strcmp(procmaps_basename(""), "") == 0, "basename of the empty string");
	tap_ok(strcmp(procmaps_basename("/"), "") == 0, "basename of \"/\" is empty");
	tap_ok(strcmp(procmaps_basename("/a/b/"), "") == 0, "basename of a trailing slash");
	tap_ok(strcmp(procmaps_basename("[heap]"), "[heap]") == 0, "basename of [heap]");
	tap_ok(strcmp(procmaps_basename("/opt/my lib/x y.so"), "x y.so") == 0,
	       "basename with spaces");
	const char *p = "/a/bc";
	tap_ok(procmaps_basename(p) == p + 3, "basename points into its argument");
}

/* read_fd_whole, which procmaps_read (and the kernel-wait and source
 * readers) read through: lengths, the NUL, the cut. */
static char *
whole(const char *path, size_t max, size_t *len, bool *cut)
{
	int fd = open(path, O_RDONLY);
	char *b = read_fd_whole(fd, max, len, cut);
	close(fd);
	return b;
}

static void
test_read_whole(void)
{
	char path[] = "/tmp/tt-readfile-XXXXXX";
	int fd = mkstemp(path);
	static char data[100000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)('a' + i % 26);
	bool wrote = fd >= 0 && write(fd, data, sizeof data) == (ssize_t)sizeof data;
	if (fd >= 0)
		close(fd);
	size_t len = 0;
	bool cut = true;
	char *b = wrote ? whole(path, 1 << 20, &len, &cut) : NULL;
	tap_ok(b && len == sizeof data && !cut && memcmp(b, data, len) == 0 && b[len] == '\0',
	       "a 100,000-byte file whole, NUL after it (%zu bytes)", len);
	free(b);
	b = wrote ? whole(path, sizeof data, &len, &cut) : NULL;
	tap_ok(b && len == sizeof data && !cut, "exactly max bytes: not cut");
	free(b);
	b = wrote ? whole(path, 50000, &len, &cut) : NULL;
	tap_ok(b && len == 50000 && cut && b[len] == '\0' && memcmp(b, data, len) == 0,
	       "past max: the first max bytes, said cut");
	free(b);
	b = whole("/proc/self/nonexistent-file", 100, &len, &cut);
	tap_ok(!b && errno == EBADF, "no file: NULL with errno (%d)", errno);
	if (wrote)
		unlink(path);
}

int
main(void)
{
	test_read_whole();
	test_good_lines();
	test_bad_lines();
	test_parse_text();
	test_read_self();
	test_basename();
	return tap_done();
}
