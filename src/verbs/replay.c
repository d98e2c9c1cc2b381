#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "binrec.h"
#include "cli.h"
#include "diffbase.h"
#include "outputs.h"
#include "replay.h"
#include "sanitize.h"

static void
print_usage(FILE *f)
{
	fprintf(f, "Usage: tachyon-top replay FILE -o OUTPUT [-o OUTPUT...] [options]\n"
		"Write the profile of a recording (record -o run%s) in any format, as record\n"
		"would have written it from the same samples: record once where the program\n"
		"runs, render later, elsewhere, as often as wanted. A recording cut short (the\n"
		"record was killed) is replayed up to where it ends.\n"
		"\n"
		"%s"
		"  -m, --mode MODE        count the samples by another mode than recorded:\n"
		"                         wall, cpu (threads on CPU) or gil (holding the GIL)\n"
		"  -t, --threads          collapsed, flamegraph: start each stack with its thread\n"
		"      --diff-base OLD    flame graph: colour each frame by how its share changed\n"
		"                         against OLD (collapsed stacks or a recording)\n"
		"  -h, --help             show this help\n"
		"The heatmap shows the source files record kept at its end (none when it was cut\n"
		"short).\n",
		BINREC_EXTENSION, outputs_help(false));
}

struct replay_args {
	const char *path;
	struct outputs outs;
	bool per_thread, have_mode;
	enum profile_filter mode;
	const char *diff_base_path;
};

static int
parse_args(int argc, char **argv, struct replay_args *a)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'},
		{"mode", required_argument, NULL, 'm'},
		{"threads", no_argument, NULL, 't'},
		{"diff-base", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof *a);
	int c, bad;
	cli_getopt_reset();
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:f:m:th", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if ((bad = outputs_add(&a->outs, "replay ", optarg)) >= 0)
				return bad;
			break;
		case 'f':
			if ((bad = outputs_set_format(&a->outs, "replay ", optarg)) >= 0)
				return bad;
			break;
		case 'm':
			a->have_mode = true;
			if (!export_parse_mode(optarg, &a->mode))
				return cli_usage_error("replay ", "unknown mode '%s' (wall, cpu or gil)",
						       optarg);
			break;
		case 't': a->per_thread = true; break;
		case 'B': a->diff_base_path = optarg; break;
		case 'h': print_usage(stdout); return 0;
		default:
			return cli_usage_error("replay ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("replay ", "missing the recording to replay (FILE%s)",
				       BINREC_EXTENSION);
	if (optind + 1 < argc) {
		char shown[128];
		sanitize_for_terminal(argv[optind + 1], shown, sizeof shown);
		return cli_usage_error("replay ", "unexpected argument '%s'", shown);
	}
	a->path = argv[optind];
	if ((bad = outputs_check(&a->outs, "replay ")) >= 0)
		return bad;
	if (a->diff_base_path && !outputs_have(&a->outs, EXPORT_FLAMEGRAPH))
		return cli_usage_error("replay ", "--diff-base colours a flame graph: give "
				       "-o FILE.svg (or -f flamegraph)");
	return -1;
}

int
replay_main(int argc, char **argv)
{
	struct replay_args a;
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct tt_error err = {0};
	struct diff_base base = {0};
	if (a.diff_base_path && diffbase_load(&base, a.diff_base_path, &err) != TT_OK)
		return cli_report(&err);
	if (outputs_open(&a.outs, &err) != TT_OK) {
		diffbase_free(&base);
		return cli_report(&err);
	}
	struct binrec_replay r;
	if (binrec_replay(a.path, a.have_mode ? &a.mode : NULL, outputs_have(&a.outs, EXPORT_GECKO),
			  &r, &err) != TT_OK) {
		binrec_replay_free(&r);
		outputs_abort(&a.outs);
		diffbase_free(&base);
		return cli_report(&err);
	}
	char shown[256];
	sanitize_for_terminal(a.path, shown, sizeof shown);
	if (!r.complete)
		fprintf(stderr, "tachyon-top: warning: %s ends early (its record was cut short): "
			"replaying what it holds\n", shown);
	profile_settle(&r.prof, &r.log.mirror);
	timeline_settle(&r.timeline, &r.log.mirror);
	struct export_meta meta;
	outputs_meta(&meta, &r.h, r.end_command ? r.end_command : r.h.command, &r.progress,
		     &r.log.mirror);
	meta.mode = a.have_mode ? a.mode : r.h.mode;
	meta.per_thread = a.per_thread;
	meta.diff_base = a.diff_base_path ? &base : NULL;
	meta.diff_base_name = a.diff_base_path;
	meta.timeline = r.log.timeline;
	meta.sources = (struct export_sources){
		.recorded = true, .root_fd = -1, .cwd_fd = -1, .texts = r.sources,
		.ntexts = r.nsources,
	};
	char written[1024];
	struct tt_error werr = {0};
	bool write_failed = !outputs_write(&a.outs, &r.prof, &r.log.mirror, &meta, NULL, &r.progress,
					   written, sizeof written, &werr);
	fprintf(stderr, "tachyon-top: replayed %s: %.2f s of process %d, %llu samples, %llu thread "
		"samples in %llu distinct stacks%s%s\n", shown,
		(double)r.progress.duration_ns / 1e9, (int)r.h.pid,
		(unsigned long long)r.progress.passes, (unsigned long long)r.prof.total,
		(unsigned long long)r.prof.count, written[0] ? "; wrote " : "", written);
	outputs_timeline_note(r.log.timeline);
	rc = write_failed ? cli_report(&werr) : 0;
	binrec_replay_free(&r);
	diffbase_free(&base);
	return rc;
}
