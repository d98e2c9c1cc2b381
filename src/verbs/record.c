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
#include "outputs.h"
#include "record.h"
#include "samplelog.h"
#include "session.h"
#include "proc/procstat.h"

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
	fprintf(f, "Usage: tachyon-top record -o FILE [options] -- COMMAND [ARGS...]\n"
	      "       tachyon-top record -o FILE [options] -p PID\n"
	      "Run COMMAND (or attach to process PID) and write a profile when the program\n"
	      "exits, the duration ends, or on Ctrl-C. A program started here writes to this\n"
	      "terminal; it is stopped at the end, and tachyon-top exits with its status.\n"
	      "\n"
	      "  -p, --pid PID          process to sample (read-only; it is never stopped)\n"
	      "%s"
	      "  -r, --rate RATE        samples per second: 1000, 10k, max (default 1000;\n"
	      "                         100 with --native)\n"
	      "  -d, --duration SECS    stop after SECS seconds (default: until Ctrl-C or exit)\n"
	      "  -m, --mode MODE        wall (every sample, default), cpu (threads on a CPU\n"
	      "                         only), gil (threads holding the GIL only)\n"
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
	      "      --native           also each thread's native (C) frames, in order with its\n"
	      "                         Python ones: a blocked thread's from its system call,\n"
	      "                         a running one's from the kernel's perf sample of it\n"
	      "                         (the target pays for that copy: mind the rate)\n"
	      "      --diff-base OLD    flame graph: colour each frame by how its share of the\n"
	      "                         samples changed against OLD, an earlier profile in\n"
	      "                         collapsed form: red grew, blue shrank\n"
	      "  -h, --help             show this help\n", outputs_help(true));
}

/* Records go through the sample log, which builds the profile: the
 * sampler's processes and threads are looked at once per batch, after its
 * records were made. The first failure is kept for the end. */
struct log_sink {
	struct samplelog *log;
	const struct procset *live;
	struct binrec_writer *rec;    /* the recording, flushed each second; or NULL */
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
	struct outputs outs;
	double hz, seconds;
	bool per_thread, subprocesses, async_aware, native, rate_given;
	enum profile_filter filter;
	const char *diff_base_path;   /* --diff-base: the flame graphs compare with it */
	struct diff_base diff_base;
	bool have_diff_base;
};

/* --native: how many thread samples got native frames, how many of those
 * in their true order, and what a native walk cost. */
static void
native_note(const struct sampler *s)
{
	uint64_t walks = atomic_load(&s->stats.native_walks);
	uint64_t walk_ns = atomic_load(&s->stats.native_walk_ns);
	if (!atomic_load(&s->stats.native_threads))
		return;
	struct native_shares ns;
	sampler_native_shares(s, &ns);
	fprintf(stderr, "tachyon-top: native frames in %.1f%% of thread samples (the rest: no perf "
			"sample of a running thread since the last pass, or none to read); left out "
			"%.1f%% whose perf sample was taken in another Python frame than the one read "
			"(the thread moved in between); %.1f%% from a perf sample whose frame could not "
			"be checked; native unmerged %.1f%%; %llu native walks, %.0f us each\n",
		ns.native_pct, ns.moved_pct, ns.unverified_pct, ns.unmerged_pct,
		(unsigned long long)walks, walks ? (double)walk_ns / (double)walks / 1e3 : 0.0);
	if (ns.refusal)
		fprintf(stderr, "tachyon-top: threads on a CPU have their Python frames only: %s\n",
			ns.refusal);
}

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
		{"native", no_argument, NULL, 'n'},
		{"diff-base", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof *a);
	a->outs.recordings_allowed = true;
	a->hz = 1000;
	a->subprocesses = true;
	a->filter = PROFILE_WALL;
	int c, bad;
	cli_getopt_reset();
	opterr = 0;
	/* "+": options end at the command (`record -o p.svg -- python3 app.py -x`). */
	while ((c = getopt_long(argc, argv, "+p:o:f:r:d:m:th", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_pid(optarg, &a->pid))
				return cli_usage_error("record ", "invalid pid '%s'", optarg);
			break;
		case 'o':
			if ((bad = outputs_add(&a->outs, "record ", optarg)) >= 0)
				return bad;
			break;
		case 'f':
			if ((bad = outputs_set_format(&a->outs, "record ", optarg)) >= 0)
				return bad;
			break;
		case 'r':
			if (!sampler_parse_rate(optarg, &a->hz))
				return cli_usage_error("record ", "invalid rate '%s'", optarg);
			a->rate_given = true;
			break;
		case 'd':
			if (!cli_parse_seconds(optarg, 7 * 86400.0, &a->seconds))
				return cli_usage_error("record ", "invalid duration '%s'", optarg);
			break;
		case 'm':
			if (!export_parse_mode(optarg, &a->filter))
				return cli_usage_error("record ", "unknown mode '%s' (wall, cpu or gil)", optarg);
			break;
		case 't': a->per_thread = true; break;
		case 'S': a->subprocesses = true; break;
		case 'N': a->subprocesses = false; break;
		case 'A': a->async_aware = true; break;
		case 'n': a->native = true; break;
		case 'B': a->diff_base_path = optarg; break;
		case 'h': print_usage(stdout); return 0;
		default:
			return cli_usage_error("record ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	bad = cli_pid_or_command("record ", argc, argv, optind, a->pid, "unexpected argument", "",
				 &a->command);
	if (bad)
		return bad;
	if ((bad = outputs_check(&a->outs, "record ")) >= 0)
		return bad;
	/* each native sample's stack copy is paid by the target */
	if (a->native && !a->rate_given)
		a->hz = SAMPLER_NATIVE_RATE_HZ;
	if (a->diff_base_path) {
		if (!outputs_have(&a->outs, EXPORT_FLAMEGRAPH))
			return cli_usage_error("record ", "--diff-base colours a flame graph: give "
					       "-o FILE.svg (or -f flamegraph)");
	}
	return -1;
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
		uint64_t now = clock_now_ns();
		if (k->rec)
			binrec_progress(k->rec, now, &(struct binrec_progress){
				atomic_load(&s->stats.elapsed_ns), atomic_load(&s->stats.samples),
				atomic_load(&s->stats.errors), atomic_load(&s->stats.missed)}, false);
		progress_update(&progress, now, atomic_load(&s->stats.elapsed_ns),
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

/* One run's state from the session's start to the files written. */
struct record_run {
	struct session session;
	struct export_sources sources;
	struct profile prof;
	struct samplelog log;
	struct log_sink sink;
	struct timeline timeline;
	struct binrec_header header;  /* what the run is of: the recording's header, the outputs' metadata */
};

/* The session, the sample log and the recording's header; on failure what
 * was made is undone (the outputs and baseline stay the caller's). */
static tt_status
record_start(struct record_args *a, struct record_run *r, struct tt_error *err)
{
	struct sampler_config cfg;
	sampler_default_config(&cfg);
	/* cpu mode at a rate near or above the default on-CPU reading rate:
	 * the state is read for every sample, of every thread however many
	 * (half an interval: a pass a little early must not skip it, or a
	 * thread gone to sleep counts as on a CPU for two intervals). */
	if (a->filter == PROFILE_CPU && a->hz > 0 &&
	    1e9 / a->hz < 2.0 * (double)cfg.walk.cpu_period_ns)
		cfg.walk.cpu_period_ns = (uint64_t)(1e9 / a->hz / 2);
	if (a->filter == PROFILE_CPU)
		cfg.walk.cpu_reads_per_sample = 0;
	struct session_options so = {
		.pid = a->pid, .command = a->command, .child_keeps_output = true, .rate_hz = a->hz,
		.duration_s = a->seconds, .no_subprocesses = !a->subprocesses,
		.async_aware = a->async_aware, .native = a->native, .config = &cfg,
	};
	/* Ctrl-C, SIGTERM, a dropped ssh session (SIGHUP): write the profile. */
	if (session_catch_stop_signals(err) != TT_OK)
		return err->status;
	if (session_start(&r->session, &so, err) != TT_OK)
		return err->status;
	/* The heatmap reads sources as the target saw them, even once it exited. */
	export_sources_open(&r->sources, r->session.target.pid);
	profile_init(&r->prof);
	timeline_init(&r->timeline);
	if (samplelog_init(&r->log, &r->prof, a->filter) != 0) {
		tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sample log");
		goto undo;
	}
	r->sink = (struct log_sink){.log = &r->log, .live = &r->session.sampler.procs,
				    .rec = outputs_recording(&a->outs)};
	/* the Firefox Profiler's file shows the samples in time: keep them */
	if (outputs_have(&a->outs, EXPORT_GECKO))
		r->log.timeline = &r->timeline;
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	r->header = (struct binrec_header){
		.pid = r->session.pid, .python_version = r->session.target.layout.version_str,
		.command = r->session.cmdline, .mode = a->filter, .rate_hz = a->hz,
		.start_unix_ns = (uint64_t)started.tv_sec * 1000000000ull + (uint64_t)started.tv_nsec,
		.subprocesses = a->subprocesses, .async_aware = a->async_aware,
	};
	if (r->sink.rec) {
		if (binrec_begin(r->sink.rec, &r->header, err) != TT_OK) {
			samplelog_free(&r->log);
			goto undo;
		}
		r->log.sink = binrec_put;
		r->log.sink_ctx = r->sink.rec;
	}
	return TT_OK;
undo:
	profile_free(&r->prof);
	export_sources_close(&r->sources);
	session_end(&r->session);
	return err->status;
}

/* After sampling: the outputs written, the summary line, the exit status. */
static int
record_finish(struct record_args *a, struct record_run *r)
{
	struct session *session = &r->session;
	struct sampler *s = &session->sampler;
	enum sampler_end how = sampler_end_state(s);
	int interrupted = session_stop_signal();
	/* The sampler may see the program go before it can be reaped: give
	 * waitpid a moment, so its status is reported rather than guessed. */
	if (how == SAMPLER_TARGET_EXITED)
		session_wait_child(session, 1000000000ull);

	int rc = 0;
	char cmdline[512];
	procstat_cmdline(session->pid, cmdline, sizeof cmdline);
	if (!cmdline[0])  /* it has exited: the line read at the start */
		snprintf(cmdline, sizeof cmdline, "%s", session->cmdline);
	struct binrec_progress progress = {
		atomic_load(&s->stats.elapsed_ns), atomic_load(&s->stats.samples),
		atomic_load(&s->stats.errors), atomic_load(&s->stats.missed),
	};
	/* processes whose index went to a new one since their last samples */
	profile_settle(&r->prof, &r->log.mirror);
	timeline_settle(&r->timeline, &r->log.mirror);
	struct export_meta meta;
	outputs_meta(&meta, &r->header, cmdline, &progress, &r->log.mirror);
	meta.per_thread = a->per_thread;
	meta.diff_base = a->have_diff_base ? &a->diff_base : NULL;
	meta.diff_base_name = a->diff_base_path;
	meta.sources = r->sources;
	meta.timeline = r->log.timeline;
	/* the heatmap's sources in the recording: replay's heatmap is this one */
	if (r->sink.rec)
		binrec_put_sources(r->sink.rec, &r->prof, &r->log.mirror, &r->sources);
	char written[1024];
	/* The first failure is reported after the summary line, with its cause. */
	struct tt_error werr = {0};
	bool write_failed = !outputs_write(&a->outs, &r->prof, &r->log.mirror, &meta, cmdline,
					   &progress, written, sizeof written, &werr);
	uint64_t samples = atomic_load(&s->stats.samples), errors = atomic_load(&s->stats.errors);
	double secs = (double)atomic_load(&s->stats.elapsed_ns) / 1e9;
	fprintf(stderr, "tachyon-top: %llu samples in %.2f s (%.0f/s), %.2f%% errors, %llu missed, "
		"%llu thread samples in %llu distinct stacks%s%s%s\n",
		(unsigned long long)samples, secs, secs > 0 ? (double)samples / secs : 0.0,
		samples ? 100.0 * (double)errors / (double)samples : 0.0,
		(unsigned long long)atomic_load(&s->stats.missed), (unsigned long long)r->prof.total,
		(unsigned long long)r->prof.count,
		how == SAMPLER_TARGET_EXITED ? ", target exited" : interrupted ? ", interrupted" : "",
		written[0] ? "; wrote " : "", written);
	outputs_timeline_note(r->log.timeline);
	if (a->native)
		native_note(s);
	if (write_failed)
		rc = cli_report(&werr);
	if (r->sink.failed)
		fprintf(stderr, "tachyon-top: some samples were not recorded: %s\n", r->sink.err.msg);
	else if (r->log.lost)
		fprintf(stderr, "tachyon-top: out of memory: some samples were not recorded\n");
	if (how == SAMPLER_FAILED && rc == 0)
		rc = cli_report(&s->error);
	rc = program_outcome(session, interrupted, how, rc);
	samplelog_free(&r->log);
	timeline_free(&r->timeline);
	profile_free(&r->prof);
	export_sources_close(&r->sources);
	session_end(session);
	return rc;
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
	if (outputs_open(&a.outs, &err) != TT_OK) {
		diffbase_free(&a.diff_base);
		return cli_report(&err);
	}
	struct record_run run;
	if (record_start(&a, &run, &err) != TT_OK) {
		outputs_abort(&a.outs);
		diffbase_free(&a.diff_base);
		return cli_report(&err);
	}
	sample_into(&run.session, &run.sink, &a);
	rc = record_finish(&a, &run);
	diffbase_free(&a.diff_base);
	return rc;
}
