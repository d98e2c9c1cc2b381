#include "config.h"

#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "benchcost.h"
#include "benchtasks.h"
#include "cli.h"
#include "clock.h"
#include "follow.h"
#include "jsonw.h"
#include "session.h"

static void
print_usage(FILE *f)
{
	fputs("Usage: tachyon-top bench -p PID [-d SECONDS] [-r RATE] [--json] [--no-cache]\n"
	      "                         [--verify] [--floor] [--tasks] [--native]\n"
	      "                         [--no-subprocesses]\n"
	      "       tachyon-top bench [options] -- COMMAND [ARGS...]\n"
	      "       tachyon-top bench --cost [-d SECONDS] [--json] -- PYTHON [ARGS...]\n"
	      "Sample process PID (or run COMMAND and sample it) as fast as possible (or at\n"
	      "RATE) and report the engine's figures. --floor and --tasks need -p PID.\n"
	      "\n"
	      "  -p, --pid PID        process to sample (read-only; it is never stopped)\n"
	      "  -d, --duration SECS  how long to sample (default 5)\n"
	      "  -r, --rate RATE      samples per second: 1000, 10k, max (default max)\n"
	      "  -j, --json           print one JSON object\n"
	      "      --no-cache       re-read every thread and frame every sample (to compare)\n"
	      "      --verify         check each sample against an independent plain walk\n"
	      "      --floor          first measure the cheapest possible read of this process\n"
	      "                       (one 8-byte read): no sampler can beat that per sample\n"
	      "      --subprocesses   (the default) also sample the Python descendants (RATE\n"
	      "                       is per process; max takes them in turns); figures per\n"
	      "                       process and in total\n"
	      "      --no-subprocesses  sample the one process alone\n"
	      "      --tasks          measure reading every asyncio task (Python 3.14+) and\n"
	      "                       every greenlet (a whole scan of the heap each read)\n"
	      "                       instead\n"
	      "      --native         sample native frames too (default rate 100): what a\n"
	      "                       native walk costs here (what the target pays: --cost)\n"
	      "      --cost           what a target pays for being sampled: runs PYTHON -c\n"
	      "                       PROGRAM, a loop counting its work, and measures its\n"
	      "                       throughput alone and sampled (a whole `watch` at its\n"
	      "                       20/s, stopped and continued; Python frames at 10k/s\n"
	      "                       and 2k/s, the live view's default; --native at 100/s,\n"
	      "                       1k/s and 10k/s), about SECONDS (default 10) per setting\n"
	      "  -h, --help           show this help\n", f);
}

static uint64_t
get(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

static double
ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* Seconds a process was sampled during the run (it may come late or go). */
static double
proc_seconds(const struct sampler *s, const struct proc_info *p, double secs)
{
	uint64_t start = p->start_ns > s->start_ns ? p->start_ns : s->start_ns;
	uint64_t end = procset_state(p) == PROC_LIVE
			       ? s->start_ns + (uint64_t)(secs * 1e9)
			       : atomic_load_explicit(&((struct proc_info *)p)->end_ns, memory_order_relaxed);
	return end > start ? (double)(end - start) / 1e9 : 0.0;
}

/* Discovery's figures, taken before the session frees it. */
struct disc_figures {
	uint64_t busy_ns, passes, scans, stat_reads, attaches;
};

static void
print_processes(struct sampler *s, double secs, const struct disc_figures *d)
{
	const struct procset *ps = &s->procs;
	uint32_t n = procset_count(ps), live;
	uint64_t ended;
	procset_counts(ps, &live, &ended);
	printf("processes     %llu (%u live, %llu ended); per process:\n",
	       (unsigned long long)(live + ended), live, (unsigned long long)ended);
	for (uint32_t i = 0; i < n; i++) {
		const struct proc_info *p = procset_at(ps, i);
		uint64_t samples = get((_Atomic uint64_t *)&p->samples);
		double t = proc_seconds(s, p, secs);
		printf("  pid %-7d   %llu samples = %.0f/s, %.3f reads per sample, %llu errors%s%s\n",
		       (int)p->pid, (unsigned long long)samples, t > 0 ? (double)samples / t : 0.0,
		       p->target ? ratio(p->target->mem.counters.reads, samples) : 0.0,
		       (unsigned long long)get((_Atomic uint64_t *)&p->errors),
		       procset_state(p) == PROC_LIVE ? "" : ", ended: ", p->note);
	}
	printf("discovery     %.2f%% of a core (%llu passes, %llu full scans, %llu stat reads, "
	       "%llu attached)\n",
	       secs > 0 ? 100.0 * (double)d->busy_ns / 1e9 / secs : 0.0,
	       (unsigned long long)d->passes, (unsigned long long)d->scans,
	       (unsigned long long)d->stat_reads, (unsigned long long)d->attaches);
}

static void
print_processes_json(struct jsonw *w, struct sampler *s, double secs, const struct disc_figures *d)
{
	const struct procset *ps = &s->procs;
	uint32_t n = procset_count(ps);
	jsonw_array(w, "processes");
	jsonw_style(w, true, "\n  ");
	for (uint32_t i = 0; i < n; i++) {
		const struct proc_info *p = procset_at(ps, i);
		uint64_t samples = get((_Atomic uint64_t *)&p->samples);
		double t = proc_seconds(s, p, secs);
		jsonw_object(w, NULL);
		jsonw_i64(w, "pid", p->pid);
		jsonw_i64(w, "ppid", p->ppid);
		jsonw_string(w, "python", p->version);
		jsonw_u64(w, "samples", samples);
		jsonw_double(w, "samples_per_sec", 1, t > 0 ? (double)samples / t : 0.0);
		jsonw_double(w, "reads_per_sample", 4,
			     p->target ? ratio(p->target->mem.counters.reads, samples) : 0.0);
		jsonw_u64(w, "errors", get((_Atomic uint64_t *)&p->errors));
		jsonw_bool(w, "live", procset_state(p) == PROC_LIVE);
		/* CLOCK_MONOTONIC seconds, comparable with time.monotonic() */
		jsonw_double(w, "first_sample_s", 6, (double)get((_Atomic uint64_t *)&p->first_ns) / 1e9);
		jsonw_end(w);
	}
	jsonw_end(w);
	jsonw_break(w, "\n ");
	jsonw_object(w, "discovery");
	jsonw_double(w, "cpu", 5, secs > 0 ? (double)d->busy_ns / 1e9 / secs : 0.0);
	jsonw_u64(w, "passes", d->passes);
	jsonw_u64(w, "scans", d->scans);
	jsonw_end(w);
	jsonw_break(w, "\n ");
}

/* Each record's weight: the samples a consumer would count. */
static void
count_weight(void *consumed, const struct sample_record *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*(uint64_t *)consumed += r[i].weight;
}

/* What the command line asked for. */
struct bench_args {
	pid_t pid;
	double seconds, hz;
	bool json, want_floor, want_tasks, want_cost, seconds_given;
	struct sampler_config cfg;
	char **command;
};

/* The engine's main counters at the end of a run. */
struct bench_figures {
	uint64_t samples, errors, tsamples;
	double secs;
	uint64_t fh, ph, fm;     /* frame cache: full hits, partial hits, misses */
	uint64_t ch, cm;         /* code cache: hits, misses */
};

/* What a run measured beside the engine's counters. */
struct bench_run {
	struct bench_figures f;
	uint64_t consumed;          /* samples a consumer drained from the ring */
	struct disc_figures disc;
	struct remote_floor floor;
	enum sampler_end how;
	bool interrupted;
	long peak_rss_kb;
};

/* Fill *a from the command line: -1, or the exit status to return. */
static int
parse_args(int argc, char **argv, struct bench_args *a)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 'd'},
		{"rate", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"no-cache", no_argument, NULL, 'C'},
		{"verify", no_argument, NULL, 'V'},
		{"floor", no_argument, NULL, 'F'},
		{"subprocesses", no_argument, NULL, 'S'},
		{"no-subprocesses", no_argument, NULL, 'N'},
		{"tasks", no_argument, NULL, 'T'},
		{"native", no_argument, NULL, 'n'},
		{"cost", no_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof *a);
	a->seconds = 5;
	sampler_default_config(&a->cfg);
	a->cfg.follow = true; /* process trees, as everywhere */
	int c;
	bool rate_given = false;
	cli_getopt_reset();
	opterr = 0;
	/* "+": options end at the command. */
	while ((c = getopt_long(argc, argv, "+p:d:r:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_pid(optarg, &a->pid))
				return cli_usage_error("bench ", "invalid pid '%s'", optarg);
			break;
		case 'd':
			if (!cli_parse_seconds(optarg, 86400, &a->seconds))
				return cli_usage_error("bench ", "invalid duration '%s'", optarg);
			a->seconds_given = true;
			break;
		case 'r':
			if (!sampler_parse_rate(optarg, &a->hz))
				return cli_usage_error("bench ", "invalid rate '%s'", optarg);
			rate_given = true;
			break;
		case 'j': a->json = true; break;
		case 'C': a->cfg.walk.cache = false; break;
		case 'V': a->cfg.verify = true; break;
		case 'F': a->want_floor = true; break;
		case 'S': a->cfg.follow = true; break;
		case 'N': a->cfg.follow = false; break;
		case 'T': a->want_tasks = true; break;
		case 'n': a->cfg.native = true; break;
		case 'K': a->want_cost = true; break;
		case 'h': print_usage(stdout); return 0;
		default:
			return cli_usage_error("bench ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	int bad = cli_pid_or_command("bench ", argc, argv, optind, a->pid, "unexpected argument", "",
				     &a->command);
	if (bad)
		return bad;
	if (a->want_cost && !a->command)
		return cli_usage_error("bench ", "--cost needs -- PYTHON (an interpreter to run "
						 "the counting loop), not -p PID");
	if (a->want_cost && (a->want_tasks || a->want_floor || rate_given))
		return cli_usage_error("bench ", "--cost measures its own settings: not with %s",
				       a->want_tasks ? "--tasks" : a->want_floor ? "--floor" : "-r");
	if (a->want_cost && !a->seconds_given)
		a->seconds = 10;
	if (a->command && (a->want_tasks || a->want_floor))
		return cli_usage_error("bench ", "%s needs -p PID (a running process)",
				       a->want_tasks ? "--tasks" : "--floor");
	/* as everywhere: each native sample's stack copy is the target's to pay */
	if (a->cfg.native && !rate_given)
		a->hz = SAMPLER_NATIVE_RATE_HZ;
	return -1;
}

static void
print_json(const struct bench_args *a, struct session *session, const struct bench_run *r)
{
	struct sampler *s = &session->sampler;
	struct engine_stats *st = &s->stats;
	const struct bench_figures *f = &r->f;
	struct jsonw w;
	jsonw_init(&w, stdout);
	jsonw_object(&w, NULL);
	jsonw_i64(&w, "pid", session->pid);
	jsonw_string(&w, "python", session->target.layout.version_str);
	jsonw_bool(&w, "cache", a->cfg.walk.cache);
	jsonw_double(&w, "seconds", 3, f->secs);
	jsonw_break(&w, "\n ");
	jsonw_u64(&w, "samples", f->samples);
	jsonw_u64(&w, "errors", f->errors);
	jsonw_u64(&w, "read_again", get(&st->retried));
	jsonw_double(&w, "samples_per_sec", 1, f->secs > 0 ? (double)f->samples / f->secs : 0.0);
	jsonw_break(&w, "\n ");
	jsonw_double(&w, "us_per_sample", 3, ratio(get(&st->busy_ns), f->samples) / 1e3);
	jsonw_u64(&w, "thread_samples", f->tsamples);
	jsonw_u64(&w, "consumed", r->consumed);
	jsonw_break(&w, "\n ");
	jsonw_double(&w, "reads_per_sample", 4, ratio(get(&st->remote_reads), f->samples));
	jsonw_double(&w, "bytes_per_sample", 1, ratio(get(&st->remote_bytes), f->samples));
	jsonw_double(&w, "single_reads_per_sample", 4, ratio(get(&st->single_reads), f->samples));
	jsonw_double(&w, "proc_reads_per_sample", 4, ratio(get(&st->proc_reads), f->samples));
	jsonw_break(&w, "\n ");
	jsonw_object(&w, "frame_cache");
	jsonw_u64(&w, "full_hits", f->fh);
	jsonw_u64(&w, "partial_hits", f->ph);
	jsonw_u64(&w, "misses", f->fm);
	jsonw_u64(&w, "frames_reused", get(&st->frames_reused));
	jsonw_u64(&w, "frames_read", get(&st->frames_read));
	jsonw_end(&w);
	jsonw_break(&w, "\n ");
	jsonw_object(&w, "code_cache");
	jsonw_u64(&w, "hits", f->ch);
	jsonw_u64(&w, "misses", f->cm);
	jsonw_u64(&w, "rechecks", get(&st->code_rechecks));
	jsonw_end(&w);
	jsonw_break(&w, "\n ");
	jsonw_object(&w, "batched_reads");
	jsonw_u64(&w, "attempts", get(&st->batch_attempts));
	jsonw_u64(&w, "successes", get(&st->batch_successes));
	jsonw_end(&w);
	jsonw_break(&w, "\n ");
	jsonw_object(&w, "ring");
	jsonw_u64(&w, "capacity", ring_capacity(&s->ring));
	jsonw_u64(&w, "high_water", atomic_load(&s->ring.high_water));
	jsonw_u64(&w, "drops", ring_dropped(&s->ring));
	jsonw_u64(&w, "records", get(&st->records));
	jsonw_end(&w);
	jsonw_break(&w, "\n ");
	jsonw_object(&w, "interned");
	jsonw_u64(&w, "stacks", get(&st->stacks));
	jsonw_u64(&w, "frames", get(&st->frames));
	jsonw_u64(&w, "code_objects", get(&st->codes));
	jsonw_u64(&w, "threads", get(&st->threads));
	jsonw_end(&w);
	jsonw_break(&w, "\n ");
	jsonw_u64(&w, "thread_samples_left_out", get(&st->threads_skipped));
	jsonw_u64(&w, "thread_list_reads", get(&st->list_rebuilds));
	jsonw_u64(&w, "thread_state_bytes", session->target.layout.ts_read_size);
	jsonw_break(&w, "\n ");
	jsonw_u64(&w, "late", get(&st->late));
	jsonw_u64(&w, "missed", get(&st->missed));
	jsonw_double(&w, "sampler_cpu", 3, ratio(get(&st->busy_ns), get(&st->elapsed_ns)));
	jsonw_double(&w, "sampler_on_cpu", 3, ratio(get(&st->sched_cpu_ns), get(&st->elapsed_ns)));
	jsonw_double(&w, "sampler_waiting", 3, ratio(get(&st->sched_wait_ns), get(&st->elapsed_ns)));
	jsonw_double(&w, "sampler_idle_policy", 3,
		     ratio(get(&st->sched_idle_ns), get(&st->elapsed_ns)));
	jsonw_u64(&w, "sampler_fallbacks", get(&st->sched_fallbacks));
	jsonw_i64(&w, "peak_rss_kb", r->peak_rss_kb);
	jsonw_break(&w, "\n ");
	jsonw_object(&w, "machine");
	jsonw_u64(&w, "cpus", get(&st->host_cpus));
	jsonw_double(&w, "runnable", 2, (double)get(&st->host_runnable_milli) / 1e3);
	jsonw_double(&w, "stolen", 3, (double)get(&st->host_steal_pm) / 1e3);
	jsonw_double(&w, "cpu_pressure", 3, (double)get(&st->host_pressure_pm) / 1e3);
	jsonw_end(&w);
	jsonw_break(&w, "\n ");
	if (a->want_floor) {
		jsonw_object(&w, "floor");
		jsonw_double(&w, "syscall_us", 3, r->floor.syscall_us);
		jsonw_double(&w, "readv_us", 3, r->floor.readv_us);
		jsonw_double(&w, "readv2_us", 3, r->floor.readv2_us);
		jsonw_double(&w, "proc_mem_us", 3, r->floor.proc_mem_us);
		jsonw_end(&w);
		jsonw_break(&w, "\n ");
	}
	if (a->cfg.follow)
		print_processes_json(&w, s, f->secs, &r->disc);
	if (a->cfg.native) {
		jsonw_object(&w, "native");
		jsonw_u64(&w, "thread_samples", get(&st->native_threads));
		jsonw_u64(&w, "with_native", get(&st->native_given));
		jsonw_u64(&w, "merged", get(&st->native_merged));
		jsonw_u64(&w, "walks", get(&st->native_walks));
		jsonw_double(&w, "us_per_walk", 1,
			     ratio(get(&st->native_walk_ns), get(&st->native_walks)) / 1e3);
		jsonw_end(&w);
		jsonw_break(&w, "\n ");
	}
	jsonw_object(&w, "verify");
	jsonw_u64(&w, "checked", get(&st->verified));
	jsonw_u64(&w, "mismatched", get(&st->mismatched));
	jsonw_end(&w);
	jsonw_bool(&w, "target_exited", r->how == SAMPLER_TARGET_EXITED);
	jsonw_bool(&w, "interrupted", r->interrupted);
	jsonw_end(&w);
	putchar('\n');
}

static void
print_text(const struct bench_args *a, struct session *session, const struct bench_run *r)
{
	struct sampler *s = &session->sampler;
	struct engine_stats *st = &s->stats;
	const struct bench_figures *f = &r->f;
	printf("target        pid %d, Python %s, %s\n", (int)session->pid, session->target.layout.version_str,
	       a->cfg.walk.cache ? "cached" : "uncached");
	printf("samples       %llu in %.2f s = %.0f/s (%.3f us each), %llu errors\n",
	       (unsigned long long)f->samples, f->secs, f->secs > 0 ? (double)f->samples / f->secs : 0.0,
	       ratio(get(&st->busy_ns), f->samples) / 1e3, (unsigned long long)f->errors);
	printf("threads       %.2f per sample, %llu seen, %llu exited (%llu back after a "
	       "torn list read), %llu slots\n", ratio(f->tsamples, f->samples),
	       (unsigned long long)get(&st->threads), (unsigned long long)get(&st->threads_gone),
	       (unsigned long long)get(&st->threads_revived),
	       (unsigned long long)get(&st->thread_slots));
	printf("              the thread list read again %llu times (it changed)",
	       (unsigned long long)get(&st->list_rebuilds));
	if (get(&st->threads_skipped))
		printf("; %llu thread samples left out: the thread ended while read",
		       (unsigned long long)get(&st->threads_skipped));
	printf("\n");
	printf("remote reads  %.3f per sample, %.0f bytes per sample (%.3f outside the batch)\n",
	       ratio(get(&st->remote_reads), f->samples), ratio(get(&st->remote_bytes), f->samples),
	       ratio(get(&st->single_reads), f->samples));
	printf("frame cache   %.1f%% full hits, %.1f%% partial, %.1f%% misses\n",
	       100 * ratio(f->fh, f->fh + f->ph + f->fm), 100 * ratio(f->ph, f->fh + f->ph + f->fm),
	       100 * ratio(f->fm, f->fh + f->ph + f->fm));
	/* Each code object is missed once, when first seen; when the frame
	 * cache answered every sample after that, there was nothing to hit. */
	if (f->ch == 0 && f->cm <= get(&st->codes))
		printf("code cache    no lookups (%llu objects, each read once when first seen)\n",
		       (unsigned long long)get(&st->codes));
	else
		printf("code cache    %.2f%% hits (%llu objects)\n", 100 * ratio(f->ch, f->ch + f->cm),
		       (unsigned long long)get(&st->codes));
	printf("batched reads %.2f%% complete\n",
	       100 * ratio(get(&st->batch_successes), get(&st->batch_attempts)));
	printf("ring          high water %u of %u, %llu drops\n", atomic_load(&s->ring.high_water),
	       ring_capacity(&s->ring), (unsigned long long)ring_dropped(&s->ring));
	printf("sampler       %.0f%% CPU in passes (%.0f%% on a CPU, %.0f%% waiting for one), "
	       "peak RSS %ld KB\n",
	       100 * ratio(get(&st->busy_ns), get(&st->elapsed_ns)),
	       100 * ratio(get(&st->sched_cpu_ns), get(&st->elapsed_ns)),
	       100 * ratio(get(&st->sched_wait_ns), get(&st->elapsed_ns)), r->peak_rss_kb);
	printf("yielding      %.0f%% of the time under SCHED_IDLE (any target thread takes "
	       "its CPU), %llu fall-backs to the normal policy (the machine was busy)\n",
	       100 * ratio(get(&st->sched_idle_ns), get(&st->elapsed_ns)),
	       (unsigned long long)get(&st->sched_fallbacks));
	printf("machine       %.1f tasks wanting %llu CPUs, %.1f%% of CPU time stolen by the host, "
	       "some task waiting for a CPU %.0f%% of the time (the last half second)\n",
	       (double)get(&st->host_runnable_milli) / 1e3, (unsigned long long)get(&st->host_cpus),
	       (double)get(&st->host_steal_pm) / 10, (double)get(&st->host_pressure_pm) / 10);
	if (a->want_floor)
		printf("read floor    %.3f us per 8-byte process_vm_readv (%.3f us for 8 bytes "
		       "from each of two pages), %.3f us per 8-byte /proc/PID/mem pread, "
		       "%.3f us per bare syscall\n",
		       r->floor.readv_us, r->floor.readv2_us, r->floor.proc_mem_us, r->floor.syscall_us);
	if (get(&st->retried))
		printf("torn reads    %llu reads again at once after a torn one (%llu passes torn every time: errors)\n",
		       (unsigned long long)get(&st->retried), (unsigned long long)f->errors);
	if (f->errors) {
		printf("errors       ");
		for (int k = 0; k < TT_STATUS_COUNT; k++)
			if (get(&st->errors_by_status[k]))
				printf(" %s %llu", tt_status_name((tt_status)k),
				       (unsigned long long)get(&st->errors_by_status[k]));
		printf("; first: %s\n", s->error_example);
	}
	if (a->cfg.native) {
		struct native_shares ns;
		sampler_native_shares(s, &ns);
		uint64_t walks = get(&st->native_walks);
		printf("native        frames in %.1f%% of thread samples, unmerged %.1f%% of those, "
		       "left out in %.1f%% (a perf sample taken in another Python frame); "
		       "%llu walks (%.0f/s), %.0f us each; the rest reused a blocked thread's\n",
		       ns.native_pct, ns.unmerged_pct, ns.moved_pct,
		       (unsigned long long)walks, f->secs > 0 ? (double)walks / f->secs : 0.0,
		       ratio(get(&st->native_walk_ns), walks) / 1e3);
	}
	if (a->cfg.verify)
		printf("verify        %llu thread samples checked, %llu differ%s%s\n",
		       (unsigned long long)get(&st->verified),
		       (unsigned long long)get(&st->mismatched),
		       s->mismatch_example[0] ? ": " : "", s->mismatch_example);
	if (a->cfg.follow)
		print_processes(s, f->secs, &r->disc);
	if (r->how == SAMPLER_TARGET_EXITED)
		printf("target exited during the run\n");
	if (r->interrupted)
		printf("interrupted   after %.2f s\n", f->secs);
}

int
bench_main(int argc, char **argv)
{
	struct bench_args a;
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (a.want_tasks)
		return benchtasks_run(a.pid, a.seconds, a.json);
	if (a.want_cost)
		return benchcost_run(a.command, a.seconds, a.json);

	struct tt_error err = {0};
	struct bench_run r = {0};
	/* The floor is measured before sampling starts, alone on the target. */
	if (a.want_floor) {
		struct target t;
		if (target_attach(&t, a.pid, &err) != TT_OK ||
		    remote_measure_floor(&t.mem, t.runtime_addr, 0.6, &r.floor, &err) != TT_OK)
			return cli_report(&err);
	}
	struct session_options so = {
		.pid = a.pid, .command = a.command, .child_keeps_output = true, .rate_hz = a.hz,
		.duration_s = a.seconds, .no_subprocesses = !a.cfg.follow, .native = a.cfg.native,
		.config = &a.cfg,
	};
	/* Ctrl-C ends the run early: what was measured is still printed. */
	struct session session;
	if (session_catch_stop_signals(&err) != TT_OK ||
	    session_start(&session, &so, &err) != TT_OK)
		return cli_report(&err);
	struct sampler *s = &session.sampler;

	/* Drain the ring as a consumer would, so its figures are real. */
	while (sampler_end_state(s) == SAMPLER_RUNNING && !session_stop_signal()) {
		struct pollfd pfd = {.fd = s->wake_fd, .events = POLLIN};
		poll(&pfd, 1, 2);
		sampler_drain(s, count_weight, &r.consumed);
	}
	/* Discovery's cost, before stopping frees it. */
	if (s->follow) {
		const struct follow_stats *fs = follow_stats(s->follow);
		r.disc.busy_ns = get((_Atomic uint64_t *)&fs->busy_ns);
		r.disc.passes = get((_Atomic uint64_t *)&fs->passes);
		r.disc.scans = get((_Atomic uint64_t *)&fs->scans);
		r.disc.stat_reads = get((_Atomic uint64_t *)&fs->stat_reads);
		r.disc.attaches = get((_Atomic uint64_t *)&fs->attaches);
	}
	sampler_stop(s);
	sampler_drain(s, count_weight, &r.consumed);

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	r.peak_rss_kb = ru.ru_maxrss;
	r.interrupted = session_stop_signal();
	r.how = sampler_end_state(s);
	struct engine_stats *st = &s->stats;
	r.f = (struct bench_figures){
		.samples = get(&st->samples), .errors = get(&st->errors),
		.tsamples = get(&st->thread_samples), .secs = (double)get(&st->elapsed_ns) / 1e9,
		.fh = get(&st->full_hits), .ph = get(&st->partial_hits), .fm = get(&st->misses),
		.ch = get(&st->code_hits), .cm = get(&st->code_misses),
	};
	rc = 0;
	if (r.how == SAMPLER_FAILED)
		rc = cli_report(&s->error);
	if (a.json)
		print_json(&a, &session, &r);
	else
		print_text(&a, &session, &r);
	session_end(&session);
	return rc;
}
