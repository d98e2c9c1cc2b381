/* Tests of perfsample on this process's own threads: a busy thread's
 * registers and stack top arrive; ended threads are not kept; a refusal
 * says why. Needs root (the suite's), like the rest. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfsample.h"
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
	struct perf_threads *pt = perf_threads_new(200000, 8192);
	pthread_t th;
	atomic_store(&spin_stop, 0);
	atomic_store(&spin_tid, 0);
	pthread_create(&th, NULL, spin, NULL);
	while (!atomic_load(&spin_tid))
		usleep(100);
	pid_t tid = atomic_load(&spin_tid);
	char why[256] = "";
	bool followed = pt && perf_threads_follow(pt, tid, why, sizeof why);
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
	struct perf_threads *pt = perf_threads_new(1000000, 4096);
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
		all = perf_threads_follow(pt, tid, why, sizeof why) && all;
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
		struct perf_threads *pt = perf_threads_new(1000000, 4096);
		bool followed = ok && pt && perf_threads_follow(pt, 1, why, sizeof why);
		if (write(fds[1], why, strlen(why) + 1) < 0 || followed)
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

int
main(void)
{
	test_busy_thread();
	test_churn();
	test_refused();
	return tap_done();
}
