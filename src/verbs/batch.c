#include "config.h"

#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "batchtree.h"
#include "cli.h"
#include "clock.h"
#include "draw.h"
#include "waitwatch.h"
#include "sanitize.h"


/* "16481", or "16481 (ns 3)" for a thread whose own namespace calls it 3
 * (a container): logs print threading.get_native_id(), which is the latter. */
static void
format_tid(const struct thread_slot *ts, char *buf, size_t len)
{
	if (ts->tid_unknown || ts->ns_tid == ts->native_tid || ts->ns_tid == 0)
		snprintf(buf, len, "%llu", (unsigned long long)ts->native_tid);
	else
		snprintf(buf, len, "%llu (ns %llu)", (unsigned long long)ts->native_tid,
			 (unsigned long long)ts->ns_tid);
}

static void
drain(struct session *s, struct aggregate *agg)
{
	sampler_drain(&s->sampler, agg_take, agg);
}

/* The processes a table covers: a count line, then one line each. */
static void
print_processes(const struct live_options *o, struct session *s, struct aggregate *agg,
		enum agg_scope scope)
{
	const struct procset *ps = &s->sampler.procs;
	uint32_t n = procset_count(ps), live;
	uint64_t ended;
	procset_counts(ps, &live, &ended);
	printf("processes %llu (%u live, %llu exited)\n", (unsigned long long)(live + ended), live,
	       (unsigned long long)ended);
	if (n < 2)
		return;
	printf("%7s %7s %-9s %4s %9s %6s %6s  %-8s %s\n", "PID", "PPID", "PYTHON", "THR", "SAMPLES",
	       "GIL%", "CPU%", "STATE", "COMMAND");
	uint32_t nslots = appendlog_count(ps->threads.log);
	uint32_t *order = procset_table_order(ps, n);
	for (uint32_t r = 0; r < n && r < (uint32_t)o->limit; r++) {
		uint32_t i = order ? order[r] : r;
		const struct proc_info *p = procset_at(ps, i);
		uint64_t samples = 0, gil = 0, cpu = 0;
		uint32_t threads = 0;
		for (uint32_t k = 0; k < agg->nthreads && k < nslots; k++) {
			const struct agg_thread *t = &agg->threads[k];
			if (!t->seen || t->proc != i)
				continue;
			/* THR: threads alive; ended ones not yet folded still count below */
			threads += procset_slot_live(ps, k);
			samples += t->samples[scope];
			gil += t->gil[scope];
			cpu += t->on_cpu[scope];
		}
		const struct agg_thread *ex = agg_exited_of(agg, i);
		if (ex) { /* its threads folded into the exited bucket */
			samples += ex->samples[scope];
			gil += ex->gil[scope];
			cpu += ex->on_cpu[scope];
		}
		enum proc_state st = procset_state(p);
		char cmd[300];
		/* A process in a container: its pid there first (what its logs say). */
		int tag = p->ns_pid ? snprintf(cmd, sizeof cmd, "[ns pid %llu] ",
					       (unsigned long long)p->ns_pid) : 0;
		sanitize_for_terminal(procset_cmdline(p), cmd + tag, sizeof cmd - (size_t)tag);
		double d = samples ? (double)samples : 1;
		printf("%7d %7d %-9s %4u %9llu %6.1f %6.1f  %-8s %.80s", (int)p->pid, (int)p->ppid,
		       p->version, threads, (unsigned long long)samples, 100.0 * (double)gil / d,
		       100.0 * (double)cpu / d,
		       procset_state_label(p), cmd);
		if (st == PROC_LOST || st == PROC_OTHER) {
			char note[200];
			sanitize_for_terminal(p->note, note, sizeof note);
			printf(" (%s)", note);
		}
		printf("\n");
	}
	free(order);
	if (n > (uint32_t)o->limit)
		printf("(%u more)\n", n - (uint32_t)o->limit);
	if (agg->exited_procs_folded)
		printf("(%llu exited processes folded: their samples are in the totals above)\n",
		       (unsigned long long)agg->exited_procs_folded);
}

static void
print_table(const struct live_options *o, struct session *s, struct aggregate *agg,
	    struct agg_table *t, enum agg_scope scope, double seconds, const char *title)
{
	struct engine_stats *st = &s->sampler.stats;
	uint64_t samples = atomic_load(&st->samples);
	struct session_rate sr;
	session_rate_now(s, clock_now_ns(), &sr);
	char cmd[600];
	sanitize_for_terminal(s->cmdline, cmd, sizeof cmd);
	printf("tachyon-top %s - pid %d - %s - Python %s\n", title, (int)s->pid, cmd,
	       s->target.layout.version_str);
	char req[64];
	if (s->rate_hz > 0)
		snprintf(req, sizeof req, "%.0f/s%s", s->rate_hz,
			 s->sampler.cfg.follow ? " per process" : "");
	else
		snprintf(req, sizeof req, "max");
	uint32_t live;
	uint64_t ended;
	procset_counts(&s->sampler.procs, &live, &ended);
	char why[SAMPLER_REASON_MAX], why_s[SAMPLER_REASON_MAX + 4] = "";
	sampler_missed_reason(st, s->rate_hz, live, why, sizeof why);
	if (why[0])
		snprintf(why_s, sizeof why_s, " (%s)", why);
	printf("rate %.0f/s (requested %s), missed %.1f%%%s, errors %.2f%%, samples %llu; "
	       "%s %.2f s; mode %s; by %s%s\n",
	       sr.per_s, req, sr.missed_pct, why_s, sr.errors_pct,
	       (unsigned long long)samples, scope == AGG_WINDOW ? "window" : "session", seconds,
	       agg_mode_name(o->mode), o->by_line ? "line" : "function",
	       s->sampler.cfg.async_aware ? "; tasks on their await chains (--async)" : "");
	if (s->sampler.cfg.native) {
		struct native_shares ns;
		sampler_native_shares(&s->sampler, &ns);
		printf("native frames in %.1f%% of thread samples, unmerged %.1f%% of those%s%s; "
		       "left out in %.1f%%: a perf sample taken in another Python frame\n",
		       ns.native_pct, ns.unmerged_pct,
		       ns.refusal ? "; threads on a CPU have their Python frames only: " : "",
		       ns.refusal ? ns.refusal : "", ns.moved_pct);
	}
	if (s->sampler.cfg.follow)
		print_processes(o, s, agg, scope);
	printf("threads %llu seen, %llu exited (%llu folded into the exited bucket, %.1f%% of "
	       "session samples)\n",
	       (unsigned long long)atomic_load(&st->threads),
	       (unsigned long long)atomic_load(&st->threads_gone),
	       (unsigned long long)agg->exited_threads,
	       agg->samples[AGG_SESSION]
		       ? 100.0 * (double)agg->exited.samples[AGG_SESSION] / (double)agg->samples[AGG_SESSION]
		       : 0.0);
	struct agg_query q = {.mode = o->mode, .scope = scope, .by_line = o->by_line, .slot = -1, .proc = -1,
			      .sort = o->sort};
	if (o->tree) {
		batch_print_tree(o, agg, &q, stdout);
		printf("\n");
		fflush(stdout);
		return;
	}
	if (!agg_build_table(agg, &q, t)) {
		printf("(out of memory building the table)\n\n");
		return;
	}
	/* Time per sample: one sampling interval of the thread's life. */
	double per_sample = sr.per_s > 0 ? 1.0 / sr.per_s : 0;
	/* A sample is one process's: its share of that process's life. */
	if (procset_count(&s->sampler.procs) > 1 && samples)
		per_sample = sr.life_s / (double)samples;
	printf("%7s %7s %9s %9s  %-40s %s\n", "OWN%", "TOTAL%", "OWN(s)", "TOTAL(s)", "FUNCTION",
	       "FILE:LINE");
	uint32_t n = t->nrows < (uint32_t)o->limit ? t->nrows : (uint32_t)o->limit;
	for (uint32_t i = 0; i < n; i++) {
		const struct agg_row *r = &t->rows[i];
		const struct agg_func *f = &agg->funcs[r->func];
		char name[512], where[1100], file[1200];
		sanitize_for_terminal(f->qualname, name, sizeof name);
		agg_func_where(f, r->line, where, sizeof where);
		sanitize_for_terminal(where, file, sizeof file);
		double d = t->denominator ? (double)t->denominator : 1;
		printf("%7.2f %7.2f %9.3f %9.3f  %-40s %s\n", 100.0 * (double)r->own / d,
		       100.0 * (double)r->total / d, (double)r->own * per_sample,
		       (double)r->total * per_sample, name, file);
	}
	if (t->nrows == 0)
		printf("(no samples%s)\n", o->mode != AGG_WALL ? " in this mode" : "");
	printf("\n");
	fflush(stdout);
}

#define THREAD_COLUMN_MAX 40

/* The slot's thread's name, sanitized for a terminal. */
static void
thread_name(const struct thread_slot *ts, char *out, size_t len)
{
	char *name = atomic_load_explicit(&((struct thread_slot *)ts)->name, memory_order_acquire);
	sanitize_for_terminal(name ? name : "?", out, len);
}

/* Each thread and what it waits for in the kernel (the watcher's newest
 * look; kept in *kw, which this owns). */
static void
print_threads(struct session *s, struct aggregate *agg, struct waitwatch_snapshot **kw)
{
	struct waitwatch_snapshot *fresh = waitwatch_take(s->waitwatch);
	if (fresh) {
		free(*kw);
		*kw = fresh;
	}
	if (!s->waitwatch)
		return;
	const struct appendlog *slots = s->sampler.procs.threads.log;
	uint64_t now = clock_now_ns();
	/* the THREAD column as wide as its longest name (Python's names run
	 * long: "ThreadPoolExecutor-0_12"), up to THREAD_COLUMN_MAX */
	int width = 16;
	for (uint32_t i = 0; i < agg->nthreads; i++) {
		char safe_name[128];
		if (!agg->threads[i].seen)
			continue;
		thread_name(appendlog_at(slots, i), safe_name, sizeof safe_name);
		int w = draw_text_width(safe_name, strlen(safe_name));
		if (w > width)
			width = w < THREAD_COLUMN_MAX ? w : THREAD_COLUMN_MAX;
	}
	printf("%10s  %s%*s %s\n", "TID", "THREAD", width - 6, "", "KERNEL");
	for (uint32_t i = 0; i < agg->nthreads; i++) {
		if (!agg->threads[i].seen)
			continue;
		const struct thread_slot *ts = appendlog_at(slots, i);
		char safe_name[128], raw[2 * KWAIT_OBJECT_MAX], safe[4 * KWAIT_OBJECT_MAX];
		thread_name(ts, safe_name, sizeof safe_name);
		const struct waitwatch_entry *e = ts->tid_unknown ? NULL : waitwatch_find(*kw, ts->native_tid);
		if (e)
			kwait_format(&e->info, waitwatch_seconds(e, now), raw, sizeof raw);
		else
			snprintf(raw, sizeof raw, ts->tid_unknown ? "? (no task of the process is this "
								     "thread)" : "-");
		sanitize_for_terminal(raw, safe, sizeof safe);
		char tid[48];
		format_tid(ts, tid, sizeof tid);
		int pad = width - draw_text_width(safe_name, strlen(safe_name));
		printf("%10s  %s%*s %s\n", tid, safe_name, pad > 0 ? pad : 0, "", safe);
	}
	printf("\n");
	fflush(stdout);
}

int
batch_run(const struct live_options *o)
{
	struct tt_error err = {0};
	struct session s;
	if (session_catch_stop_signals(&err) != TT_OK ||
	    session_start(&s, &o->session, &err) != TT_OK)
		return cli_report(&err);
	struct aggregate agg;
	uint64_t start = clock_now_ns();
	agg_init(&agg, &s.sampler.procs, start);
	struct agg_table table = {0};
	uint64_t delay = (uint64_t)(o->delay_s * 1e9), next = start + delay;
	long printed = 0;
	struct waitwatch_snapshot *kw = NULL;
	while (!session_stop_signal() && sampler_end_state(&s.sampler) == SAMPLER_RUNNING) {
		struct pollfd pfd = {.fd = s.sampler.wake_fd, .events = POLLIN};
		poll(&pfd, 1, 20);
		bool may_roll = sampler_window_may_roll(&s.sampler, clock_now_ns() - start, delay);
		drain(&s, &agg);
		session_poll_child(&s);
		uint64_t now = clock_now_ns();
		if (now >= next && may_roll) {
			agg_roll_window(&agg, now);
			print_table(o, &s, &agg, &table, AGG_WINDOW, (double)agg.window_ns / 1e9, "window");
			print_threads(&s, &agg, &kw);
			next += delay;
			if (next < now)
				next = now + delay;
			if (o->iterations && ++printed >= o->iterations)
				break;
		}
	}
	enum sampler_end how = sampler_end_state(&s.sampler);
	sampler_stop(&s.sampler);
	drain(&s, &agg);
	agg_roll_window(&agg, clock_now_ns());
	print_table(o, &s, &agg, &table, AGG_SESSION, (double)(clock_now_ns() - start) / 1e9,
		    "session (final)");
	if (how == SAMPLER_RUNNING || how == SAMPLER_STOPPED || how == SAMPLER_DURATION)
		print_threads(&s, &agg, &kw);
	free(kw);
	int rc = 0;
	/* The sampler may notice the end before the child is reapable: give
	 * it a moment, so the exit status is reported rather than guessed. */
	if (how == SAMPLER_TARGET_EXITED)
		session_wait_child(&s, 1000000000ull);
	else
		session_poll_child(&s);
	if (s.child && s.child_exited) {
		char how_s[96];
		session_describe_exit(&s, how_s, sizeof how_s);
		printf("process %d %s\n", (int)s.pid, how_s);
	} else if (how == SAMPLER_TARGET_EXITED) {
		printf("process %d exited\n", (int)s.pid);
	} else if (how == SAMPLER_FAILED) {
		rc = cli_report(&s.sampler.error);
	}
	agg_table_free(&table);
	batch_tree_free();
	agg_free(&agg);
	session_end(&s);
	return rc;
}
