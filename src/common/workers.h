/* tachyon-top's own threads. Signals belong to the UI (main) thread: every
 * other thread starts with all of them blocked, whoever starts it. */
#ifndef TT_WORKERS_H
#define TT_WORKERS_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread; its result. */
int worker_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* A condition whose timed waits take CLOCK_MONOTONIC deadlines. */
void worker_cond_init(pthread_cond_t *c);

#endif
