/* tachyon-top's own threads. Signals belong to the UI (main) thread: every
 * other thread starts with all of them blocked, whoever starts it. */
#ifndef TT_WORKERS_H
#define TT_WORKERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* pthread_create with every signal blocked in the new thread, named name
 * (at most 15 bytes: what top -H, ps and gdb show); its result. */
int worker_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);

/* A condition whose timed waits take CLOCK_MONOTONIC deadlines. */
void worker_cond_init(pthread_cond_t *c);

/* A thread of our own that works in passes and sleeps between them (the
 * watchers: follow, waitwatch, taskwatch, framewatch): its lock, the
 * condition it sleeps on, and stop (set under the lock, read anywhere). */
struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	_Atomic bool stop;
	bool started;
};

/* Start fn(arg) on w's thread, named name: 0, or the error number (w not
 * started). */
int worker_run(struct worker *w, const char *name, void *(*fn)(void *), void *arg);
/* On w's thread, w->lock held: sleep until deadline_ns (clock_now_ns) or
 * until woken (worker_wake, worker_stop); at once when stopping. */
void worker_sleep_until(struct worker *w, uint64_t deadline_ns);
/* w->lock held: wake w's thread from worker_sleep_until. */
void worker_wake(struct worker *w);
/* Set stop, wake w's thread and wait for its end; nothing when it never
 * started. */
void worker_stop(struct worker *w);

#endif
