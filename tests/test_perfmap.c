/* Unit tests for perfmap: a runtime's perf map parsed, looked up, and read
 * from a process's root; hostile and malformed lines skipped. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "native/perfmap.h"
#include "tap.h"

static const char *
look(struct perfmap *m, uint64_t addr)
{
	const char *s = perfmap_lookup(m, addr, NULL);
	return s ? s : "(none)";
}

int
main(void)
{
	struct perfmap m;
	perfmap_init(&m);
	const char *text =
		"7f8a302da000 c py::IncrementalDecoder.__init__:<frozen codecs>\n"
		"7f8a302da020 20 py::inner:/tmp/np/hot.py\n"
		"0x7f8a302db000 0x100 [jit] loop\r\n"
		"zz 10 not hex\n"
		"7f8a302dc000 0 empty size\n"
		"ffffffffffffffff 10 wraps past the end\n"
		"7f8a302dd000 10\n"
		"12345678901234567 10 seventeen digits\n"
		"7f8a302de000 10 evil\x1b[31mred\x07\n"
		"7f8a302da020 20 py::reused:/tmp/np/hot.py\n"
		"7f8a302df000 10 no newline yet";
	size_t used = perfmap_parse(&m, text, strlen(text));
	tap_ok(used == strlen(text) - strlen("7f8a302df000 10 no newline yet"),
	       "whole lines parsed, the last one without its newline left: %zu bytes", used);
	tap_ok(m.n == 5, "five good lines of eleven kept: %u", m.n);
	tap_ok(strcmp(look(&m, 0x7f8a302da000), "py::IncrementalDecoder.__init__:<frozen codecs>") == 0 &&
	       strcmp(look(&m, 0x7f8a302da00b), "py::IncrementalDecoder.__init__:<frozen codecs>") == 0,
	       "the first piece of code, at its start and its last byte");
	tap_ok(strcmp(look(&m, 0x7f8a302da00c), "(none)") == 0, "past its size: none");
	tap_ok(strcmp(look(&m, 0x7f8a302da030), "py::reused:/tmp/np/hot.py") == 0,
	       "code named twice: the later line: %s", look(&m, 0x7f8a302da030));
	uint64_t start = 0;
	perfmap_lookup(&m, 0x7f8a302db0ff, &start);
	tap_ok(strcmp(look(&m, 0x7f8a302db0ff), "[jit] loop") == 0 && start == 0x7f8a302db000,
	       "0x prefixes and a CR end: \"%s\" from %#llx", look(&m, 0x7f8a302db0ff),
	       (unsigned long long)start);
	tap_ok(strcmp(look(&m, 0x7f8a302de005), "evil?[31mred?") == 0,
	       "control bytes in a name made '?': \"%s\"", look(&m, 0x7f8a302de005));
	tap_ok(strcmp(look(&m, 0xfffffffffffffff8), "(none)") == 0 &&
	       strcmp(look(&m, 0x1000), "(none)") == 0 && strcmp(look(&m, 0x7f8a302dc000), "(none)") == 0,
	       "wrapping, empty and absent code: none");
	const char *rest = "7f8a302df000 10 no newline yet\n";
	perfmap_parse(&m, rest, strlen(rest));
	tap_ok(strcmp(look(&m, 0x7f8a302df00f), "no newline yet") == 0,
	       "the last line once its newline came");

	char longline[4096];
	memset(longline, 'n', sizeof longline);
	memcpy(longline, "1000 10 ", 8);
	longline[sizeof longline - 1] = '\n';
	perfmap_parse(&m, longline, sizeof longline);
	tap_ok(strlen(look(&m, 0x1000)) == PERFMAP_NAME_MAX, "a long name cut to %d bytes",
	       PERFMAP_NAME_MAX);
	perfmap_free(&m);

	/* Many lines in reverse order: sorted once, each found. */
	perfmap_init(&m);
	char line[64];
	for (int i = 5000; i > 0; i--) {
		snprintf(line, sizeof line, "%x 8 f%d\n", i * 16, i);
		perfmap_parse(&m, line, strlen(line));
	}
	bool all = true;
	for (int i = 1; i <= 5000 && all; i++) {
		snprintf(line, sizeof line, "f%d", i);
		all = strcmp(look(&m, (uint64_t)i * 16 + 7), line) == 0 &&
		      strcmp(look(&m, (uint64_t)i * 16 + 8), "(none)") == 0;
	}
	tap_ok(all, "5,000 pieces given in reverse: each found, the gaps none");
	perfmap_free(&m);

	/* Our own map, read from our root as a target's would be, in two parts. */
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f) {
		tap_ok(0, "cannot write %s", path);
		return tap_done();
	}
	fputs("5000 10 first\n6000 10 sec", f);
	fflush(f);
	perfmap_init(&m);
	bool read1 = perfmap_update(&m, getpid());
	char file[32];
	snprintf(file, sizeof file, "perf-%d.map", (int)getpid());
	tap_ok(read1 && strcmp(look(&m, 0x5000), "first") == 0 && strcmp(look(&m, 0x6000), "(none)") == 0 &&
	       strcmp(m.file, file) == 0,
	       "read from /tmp inside our root: the whole line; the file named %s", m.file);
	fputs("ond\n", f);
	fclose(f);
	bool read2 = perfmap_update(&m, getpid());
	tap_ok(read2 && strcmp(look(&m, 0x6000), "second") == 0 && m.n == 2,
	       "read again once it grew: the rest, once: %u entries", m.n);
	unlink(path);
	if (mkfifo(path, 0600) == 0) {
		struct perfmap fifo;
		perfmap_init(&fifo);
		tap_ok(!perfmap_update(&fifo, getpid()), "a FIFO in its place: not read, no hang");
		perfmap_free(&fifo);
		unlink(path);
	} else {
		tap_ok(0, "cannot make a FIFO at %s", path);
	}
	perfmap_free(&m);
	return tap_done();
}
