#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "hash.h"
#include "taskwatch.h"

/* While asyncio is absent, look for it again this often. */
#define PROBE_INTERVAL_NS 1000000000ull

struct fp_entry {
	uint64_t id;               /* task address */
	uint64_t who;              /* its coroutine and name: a new task at the same
				      address (tasks come and go) differs here */
	uint64_t fp;
	uint64_t since_ns;
	bool before;               /* there since the first read: since_ns is a lower bound */
};

/* ---- snapshot building ---- */

void
task_snapshot_free(struct task_snapshot *s)
{
	if (!s)
		return;
	tt_tasks_free(&s->tasks);
	free(s->stuck_ns);
	free(s->stuck_before);
	free(s->groups);
	free(s->members);
	free(s);
}

static uint64_t
fingerprint(const struct tt_tasks *ts, const struct tt_task *t)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ t->nframes;
	for (uint32_t i = 0; i < t->nframes; i++) {
		const struct tt_frame *f = &ts->frames[t->first_frame + i];
		h = (h ^ hash_mix64(((uint64_t)f->code_id << 32) | (uint32_t)f->line)) *
		    0x100000001B3ull;
	}
	return h;
}

struct fp_table {
	struct fp_entry *v;
	uint32_t n;
	struct idindex ix;
};

static uint32_t
fp_hash_at(const void *ctx, uint32_t id)
{
	const struct fp_table *t = ctx;
	return hash_mix64(t->v[id - 1].id);
}

/* Where task address `id` is in t's index: the slot holding it, or the
 * empty slot where it would go. */
static uint32_t
fp_slot(const struct fp_table *t, uint64_t id)
{
	uint32_t k = idindex_start(&t->ix, hash_mix64(id));
	while (t->ix.slots[k] && t->v[t->ix.slots[k] - 1].id != id)
		k = idindex_next(&t->ix, k);
	return k;
}

/* Which task an address holds: its coroutine object and its name (by
 * default "Task-N", from a counter). Under churn a finished task's address
 * soon holds a new one at the same point: without this, the new task would
 * inherit the old one's stuck time. */
static uint64_t
task_who(const struct tt_tasks *ts, const struct tt_task *t)
{
	return hash_mix64(t->coro) ^ hash_fnv(HASH_FNV_SEED, tt_task_name(ts, t));
}

/* Record each task's fingerprint; a task whose fingerprint is unchanged
 * keeps the time it was first seen at that point. */
static bool
update_fingerprints(struct taskwatch *w, struct task_snapshot *s, uint64_t now)
{
	struct fp_table old = {w->fps, w->nfps, w->fp_index}, tab = {0};
	tab.v = malloc((s->tasks.n + 1) * sizeof *tab.v);
	s->stuck_ns = malloc((s->tasks.n + 1) * sizeof *s->stuck_ns);
	s->stuck_before = malloc((s->tasks.n + 1) * sizeof *s->stuck_before);
	if (!tab.v || !s->stuck_ns || !s->stuck_before) {
		free(tab.v);
		return false;
	}
	for (uint32_t i = 0; i < s->tasks.n; i++) {
		const struct tt_task *t = &s->tasks.tasks[i];
		uint64_t fp = fingerprint(&s->tasks, t), who = task_who(&s->tasks, t);
		uint32_t at = old.n ? old.ix.slots[fp_slot(&old, t->id)] : 0;
		const struct fp_entry *was = at ? &old.v[at - 1] : NULL;
		bool same = was && was->fp == fp && was->who == who;
		uint64_t since = same ? was->since_ns : now;
		/* On the first read every task has been where it is for an
		 * unknown time already: what we measure is a lower bound. */
		bool before = same ? was->before : !was && s->reads == 1;
		s->stuck_ns[i] = now - since;
		s->stuck_before[i] = before;
		if (!idindex_reserve(&tab.ix, 1, tab.n + 1, 64, fp_hash_at, &tab)) {
			free(tab.v);
			idindex_free(&tab.ix);
			return false;
		}
		uint32_t k = fp_slot(&tab, t->id);
		if (!tab.ix.slots[k])
			tab.ix.slots[k] = ++tab.n;
		tab.v[tab.ix.slots[k] - 1] = (struct fp_entry){.id = t->id, .who = who, .fp = fp,
							       .since_ns = since, .before = before};
	}
	free(w->fps);
	idindex_free(&w->fp_index);
	w->fps = tab.v;
	w->nfps = tab.n;
	w->fp_index = tab.ix;
	return true;
}

/* Code of the standard library or an installed package, as opposed to the
 * application's own. */
static bool
is_library_file(const char *path)
{
	return strstr(path, "/lib/python3") || strstr(path, "-packages/") ||
	       strncmp(path, "<frozen", 7) == 0;
}

/* A suspension point: the innermost frame and the first application frame
 * awaiting it ("Queue.get <- worker (app.py:33)"); the direct caller when the
 * whole chain is library code. */
static void
group_key(const struct code_cache *codes, const struct tt_tasks *ts, const struct tt_task *t,
	  struct task_group *g)
{
	g->frame0 = g->frame1 = UINT32_MAX;
	g->line0 = g->line1 = -1;
	if (t->nframes == 0)
		return;
	const struct tt_frame *f = ts->frames + t->first_frame;
	g->frame0 = f[0].code_id;
	g->line0 = f[0].line;
	if (t->nframes == 1)
		return;
	uint32_t caller = 1;
	for (uint32_t i = 1; i < t->nframes; i++) {
		if (!is_library_file(codecache_get(codes, f[i].code_id)->filename)) {
			caller = i;
			break;
		}
	}
	g->frame1 = f[caller].code_id;
	g->line1 = f[caller].line;
}

static bool
same_point(const struct task_group *a, const struct task_group *b)
{
	return a->frame0 == b->frame0 && a->frame1 == b->frame1 && a->line0 == b->line0 &&
	       a->line1 == b->line1;
}

static int
cmp_stuck(const void *a, const void *b, void *ctx)
{
	const struct task_snapshot *s = ctx;
	uint64_t x = s->stuck_ns[*(const uint32_t *)a];
	uint64_t y = s->stuck_ns[*(const uint32_t *)b];
	return x < y ? 1 : x > y ? -1 : 0;
}

static uint32_t
point_hash(const struct task_group *key)
{
	return hash_mix64(((uint64_t)key->frame0 << 32 | key->frame1) ^
			  ((uint64_t)(uint32_t)key->line0 << 32 | (uint32_t)key->line1) *
				  0x9E3779B97F4A7C15ull);
}

static uint32_t
group_hash_at(const void *ctx, uint32_t id)
{
	const struct task_snapshot *s = ctx;
	return point_hash(&s->groups[id - 1]);
}

/* Group tasks by suspension point (an index of the groups by key). */
static bool
build_groups(struct task_snapshot *s)
{
	uint32_t n = s->tasks.n;
	struct idindex ix = {0};
	uint32_t *group_of = malloc((n + 1) * sizeof *group_of);
	s->groups = calloc(n + 1, sizeof *s->groups);
	s->members = malloc((n + 1) * sizeof *s->members);
	if (!group_of || !s->groups || !s->members) {
		free(group_of);
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct task_group key = {0};
		group_key(s->codes, &s->tasks, &s->tasks.tasks[i], &key);
		if (!idindex_reserve(&ix, 1, s->ngroups + 1, 64, group_hash_at, s)) {
			free(group_of);
			idindex_free(&ix);
			return false;
		}
		uint32_t k = idindex_start(&ix, point_hash(&key));
		while (ix.slots[k] && !same_point(&s->groups[ix.slots[k] - 1], &key))
			k = idindex_next(&ix, k);
		if (!ix.slots[k]) {
			s->groups[s->ngroups++] = key;
			ix.slots[k] = s->ngroups;
		}
		struct task_group *g = &s->groups[ix.slots[k] - 1];
		group_of[i] = ix.slots[k] - 1;
		g->count++;
		g->running += s->tasks.tasks[i].running;
		if (s->stuck_ns[i] > g->stuck_ns || (s->stuck_ns[i] == g->stuck_ns && s->stuck_before[i])) {
			g->stuck_ns = s->stuck_ns[i];
			g->stuck_before = s->stuck_before[i];
		}
	}
	idindex_free(&ix);
	uint32_t at = 0;
	for (uint32_t g = 0; g < s->ngroups; g++) {
		s->groups[g].first = at;
		at += s->groups[g].count;
		s->groups[g].count = 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct task_group *g = &s->groups[group_of[i]];
		s->members[g->first + g->count++] = i;
	}
	for (uint32_t g = 0; g < s->ngroups; g++)
		qsort_r(s->members + s->groups[g].first, s->groups[g].count, sizeof *s->members,
			cmp_stuck, s);
	free(group_of);
	return true;
}

/* ---- the thread ---- */

static uint64_t
read_period(uint64_t interval_ns, uint64_t read_ns)
{
	uint64_t period = read_ns * TASKWATCH_SHARE;
	if (period < interval_ns)
		period = interval_ns;
	return period < TASKWATCH_MAX_INTERVAL_NS ? period : TASKWATCH_MAX_INTERVAL_NS;
}

static void
publish(struct taskwatch *w, struct task_snapshot *s, const char *error)
{
	pthread_mutex_lock(&w->lock);
	if (s) {
		task_snapshot_free(w->latest);
		w->latest = s;
	}
	snprintf(w->error, sizeof w->error, "%s", error);
	pthread_mutex_unlock(&w->lock);
}

static void *
taskwatch_main(void *arg)
{
	struct taskwatch *w = arg;
	while (!atomic_load(&w->stop)) {
		uint64_t start = clock_now_ns();
		struct task_snapshot *s = calloc(1, sizeof *s);
		struct tt_error err = {0};
		if (!s) {
			publish(w, NULL, "out of memory reading tasks");
		} else if (task_reader_read(&w->reader, &s->tasks, &err) != TT_OK) {
			task_snapshot_free(s);
			publish(w, NULL, err.msg);
			if (!remote_pid_alive(w->target.pid))
				break;
		} else {
			uint64_t now = clock_now_ns();
			s->taken_ns = now;
			s->read_ms = (double)(now - start) / 1e6;
			s->codes = &w->codes;
			s->reads = ++w->reads;
			s->ts_running_task = w->reader.found ? w->reader.ts_running_task : 0;
			s->next_in_ns = read_period(w->interval_ns, now - start);
			if (update_fingerprints(w, s, now) && build_groups(s)) {
				publish(w, s, "");
			} else {
				task_snapshot_free(s);
				publish(w, NULL, "out of memory grouping tasks");
			}
		}
		/* Sleep out the interval, waking early to stop. */
		uint64_t until = start + read_period(w->interval_ns, clock_now_ns() - start);
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t nowm = clock_now_ns();
		if (until <= nowm)
			continue;
		uint64_t left = until - nowm;
		ts.tv_sec += (time_t)(left / 1000000000ull);
		ts.tv_nsec += (long)(left % 1000000000ull);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&w->lock);
		if (!atomic_load(&w->stop))
			pthread_cond_timedwait(&w->wake, &w->lock, &ts);
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

tt_status
taskwatch_start(struct taskwatch *w, const struct target *t, uint64_t interval_ns,
		struct tt_error *err)
{
	memset(w, 0, sizeof *w);
	w->target = *t;
	/* The copy reads through its own remote (the backend points at it). */
	if (w->target.mem.backend.ctx == &t->mem)
		w->target.mem.backend.ctx = &w->target.mem;
	w->interval_ns = interval_ns;
	if (codecache_init(&w->codes) != 0)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the task code cache");
	tt_status st = task_reader_init(&w->reader, &w->target, &w->codes, PROBE_INTERVAL_NS, err);
	if (st != TT_OK) {
		codecache_free(&w->codes);
		return st;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals belong to the UI thread. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&w->thread, NULL, taskwatch_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		task_reader_free(&w->reader);
		codecache_free(&w->codes);
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->wake);
		return tt_fail(err, TT_ENOMEM, rc, "cannot start the task reader thread");
	}
	w->started = true;
	return TT_OK;
}

struct task_snapshot *
taskwatch_take(struct taskwatch *w)
{
	if (!w->started)
		return NULL;
	pthread_mutex_lock(&w->lock);
	struct task_snapshot *s = w->latest;
	w->latest = NULL;
	pthread_mutex_unlock(&w->lock);
	return s;
}

void
taskwatch_error(struct taskwatch *w, char *buf, size_t len)
{
	if (!w->started) {
		snprintf(buf, len, "%s", "");
		return;
	}
	pthread_mutex_lock(&w->lock);
	snprintf(buf, len, "%s", w->error);
	pthread_mutex_unlock(&w->lock);
}

void
taskwatch_stop(struct taskwatch *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->stop, true);
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	task_snapshot_free(w->latest);
	free(w->fps);
	idindex_free(&w->fp_index);
	task_reader_free(&w->reader);
	codecache_free(&w->codes);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	w->started = false;
}
