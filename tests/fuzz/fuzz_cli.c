/* The command line: the main command's options (live_parse, which the live
 * view and --batch take) and the parsers of option values every verb
 * shares (pids, durations, thresholds, rates, modes, sorts, formats, file
 * names' formats). Input: words separated by NUL or newline bytes.
 *
 * parsers: src/verbs/live.c src/verbs/cli.c src/sampling/sampler.c src/sampling/aggregate.c src/export/export.c
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "cli.h"
#include "export.h"
#include "fuzz.h"
#include "live.h"
#include "sampler.h"

#define MAX_WORDS 32

static void
each_word(const char *w)
{
	pid_t pid;
	double v;
	enum agg_mode mode;
	enum agg_sort sort;
	enum export_format fmt;
	enum profile_filter filter;
	cli_parse_pid(w, &pid);
	if (cli_parse_seconds(w, 3600, &v))
		fuzz_check(v >= 0 && v <= 3600);
	cli_parse_threshold("watch ", "--stuck", w, &v);
	cli_parse_threshold(NULL, "--loop-blocked", w, &v);
	sampler_parse_rate(w, &v);
	agg_mode_parse(w, &mode);
	agg_sort_parse(w, &sort);
	if (export_parse_format(w, &fmt))
		fuzz_check(fmt < EXPORT_FORMAT_COUNT);
	export_parse_mode(w, &filter);
	fuzz_check(export_format_for_path(w) < EXPORT_FORMAT_COUNT);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char *argv[MAX_WORDS + 2];
	int argc = 0;
	argv[argc++] = "tachyon-top";
	for (char *p = text; argc <= MAX_WORDS;) {
		argv[argc++] = p;
		size_t n = strcspn(p, "\n");
		if (p + n >= text + size)
			break;
		p[n] = '\0';
		p += n + 1;
	}
	/* NULs in the bytes end words too: argv[i] is what strlen sees */
	argv[argc] = NULL;
	/* usage errors go to stderr; keep the run's log to its findings */
	FILE *saved = stderr;
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	if (null)
		stderr = null;
	for (int i = 1; i < argc; i++)
		each_word(argv[i]);
	struct live_options o;
	int rc = live_parse(argc, argv, &o);
	stderr = saved;
	if (rc == 0)
		fuzz_check(o.limit > 0 && o.delay_s >= 0.05);
	free(text);
	return 0;
}
