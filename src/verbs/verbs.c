#include "config.h"

#include <string.h>

#include "bench.h"
#include "dump.h"
#include "info.h"
#include "record.h"
#include "replay.h"
#include "textbuf.h"
#include "verbs.h"
#include "watch.h"

static const struct verb VERBS[] = {
	{"dump", dump_main, "dump -p PID [--json]", "print the Python stack of every thread once"},
	{"record", record_main, "record -o FILE -- CMD",
	 "run CMD and write its profile (a flame graph, pprof,\n"
	 "...: record --help); or record -p PID -o FILE"},
	{"replay", replay_main, "replay FILE -o OUTPUT", "write a recording's profile in any format"},
	{"bench", bench_main, "bench -p PID [-d S]",
	 "sample as fast as possible and report engine figures"},
	{"info", info_main, "info -p PID", "print the interpreter found and the offsets used"},
	{"watch", watch_main, "watch -p PID [-o DIR]",
	 "watch for good; write a report when a thread is stuck"},
};
#define NVERBS (sizeof VERBS / sizeof VERBS[0])

const struct verb *
verb_find(const char *name)
{
	for (size_t i = 0; i < NVERBS; i++)
		if (strcmp(VERBS[i].name, name) == 0)
			return &VERBS[i];
	return NULL;
}

const char *
verbs_names(void)
{
	static char names[128];
	if (!names[0]) {
		struct textbuf t;
		textbuf_init(&t, names, sizeof names);
		for (size_t i = 0; i < NVERBS; i++)
			textbuf_printf(&t, "%s%s", i ? ", " : "", VERBS[i].name);
	}
	return names;
}

void
verbs_print_help(FILE *f)
{
	fputs("Verbs:\n", f);
	for (size_t i = 0; i < NVERBS; i++) {
		fprintf(f, "  %-24s ", VERBS[i].synopsis);
		for (const char *s = VERBS[i].summary; *s; s++) {
			fputc(*s, f);
			if (*s == '\n')
				fprintf(f, "%27s", "");
		}
		fputc('\n', f);
	}
	fputs("Run 'tachyon-top VERB --help' for a verb's options.\n", f);
}
