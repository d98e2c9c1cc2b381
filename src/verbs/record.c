#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cli.h"
#include "clock.h"
#include "export.h"
#include "outfile.h"
#include "profile.h"
#include "progress.h"
#include "record.h"
#include "samplelog.h"
#include "session.h"
#include "taskinfo.h"

/* -o may be given several times: one sampling session, several files. */
#define MAX_OUTPUTS 8

struct output {
	const char *path;
	enum export_format format;
	struct outfile of;        /* open from the check until written */
};

/* Drop the first n outputs' temporary files; the paths stay untouched. */
static void
abort_outputs(struct output *o, int n)
{
	for (int i = 0; i < n; i++)
		outfile_abort(&o[i].of);
}

/* A command we started: how it ended is the last line, and our exit
 * status: its own exit code, or 128 + the signal that killed it; if we
 * stopped it, 128 + the signal that stopped us, or 0 when the duration ran
 * out. A failure to write the profile (rc) comes first. */
static int
program_outcome(struct session *s, int sig, enum sampler_end end, int rc)
{
	if (!s->child)
		return rc;
	session_poll_child(s);
	bool by_itself = s->child_exited;
	session_stop_child(s);
	char how[96];
	session_describe_exit(s, how, sizeof how);
	if (by_itself) {
		fprintf(stderr, "tachyon-top: process %d %s\n", (int)s->child, how);
		if (rc)
			return rc;
		if (WIFEXITED(s->child_status))
			return WEXITSTATUS(s->child_status);
		return WIFSIGNALED(s->child_status) ? 128 + WTERMSIG(s->child_status) : 1;
	}
	fprintf(stderr, "tachyon-top: stopped process %d (%s); it %s\n", (int)s->child,
		sig == SIGINT ? "Ctrl-C" : sig ? strsignal(sig)
		: end == SAMPLER_DURATION ? "the duration ran out" : "sampling ended", how);
	return rc ? rc : sig ? 128 + sig : 0;
}

static void
print_usage(FILE *f)
{
	fputs("Usage: tachyon-top record -o FILE [options] -- COMMAND [ARGS...]\n"
	      "       tachyon-top record -o FILE [options] -p PID\n"
	      "Run COMMAND (or attach to process PID) and write a profile when the program\n"
	      "exits, the duration ends, or on Ctrl-C. A program started here writes to this\n"
	      "terminal; it is stopped at the end, and tachyon-top exits with its status.\n"
	      "\n"
	      "  -p, --pid PID          process to sample (read-only; it is never stopped)\n"
	      "  -o, --output FILE      where to write the profile; repeat it to write several\n"
	      "                         formats from one session (-o p.svg -o p.pb.gz)\n"
	      "  -f, --format FORMAT    flamegraph (interactive SVG), pprof (gzipped\n"
	      "                         profile.proto), speedscope (JSON), pstats (Python's\n"
	      "                         pstats), heatmap (HTML: the source, lines shaded by\n"
	      "                         samples) or collapsed (folded stacks); default by the\n"
	      "                         file's name: .svg flamegraph, .pb.gz or .pprof pprof,\n"
	      "                         .json speedscope, .prof or .pstats pstats, .html\n"
	      "                         heatmap, else collapsed\n"
	      "  -r, --rate RATE        samples per second: 1000, 10k, max (default 1000)\n"
	      "  -d, --duration SECS    stop after SECS seconds (default: until Ctrl-C or exit)\n"
	      "  -m, --mode MODE        wall (every sample, default), cpu (threads on CPU only),\n"
	      "                         gil (threads holding the GIL only)\n"
	      "  -t, --threads          collapsed, flamegraph: start each stack with its thread\n"
	      "      --subprocesses     (the default) also sample the program's Python\n"
	      "                         descendants, found as they appear; when there are\n"
	      "                         several processes, stacks start with \"process PID\n"
	      "                         (command)\", speedscope gets a profile per process and\n"
	      "                         thread and pprof samples a pid label; a PID that\n"
	      "                         is not Python (a shell, tini) is followed down to its\n"
	      "                         Python descendants\n"
	      "      --no-subprocesses  sample the one process alone\n"
	      "      --async            asyncio (Python 3.14+): a task's samples go under its\n"
	      "                         await chain, the tasks awaiting it shown as\n"
	      "                         \"task NAME\" frames, instead of under the event loop\n"
	      "      --diff-base OLD    flame graph: colour each frame by how its share of the\n"
	      "                         samples changed against OLD, an earlier profile in\n"
	      "                         collapsed form: red grew, blue shrank\n"
	      "  -h, --help             show this help\n", f);
}

/* Records go through the sample log, which builds the profile: the
 * sampler's processes and threads are looked at once per batch, after its
 * records were made. The first failure is kept for the end. */
struct log_sink {
	struct samplelog *log;
	const struct procset *live;
	struct tt_error err;
	bool failed;
};

static void
take(void *ctx, const struct sample_record *r, size_t n)
{
	struct log_sink *k = ctx;
	struct tt_error e, later;
	bool ok = samplelog_sync(k->log, k->live, &e) == TT_OK;
	for (size_t i = 0; i < n; i++)
		if (samplelog_take(k->log, k->live, &r[i], ok ? &e : &later) != TT_OK)
			ok = false;
	if (!ok && !k->failed) {
		k->err = e;
		k->failed = true;
	}
}

static void
drain(struct sampler *s, struct log_sink *k)
{
	sampler_drain(s, take, k);
}

/* What the command line asked for. */
struct record_args {
	pid_t pid;
	char **command;
	struct output outs[MAX_OUTPUTS];
	int nouts;
	enum export_format format;
	bool have_format;
	double hz, seconds;
	bool per_thread, subprocesses, async_aware;
	enum profile_filter filter;
	const char *diff_base_path;   /* --diff-base: the flame graphs compare with it */
	struct diff_base diff_base;
	bool have_diff_base;
};

/* Fill *a from the command line: -1, or the exit status to return. */
static int
parse_args(int argc, char **argv, struct record_args *a)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'},
		{"rate", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 'd'},
		{"mode", required_argument, NULL, 'm'},
		{"threads", no_argument, NULL, 't'},
		{"subprocesses", no_argument, NULL, 'S'},
		{"no-subprocesses", no_argument, NULL, 'N'},
		{"async", no_argument, NULL, 'A'},
		{"diff-base", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof *a);
	a->format = EXPORT_COLLAPSED;
	a->hz = 1000;
	a->subprocesses = true;
	a->filter = PROFILE_WALL;
	int c;
	optind = 1;
	opterr = 0;
	/* "+": options end at the command (`record -o p.svg -- python3 app.py -x`). */
	while ((c = getopt_long(argc, argv, "+p:o:f:r:d:m:th", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_pid(optarg, &a->pid))
				return cli_usage_error("record ", "invalid pid '%s'", optarg);
			break;
		case 'o':
			if (a->nouts == MAX_OUTPUTS)
				return cli_usage_error("record ", "at most %d -o files", MAX_OUTPUTS);
			a->outs[a->nouts++] = (struct output){.path = optarg};
			break;
		case 'f':
			if (!export_parse_format(optarg, &a->format))
				return cli_usage_error("record ", "unknown format '%s' (%s)", optarg,
						       export_format_list());
			a->have_format = true;
			break;
		case 'r':
			if (!sampler_parse_rate(optarg, &a->hz))
				return cli_usage_error("record ", "invalid rate '%s'", optarg);
			break;
		case 'd':
			if (!cli_parse_seconds(optarg, 7 * 86400.0, &a->seconds))
				return cli_usage_error("record ", "invalid duration '%s'", optarg);
			break;
		case 'm':
			if (strcmp(optarg, "wall") == 0)
				a->filter = PROFILE_WALL;
			else if (strcmp(optarg, "cpu") == 0)
				a->filter = PROFILE_CPU;
			else if (strcmp(optarg, "gil") == 0)
				a->filter = PROFILE_GIL;
			else
				return cli_usage_error("record ", "unknown mode '%s' (wall, cpu or gil)", optarg);
			break;
		case 't': a->per_thread = true; break;
		case 'S': a->subprocesses = true; break;
		case 'N': a->subprocesses = false; break;
		case 'A': a->async_aware = true; break;
		case 'B': a->diff_base_path = optarg; break;
		case 'h': print_usage(stdout); return 0;
		default:
			return cli_usage_error("record ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	int bad = cli_pid_or_command("record ", argc, argv, optind, a->pid, "unexpected argument", "",
				     &a->command);
	if (bad)
		return bad;
	if (!a->nouts)
		return cli_usage_error("record ", "missing -o FILE");
	if (a->diff_base_path) {
		bool svg = false;
		for (int i = 0; i < a->nouts; i++)
			svg |= (a->have_format ? a->format : export_format_for_path(a->outs[i].path)) ==
			       EXPORT_FLAMEGRAPH;
		if (!svg)
			return cli_usage_error("record ", "--diff-base colours a flame graph: give "
					       "-o FILE.svg (or -f flamegraph)");
	}
	return -1;
}

/* Check every output first (a bad path fails before any sampling), but
 * leave each untouched until the profile is complete: the data goes to a
 * temporary file renamed over it at the end. */
static tt_status
open_outputs(struct record_args *a, struct tt_error *err)
{
	for (int i = 0; i < a->nouts; i++) {
		struct output *o = &a->outs[i];
		o->format = a->have_format ? a->format : export_format_for_path(o->path);
		if (outfile_open(&o->of, o->path, err) != TT_OK) {
			abort_outputs(a->outs, i);
			return err->status;
		}
	}
	return TT_OK;
}

/* Drain the session into the sample log until it ends or is stopped,
 * with the progress line on a terminal. */
static void
sample_into(struct session *session, struct log_sink *k, const struct record_args *a)
{
	struct sampler *s = &session->sampler;
	uint64_t duration_ns = (uint64_t)(a->seconds * 1e9);
	struct progress progress;
	progress_init(&progress);
	while (sampler_end_state(s) == SAMPLER_RUNNING && !session_stop_signal()) {
		struct pollfd pfd = {.fd = s->wake_fd, .events = POLLIN};
		poll(&pfd, 1, 20);
		drain(s, k);
		progress_update(&progress, clock_now_ns(), atomic_load(&s->stats.elapsed_ns),
				duration_ns, atomic_load(&s->stats.samples),
				atomic_load(&s->stats.errors));
	}
	progress_clear(&progress);
	sampler_stop(s);
	drain(s, k);
	/* the processes' and threads' last state, for the profile's settling */
	if (!k->failed && samplelog_sync(k->log, k->live, &k->err) != TT_OK)
		k->failed = true;
}

/* Write the profile to every output, each committed whole or not at all;
 * `written` lists those written. false on the first failure, in *err. */
static bool
write_outputs(struct record_args *a, const struct profile *prof, const struct procset *procs,
	      const struct export_meta *meta, char *written, size_t len, struct tt_error *err)
{
	bool ok_all = true;
	written[0] = '\0';
	for (int i = 0; i < a->nouts; i++) {
		struct output *o = &a->outs[i];
		struct tt_error e = {0};
		FILE *f = o->of.f;
		int wrc = export_write(o->format, prof, procs, meta, f);
		bool ok;
		if (wrc != 0 && !ferror(f)) {
			outfile_abort(&o->of);
			tt_fail(&e, TT_ENOMEM, ENOMEM, "writing %s: out of memory", o->path);
			ok = false;
		} else {
			ok = outfile_commit(&o->of, &e) == TT_OK;
		}
		if (!ok) {
			if (ok_all)
				*err = e;
			ok_all = false;
		} else {
			size_t used = strlen(written);
			snprintf(written + used, len - used, "%s%s", used ? ", " : "", o->path);
		}
	}
	return ok_all;
}

int
record_main(int argc, char **argv)
{
	struct record_args a;
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct tt_error err = {0};
	/* The baseline is read before sampling: a bad one fails at once. */
	if (a.diff_base_path) {
		if (diffbase_load(&a.diff_base, a.diff_base_path, &err) != TT_OK)
			return cli_report(&err);
		a.have_diff_base = true;
	}
	if (open_outputs(&a, &err) != TT_OK) {
		diffbase_free(&a.diff_base);
		return cli_report(&err);
	}

	struct sampler_config cfg;
	sampler_default_config(&cfg);
	/* cpu mode at a rate above the default on-CPU reading rate: the
	 * state is read for every sample, of every thread however many. */
	if (a.filter == PROFILE_CPU && a.hz > 0 && 1e9 / a.hz < (double)cfg.walk.cpu_period_ns)
		cfg.walk.cpu_period_ns = (uint64_t)(1e9 / a.hz);
	if (a.filter == PROFILE_CPU)
		cfg.walk.cpu_reads_per_sample = 0;
	struct session_options so = {
		.pid = a.pid, .command = a.command, .child_keeps_output = true, .rate_hz = a.hz,
		.duration_s = a.seconds, .no_subprocesses = !a.subprocesses,
		.async_aware = a.async_aware, .config = &cfg,
	};

	/* Ctrl-C, SIGTERM, a dropped ssh session (SIGHUP): write the profile. */
	if (session_catch_stop_signals(&err) != TT_OK) {
		abort_outputs(a.outs, a.nouts);
		diffbase_free(&a.diff_base);
		return cli_report(&err);
	}

	struct session session;
	if (session_start(&session, &so, &err) != TT_OK) {
		abort_outputs(a.outs, a.nouts);
		diffbase_free(&a.diff_base);
		return cli_report(&err);
	}
	struct sampler *s = &session.sampler;
	/* The heatmap reads sources as the target saw them, even once it exited. */
	struct export_sources sources;
	export_sources_open(&sources, session.target.pid);
	struct profile prof;
	profile_init(&prof);
	struct samplelog log;
	if (samplelog_init(&log, &prof, a.filter) != 0) {
		tt_fail(&err, TT_ENOMEM, ENOMEM, "out of memory for the sample log");
		export_sources_close(&sources);
		abort_outputs(a.outs, a.nouts);
		diffbase_free(&a.diff_base);
		session_end(&session);
		return cli_report(&err);
	}
	struct log_sink sink = {.log = &log, .live = &s->procs};
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	sample_into(&session, &sink, &a);
	enum sampler_end how = sampler_end_state(s);
	int interrupted = session_stop_signal();
	/* The sampler may see the program go before it can be reaped: give
	 * waitpid a moment, so its status is reported rather than guessed. */
	if (how == SAMPLER_TARGET_EXITED)
		session_wait_child(&session, 1000000000ull);

	rc = 0;
	pid_t pid = session.pid;
	char cmdline[512];
	taskinfo_cmdline(pid, cmdline, sizeof cmdline);
	if (!cmdline[0])  /* it has exited: the line read at the start */
		snprintf(cmdline, sizeof cmdline, "%s", session.cmdline);
	uint64_t elapsed_ns = atomic_load(&s->stats.elapsed_ns);
	uint64_t passes = atomic_load(&s->stats.samples);
	/* processes whose index went to a new one since their last samples */
	profile_settle(&prof, &log.mirror);
	struct export_meta meta = {
		.pid = pid, .command = cmdline, .python_version = session.target.layout.version_str,
		.mode = a.filter, .rate_hz = a.hz, .duration_ns = elapsed_ns,
		.start_unix_ns = (uint64_t)started.tv_sec * 1000000000ull + (uint64_t)started.tv_nsec,
		/* A sample stands for the mean time between passes actually made
		 * (deadlines missed on a busy machine make it longer than asked). */
		.period_ns = passes ? elapsed_ns / passes : a.hz > 0 ? (uint64_t)(1e9 / a.hz) : 1,
		.per_thread = a.per_thread,
		/* Process frames only when there is more than one to tell apart. */
		.per_process = a.subprocesses && procset_count(&log.mirror) > 1,
		.diff_base = a.have_diff_base ? &a.diff_base : NULL,
		.diff_base_name = a.diff_base_path,
		.sources = sources,
	};
	char written[1024];
	/* The first failure is reported after the summary line, with its cause. */
	struct tt_error werr = {0};
	bool write_failed = !write_outputs(&a, &prof, &log.mirror, &meta, written, sizeof written,
					   &werr);
	uint64_t samples = atomic_load(&s->stats.samples), errors = atomic_load(&s->stats.errors);
	double secs = (double)atomic_load(&s->stats.elapsed_ns) / 1e9;
	fprintf(stderr, "tachyon-top: %llu samples in %.2f s (%.0f/s), %.2f%% errors, %llu missed, "
		"%llu thread samples in %llu distinct stacks%s%s%s\n",
		(unsigned long long)samples, secs, secs > 0 ? (double)samples / secs : 0.0,
		samples ? 100.0 * (double)errors / (double)samples : 0.0,
		(unsigned long long)atomic_load(&s->stats.missed), (unsigned long long)prof.total,
		(unsigned long long)prof.count,
		how == SAMPLER_TARGET_EXITED ? ", target exited" : interrupted ? ", interrupted" : "",
		written[0] ? "; wrote " : "", written);
	if (write_failed)
		rc = cli_report(&werr);
	if (sink.failed)
		fprintf(stderr, "tachyon-top: some samples were not recorded: %s\n", sink.err.msg);
	else if (log.lost)
		fprintf(stderr, "tachyon-top: out of memory: some samples were not recorded\n");
	if (how == SAMPLER_FAILED && rc == 0)
		rc = cli_report(&s->error);
	rc = program_outcome(&session, interrupted, how, rc);
	samplelog_free(&log);
	profile_free(&prof);
	export_sources_close(&sources);
	diffbase_free(&a.diff_base);
	session_end(&session);
	return rc;
}
