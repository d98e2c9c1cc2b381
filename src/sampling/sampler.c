#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "sampler.h"
#include "unwinder.h"

/* Identical consecutive samples of a thread fold into one record, for at
 * most this long so consumers see time pass. */
#define FOLD_MAX_NS 10000000ull
/* Below this interval, waiting is a spin: sleeps overshoot by tens of µs. */
#define SPIN_BELOW_NS 60000ull
/* Publish walker counters to the shared statistics this often. */
#define PUBLISH_NS 2000000ull

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

static void
publish(struct sampler *s, uint64_t now)
{
	const struct walk_counters *c = stackwalk_counters(s->walk);
	const struct code_cache *codes = stackwalk_codes(s->walk);
	const struct intern *in = stackwalk_intern(s->walk);
	struct engine_stats *st = &s->stats;
	stat_set(&st->full_hits, c->full_hits);
	stat_set(&st->partial_hits, c->partial_hits);
	stat_set(&st->misses, c->misses);
	stat_set(&st->frames_reused, c->frames_reused);
	stat_set(&st->frames_read, c->frames_read);
	stat_set(&st->batch_attempts, c->batch_attempts);
	stat_set(&st->batch_successes, c->batch_successes);
	stat_set(&st->single_reads, c->single_reads);
	stat_set(&st->proc_reads, c->proc_reads);
	stat_set(&st->list_rebuilds, c->list_rebuilds);
	stat_set(&st->code_hits, codes->hits);
	stat_set(&st->code_misses, codes->misses);
	stat_set(&st->code_rechecks, codes->rechecks);
	stat_set(&st->remote_reads, s->target->mem.counters.reads);
	stat_set(&st->remote_bytes, s->target->mem.counters.bytes);
	stat_set(&st->stacks, appendlog_count(in->stacks) - 1);
	stat_set(&st->frames, appendlog_count(in->frames) - 1);
	stat_set(&st->codes, appendlog_count(codes->entries));
	stat_set(&st->threads, c->threads_seen);
	stat_set(&st->threads_gone, c->threads_gone);
	stat_set(&st->threads_revived, c->slots_revived);
	stat_set(&st->thread_slots, appendlog_count(stackwalk_slots(s->walk)));
	stat_set(&st->elapsed_ns, now - s->start_ns);
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
	if (t->slot >= s->npending) {
		uint32_t n = s->npending ? s->npending : 64;
		while (n <= t->slot)
			n *= 2;
		struct pending_record *p = realloc(s->pending, n * sizeof *p);
		if (!p) {
			/* No memory to fold: pass the sample straight on. */
			struct sample_record rec = {.time_ns = now - s->start_ns, .stack_id = t->stack_id,
						    .thread_slot = (uint16_t)t->slot, .state = (uint8_t)t->state,
						    .weight = 1};
			push_record(s, &rec);
			return;
		}
		memset(p + s->npending, 0, (n - s->npending) * sizeof *p);
		s->pending = p;
		s->npending = n;
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
verify_sample(struct sampler *s, struct unwinder *ref, struct tt_sample *rs,
	      const struct walk_thread *threads, uint32_t n)
{
	struct tt_error err;
	if (unwinder_sample(ref, rs, &err) != TT_OK)
		return;
	const struct intern *in = stackwalk_intern(s->walk);
	const struct code_cache *codes = stackwalk_codes(s->walk);
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
			const struct code_entry *a = codecache_get(codes, fr->code_id);
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

static void *
sampler_main(void *arg)
{
	struct sampler *s = arg;
	struct unwinder ref;
	struct tt_sample rs = {0};
	bool verify = s->cfg.verify &&
		      unwinder_init(&ref, s->target, 0, &s->error) == TT_OK;
	uint64_t next = clock_now_ns();
	uint64_t last_publish = 0;
	enum sampler_end how = SAMPLER_STOPPED;
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		uint64_t t0 = clock_now_ns();
		if (s->cfg.duration_ns && t0 - s->start_ns >= s->cfg.duration_ns) {
			how = SAMPLER_DURATION;
			break;
		}
		const struct walk_thread *threads;
		uint32_t n;
		struct tt_error err;
		tt_status st = stackwalk_sample(s->walk, t0, &threads, &n, &err);
		stat_add(&s->stats.samples, 1);
		if (st == TT_OK) {
			for (uint32_t i = 0; i < n; i++)
				fold(s, &threads[i], t0);
			stat_add(&s->stats.thread_samples, n);
			if (verify)
				verify_sample(s, &ref, &rs, threads, n);
		} else {
			stat_add(&s->stats.errors, 1);
			stat_add(&s->stats.errors_by_status[st < TT_STATUS_COUNT ? st : TT_EIO], 1);
			if (!s->error_example[0])
				snprintf(s->error_example, sizeof s->error_example, "%s", err.msg);
			if (st == TT_ENOPROC || !remote_pid_alive(s->target->pid)) {
				how = SAMPLER_TARGET_EXITED;
				break;
			}
			if (st == TT_EPERM || st == TT_ENOMEM || st == TT_EIO) {
				s->error = err;
				how = SAMPLER_FAILED;
				break;
			}
			/* Torn reads of a running target are counted, not fatal. */
		}
		uint64_t t1 = clock_now_ns();
		stat_add(&s->stats.busy_ns, t1 - t0);
		if (t1 - s->last_flush_ns >= FOLD_MAX_NS)
			flush_pending(s, t1, false);
		if (t1 - last_publish >= PUBLISH_NS) {
			publish(s, t1);
			last_publish = t1;
		}
		if (s->cfg.interval_ns) {
			next += s->cfg.interval_ns;
			if (t1 > next) {
				/* Behind schedule: count what we skip and restart the grid. */
				uint64_t behind = (t1 - next) / s->cfg.interval_ns;
				stat_add(&s->stats.late, 1);
				stat_add(&s->stats.missed, behind);
				next += behind * s->cfg.interval_ns;
			} else {
				wait_until(next);
			}
		}
	}
	if (verify) {
		tt_sample_free(&rs);
		unwinder_free(&ref);
	}
	finish(s, how);
	return NULL;
}

tt_status
sampler_start(struct sampler *s, struct target *t, const struct sampler_config *cfg,
	      struct tt_error *err)
{
	memset(s, 0, sizeof *s);
	s->target = t;
	s->cfg = *cfg;
	s->wake_fd = s->wake_write = -1;
	tt_status st = stackwalk_new(t, &cfg->walk, &s->walk, err);
	if (st != TT_OK)
		return st;
	if (!ring_init(&s->ring, cfg->ring_capacity)) {
		stackwalk_free(s->walk);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sample ring");
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
		s->wake_fd = p[0];
		s->wake_write = p[1];
	}
	s->start_ns = clock_now_ns();
	s->last_flush_ns = s->start_ns;
	stackwalk_set_epoch(s->walk, s->start_ns);
	/* The sampler blocks every signal: they belong to the UI thread. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&s->thread, NULL, sampler_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->started = rc == 0;
	if (rc != 0) {
		s->started = false;
		sampler_free(s);
		return tt_fail(err, TT_EIO, rc, "cannot start the sampler thread: %s", strerror(rc));
	}
	return TT_OK;
}

void
sampler_stop(struct sampler *s)
{
	if (!s->walk)
		return;
	atomic_store_explicit(&s->stop, true, memory_order_relaxed);
	if (s->started) {
		pthread_join(s->thread, NULL);
		s->started = false;
	}
}

void
sampler_free(struct sampler *s)
{
	sampler_stop(s);
	stackwalk_free(s->walk);
	s->walk = NULL;
	ring_free(&s->ring);
	free(s->pending);
	s->pending = NULL;
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->wake_write >= 0)
		close(s->wake_write);
	s->wake_fd = s->wake_write = -1;
}
