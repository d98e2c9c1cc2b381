/* tachyon-top's own threads (workers.h). */
#include "config.h"

#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "workers.h"

int
worker_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
	/* the mask is inherited: block all, start, put the caller's back */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_setname_np(*t, name);   /* a name is a courtesy: no error */
	return rc;
}

void
worker_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

int
worker_run(struct worker *w, const char *name, void *(*fn)(void *), void *arg)
{
	pthread_mutex_init(&w->lock, NULL);
	worker_cond_init(&w->wake);
	atomic_store(&w->stop, false);
	int rc = worker_start(&w->thread, name, fn, arg);
	if (rc != 0) {
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		return rc;
	}
	w->started = true;
	return 0;
}

void
worker_sleep_until(struct worker *w, uint64_t deadline_ns)
{
	if (atomic_load(&w->stop))
		return;
	struct timespec ts = {(time_t)(deadline_ns / 1000000000ull),
			      (long)(deadline_ns % 1000000000ull)};
	pthread_cond_timedwait(&w->wake, &w->lock, &ts);
}

void
worker_wake(struct worker *w)
{
	pthread_cond_signal(&w->wake);
}

void
worker_stop(struct worker *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->stop, true);
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	w->started = false;
}
