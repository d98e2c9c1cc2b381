#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "awaitstack.h"
#include "clock.h"
#include "proc/discover.h"
#include "follow.h"
#include "grow.h"
#include "hostload.h"
#include "readfile.h"
#include "nativestack.h"
#include "sampler.h"
#include "walk/plainwalk.h"
#include "workers.h"

/* Identical consecutive samples of a thread fold into one record, for at
 * most this long so consumers see time pass. */
#define FOLD_MAX_NS 10000000ull
/* Below this interval, waiting is a spin: sleeps overshoot by tens of µs. */
#define SPIN_BELOW_NS 60000ull
/* Publish walker counters to the shared statistics this often. */
#define PUBLISH_NS 2000000ull
/* A torn pass is read again at most this many times before it counts. */
#define SAMPLE_READ_AGAIN 2

/* A child whose reads keep failing this long is re-validated (dropped here,
 * attached again by discovery if it is still a Python process: an exec). */
#define CHILD_BAD_NS 200000000ull
#define CHILD_BAD_COUNT 20

struct proc_run {
	uint32_t index;
	uint64_t next;              /* next deadline */
	uint32_t bad;               /* consecutive failed passes */
	uint64_t bad_since;
	struct awaitstack *async;   /* --async, once the process could have tasks */
	struct nativestack *native; /* --native */
};

/* A root that is not Python is not sampled: how often to look whether it
 * still runs (its end ends the session). */
#define OTHER_ROOT_CHECK_NS 100000000ull

/* --async: how often each process's tasks are read. */
#define ASYNC_TASK_INTERVAL_NS 250000000ull

struct pending_record {
	struct sample_record rec;
	uint64_t first_ns;
	bool active;
};

void
sampler_default_config(struct sampler_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->interval_ns = 1000000ull;
	cfg->ring_capacity = 1u << 16;
	stackwalk_default_options(&cfg->walk);
}

bool
sampler_parse_rate(const char *text, double *hz)
{
	if (strcmp(text, "max") == 0) {
		*hz = 0;
		return true;
	}
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || end == text || !isfinite(v) || v <= 0)
		return false;
	if (*end == 'k' || *end == 'K') {
		v *= 1e3;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		v *= 1e6;
		end++;
	}
	if (strcmp(end, "") != 0 && strcasecmp(end, "hz") != 0)
		return false;
	if (v > 1e7)
		return false;
	*hz = v;
	return true;
}

static void
stat_set(_Atomic uint64_t *field, uint64_t v)
{
	atomic_store_explicit(field, v, memory_order_relaxed);
}

static void
stat_add(_Atomic uint64_t *field, uint64_t v)
{
	atomic_fetch_add_explicit(field, v, memory_order_relaxed);
}

/* One process's share of the engine's counters. */
static void
add_totals(struct proc_totals *t, const struct proc_info *p)
{
	const struct walk_counters *w = stackwalk_counters(p->walk);
	t->c.full_hits += w->full_hits;
	t->c.partial_hits += w->partial_hits;
	t->c.misses += w->misses;
	t->c.frames_reused += w->frames_reused;
	t->c.frames_read += w->frames_read;
	t->c.batch_attempts += w->batch_attempts;
	t->c.batch_successes += w->batch_successes;
	t->c.single_reads += w->single_reads;
	t->c.proc_reads += w->proc_reads;
	t->c.list_rebuilds += w->list_rebuilds;
	t->c.threads_seen += w->threads_seen;
	t->c.threads_gone += w->threads_gone;
	t->c.slots_revived += w->slots_revived;
	t->c.threads_skipped += w->threads_skipped;
	const struct code_cache *codes = stackwalk_codes(p->walk);
	t->code_hits += codes->hits;
	t->code_misses += codes->misses;
	t->code_rechecks += codes->rechecks;
	t->codes += codes->entries ? appendlog_count(codes->entries) : 0;
	t->reads += p->target->mem.counters.reads;
	t->bytes += p->target->mem.counters.bytes;
}

static void
publish(struct sampler *s, uint64_t now)
{
	/* The processes sampled now, and those dropped before (their share
	 * was added up when they were: a long run's thousands of exited
	 * workers cost nothing here). */
	struct proc_totals t = s->retired;
	for (uint32_t i = 0; i < s->nrun; i++)
		add_totals(&t, procset_at(&s->procs, s->run[i].index));
	const struct walk_counters c = t.c;
	uint64_t code_hits = t.code_hits, code_misses = t.code_misses,
		 code_rechecks = t.code_rechecks, reads = t.reads, bytes = t.bytes;
	uint64_t stacks = appendlog_count(s->procs.in.stacks) - 1;
	uint64_t frames = appendlog_count(s->procs.in.frames) - 1;
	uint64_t codes_n = t.codes;
	struct engine_stats *st = &s->stats;
	stat_set(&st->full_hits, c.full_hits);
	stat_set(&st->partial_hits, c.partial_hits);
	stat_set(&st->misses, c.misses);
	stat_set(&st->frames_reused, c.frames_reused);
	stat_set(&st->frames_read, c.frames_read);
	stat_set(&st->batch_attempts, c.batch_attempts);
	stat_set(&st->batch_successes, c.batch_successes);
	stat_set(&st->single_reads, c.single_reads);
	stat_set(&st->proc_reads, c.proc_reads);
	stat_set(&st->list_rebuilds, c.list_rebuilds);
	stat_set(&st->code_hits, code_hits);
	stat_set(&st->code_misses, code_misses);
	stat_set(&st->code_rechecks, code_rechecks);
	stat_set(&st->remote_reads, reads);
	stat_set(&st->remote_bytes, bytes);
	stat_set(&st->stacks, stacks);
	stat_set(&st->frames, frames);
	stat_set(&st->codes, codes_n);
	stat_set(&st->threads, c.threads_seen);
	stat_set(&st->threads_gone, c.threads_gone);
	stat_set(&st->threads_revived, c.slots_revived);
	stat_set(&st->threads_skipped, c.threads_skipped);
	stat_set(&st->thread_slots, appendlog_count(s->procs.threads.log));
	stat_set(&st->elapsed_ns, now - s->start_ns);
}

/* The sampler thread's own time on a CPU and waiting for one, at its end
 * (the guard publishes it while the thread runs). */
static void
read_schedstat(struct sampler *s)
{
	uint64_t on, wait;
	if (hostload_thread(0, &on, &wait)) {
		stat_set(&s->stats.sched_cpu_ns, on);
		stat_set(&s->stats.sched_wait_ns, wait);
	}
}

void
sampler_native_shares(const struct sampler *s, struct native_shares *out)
{
	const struct engine_stats *st = &s->stats;
	uint64_t asked = atomic_load_explicit(&st->native_threads, memory_order_relaxed);
	uint64_t given = atomic_load_explicit(&st->native_given, memory_order_relaxed);
	uint64_t merged = atomic_load_explicit(&st->native_merged, memory_order_relaxed);
	out->native_pct = asked ? 100.0 * (double)given / (double)asked : 0.0;
	out->unmerged_pct = given > merged ? 100.0 * (double)(given - merged) / (double)given : 0.0;
	uint64_t moved = atomic_load_explicit(&st->native_moved, memory_order_relaxed);
	out->moved_pct = asked ? 100.0 * (double)moved / (double)asked : 0.0;
	uint64_t unverified = atomic_load_explicit(&st->native_unverified, memory_order_relaxed);
	out->unverified_pct = asked ? 100.0 * (double)unverified / (double)asked : 0.0;
	out->refusal = atomic_load_explicit(&s->native_refused, memory_order_acquire)
			       ? s->native_refusal : NULL;
}

/* What the guard saw of the machine, in words a user can act on: a task
 * or more waits for a CPU all the time, the host steals CPU time; "" when
 * neither. */
static void
machine_reason(struct engine_stats *st, char *buf, size_t len)
{
	buf[0] = '\0';
	uint64_t cpus = atomic_load_explicit(&st->host_cpus, memory_order_relaxed);
	uint64_t runnable = atomic_load_explicit(&st->host_runnable_milli, memory_order_relaxed);
	uint64_t steal = atomic_load_explicit(&st->host_steal_pm, memory_order_relaxed);
	size_t at = 0;
	if (cpus && runnable >= (cpus + 1) * 1000)
		at += (size_t)snprintf(buf, len, "; the machine is busy: %.0f tasks want %llu CPU%s",
				       (double)runnable / 1000, (unsigned long long)cpus,
				       cpus == 1 ? "" : "s");
	if (steal >= 20 && at < len)
		snprintf(buf + at, len - at, "; CPU stolen by the host: %llu%%",
			 (unsigned long long)(steal + 5) / 10);
}

void
sampler_missed_reason(struct engine_stats *st, double rate_hz, uint32_t procs, char *buf,
		      size_t len)
{
	buf[0] = '\0';
	uint64_t elapsed = atomic_load_explicit(&st->elapsed_ns, memory_order_relaxed);
	uint64_t passes = atomic_load_explicit(&st->samples, memory_order_relaxed);
	uint64_t missed = atomic_load_explicit(&st->missed, memory_order_relaxed);
	uint64_t wait = atomic_load_explicit(&st->sched_wait_ns, memory_order_relaxed);
	if (rate_hz <= 0 || elapsed == 0 || passes == 0 || missed * 10 < passes + missed)
		return;   /* at max rate nothing is missed; under 10% is noise */
	double waited = (double)wait / (double)elapsed;
	double ran = (double)atomic_load_explicit(&st->sched_cpu_ns, memory_order_relaxed) /
		     (double)elapsed;
	/* A pass's wall time, not the CPU time: between short deadlines the
	 * sampler spins, and a host's stolen time counts as running. */
	double per_pass_us =
		(double)atomic_load_explicit(&st->busy_ns, memory_order_relaxed) / (double)passes / 1e3;
	double budget_us = 1e6 / (rate_hz * (procs ? procs : 1));
	/* Passes whose time on a CPU is longer than the rate leaves: the
	 * work is too much, though the sampler shares its CPU (a pass that
	 * waited for a CPU halfway is long on the clock, not in work). A
	 * sampler that waited twice as long as it ran is starved instead:
	 * its time on a CPU is too little to tell what a pass takes. */
	double on_cpu = ran + waited > 0 ? ran / (ran + waited) : 1;
	bool overloaded = waited < 2 * ran && per_pass_us * on_cpu >= budget_us;
	char machine[96];
	machine_reason(st, machine, sizeof machine);
	if (waited >= 0.1 && !overloaded) {
		snprintf(buf, len, "short of CPU: waited for one %.0f%% of the time%s", 100 * waited,
			 machine);
		return;
	}
	if (!overloaded && machine[0]) {
		/* Passes that fit, little waiting counted: late wake-ups on a
		 * machine whose CPUs are all taken. */
		snprintf(buf, len, "%s", machine + 2);
		return;
	}
	if (per_pass_us < budget_us) {
		/* Passes that fit, no waiting counted, a machine not full: the
		 * deadlines went by before the sampler woke for them. */
		snprintf(buf, len, budget_us < 10 ? "woke late: a pass takes %.1f us of the %.1f us "
						    "the rate leaves"
						  : "woke late: a pass takes %.0f us of the %.0f us "
						    "the rate leaves",
			 per_pass_us, budget_us);
		return;
	}
	snprintf(buf, len, budget_us < 10 ? "a pass takes %.1f us, the rate leaves %.1f us%s"
					  : "a pass takes %.0f us, the rate leaves %.0f us%s",
		 per_pass_us, budget_us, machine);
}

static void
push_record(struct sampler *s, const struct sample_record *rec)
{
	if (ring_push(&s->ring, rec))
		stat_add(&s->stats.records, 1);
}

static void
flush_pending(struct sampler *s, uint64_t now, bool all)
{
	for (uint32_t i = 0; i < s->npending; i++) {
		struct pending_record *p = &s->pending[i];
		if (p->active && (all || now - p->first_ns >= FOLD_MAX_NS)) {
			push_record(s, &p->rec);
			p->active = false;
		}
	}
	s->last_flush_ns = now;
}

static void
fold(struct sampler *s, const struct walk_thread *t, uint64_t now)
{
	if (!grow_array((void **)&s->pending, &s->npending, t->slot + 1, sizeof *s->pending)) {
		/* No memory to fold: pass the sample straight on. */
		struct sample_record rec = {.time_ns = now - s->start_ns, .stack_id = t->stack_id,
					    .thread_slot = (uint16_t)t->slot, .state = (uint8_t)t->state,
					    .weight = 1};
		push_record(s, &rec);
		return;
	}
	struct pending_record *p = &s->pending[t->slot];
	uint8_t state = (uint8_t)t->state;
	if (p->active && p->rec.stack_id == t->stack_id && p->rec.state == state &&
	    p->rec.weight < 255 && now - p->first_ns < FOLD_MAX_NS) {
		p->rec.weight++;
		p->rec.time_ns = now - s->start_ns;
		return;
	}
	if (p->active)
		push_record(s, &p->rec);
	p->active = true;
	p->first_ns = now;
	p->rec = (struct sample_record){.time_ns = now - s->start_ns, .stack_id = t->stack_id,
					.thread_slot = (uint16_t)(t->slot > 65535 ? 65535 : t->slot),
					.state = state, .weight = 1};
}

/* --verify: does each thread's cached stack equal an independent walk made
 * right after it? The target keeps running in between, so a changing
 * stack can differ legitimately; a cache bug makes them differ persistently. */
static void
verify_sample(struct sampler *s, struct plainwalk *ref, struct tt_sample *rs,
	      const struct walk_thread *threads, uint32_t n)
{
	struct tt_error err;
	if (plainwalk_sample(ref, rs, &err) != TT_OK)
		return;
	const struct intern *in = stackwalk_intern(s->walk);
	const struct appendlog *slots = stackwalk_slots(s->walk);
	for (uint32_t i = 0; i < n; i++) {
		const struct thread_slot *slot = appendlog_at(slots, threads[i].slot);
		const struct tt_thread *rt = NULL;
		for (uint32_t k = 0; k < rs->nthreads && !rt; k++)
			if (rs->threads[k].native_tid == slot->native_tid)
				rt = &rs->threads[k];
		if (!rt)
			continue; /* thread came or went in between */
		bool same = true;
		uint32_t sid = threads[i].stack_id, f = 0;
		const char *what = "";
		for (; sid != 0 && f < rt->nframes; sid = intern_stack_at(in, sid)->parent, f++) {
			const struct interned_frame *fr = intern_frame_at(in, intern_stack_at(in, sid)->frame);
			const struct interned_func *a = intern_func_at(in, fr->func_id);
			const struct tt_frame *rf = &rs->frames[rt->first_frame + f];
			const struct code_entry *b = codecache_get(&ref->codes, rf->code_id);
			if (fr->line != rf->line || strcmp(a->qualname, b->qualname) != 0 ||
			    strcmp(a->filename, b->filename) != 0) {
				same = false;
				what = a->qualname;
				break;
			}
		}
		if (sid != 0 || f != rt->nframes)
			same = false;
		stat_add(&s->stats.verified, 1);
		if (!same) {
			stat_add(&s->stats.mismatched, 1);
			if (!s->mismatch_example[0])
				snprintf(s->mismatch_example, sizeof s->mismatch_example,
					 "thread %llu differs at frame %u (%s)",
					 (unsigned long long)slot->native_tid, f, what);
		}
	}
}

static void
finish(struct sampler *s, enum sampler_end how)
{
	uint64_t now = clock_now_ns();
	flush_pending(s, now, true);
	read_schedstat(s);
	publish(s, now);
	atomic_store_explicit(&s->end, how, memory_order_release);
	if (s->wake_write >= 0) {
		char b = 1;
		if (write(s->wake_write, &b, 1) < 0) {
			/* nobody waits on it */
		}
	}
}

static void
wait_until(uint64_t deadline)
{
	for (;;) {
		uint64_t now = clock_now_ns();
		if (now >= deadline)
			return;
		uint64_t left = deadline - now;
		if (left < SPIN_BELOW_NS)
			continue;
		struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ull),
				      .tv_nsec = (long)(deadline % 1000000000ull)};
		/* Wake a little early and spin the rest for accuracy. */
		uint64_t early = deadline - SPIN_BELOW_NS / 2;
		ts.tv_sec = (time_t)(early / 1000000000ull);
		ts.tv_nsec = (long)(early % 1000000000ull);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

/* Take on processes published since the last look (discovery adds them,
 * at new indices or at ended processes'). */
static void
adopt(struct sampler *s, uint64_t now)
{
	uint64_t adds = atomic_load_explicit(&s->procs.adds, memory_order_acquire);
	if (adds == s->adds_seen)
		return;
	s->adds_seen = adds;
	uint32_t n = procset_count(&s->procs);
	for (uint32_t i = 0; i < n; i++) {
		struct proc_info *p = procset_at(&s->procs, i);
		if (p->adopted || procset_state(p) != PROC_LIVE)
			continue;   /* sampled already, or published as a failure to attach */
		p->adopted = true;
		if (!grow_array((void **)&s->run, &s->run_cap, s->nrun + 1, sizeof *s->run)) {
			/* Not sampled; say so rather than pretend. */
			procset_end(&s->procs, i, PROC_LOST, "out of memory", now);
			continue;
		}
		struct proc_run *r = &s->run[s->nrun++];
		*r = (struct proc_run){.index = i, .next = now};
		struct tt_error err;
		/* A process too old for tasks (awaitstack_new refuses it) is
		 * sampled as it is; sampler_start refuses --async when the root is. */
		if (s->cfg.async_aware &&
		    awaitstack_new(p->target, ASYNC_TASK_INTERVAL_NS, &r->async, &err) != TT_OK)
			r->async = NULL;
		/* Without native frames (its modules unlisted) it is sampled as
		 * it is, its Python frames alone. */
		if (s->cfg.native &&
		    nativestack_new(p->pid, s->cfg.interval_ns, &r->native, &err) != TT_OK)
			r->native = NULL;
	}
}

/* The native frames of this pass's threads (nativestack.h), their counts
 * into the engine's statistics. */
static const struct walk_thread *
native_pass(struct sampler *s, struct proc_run *r, struct proc_info *p,
	    const struct walk_thread *threads, uint32_t n)
{
	struct native_counts before = *nativestack_counts(r->native);
	threads = nativestack_apply(r->native, p->walk, threads, n,
				    r->async ? awaitstack_bases(r->async) : NULL);
	const struct native_counts *c = nativestack_counts(r->native);
	stat_add(&s->stats.native_threads, c->threads - before.threads);
	stat_add(&s->stats.native_given, c->native - before.native);
	stat_add(&s->stats.native_merged, c->merged - before.merged);
	stat_add(&s->stats.native_walks, c->walks - before.walks);
	stat_add(&s->stats.native_walk_ns, c->walk_ns - before.walk_ns);
	stat_add(&s->stats.native_moved, c->moved - before.moved);
	stat_add(&s->stats.native_unverified, c->unverified - before.unverified);
	const char *refusal = nativestack_refusal(r->native);
	if (refusal && !atomic_load_explicit(&s->native_refused, memory_order_relaxed)) {
		snprintf(s->native_refusal, sizeof s->native_refusal, "%s", refusal);
		atomic_store_explicit(&s->native_refused, true, memory_order_release);
	}
	return threads;
}

/* Stop sampling a process: it ended or cannot be read. */
static void
drop(struct sampler *s, uint32_t at, enum proc_state how, const char *note, uint64_t now)
{
	struct proc_info *p = procset_at(&s->procs, s->run[at].index);
	procset_end(&s->procs, p->index, how, note, now);
	add_totals(&s->retired, p);
	stackwalk_retire(p->walk, now);
	awaitstack_free(s->run[at].async);
	nativestack_free(s->run[at].native);
	s->run[at] = s->run[--s->nrun];
}

static void
note_error(struct sampler *s, struct proc_info *p, tt_status st, const struct tt_error *err)
{
	stat_add(&s->stats.errors, 1);
	stat_add(&s->stats.errors_by_status[st < TT_STATUS_COUNT ? st : TT_EIO], 1);
	atomic_fetch_add_explicit(&p->errors, 1, memory_order_relaxed);
	if (!s->error_example[0])
		snprintf(s->error_example, sizeof s->error_example, "%s", err->msg);
}

/* A sample of p failed with st: the session's end when it cannot go on
 * (the root exited or cannot be read), else SAMPLER_RUNNING; *dropped when
 * the child's run was given up (the last run took its place). */
static enum sampler_end
sample_failed(struct sampler *s, struct proc_run *r, struct proc_info *p, tt_status st,
	      struct tt_error *err, uint64_t t0, bool *dropped)
{
	note_error(s, p, st, err);
	bool gone = st == TT_ENOPROC || !remote_pid_alive(p->pid);
	bool fatal = st == TT_EPERM || st == TT_ENOMEM || st == TT_EIO;
	uint32_t at = (uint32_t)(r - s->run);
	if (p->root) {
		if (gone) {
			procset_end(&s->procs, p->index, PROC_EXITED, "exited", t0);
			return SAMPLER_TARGET_EXITED;
		}
		if (fatal) {
			s->error = *err;
			procset_end(&s->procs, p->index, PROC_LOST, err->msg, t0);
			return SAMPLER_FAILED;
		}
		/* Torn reads of a running target are counted, not fatal. */
	} else if (gone) {
		drop(s, at, PROC_EXITED, "exited", t0);
		*dropped = true;
	} else if (fatal) {
		/* A child's trouble is reported in its entry, once. */
		drop(s, at, PROC_LOST, err->msg, t0);
		*dropped = true;
	} else if (r->bad++ == 0) {
		r->bad_since = t0;
	} else if (r->bad >= CHILD_BAD_COUNT && t0 - r->bad_since >= CHILD_BAD_NS) {
		/* Persistently unreadable: most likely it exec'ed. */
		drop(s, at, PROC_STALE, "unreadable for a while (exec'ed?)", t0);
		*dropped = true;
	}
	return SAMPLER_RUNNING;
}

/* After each pass, at their own paces: pending folds out to the ring and
 * the published counters. */
static void
after_pass(struct sampler *s, uint64_t t1, uint64_t *last_publish)
{
	if (t1 - s->last_flush_ns >= FOLD_MAX_NS)
		flush_pending(s, t1, false);
	if (t1 - *last_publish >= PUBLISH_NS) {
		publish(s, t1);
		*last_publish = t1;
	}
}

/* The run's next deadline on its grid; behind schedule, what is skipped
 * is counted and the grid restarts. */
static void
next_deadline(struct sampler *s, struct proc_run *r, uint64_t t1)
{
	r->next += s->cfg.interval_ns;
	if (t1 > r->next) {
		uint64_t behind = (t1 - r->next) / s->cfg.interval_ns;
		stat_add(&s->stats.late, 1);
		stat_add(&s->stats.missed, behind);
		r->next += behind * s->cfg.interval_ns;
	}
}

/* Apply a pause or a resumption asked for (sampler_pause): the kernel's
 * perf samples stop with the passes; on resuming every process's schedule
 * starts afresh (the pause is not missed samples). */
static void
apply_pause(struct sampler *s, bool pause, uint64_t now)
{
	atomic_store_explicit(&s->paused, pause, memory_order_release);
	for (uint32_t i = 0; i < s->nrun; i++) {
		if (s->run[i].native) {
			uint64_t before = nativestack_counts(s->run[i].native)->paused_samples;
			nativestack_pause(s->run[i].native, pause);
			stat_add(&s->stats.native_paused_samples,
				 nativestack_counts(s->run[i].native)->paused_samples - before);
		}
		s->run[i].next = now;
	}
}

void
sampler_pause(struct sampler *s, bool paused)
{
	atomic_store_explicit(&s->pause, paused, memory_order_relaxed);
}

bool
sampler_paused(struct sampler *s)
{
	return atomic_load_explicit(&s->paused, memory_order_acquire);
}

#define FIRST_PASS_WAIT_NS 5000000000ull

bool
sampler_window_may_roll(struct sampler *s, uint64_t elapsed_ns, uint64_t delay_ns)
{
	return atomic_load_explicit(&s->passed, memory_order_acquire) ||
	       elapsed_ns >= delay_ns + FIRST_PASS_WAIT_NS;
}

static void *
sampler_main(void *arg)
{
	struct sampler *s = arg;
	struct plainwalk ref;
	struct tt_sample rs = {0};
	bool verify = s->cfg.verify &&
		      plainwalk_init(&ref, s->target, 0, &s->error) == TT_OK;
	uint64_t last_publish = 0;
	enum sampler_end how = SAMPLER_STOPPED;
	atomic_store_explicit(&s->tid, gettid(), memory_order_release);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		uint64_t t0 = clock_now_ns();
		if (s->cfg.duration_ns && t0 - s->start_ns >= s->cfg.duration_ns) {
			how = SAMPLER_DURATION;
			break;
		}
		adopt(s, t0);
		bool pause = atomic_load_explicit(&s->pause, memory_order_relaxed);
		if (pause != atomic_load_explicit(&s->paused, memory_order_relaxed))
			apply_pause(s, pause, t0);
		if (pause) {
			struct timespec ts = {0, 1000000L};
			nanosleep(&ts, NULL);
			continue;
		}
		if (s->cfg.other_root && t0 >= s->next_root_check) {
			s->next_root_check = t0 + OTHER_ROOT_CHECK_NS;
			if (!discover_running(s->cfg.other_root)) {
				procset_end(&s->procs, 0, PROC_EXITED, "exited", t0);
				how = SAMPLER_TARGET_EXITED;
				break;
			}
		}
		if (s->nrun == 0) {
			if (s->cfg.other_root) {
				/* Between Python descendants: wait for the next one. */
				struct timespec ts = {0, 10000000L};
				nanosleep(&ts, NULL);
				continue;
			}
			/* Only the root ends a session, and it has ended: see below. */
			how = SAMPLER_TARGET_EXITED;
			break;
		}
		if (s->cursor >= s->nrun)
			s->cursor = 0;
		struct proc_run *r = &s->run[s->cursor];
		if (s->cfg.interval_ns && r->next > t0) {
			wait_until(r->next);
			t0 = clock_now_ns();
		}
		struct proc_info *p = procset_at(&s->procs, r->index);
		const struct walk_thread *threads;
		uint32_t n;
		struct tt_error err;
		tt_status st = stackwalk_sample(p->walk, t0, &threads, &n, &err);
		/* A torn read (a frame or task pushed or popped while read: the
		 * target runs on) is read again at once, at most twice: a target
		 * making thousands of frames a second tears a few reads in a
		 * thousand, and one in six of those again. */
		for (int again = 0; again < SAMPLE_READ_AGAIN && (st == TT_EBADMEM || st == TT_EFAULT);
		     again++) {
			stat_add(&s->stats.retried, 1);
			st = stackwalk_sample(p->walk, clock_now_ns(), &threads, &n, &err);
		}
		stat_add(&s->stats.samples, 1);
		atomic_fetch_add_explicit(&p->samples, 1, memory_order_relaxed);
		bool dropped = false;
		if (st == TT_OK) {
			r->bad = 0;
			if (!atomic_load_explicit(&p->first_ns, memory_order_relaxed))
				atomic_store_explicit(&p->first_ns, t0, memory_order_relaxed);
			if (verify && p->walk == s->walk)
				verify_sample(s, &ref, &rs, threads, n);
			if (r->async)
				threads = awaitstack_apply(r->async, p->walk, threads, n, t0);
			if (r->native)
				threads = native_pass(s, r, p, threads, n);
			for (uint32_t i = 0; i < n; i++)
				fold(s, &threads[i], t0);
			stat_add(&s->stats.thread_samples, n);
		} else {
			enum sampler_end end = sample_failed(s, r, p, st, &err, t0, &dropped);
			if (end != SAMPLER_RUNNING) {
				how = end;
				break;
			}
		}
		uint64_t t1 = clock_now_ns();
		stat_add(&s->stats.busy_ns, t1 - t0);
		atomic_store_explicit(&s->passed, true, memory_order_release);
		after_pass(s, t1, &last_publish);
		if (dropped)
			continue;   /* the last run took this place: it is next */
		if (s->cfg.interval_ns)
			next_deadline(s, r, t1);
		s->cursor++;
	}
	if (how == SAMPLER_STOPPED && atomic_load_explicit(&s->duration_over, memory_order_relaxed))
		how = SAMPLER_DURATION;
	if (verify) {
		tt_sample_free(&rs);
		plainwalk_free(&ref);
	}
	for (uint32_t i = 0; i < s->nrun; i++) {
		awaitstack_free(s->run[i].async);
		s->run[i].async = NULL;
		nativestack_free(s->run[i].native);
		s->run[i].native = NULL;
	}
	finish(s, how);
	return NULL;
}

tt_status
sampler_start(struct sampler *s, struct target *t, const struct sampler_config *cfg,
	      struct tt_error *err)
{
	memset(s, 0, sizeof *s);
	s->cfg = *cfg;
	s->wake_fd = s->wake_write = -1;
	if (cfg->async_aware && !t->layout.has_async)
		return tt_fail(err, TT_EUSAGE, 0,
			       "--async needs Python 3.14 or newer (process %d runs Python %s)",
			       (int)t->pid, t->layout.version_str);
	if (procset_init(&s->procs) != 0)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sampler");
	uint32_t first;
	tt_status st = TT_OK;
	if (cfg->other_root > 0)
		st = procset_add_unsampled(&s->procs, cfg->other_root, follow_ppid(cfg->other_root),
					   true, PROC_OTHER, "not Python", clock_now_ns(), &first, err);
	if (st == TT_OK)
		st = procset_add(&s->procs, t, t->pid > 0 ? follow_ppid(t->pid) : 0,
				 cfg->other_root <= 0, &cfg->walk, clock_now_ns(), &first, err);
	if (st != TT_OK) {
		procset_free(&s->procs);
		return st;
	}
	s->target = procset_at(&s->procs, first)->target;
	s->walk = procset_at(&s->procs, first)->walk;
	s->procs.pinned = procset_count(&s->procs);   /* s->target and s->walk stay */
	if (!ring_init(&s->ring, cfg->ring_capacity)) {
		procset_free(&s->procs);
		s->walk = NULL;
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sample ring");
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
		s->wake_fd = p[0];
		s->wake_write = p[1];
	}
	s->start_ns = clock_now_ns();
	s->last_flush_ns = s->start_ns;
	s->procs.epoch_ns = s->start_ns;
	stackwalk_set_epoch(s->walk, s->start_ns);
	int rc = worker_start(&s->thread, "tt-sampler", sampler_main, s);
	s->started = rc == 0;
	/* At max rate the sampler is asked for all the CPU it can get: a
	 * target thread preempting it mid-pass only stretches the pass (bench
	 * on a churning pool of 500: half the rate; under ASan, 40% torn). A
	 * pass with native walks takes milliseconds (its first ones read the
	 * libraries' symbols): under SCHED_IDLE it would wait for a CPU, so
	 * --native keeps the normal policy too. */
	int guard_rc = rc == 0 ? guard_start(&s->guard, s, cfg->interval_ns != 0 && !cfg->native) : 0;
	if (rc != 0 || guard_rc != 0) {
		sampler_free(s);
		return tt_fail(err, TT_EIO, rc ? rc : guard_rc, "cannot start the sampler%s thread: %s",
			       rc ? "" : "'s guard", strerror(rc ? rc : guard_rc));
	}
	if (cfg->follow && t->pid > 0)
		s->follow = follow_start(&s->procs, &cfg->walk);
	return TT_OK;
}

void
sampler_stop(struct sampler *s)
{
	if (!s->walk)
		return;
	/* Discovery first: it adds processes the sampler would take on. */
	follow_stop(s->follow);
	s->follow = NULL;
	atomic_store_explicit(&s->stop, true, memory_order_relaxed);
	if (s->started) {
		pthread_join(s->thread, NULL);
		s->started = false;
	}
	guard_stop(&s->guard);
}

void
sampler_drain(struct sampler *s, sampler_take_fn *take, void *ctx)
{
	/* Batches of ring_pop, not one record at a time: one atomic
	 * exchange per batch on the shared indices. */
	struct sample_record batch[512];
	size_t n;
	while ((n = ring_pop(&s->ring, batch, sizeof batch / sizeof batch[0])) > 0)
		take(ctx, batch, n);
}

void
sampler_free(struct sampler *s)
{
	sampler_stop(s);
	if (s->procs.procs)
		procset_free(&s->procs);
	s->walk = NULL;
	s->target = NULL;
	free(s->run);
	s->run = NULL;
	ring_free(&s->ring);
	free(s->pending);
	s->pending = NULL;
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->wake_write >= 0)
		close(s->wake_write);
	s->wake_fd = s->wake_write = -1;
}
