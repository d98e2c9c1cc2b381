/* tachyon-top's own threads (workers.h). */
#include "config.h"

#include <signal.h>
#include <time.h>

#include "workers.h"

int
worker_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	/* the mask is inherited: block all, start, put the caller's back */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
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
