#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "live.h"
#include "stuckwatch.h"
#include "verbs.h"

void
live_print_help(void)
{
	printf("Usage: tachyon-top [OPTION]... -p PID\n"
	       "  or:  tachyon-top [OPTION]... -- COMMAND [ARG]...\n"
	       "  or:  tachyon-top VERB [OPTION]...\n"
	       "Show, live, where a running CPython 3.11-3.15 process spends its time: per\n"
	       "function, line and thread, with GIL and CPU state. The process is read from\n"
	       "the outside; it is never stopped or written to.\n"
	       "\n"
	       "Live view options:\n"
	       "  -p, --pid PID            attach to process PID\n"
	       "  -r, --rate RATE          samples per second and process: 1000, 10k, max\n"
	       "                           (default 2000; 100 with --native)\n"
	       "  -m, --mode MODE          wall, cpu, gil or exception (default wall)\n"
	       "  -s, --sort COLUMN        own, total, name or file (default own)\n"
	       "  -l, --lines              aggregate by line instead of by function\n"
	       "      --delay SECONDS      refresh interval (default 1)\n"
	       "  -d, --duration SECONDS   stop sampling after SECONDS\n"
	       "      --theme NAME|PATH    colour theme (default, light, mono, high-contrast)\n"
	       "      --no-color           no colours (also when NO_COLOR is set)\n"
	       "      --output FILE        where a started COMMAND's output goes\n"
	       "                           (default /dev/null)\n"
	       "      --no-subprocesses    sample the process alone (by default its Python\n"
	       "                           descendants are followed too, as they appear, also\n"
	       "                           under a PID that is not Python: a shell, tini)\n"
	       "      --async              asyncio: a task's samples go under its await chain\n"
	       "                           (the tasks awaiting it, as `task NAME` frames), not\n"
	       "                           under the event loop (Python 3.14 or newer)\n"
	       "      --native             also each thread's native (C) frames, in order with\n"
	       "                           its Python ones (a running thread's from the\n"
	       "                           kernel's perf sample, which the target pays for)\n"
	       "      --export-dir DIR     where the e key writes profiles (default: the working\n"
	       "                           directory, else /tmp)\n"
	       "      --stuck SECONDS, --loop-blocked MS, --spin SECONDS\n"
	       "                           the threads view marks a thread STUCK, LOOP BLOCKED\n"
	       "                           or SPINNING as `watch` would report it (defaults 30,\n"
	       "                           500, 60)\n"
	       "  -b, --batch              print tables as plain text instead of the live screen\n"
	       "  -n, --iterations N       batch: stop after N tables\n"
	       "      --limit N            batch: rows per table (default 25)\n"
	       "      --tree               batch: print the call tree (indented), not the table\n"
	       "      --threshold PCT      batch --tree: fold children below PCT%% (default 1)\n"
	       "  -h, --help               show this help and exit\n"
	       "  -V, --version            show the version and exit\n"
	       "\n");
	verbs_print_help(stdout);
	printf("\n"
	       "Reading another process needs root, CAP_SYS_PTRACE, or\n"
	       "kernel.yama.ptrace_scope=0 for processes of the same user.\n"
	       "Report bugs to the project's issue tracker.\n");
}

enum { OPT_DELAY = 256, OPT_THEME, OPT_NOCOLOR, OPT_OUTPUT, OPT_LIMIT, OPT_TREE, OPT_THRESHOLD,
       OPT_EXPORT_DIR, OPT_NOSUB, OPT_ASYNC, OPT_NATIVE, OPT_STUCK, OPT_LOOP, OPT_SPIN };
static const struct option live_opts[] = {
	{"pid", required_argument, NULL, 'p'},
	{"rate", required_argument, NULL, 'r'},
	{"mode", required_argument, NULL, 'm'},
	{"sort", required_argument, NULL, 's'},
	{"lines", no_argument, NULL, 'l'},
	{"delay", required_argument, NULL, OPT_DELAY},
	{"duration", required_argument, NULL, 'd'},
	{"theme", required_argument, NULL, OPT_THEME},
	{"no-color", no_argument, NULL, OPT_NOCOLOR},
	{"output", required_argument, NULL, OPT_OUTPUT},
	{"export-dir", required_argument, NULL, OPT_EXPORT_DIR},
	{"batch", no_argument, NULL, 'b'},
	{"iterations", required_argument, NULL, 'n'},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{"no-subprocesses", no_argument, NULL, OPT_NOSUB},
	{"async", no_argument, NULL, OPT_ASYNC},
	{"native", no_argument, NULL, OPT_NATIVE},
	{"tree", no_argument, NULL, OPT_TREE},
	{"threshold", required_argument, NULL, OPT_THRESHOLD},
	{"stuck", required_argument, NULL, OPT_STUCK},
	{"loop-blocked", required_argument, NULL, OPT_LOOP},
	{"spin", required_argument, NULL, OPT_SPIN},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* One option c (with getopt's optarg) into o: 0, or what live_parse
 * returns for it (-1 after help or the version, else a usage error);
 * text is the option as typed. */
static int
live_option(int c, const char *text, struct live_options *o)
{
	switch (c) {
	case 'p':
		if (!cli_parse_pid(optarg, &o->session.pid))
			return cli_usage_error(NULL, "invalid pid '%s'", optarg);
		return 0;
	case 'r':
		if (!sampler_parse_rate(optarg, &o->session.rate_hz))
			return cli_usage_error(NULL, "invalid rate '%s'", optarg);
		o->rate_given = true;
		return 0;
	case 'm':
		if (!agg_mode_parse(optarg, &o->mode))
			return cli_usage_error(NULL, "unknown mode '%s' (wall, cpu, gil, exception)",
					       optarg);
		return 0;
	case 's':
		if (!agg_sort_parse(optarg, &o->sort))
			return cli_usage_error(NULL, "unknown sort '%s' (own, total, name, file)",
					       optarg);
		return 0;
	case 'l': o->by_line = true; return 0;
	case OPT_DELAY:
		if (!cli_parse_seconds(optarg, 3600, &o->delay_s) || o->delay_s < 0.05)
			return cli_usage_error(NULL, "invalid delay '%s' (0.05 to 3600 s)", optarg);
		return 0;
	case 'd':
		if (!cli_parse_seconds(optarg, 7 * 86400.0, &o->session.duration_s))
			return cli_usage_error(NULL, "invalid duration '%s'", optarg);
		return 0;
	case OPT_THEME: o->theme = optarg; return 0;
	case OPT_NOCOLOR: o->monochrome = true; return 0;
	case OPT_OUTPUT: o->session.child_output = optarg; return 0;
	case OPT_NOSUB: o->session.no_subprocesses = true; return 0;
	case OPT_ASYNC: o->session.async_aware = true; return 0;
	case OPT_NATIVE: o->session.native = true; return 0;
	case OPT_EXPORT_DIR: {
		struct stat st;
		if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode))
			return cli_usage_error(NULL, "--export-dir %s: not a directory", optarg);
		o->export_dir = optarg;
		return 0;
	}
	case 'b': o->batch = true; return 0;
	case 'n': {
		char *end;
		o->iterations = strtol(optarg, &end, 10);
		if (*end || o->iterations <= 0)
			return cli_usage_error(NULL, "invalid iteration count '%s'", optarg);
		return 0;
	}
	case OPT_LIMIT: {
		char *end;
		long v = strtol(optarg, &end, 10);
		if (*end || v <= 0 || v > 100000)
			return cli_usage_error(NULL, "invalid limit '%s'", optarg);
		o->limit = (int)v;
		return 0;
	}
	case OPT_TREE: o->tree = true; return 0;
	case OPT_THRESHOLD: {
		char *end;
		double v = strtod(optarg, &end);
		if (end == optarg || *end || !(v >= 0 && v <= 100))
			return cli_usage_error(NULL, "invalid threshold '%s' (0 to 100)", optarg);
		o->tree_threshold = v;
		return 0;
	}
	case OPT_STUCK: return cli_parse_threshold(NULL, "--stuck", optarg, &o->stuck_s);
	case OPT_LOOP: return cli_parse_threshold(NULL, "--loop-blocked", optarg, &o->loop_ms);
	case OPT_SPIN: return cli_parse_threshold(NULL, "--spin", optarg, &o->spin_s);
	case 'h': live_print_help(); return -1;
	case 'V':
		printf("tachyon-top %s\n"
		       "Copyright (c) 2026 The tachyon-top authors. MIT License: see LICENSE.\n"
		       "This is free software; there is NO WARRANTY.\n", PACKAGE_VERSION);
		return -1;
	default:
		return cli_usage_error(NULL, "unknown or incomplete option '%s'", text);
	}
}

int
live_parse(int argc, char **argv, struct live_options *o)
{
	memset(o, 0, sizeof *o);
	o->session.rate_hz = SAMPLER_LIVE_RATE_HZ;
	o->session.kernel_waits = true;
	o->delay_s = 1.0;
	o->limit = 25;
	o->tree_threshold = 1.0;
	o->theme = "default";
	o->stuck_s = STUCKWATCH_STUCK_S;
	o->loop_ms = STUCKWATCH_LOOP_MS;
	o->spin_s = STUCKWATCH_SPIN_S;
	int c;
	cli_getopt_reset();
	opterr = 0;
	/* '+': stop at the first non-option, so COMMAND's own options are its own. */
	while ((c = getopt_long(argc, argv, "+p:r:m:s:ld:bn:hV", live_opts, NULL)) != -1) {
		int r = live_option(c, argv[optind - 1], o);
		if (r)
			return r;
	}
	/* A mistyped verb ("tachyon-top dupm") must not be run as a program. */
	char hint[160];
	snprintf(hint, sizeof hint, "verbs: %s; ", verbs_names());
	int bad = cli_pid_or_command(NULL, argc, argv, optind, o->session.pid,
				     "unknown verb or argument", hint,
				     &o->session.command);
	if (bad)
		return bad;
	if (o->tree && !o->batch)
		return cli_usage_error(NULL, "--tree is for --batch (the live screen's call tree is the v key)");
	/* each native sample's stack copy is paid by the target */
	if (o->session.native && !o->rate_given)
		o->session.rate_hz = SAMPLER_NATIVE_RATE_HZ;
	return 0;
}
