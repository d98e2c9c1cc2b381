/* Tests of perfsample on this process's own threads: a busy thread's
 * registers and stack top arrive; no more than the most asked for are
 * followed at once; out of descriptors is no room, not a refusal; disabled,
 * none come; ended threads are not kept; a refusal says why. Needs root
 * (the suite's), like the rest. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "native/perfsample.h"
#include "tap.h"

static _Atomic int spin_stop;
static _Atomic pid_t spin_tid;

static void *
spin(void *arg)
{
	(void)arg;
	atomic_store(&spin_tid, (pid_t)syscall(SYS_gettid));
	volatile unsigned long n = 0;
	while (!atomic_load(&spin_stop))
		n++;
	return NULL;
}

static void
test_busy_thread(void)
{
	struct perf_threads *pt = perf_threads_new(200000, 8192, 16);
	pthread_t th;
	atomic_store(&spin_stop, 0);
	atomic_store(&spin_tid, 0);
	pthread_create(&th, NULL, spin, NULL);
	while (!atomic_load(&spin_tid))
		usleep(100);
	pid_t tid = atomic_load(&spin_tid);
	char why[256] = "";
	bool followed = pt && perf_threads_follow(pt, tid, why, sizeof why) == PERF_FOLLOWED;
	tap_ok(followed, "a thread of our own is followed (%s)", why);
	static struct user_sample us;
	bool got = false;
	if (followed) {
		perf_threads_wait(pt, &tid, 1, 500);
		got = perf_threads_newest(pt, tid, &us);
	}
	tap_ok(got && us.pc && us.stack_len > 0 && us.stack_len <= 8192 && us.regs[7] == us.stack_at,
	       "a busy thread's sample: pc 0x%llx, %zu bytes of stack from its %%rsp",
	       (unsigned long long)us.pc, us.stack_len);
	/* the spinning loop's code is ours: the pc is in this executable's text */
	extern char __executable_start[], etext[];
	tap_ok(got && us.pc >= (uint64_t)(uintptr_t)__executable_start &&
	       us.pc < (uint64_t)(uintptr_t)etext, "its pc is in our own code");
	atomic_store(&spin_stop, 1);
	pthread_join(th, NULL);
	perf_threads_free(pt);
}

static void
test_churn(void)
{
	struct perf_threads *pt = perf_threads_new(1000000, 4096, 16);
	size_t most = 0;
	bool all = true;
	for (int i = 0; i < 400; i++) {
		pthread_t th;
		atomic_store(&spin_stop, 0);
		atomic_store(&spin_tid, 0);
		pthread_create(&th, NULL, spin, NULL);
		while (!atomic_load(&spin_tid))
			usleep(50);
		pid_t tid = atomic_load(&spin_tid);
		char why[256];
		all = perf_threads_follow(pt, tid, why, sizeof why) == PERF_FOLLOWED && all;
		atomic_store(&spin_stop, 1);
		pthread_join(th, NULL);
		perf_threads_forget(pt, tid);
		if (perf_threads_kept(pt) > most)
			most = perf_threads_kept(pt);
	}
	tap_ok(all && most <= 66, "400 threads followed and ended one after another: at most %zu "
	       "kept at once", most);
	perf_threads_free(pt);
}

static void
test_refused(void)
{
	int fds[2];
	if (pipe(fds) != 0)
		return;
	pid_t child = fork();
	if (child == 0) {
		/* nobody may not sample another user's process (pid 1) */
		close(fds[0]);
		char why[256] = "";
		bool ok = setgid(65534) == 0 && setuid(65534) == 0;
		struct perf_threads *pt = perf_threads_new(1000000, 4096, 16);
		bool refused = ok && pt && perf_threads_follow(pt, 1, why, sizeof why) == PERF_REFUSED;
		if (write(fds[1], why, strlen(why) + 1) < 0 || !refused)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	char why[256] = "";
	ssize_t n = read(fds[0], why, sizeof why - 1);
	why[n > 0 ? n : 0] = '\0';
	int status = 0;
	waitpid(child, &status, 0);
	close(fds[0]);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(why, "refused") &&
	       strstr(why, "perf_event_paranoid"),
	       "refused: one line with the cause and perf_event_paranoid (%s)", why);
}

/* Threads parked on a condition, for following many at once. */
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static int park_over;
static _Atomic int parked_tids[64];

static void *
park(void *arg)
{
	atomic_store(&parked_tids[(intptr_t)arg], (int)gettid());
	pthread_mutex_lock(&park_lock);
	while (!park_over)
		pthread_cond_wait(&park_cond, &park_lock);
	pthread_mutex_unlock(&park_lock);
	return NULL;
}

static int
start_parked(pthread_t *th, int n)
{
	park_over = 0;
	for (int i = 0; i < n; i++) {
		atomic_store(&parked_tids[i], 0);
		pthread_create(&th[i], NULL, park, (void *)(intptr_t)i);
	}
	for (int i = 0; i < n; i++)
		while (!atomic_load(&parked_tids[i]))
			usleep(50);
	return n;
}

static void
end_parked(pthread_t *th, int n)
{
	pthread_mutex_lock(&park_lock);
	park_over = 1;
	pthread_cond_broadcast(&park_cond);
	pthread_mutex_unlock(&park_lock);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static void
test_at_most(void)
{
	/* 40 threads asked for, 16 followed at most: the last asked for are
	 * followed, the first let go */
	struct perf_threads *pt = perf_threads_new(1000000, 4096, 16);
	pthread_t th[40];
	start_parked(th, 40);
	uint32_t most = 0;
	bool all = true;
	char why[256];
	for (int i = 0; i < 40; i++) {
		all = perf_threads_follow(pt, atomic_load(&parked_tids[i]), why, sizeof why) ==
		      PERF_FOLLOWED && all;
		if (perf_threads_live(pt) > most)
			most = perf_threads_live(pt);
	}
	/* asking again for the last one keeps it; the first comes back */
	uint32_t live = perf_threads_live(pt);
	all = perf_threads_follow(pt, atomic_load(&parked_tids[39]), why, sizeof why) ==
	      PERF_FOLLOWED && all;
	bool same = perf_threads_live(pt) == live;
	all = perf_threads_follow(pt, atomic_load(&parked_tids[0]), why, sizeof why) ==
	      PERF_FOLLOWED && all;
	tap_ok(all && most == 16 && live == 16 && same && perf_threads_live(pt) == 16,
	       "40 threads asked for, at most 16 followed (%u at most, %u at the end)", most,
	       perf_threads_live(pt));
	perf_threads_free(pt);
	end_parked(th, 40);
}

static void
test_no_room(void)
{
	/* out of file descriptors: no room for this thread now, not a refusal */
	struct rlimit old;
	getrlimit(RLIMIT_NOFILE, &old);
	pthread_t th[8];
	start_parked(th, 8);
	int probe = dup(0);
	struct rlimit tight = {(rlim_t)probe + 3, old.rlim_max};
	close(probe);
	struct perf_threads *pt = perf_threads_new(1000000, 4096, 64);
	setrlimit(RLIMIT_NOFILE, &tight);
	char why[256] = "";
	enum perf_follow got = PERF_FOLLOWED;
	int followed = 0;
	for (int i = 0; i < 8 && got == PERF_FOLLOWED; i++)
		if ((got = perf_threads_follow(pt, atomic_load(&parked_tids[i]), why,
					       sizeof why)) == PERF_FOLLOWED)
			followed++;
	setrlimit(RLIMIT_NOFILE, &old);
	enum perf_follow after = perf_threads_follow(pt, atomic_load(&parked_tids[7]), why + 128,
						     sizeof why - 128);
	tap_ok(followed > 0 && got == PERF_NO_ROOM && strstr(why, "no room") &&
	       after == PERF_FOLLOWED,
	       "out of descriptors after %d: no room, not refused (%s); then followed again",
	       followed, why);
	perf_threads_free(pt);
	end_parked(th, 8);
}

static void
test_ended(void)
{
	/* a thread that ended before it was followed is gone, not a refusal:
	 * the next thread is followed */
	struct perf_threads *pt = perf_threads_new(1000000, 4096, 16);
	pthread_t th[1];
	start_parked(th, 1);
	pid_t ended = atomic_load(&parked_tids[0]);
	end_parked(th, 1);
	start_parked(th, 1);
	char why[256] = "";
	enum perf_follow gone = perf_threads_follow(pt, ended, why, sizeof why);
	enum perf_follow next = perf_threads_follow(pt, atomic_load(&parked_tids[0]), why + 128,
						    sizeof why - 128);
	tap_ok(gone == PERF_GONE && next == PERF_FOLLOWED,
	       "an ended thread is gone, not a refusal (%s); the next one is followed", why);
	perf_threads_free(pt);
	end_parked(th, 1);
}

static void
test_disabled(void)
{
	/* disabled, a busy thread gives no sample; enabled again, it does */
	struct perf_threads *pt = perf_threads_new(200000, 4096, 16);
	pthread_t th;
	atomic_store(&spin_stop, 0);
	atomic_store(&spin_tid, 0);
	pthread_create(&th, NULL, spin, NULL);
	while (!atomic_load(&spin_tid))
		usleep(100);
	pid_t tid = atomic_load(&spin_tid);
	char why[256];
	static struct user_sample us;
	bool followed = perf_threads_follow(pt, tid, why, sizeof why) == PERF_FOLLOWED;
	perf_threads_enable(pt, false);
	usleep(50000);
	uint64_t stale = perf_threads_enable(pt, true);
	bool none = !perf_threads_newest(pt, tid, &us);
	perf_threads_wait(pt, &tid, 1, 500);
	bool again = perf_threads_newest(pt, tid, &us);
	tap_ok(followed && stale == 0 && none && again,
	       "disabled for 50 ms, a busy thread gave %llu samples; enabled, it gives them again",
	       (unsigned long long)stale);
	atomic_store(&spin_stop, 1);
	pthread_join(th, NULL);
	perf_threads_free(pt);
}

int
main(void)
{
	test_busy_thread();
	test_at_most();
	test_no_room();
	test_ended();
	test_disabled();
	test_churn();
	test_refused();
	return tap_done();
}
