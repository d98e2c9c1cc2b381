#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "kwatch.h"

struct kwatch {
	pid_t pid;
	struct remote mem;          /* the watcher's own: the sampler's is not shared */
	struct kwait_reader *reader;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;       /* only to sleep on cond until stop */
	pthread_cond_t cond;
	bool stop;
	_Atomic(struct kwatch_snapshot *) latest;
	struct kwatch_snapshot *prev; /* watcher thread only */
};

static int
cmp_tid(const void *a, const void *b)
{
	uint64_t x = ((const struct kwatch_entry *)a)->tid, y = ((const struct kwatch_entry *)b)->tid;
	return x < y ? -1 : x > y;
}

const struct kwatch_entry *
kwatch_find(const struct kwatch_snapshot *snap, uint64_t tid)
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
kwatch_seconds(const struct kwatch_entry *e, uint64_t now_ns)
{
	return now_ns > e->since_ns ? (double)(now_ns - e->since_ns) / 1e9 : 0.0;
}

/* One look at every thread of the target. */
static struct kwatch_snapshot *
look(struct kwatch *kw)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)kw->pid);
	DIR *d = opendir(path);
	if (!d)
		return NULL;
	uint32_t cap = 16, n = 0;
	struct kwatch_snapshot *s = malloc(sizeof *s + cap * sizeof s->e[0]);
	if (!s) {
		closedir(d);
		return NULL;
	}
	kwait_reader_pass(kw->reader);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (n == cap) {
			struct kwatch_snapshot *bigger = realloc(s, sizeof *s + 2 * cap * sizeof s->e[0]);
			if (!bigger)
				break;
			s = bigger;
			cap *= 2;
		}
		struct kwatch_entry *e = &s->e[n];
		if (!kwait_read_thread(kw->reader, tid, &e->info))
			continue;
		e->tid = (uint64_t)tid;
		n++;
	}
	closedir(d);
	s->n = n;
	s->taken_ns = clock_now_ns();
	qsort(s->e, n, sizeof s->e[0], cmp_tid);
	/* Since when: the same call on the same fd as last time goes on;
	 * a new one started when the thread last ran (the kernel's word),
	 * and not before the previous look if that saw something else. */
	for (uint32_t i = 0; i < n; i++) {
		struct kwatch_entry *e = &s->e[i];
		const struct kwatch_entry *p = kwatch_find(kw->prev, e->tid);
		if (p && p->info.nr == e->info.nr && p->info.fd == e->info.fd) {
			e->since_ns = p->since_ns;
			continue;
		}
		double ran = kwait_since_last_ran(kw->pid, (long)e->tid);
		uint64_t ago = ran > 0 ? (uint64_t)(ran * 1e9) : 0;
		e->since_ns = ago < s->taken_ns ? s->taken_ns - ago : 0;
		if (p && kw->prev->taken_ns > e->since_ns)
			e->since_ns = kw->prev->taken_ns;
	}
	return s;
}

static void *
watch_main(void *arg)
{
	struct kwatch *kw = arg;
	pthread_mutex_lock(&kw->lock);
	while (!kw->stop) {
		pthread_mutex_unlock(&kw->lock);
		struct kwatch_snapshot *s = look(kw);
		if (s) {
			size_t size = sizeof *s + s->n * sizeof s->e[0];
			struct kwatch_snapshot *pub = malloc(size);
			if (pub) {
				memcpy(pub, s, size);
				free(atomic_exchange(&kw->latest, pub));
			}
			free(kw->prev);
			kw->prev = s;
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
			     KWATCH_INTERVAL_NS;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		pthread_mutex_lock(&kw->lock);
		while (!kw->stop && pthread_cond_timedwait(&kw->cond, &kw->lock, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&kw->lock);
	return NULL;
}

tt_status
kwatch_start(struct kwatch **out, pid_t pid, struct tt_error *err)
{
	*out = NULL;
	struct kwatch *kw = calloc(1, sizeof *kw);
	if (!kw)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the kernel watcher");
	kw->pid = pid;
	tt_status st = remote_open_pid(&kw->mem, pid, err);
	if (st != TT_OK) {
		free(kw);
		return st;
	}
	kw->reader = kwait_reader_new(pid, &kw->mem);
	if (!kw->reader) {
		free(kw);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the kernel watcher");
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&kw->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&kw->lock, NULL);
	/* Like the sampler, the watcher blocks every signal. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&kw->thread, NULL, watch_main, kw);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		kw->started = false;
		kwatch_free(kw);
		return tt_fail(err, TT_EIO, rc, "cannot start the kernel watcher thread: %s",
			       strerror(rc));
	}
	kw->started = true;
	*out = kw;
	return TT_OK;
}

void
kwatch_free(struct kwatch *kw)
{
	if (!kw)
		return;
	if (kw->started) {
		pthread_mutex_lock(&kw->lock);
		kw->stop = true;
		pthread_cond_signal(&kw->cond);
		pthread_mutex_unlock(&kw->lock);
		pthread_join(kw->thread, NULL);
	}
	pthread_cond_destroy(&kw->cond);
	pthread_mutex_destroy(&kw->lock);
	free(atomic_exchange(&kw->latest, NULL));
	free(kw->prev);
	kwait_reader_free(kw->reader);
	free(kw);
}

struct kwatch_snapshot *
kwatch_take(struct kwatch *kw)
{
	return kw ? atomic_exchange(&kw->latest, NULL) : NULL;
}
