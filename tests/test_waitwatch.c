/* The kernel watcher on a real process (this one): a thread blocked in
 * read() on a pipe is seen as such, its duration grows between looks, and
 * snapshots handed to a consumer thread are whole (also run under
 * ThreadSanitizer as test_waitwatch_tsan). Given a tree to follow (here our
 * descendants, by their children files), a grandchild blocked in read() is
 * seen too, and not without one. */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "proc/discover.h"
#include "grow.h"
#include "waitwatch.h"
#include "tap.h"

static int pipe_fds[2];
static _Atomic long reader_tid;
static int poll_fds[2];
static _Atomic long poller_tid;

static void *
reader(void *arg)
{
	(void)arg;
	atomic_store(&reader_tid, (long)syscall(SYS_gettid));
	char c;
	if (read(pipe_fds[0], &c, 1) < 0)
		perror("read");
	return NULL;
}

/* The tree to watch: our descendants, by the children files. */
static size_t
descendants(void *ctx, pid_t **pids, uint32_t *cap)
{
	(void)ctx;
	static pid_t *found;
	static uint32_t found_cap;
	size_t n = discover_children(getpid(), &found, &found_cap, 0);
	for (size_t i = 0; i < n && n != (size_t)-1; i++)
		n = discover_children(found[i], &found, &found_cap, n);
	if (n == (size_t)-1 || !grow_array((void **)pids, cap, (uint32_t)n + 1, sizeof **pids))
		return (size_t)-1;
	memcpy(*pids, found, n * sizeof *found);
	return n;
}

/* Watch ourselves for up to 2 s; how many entries of other processes, and
 * whether one of them, not `child`, is blocked in read() on a pipe (the
 * grandchild) and one is `child` itself. */
static void
watch_tree(bool follow, pid_t child, int *others, bool *grandchild, bool *child_seen,
	   bool *poller_seen)
{
	struct tt_error err;
	struct waitwatch *kw;
	*others = 0;
	*grandchild = *child_seen = *poller_seen = false;
	if (waitwatch_start(&kw, getpid(), follow ? descendants : NULL, NULL, &err) != TT_OK)
		return;
	uint64_t end = clock_now_ns() + 2000000000ull;
	int snapshots = 0;
	while (clock_now_ns() < end && !(*grandchild && *child_seen && *poller_seen) &&
	       (follow || snapshots < 4)) {
		struct waitwatch_snapshot *s = waitwatch_take(kw);
		if (s) {
			snapshots++;
			for (uint32_t i = 0; i < s->n; i++) {
				const struct waitwatch_entry *e = &s->e[i];
				if (e->pid == getpid()) {
					if ((long)e->tid == atomic_load(&poller_tid) &&
					    strstr(e->info.name, "poll"))
						*poller_seen = true;
					continue;
				}
				(*others)++;
				if (e->pid == child)
					*child_seen = true;
				else if (strcmp(e->info.name, "read") == 0 &&
					 strcmp(e->info.object, "pipe") == 0)
					*grandchild = true;
			}
			free(s);
		}
		usleep(20000);
	}
	waitwatch_free(kw);
}

/* Blocked in poll(): the watcher reads its fd array from our memory, with
 * the root's reader, after children were added (a use-after-free there
 * once, found under ASan). */
static void *
poller(void *arg)
{
	(void)arg;
	atomic_store(&poller_tid, (long)syscall(SYS_gettid));
	struct pollfd pfd = {.fd = poll_fds[0], .events = POLLIN};
	if (poll(&pfd, 1, -1) < 0)
		perror("poll");
	return NULL;
}

static void
test_follow(void)
{
	int p[2];
	if (pipe(p) != 0 || pipe(poll_fds) != 0)
		return;
	pthread_t th;
	pthread_create(&th, NULL, poller, NULL);
	while (!atomic_load(&poller_tid))
		usleep(1000);
	pid_t child = fork();
	if (child == 0) {
		close(p[1]);   /* only the parent keeps the write end: its close ends the read */
		pid_t g = fork();
		if (g == 0) {
			char c;
			ssize_t r = read(p[0], &c, 1);
			_exit(r == 1 ? 0 : 1);
		}
		close(p[0]);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	close(p[0]);
	int others;
	bool grandchild, child_seen, poller_seen;
	watch_tree(true, child, &others, &grandchild, &child_seen, &poller_seen);
	tap_ok(grandchild && child_seen, "following: the child (%s) and the grandchild blocked in "
	       "read on a pipe (%s) are watched", child_seen ? "seen" : "not seen",
	       grandchild ? "seen" : "not seen");
	tap_ok(poller_seen, "following: our own thread blocked in poll is still seen");
	watch_tree(false, child, &others, &grandchild, &child_seen, &poller_seen);
	tap_ok(others == 0, "not following: %d entries of other processes", others);
	close(p[1]);   /* the grandchild's read returns */
	waitpid(child, NULL, 0);
	if (write(poll_fds[1], "x", 1) == 1)
		pthread_join(th, NULL);
}

int
main(void)
{
	if (pipe(pipe_fds) != 0)
		return 1;
	pthread_t th;
	pthread_create(&th, NULL, reader, NULL);
	while (!atomic_load(&reader_tid))
		usleep(1000);
	struct tt_error err;
	struct waitwatch *kw;
	if (waitwatch_start(&kw, getpid(), NULL, NULL, &err) != TT_OK) {
		/* Reading our own /proc needs nothing special: this is a bug. */
		tap_ok(0, "waitwatch_start on ourselves: %s", err.msg);
		return tap_done();
	}
	struct waitwatch_snapshot *snap = NULL;
	double first = -1, last = -1;
	int snapshots = 0, seen = 0;
	bool named = true;
	uint64_t end = clock_now_ns() + 1500000000ull;
	while (clock_now_ns() < end) {
		struct waitwatch_snapshot *s = waitwatch_take(kw);
		if (s) {
			free(snap);
			snap = s;
			snapshots++;
			const struct waitwatch_entry *e = waitwatch_find(snap, (uint64_t)atomic_load(&reader_tid));
			if (e) {
				seen++;
				double secs = waitwatch_seconds(e, clock_now_ns());
				if (first < 0)
					first = secs;
				last = secs;
				if (strcmp(e->info.name, "read") != 0 || strcmp(e->info.object, "pipe") != 0 ||
				    e->info.fd != pipe_fds[0]) {
					named = false;
					tap_diag("seen as %s fd %d on %s", e->info.name, e->info.fd, e->info.object);
				}
			}
		}
		usleep(20000);
	}
	tap_ok(snapshots >= 3, "the watcher published %d snapshots in 1.5 s (4 a second)", snapshots);
	tap_ok(seen >= 3 && named, "the reader thread seen %d times, blocked in read on fd %d, a pipe",
	       seen, pipe_fds[0]);
	tap_ok(last - first >= 0.5, "its duration grew from %.2f s to %.2f s", first, last);
	waitwatch_free(kw);
	free(snap);
	if (write(pipe_fds[1], "x", 1) != 1)
		return 1;
	pthread_join(th, NULL);
	test_follow();
	return tap_done();
}
