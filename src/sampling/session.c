#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fdlimit.h"
#include "grow.h"
#include "session.h"
#include "proc/procstat.h"

/* How long a started command has to become an attachable Python process
 * (it may be a wrapper that execs python, or load libpython late). */
#define LAUNCH_ATTACH_NS 10000000000ull

static int signal_pipe[2] = {-1, -1};
static volatile sig_atomic_t last_signal;

static void
on_signal(int sig)
{
	int saved = errno;
	last_signal = sig;
	unsigned char b = (unsigned char)sig;
	if (write(signal_pipe[1], &b, 1) < 0) {
		/* the pipe is full: a wake-up is pending anyway */
	}
	errno = saved;
}

tt_status
session_catch_signals(const int *sigs, size_t n, struct tt_error *err)
{
	if (signal_pipe[0] < 0 && pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return tt_fail(err, TT_EIO, errno, "pipe: %s", strerror(errno));
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < n; i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return TT_OK;
}

tt_status
session_catch_stop_signals(struct tt_error *err)
{
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP};
	return session_catch_signals(stops, sizeof stops / sizeof stops[0], err);
}

int
session_signal_fd(void)
{
	return signal_pipe[0];
}

int
session_next_signal(void)
{
	unsigned char b;
	return signal_pipe[0] >= 0 && read(signal_pipe[0], &b, 1) == 1 ? b : 0;
}

int
session_stop_signal(void)
{
	return last_signal;
}

static tt_status
launch(struct session *s, const struct session_options *o, struct tt_error *err)
{
	int report[2];
	if (pipe2(report, O_CLOEXEC) != 0)
		return tt_fail(err, TT_EIO, errno, "pipe: %s", strerror(errno));
	int out = o->child_keeps_output ? -1
					: open(o->child_output ? o->child_output : "/dev/null",
					       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out < 0 && !o->child_keeps_output) {
		int e = errno;
		close(report[0]);
		close(report[1]);
		return tt_fail(err, TT_EIO, e, "cannot open %s: %s",
			       o->child_output ? o->child_output : "/dev/null", strerror(e));
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		if (out >= 0)
			close(out);
		close(report[0]);
		close(report[1]);
		return tt_fail(err, TT_EIO, e, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		/* The terminal belongs to tachyon-top: the program gets no input
		 * and writes to the output file, or to our own outputs when it
		 * keeps them. Its own process group keeps our terminal's
		 * signals away from it. */
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0)
			dup2(in, 0);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		setpgid(0, 0);
		/* If tachyon-top is killed outright (SIGKILL, a crash), the
		 * program must not run on unwatched: it gets SIGTERM, as on an
		 * orderly quit. Had the parent died before this call, nobody
		 * would send it: check after setting it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		fdlimit_restore();
		execvp(o->command[0], o->command);
		int e = errno;
		if (write(report[1], &e, sizeof e) < 0) {
			/* the parent learns nothing; it will see the child exit 127 */
		}
		_exit(127);
	}
	if (out >= 0)
		close(out);
	close(report[1]);
	int e = 0;
	ssize_t n;
	while ((n = read(report[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n == (ssize_t)sizeof e) {
		waitpid(pid, NULL, 0);
		return tt_fail(err, TT_EUSAGE, e, "cannot run %s: %s", o->command[0], strerror(e));
	}
	s->child = pid;
	return TT_OK;
}

/* Attach to pid; or, when it is not Python (a shell, tini, a wrapper) and
 * its descendants are followed, to its first Python descendant, looking
 * for up to wait_ns. */
static tt_status
attach_root(struct session *s, pid_t pid, bool descendants, uint64_t wait_ns,
	    struct tt_error *err)
{
	if (!descendants)
		return target_attach(&s->target, pid, err);
	bool other;
	tt_status st = target_attach_root(&s->target, pid, wait_ns, &other, err);
	if (other)
		s->other_root = pid;
	return st;
}

/* The kernel watcher's tree: the processes the sampler follows that run
 * (its discovery found them; the watcher need not list children again). */
static size_t
followed_pids(void *ctx, pid_t **pids, uint32_t *cap)
{
	const struct procset *ps = ctx;
	size_t n = 0;
	for (uint32_t i = 0, count = procset_count(ps); i < count; i++) {
		const struct proc_info *p = procset_at(ps, i);
		enum proc_state st = p ? procset_state(p) : PROC_EXITED;
		if (st != PROC_LIVE && st != PROC_OTHER)
			continue;
		if (!grow_array((void **)pids, cap, (uint32_t)n + 1, sizeof **pids))
			return (size_t)-1;
		(*pids)[n++] = p->pid;
	}
	return n;
}

tt_status
session_start(struct session *s, const struct session_options *o, struct tt_error *err)
{
	memset(s, 0, sizeof *s);
	s->rate_hz = o->rate_hz;
	tt_status st;
	pid_t pid = o->pid;
	bool descendants = !o->no_subprocesses;
	if (o->command) {
		if ((st = launch(s, o, err)) != TT_OK)
			return st;
		pid = s->child;
		/* Attach as soon as the command is a Python process. */
		uint64_t deadline = clock_now_ns() + LAUNCH_ATTACH_NS;
		for (;;) {
			st = attach_root(s, pid, descendants, 0, err);
			if (st == TT_OK)
				break;
			session_poll_child(s);
			if (s->child_exited) {
				char how[64];
				session_describe_exit(s, how, sizeof how);
				return tt_fail(err, TT_ENOPROC, 0, "%s %s before tachyon-top could attach",
					       o->command[0], how);
			}
			if (st == TT_EPERM || clock_now_ns() > deadline) {
				session_end(s);
				return st;
			}
			struct timespec ts = {0, 20000000L};
			nanosleep(&ts, NULL);
		}
	} else if ((st = attach_root(s, pid, descendants, TARGET_DESCENDANT_WAIT_NS, err)) != TT_OK) {
		return st;
	}
	s->pid = pid;
	procstat_cmdline(pid, s->cmdline, sizeof s->cmdline);
	struct sampler_config cfg;
	if (o->config)
		cfg = *o->config;
	else
		sampler_default_config(&cfg);
	cfg.interval_ns = o->rate_hz > 0 ? (uint64_t)(1e9 / o->rate_hz) : 0;
	cfg.duration_ns = (uint64_t)(o->duration_s * 1e9);
	cfg.ring_capacity = 1u << 18;
	cfg.follow = !o->no_subprocesses;
	cfg.async_aware = o->async_aware;
	cfg.native = o->native;
	cfg.other_root = s->other_root;
	if ((st = sampler_start(&s->sampler, &s->target, &cfg, err)) != TT_OK) {
		session_end(s);
		return st;
	}
	s->sampling = true;
	/* The kernel's view is extra: without it the session goes on. */
	struct tt_error kerr;
	if (o->kernel_waits && waitwatch_start(&s->waitwatch, s->pid, cfg.follow ? followed_pids : NULL,
				      &s->sampler.procs, &kerr) != TT_OK)
		s->waitwatch = NULL;
	/* The tasks likewise; read from the start, a task's stuck time counts
	 * from attach, not from when a view first shows it. */
	struct tt_error terr;
	if (o->tasks_every_ns) {
		s->watching_tasks = taskwatch_start_tree(&s->tasks, &s->sampler.procs,
							 o->tasks_every_ns, &terr) == TT_OK;
		if (!s->watching_tasks)
			snprintf(s->tasks_error, sizeof s->tasks_error, "%s", terr.msg);
	}
	/* Without it the inspector says it cannot read (frames.worker.started false). */
	if (o->frame_inspector)
		framewatch_start(&s->frames);
	return TT_OK;
}

void
session_poll_child(struct session *s)
{
	if (!s->child || s->child_exited)
		return;
	int status;
	pid_t r = waitpid(s->child, &status, WNOHANG);
	if (r == s->child) {
		s->child_exited = true;
		s->child_status = status;
	}
}

void
session_wait_child(struct session *s, uint64_t timeout_ns)
{
	uint64_t deadline = clock_now_ns() + timeout_ns;
	session_poll_child(s);
	while (s->child && !s->child_exited && clock_now_ns() < deadline) {
		struct timespec ts = {0, 5000000L};
		nanosleep(&ts, NULL);
		session_poll_child(s);
	}
}

void
session_describe_exit(const struct session *s, char *buf, size_t len)
{
	if (!s->child_exited)
		snprintf(buf, len, "is running");
	else if (WIFEXITED(s->child_status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(s->child_status));
	else if (WIFSIGNALED(s->child_status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(s->child_status),
			 strsignal(WTERMSIG(s->child_status)));
	else
		snprintf(buf, len, "ended");
}

void
session_end(struct session *s)
{
	waitwatch_free(s->waitwatch);
	s->waitwatch = NULL;
	framewatch_stop(&s->frames);
	if (s->watching_tasks) {
		taskwatch_stop(&s->tasks);
		s->watching_tasks = false;
	}
	if (s->sampling) {
		sampler_stop(&s->sampler);
		sampler_free(&s->sampler);
		s->sampling = false;
	}
	session_stop_child(s);
}

void
session_stop_child(struct session *s)
{
	if (s->child && !s->child_exited) {
		/* We started it; leaving it running would orphan it. */
		kill(-s->child, SIGTERM);
		kill(s->child, SIGTERM);
		for (int i = 0; i < 50 && !s->child_exited; i++) {
			struct timespec ts = {0, 20000000L};
			nanosleep(&ts, NULL);
			session_poll_child(s);
		}
		if (!s->child_exited) {
			kill(-s->child, SIGKILL);
			kill(s->child, SIGKILL);
			int status;
			if (waitpid(s->child, &status, 0) == s->child) {
				s->child_exited = true;
				s->child_status = status;
			}
		}
	}
}

void
session_rate_now(struct session *s, uint64_t now_ns, struct session_rate *r)
{
	struct engine_stats *st = &s->sampler.stats;
	uint64_t samples = atomic_load(&st->samples), errors = atomic_load(&st->errors);
	double elapsed = (double)atomic_load(&st->elapsed_ns) / 1e9;
	double life = procset_count(&s->sampler.procs) > 1
			      ? procset_lifetime_s(&s->sampler.procs, now_ns)
			      : elapsed;
	double expected = s->rate_hz > 0 ? life * s->rate_hz : 0;
	r->per_s = elapsed > 0 ? (double)samples / elapsed : 0;
	r->life_s = life;
	r->missed_pct = expected > 0 ? 100.0 * (double)atomic_load(&st->missed) / expected : 0;
	r->errors_pct = samples ? 100.0 * (double)errors / (double)samples : 0;
}
