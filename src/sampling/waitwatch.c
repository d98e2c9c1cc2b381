#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "grow.h"
#include "hostload.h"
#include "readfile.h"
#include "waitwatch.h"
#include "waits/owners.h"
#include "proc/schedclock.h"
#include "workers.h"
#include "order.h"

/* One watched process: the watcher's own reader (the sampler's is not shared). */
struct waitwatched {
	pid_t pid;
	struct remote mem;
	struct kwait_reader *reader;
	bool seen;                  /* in the tree at this look */
};

struct waitwatch {
	pid_t pid;                  /* the root */
	waitwatch_tree_fn *tree;       /* and the processes it lists, or NULL */
	void *tree_ctx;
	pid_t *pids;                /* this look's list (watcher thread only) */
	uint32_t pids_cap;
	struct waitwatched **procs;    /* procs[0] is the root; each apart, as its reader
				       keeps a pointer to its mem */
	size_t nprocs;
	uint32_t cap;
	struct worker worker;
	_Atomic(struct waitwatch_snapshot *) latest;
	struct waitwatch_snapshot *prev; /* watcher thread only */
	struct waitwatch_entry *found;   /* this look's blocked threads, before the snapshot */
	uint32_t nfound, found_cap;
	struct schedclock *clock;   /* watcher thread only; NULL: no durations but ours */
	struct owners *owners;      /* watcher thread only: who holds the other ends */
};

static int
cmp_tid(const void *a, const void *b)
{
	uint64_t x = ((const struct waitwatch_entry *)a)->tid, y = ((const struct waitwatch_entry *)b)->tid;
	return x < y ? -1 : x > y;
}

const struct waitwatch_entry *
waitwatch_find(const struct waitwatch_snapshot *snap, uint64_t tid)
{
	if (!snap)
		return NULL;
	size_t lo = 0, hi = snap->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (snap->e[mid].tid < tid)
			lo = mid + 1;
		else if (snap->e[mid].tid > tid)
			hi = mid;
		else
			return &snap->e[mid];
	}
	return NULL;
}

double
waitwatch_seconds(const struct waitwatch_entry *e, uint64_t now_ns)
{
	return now_ns > e->since_ns ? (double)(now_ns - e->since_ns) / 1e9 : 0.0;
}

/* A new watched process with its own handle and reader, or NULL (err says why). */
static struct waitwatched *
watched_open(pid_t pid, struct owners *owners, struct tt_error *err)
{
	struct waitwatched *w = calloc(1, sizeof *w);
	if (!w) {
		tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the kernel watcher");
		return NULL;
	}
	if (remote_open_pid(&w->mem, pid, err) != TT_OK) {
		free(w);
		return NULL;
	}
	w->pid = pid;
	if (!(w->reader = kwait_reader_new(pid, &w->mem, owners))) {
		free(w);
		tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the kernel watcher");
		return NULL;
	}
	return w;
}

/* The watched process of pid, added if new; NULL when it cannot be. */
static struct waitwatched *
watched(struct waitwatch *kw, pid_t pid)
{
	for (size_t i = 0; i < kw->nprocs; i++)
		if (kw->procs[i]->pid == pid)
			return kw->procs[i];
	if (!grow_array((void **)&kw->procs, &kw->cap, (uint32_t)kw->nprocs + 1, sizeof *kw->procs))
		return NULL;
	struct tt_error err;
	struct waitwatched *w = watched_open(pid, kw->owners, &err);
	if (w)
		kw->procs[kw->nprocs++] = w;
	return w;
}

/* Mark the processes of the tree as seen this look: the root and what the
 * tree function lists. (The session lists the processes its discovery
 * follows: listing every thread's children here again cost a /proc open
 * per thread per look, thousands a second for a big pool.) A list that
 * fails keeps every process of the last look. */
static void
mark_tree(struct waitwatch *kw)
{
	if (!kw->tree)
		return;
	size_t n = kw->tree(kw->tree_ctx, &kw->pids, &kw->pids_cap);
	if (n == (size_t)-1)
		return;
	for (size_t i = 0; i < kw->nprocs; i++)
		kw->procs[i]->seen = i == 0;
	for (size_t i = 0; i < n; i++) {
		struct waitwatched *w = watched(kw, kw->pids[i]);
		if (w)
			w->seen = true;
	}
	/* Drop the processes that left the tree; the root stays. */
	size_t keep = 1;
	for (size_t i = 1; i < kw->nprocs; i++) {
		if (kw->procs[i]->seen) {
			kw->procs[keep++] = kw->procs[i];
		} else {
			kwait_reader_free(kw->procs[i]->reader);
			free(kw->procs[i]);
		}
	}
	kw->nprocs = keep;
}

/* How many times thread tid has been put on a CPU (the third figure of
 * its schedstat), or 0 when that cannot be read. */
static uint64_t
runs_of(pid_t pid, long tid)
{
	char path[64], text[128];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/schedstat", (int)pid, tid);
	uint64_t on, wait, runs;
	if (read_small_file(path, text, sizeof text) <= 0 ||
	    !hostload_parse_schedstat(text, &on, &wait, &runs))
		return 0;
	return runs;
}

/* Add the blocked threads of one process to kw->found; false when memory is short. */
static bool
look_process(struct waitwatch *kw, struct waitwatched *w)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)w->pid);
	DIR *d = opendir(path);
	if (!d)
		return true;
	kwait_reader_pass(w->reader);
	bool ok = true;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (!grow_array((void **)&kw->found, &kw->found_cap, kw->nfound + 1,
				sizeof *kw->found)) {
			ok = false;
			break;
		}
		struct waitwatch_entry *e = &kw->found[kw->nfound];
		if (!kwait_read_thread(w->reader, tid, &e->info))
			continue;
		e->runs = runs_of(w->pid, tid);
		e->tid = (uint64_t)tid;
		e->pid = w->pid;
		kw->nfound++;
	}
	closedir(d);
	return ok;
}

/* One look at every thread of the target (and of its descendants). */
static struct waitwatch_snapshot *
look(struct waitwatch *kw)
{
	kw->nfound = 0;
	mark_tree(kw);
	for (size_t i = 0; i < kw->nprocs; i++)
		if (!look_process(kw, kw->procs[i]))
			break;
	/* the snapshot in one block, at its size: it is published whole */
	uint32_t n = kw->nfound;
	struct waitwatch_snapshot *s = malloc(sizeof *s + n * sizeof s->e[0]);
	if (!s)
		return NULL;
	s->n = n;
	if (n)
		memcpy(s->e, kw->found, n * sizeof s->e[0]);
	s->taken_ns = clock_now_ns();
	order_sort(s->e, n, sizeof s->e[0], cmp_tid);
	/* Since when: the same call on the same fd as last time goes on,
	 * unless the thread ran since (a loop that sleeps a moment, again
	 * and again, makes a new call each time); a new one started when
	 * the thread last ran (the kernel's word),
	 * and not before the previous look if that saw something else.
	 * Without the kernel's word, the call goes back at least to this
	 * look, and the duration says it is a lower bound. */
	for (uint32_t i = 0; i < n; i++) {
		struct waitwatch_entry *e = &s->e[i];
		const struct waitwatch_entry *p = waitwatch_find(kw->prev, e->tid);
		if (p && p->info.nr == e->info.nr && p->info.fd == e->info.fd &&
		    p->runs == e->runs) {
			e->since_ns = p->since_ns;
			e->info.seconds_at_least = p->info.seconds_at_least;
			continue;
		}
		double ran = -1;
		if (kw->clock)
			ran = schedclock_since_last_ran(kw->clock, e->pid, (long)e->tid, NULL);
		if (ran < 0) {
			e->since_ns = s->taken_ns;
			e->info.seconds_at_least = true;
			continue;
		}
		uint64_t ago = (uint64_t)(ran * 1e9);
		e->since_ns = ago < s->taken_ns ? s->taken_ns - ago : 0;
		if (p && kw->prev->taken_ns > e->since_ns)
			e->since_ns = kw->prev->taken_ns;
	}
	return s;
}

static void *
watch_main(void *arg)
{
	struct waitwatch *kw = arg;
	pthread_mutex_lock(&kw->worker.lock);
	while (!atomic_load(&kw->worker.stop)) {
		pthread_mutex_unlock(&kw->worker.lock);
		struct waitwatch_snapshot *s = look(kw);
		if (s) {
			size_t size = sizeof *s + s->n * sizeof s->e[0];
			struct waitwatch_snapshot *pub = malloc(size);
			if (pub) {
				memcpy(pub, s, size);
				free(atomic_exchange(&kw->latest, pub));
			}
			free(kw->prev);
			kw->prev = s;
		}
		pthread_mutex_lock(&kw->worker.lock);
		worker_sleep_until(&kw->worker, clock_now_ns() + WAITWATCH_INTERVAL_NS);
	}
	pthread_mutex_unlock(&kw->worker.lock);
	return NULL;
}

tt_status
waitwatch_start(struct waitwatch **out, pid_t pid, waitwatch_tree_fn *tree, void *tree_ctx,
	     struct tt_error *err)
{
	*out = NULL;
	struct waitwatch *kw = calloc(1, sizeof *kw);
	if (!kw)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the kernel watcher");
	kw->pid = pid;
	kw->tree = tree;
	kw->tree_ctx = tree_ctx;
	kw->procs = calloc(1, sizeof *kw->procs);
	if (!kw->procs) {
		free(kw);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the kernel watcher");
	}
	kw->owners = owners_new();
	if (!(kw->procs[0] = watched_open(pid, kw->owners, err))) {
		owners_free(kw->owners);
		free(kw->procs);
		free(kw);
		return err->status;
	}
	kw->cap = kw->nprocs = 1;
	kw->clock = schedclock_new();
	int rc = worker_run(&kw->worker, "tt-waits", watch_main, kw);
	if (rc != 0) {
		waitwatch_free(kw);
		return tt_fail(err, TT_EIO, rc, "cannot start the kernel watcher thread: %s",
			       strerror(rc));
	}
	*out = kw;
	return TT_OK;
}

void
waitwatch_free(struct waitwatch *kw)
{
	if (!kw)
		return;
	worker_stop(&kw->worker);
	free(atomic_exchange(&kw->latest, NULL));
	free(kw->prev);
	free(kw->found);
	schedclock_free(kw->clock);
	for (size_t i = 0; i < kw->nprocs; i++) {
		kwait_reader_free(kw->procs[i]->reader);
		free(kw->procs[i]);
	}
	owners_free(kw->owners);
	free(kw->procs);
	free(kw->pids);
	free(kw);
}

struct waitwatch_snapshot *
waitwatch_take(struct waitwatch *kw)
{
	return kw ? atomic_exchange(&kw->latest, NULL) : NULL;
}
