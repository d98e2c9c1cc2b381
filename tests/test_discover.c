/* Children of a big pool, a few threads at a time (discover.h), on this
 * process: 200 parked threads, one of them (not the main one) forks a
 * child, and the main thread forks another. Each call reads the main
 * thread's children; the other thread's child is found once the turn
 * comes to it, within as many calls as the threads take at 64 a call, and
 * the turn comes back to the first thread after the last. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/discover.h"
#include "tap.h"

#define THREADS 200
#define BUDGET 64u
#define FORKER 150

static _Atomic pid_t thread_child;
static _Atomic int parked;
static int release_fds[2];

static pid_t
sleeping_child(void)
{
	pid_t c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	return c;
}

static void *
park(void *arg)
{
	if ((long)arg == FORKER)
		atomic_store(&thread_child, sleeping_child());
	atomic_fetch_add(&parked, 1);
	char c;
	if (read(release_fds[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static bool
has(const pid_t *pids, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n && n != (size_t)-1; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

int
main(void)
{
	if (pipe(release_fds) != 0)
		return 1;
	pthread_t th[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, park, (void *)i);
	while (atomic_load(&parked) < THREADS || !atomic_load(&thread_child))
		usleep(1000);
	pid_t main_child = sleeping_child();
	pid_t other = atomic_load(&thread_child);

	pid_t *found = NULL;
	uint32_t cap = 0;
	uint32_t from = 0, calls_to_find = 0, wrapped_after = 0;
	bool main_each_time = true;
	for (uint32_t call = 1; call <= 8; call++) {
		uint32_t before = from;
		size_t n = discover_children_some(getpid(), BUDGET, &from, &found, &cap, 0);
		main_each_time &= has(found, n, main_child);
		if (!calls_to_find && has(found, n, other))
			calls_to_find = call;
		if (!wrapped_after && from == 0 && before != 0)
			wrapped_after = call;
	}
	uint32_t turns = (THREADS + 1 + BUDGET - 1) / BUDGET;
	tap_ok(main_each_time, "the main thread's child is found at each call");
	tap_ok(calls_to_find >= 1 && calls_to_find <= turns,
	       "another thread's child is found within %u calls of %u threads (at call %u)", turns,
	       BUDGET, calls_to_find);
	tap_ok(wrapped_after == turns, "the turn comes back to the first thread after %u calls "
	       "(expected %u)", wrapped_after, turns);
	size_t all = discover_children(getpid(), &found, &cap, 0);
	tap_ok(has(found, all, main_child) && has(found, all, other),
	       "discover_children reads every thread's at once");

	free(found);
	kill(main_child, SIGKILL);
	kill(other, SIGKILL);
	waitpid(main_child, NULL, 0);
	waitpid(other, NULL, 0);
	close(release_fds[1]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	return tap_done();
}
