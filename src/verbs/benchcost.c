/* bench --cost (benchcost.h).
 *
 * A virtual machine's speed varies by 10-30% from one fraction of a second
 * to the next, so separate runs cannot show a loss of 1%: each setting is
 * measured in many pairs of short windows on one target, sampled and paused
 * (sampler_pause: nothing read, perf events disabled) in random order, and
 * the loss is the median over the pairs of each pair's own ratio, with a
 * confidence interval from the spread of the pairs. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchcost.h"
#include "cli.h"
#include "clock.h"
#include "hostload.h"
#include "readfile.h"
#include "sanitize.h"
#include "fdlimit.h"
#include "jsonw.h"
#include "session.h"
#include "order.h"

/* The target: one thread doing units of work (about 50 us at a stack 8
 * frames deep) and writing "UNITS MONOTONIC_SECONDS" every 20 units, the
 * main thread waiting for it; it ends when the pipe is closed. The count is
 * written by the worker itself: a second thread waking to write it would
 * wait for the GIL, and its lines would come late by up to 5 ms. */
static const char COUNTER_PROGRAM[] =
	"import os, threading, time\n"
	"def unit():\n"
	"    x = 0\n"
	"    for i in range(400):\n"
	"        x += i * i\n"
	"    return x\n"
	"def nested(d):\n"
	"    return unit() if d == 0 else nested(d - 1)\n"
	"def work():\n"
	"    n = 0\n"
	"    while True:\n"
	"        nested(6)\n"
	"        n += 1\n"
	"        if n % 20 == 0:\n"
	"            os.write(1, b'%d %.6f\\n' % (n, time.monotonic()))\n"
	"t = threading.Thread(target=work)\n"
	"t.start()\n"
	"t.join()\n";

/* Windows of 30 ms: the machine's speed changes less between two of them
 * than between two of 0.4 s (measured on a 2-CPU VM: pair differences of
 * -4..+4% between quartiles, against -18..+10%), so many short pairs tell
 * a loss of a fraction of a percent apart where fewer long ones cannot. */
#define WINDOW_S 0.03   /* each window of a pair */
#define SETTLE_S 0.01   /* after pausing or resuming, before a window opens */
#define WARMUP_S 1.0    /* after attaching (a native walk's first passes read symbols) */
#define COUNT_WAIT_S 3.0

static const struct cost_setting {
	const char *name;
	double hz;
	bool native;
	bool watch;     /* a `watch` of the target, whole: paused by SIGSTOP */
} SETTINGS[] = {
	{"watch 20/s", 20, false, true},
	{"python 10k/s", 10000, false, false},
	{"python 2k/s", SAMPLER_LIVE_RATE_HZ, false, false},
	{"native 100/s", 100, true, false},
	{"native 1k/s", 1000, true, false},
	{"native 10k/s", 10000, true, false},
};
#define NSETTINGS (sizeof SETTINGS / sizeof SETTINGS[0])
_Static_assert(SAMPLER_LIVE_RATE_HZ == 2000, "the live view's setting is named for its rate");

/* The target's count, read from its pipe. */
struct counter {
	pid_t pid;
	int fd;
	char buf[4096];
	size_t len;
	uint64_t units;
	double at;          /* CLOCK_MONOTONIC seconds the count was taken; 0: none yet */
};

static double
now_s(void)
{
	return (double)clock_now_ns() / 1e9;
}

static void
sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !session_stop_signal())
		;
}

/* Read what the pipe holds; keep the newest complete line. false when the
 * target closed it (it ended). */
static bool
counter_read(struct counter *c)
{
	for (;;) {
		ssize_t got = read(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len);
		if (got == 0)
			return false;
		if (got < 0)
			return errno == EAGAIN || errno == EINTR;
		c->len += (size_t)got;
		c->buf[c->len] = '\0';
		char *line = c->buf, *nl;
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			unsigned long long u;
			double at;
			if (sscanf(line, "%llu %lf", &u, &at) == 2) {
				c->units = u;
				c->at = at;
			}
			line = nl + 1;
		}
		c->len = strlen(line);
		memmove(c->buf, line, c->len);
		if (c->len == sizeof c->buf - 1)
			c->len = 0;   /* not a count: drop it */
	}
}

/* The first count taken after `after`: false when none came in time. */
static bool
counter_after(struct counter *c, double after)
{
	double give_up = now_s() + COUNT_WAIT_S;
	while (c->at <= after) {
		if (!counter_read(c) || now_s() > give_up || session_stop_signal())
			return false;
		if (c->at > after)
			break;
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		poll(&pfd, 1, 20);
	}
	return true;
}

/* CPU time of every thread of pid (schedstat), in ns. */
static uint64_t
cpu_ns(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	uint64_t total = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char file[320], text[128];
		snprintf(file, sizeof file, "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
		uint64_t on, wait;
		if (read_small_file(file, text, sizeof text) > 0 &&
		    hostload_parse_schedstat(text, &on, &wait, NULL))
			total += on;
	}
	closedir(d);
	return total;
}

/* Units per second of wall time and per CPU-second of the target, over a
 * window between two counts. */
struct window {
	double wall, cpu;
};

static bool
measure_window(struct counter *c, struct window *w)
{
	if (!counter_after(c, now_s()))
		return false;
	uint64_t u0 = c->units, c0 = cpu_ns(c->pid);
	double t0 = c->at;
	sleep_s(WINDOW_S);
	if (!counter_after(c, t0 + WINDOW_S))
		return false;
	uint64_t c1 = cpu_ns(c->pid);
	double units = (double)(c->units - u0);
	w->wall = c->at > t0 ? units / (c->at - t0) : 0;
	w->cpu = c1 > c0 ? units / ((double)(c1 - c0) / 1e9) : 0;
	return true;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The p-quantile of n sorted values (linear between neighbours). */
static double
quantile(const double *v, size_t n, double p)
{
	if (n == 0)
		return NAN;
	double at = p * (double)(n - 1);
	size_t i = (size_t)at;
	return i + 1 < n ? v[i] + (at - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

static double
median_of(double *v, size_t n)
{
	order_sort(v, n, sizeof *v, cmp_double);
	return quantile(v, n, 0.5);
}

/* One setting's figures. */
struct cost_row {
	bool done;
	double alone, sampled;          /* units/s, medians */
	double loss, q1, q3;            /* % of the pair's alone figure */
	double ci_low, ci_high;         /* the median loss's 95% confidence interval */
	double cpu_loss;                /* the same per CPU-second of the target */
	double sampler_cpu;             /* share of a CPU while sampling */
	double samples_per_s;           /* passes per second while sampling */
	double us_per_walk;             /* --native: per native walk */
	double native_pct;              /* --native: thread samples with native frames */
	uint64_t paused_passes;         /* passes during paused windows: none */
	uint64_t paused_perf;           /* perf samples the kernel took while paused: none */
	size_t pairs;
};

static uint64_t
get(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* A small generator for the order within each pair: the same each run. */
static uint32_t
next_random(uint32_t *state)
{
	uint32_t x = *state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/* The figures of the windows of many pairs, the alone one first. */
struct pair_figures {
	double *alone, *sampled, *loss, *cpu_loss;
};

static bool
pairs_alloc(struct pair_figures *p, size_t n)
{
	p->alone = calloc(n, sizeof *p->alone);
	p->sampled = calloc(n, sizeof *p->sampled);
	p->loss = calloc(n, sizeof *p->loss);
	p->cpu_loss = calloc(n, sizeof *p->cpu_loss);
	return p->alone && p->sampled && p->loss && p->cpu_loss;
}

static void
pairs_free(struct pair_figures *p)
{
	free(p->alone);
	free(p->sampled);
	free(p->loss);
	free(p->cpu_loss);
}

/* Pair k: its windows alone (w[0]) and sampled (w[1]). */
static void
pairs_put(struct pair_figures *p, size_t k, const struct window w[2])
{
	p->alone[k] = w[0].wall;
	p->sampled[k] = w[1].wall;
	p->loss[k] = w[0].wall > 0 ? 100.0 * (w[0].wall - w[1].wall) / w[0].wall : NAN;
	p->cpu_loss[k] = w[0].cpu > 0 ? 100.0 * (w[0].cpu - w[1].cpu) / w[0].cpu : NAN;
}

/* The row's medians, quartiles and confidence interval over k pairs. */
static void
pairs_summarize(struct pair_figures *p, size_t k, struct cost_row *row)
{
	row->pairs = k;
	row->alone = median_of(p->alone, k);
	row->sampled = median_of(p->sampled, k);
	row->cpu_loss = median_of(p->cpu_loss, k);
	row->loss = median_of(p->loss, k);   /* sorts: the quartiles next */
	row->q1 = quantile(p->loss, k, 0.25);
	row->q3 = quantile(p->loss, k, 0.75);
	/* The median's standard error from the spread between the quartiles
	 * (robust against the odd window the host took the CPU away in). */
	double se = k ? 1.2533 * (row->q3 - row->q1) / 1.349 / sqrt((double)k) : NAN;
	row->ci_low = row->loss - 1.96 * se;
	row->ci_high = row->loss + 1.96 * se;
}

static tt_status
measure_setting(struct counter *c, const struct cost_setting *set, size_t pairs,
		uint32_t *rng, struct cost_row *row, struct tt_error *err)
{
	struct session_options so = {
		.pid = c->pid, .rate_hz = set->hz, .no_subprocesses = true, .native = set->native,
	};
	struct session session;
	tt_status st = session_start(&session, &so, err);
	if (st != TT_OK)
		return st;
	struct sampler *s = &session.sampler;
	struct engine_stats *es = &s->stats;
	sleep_s(WARMUP_S);
	struct pair_figures fig;
	if (!pairs_alloc(&fig, pairs)) {
		st = tt_fail(err, TT_ENOMEM, 0, "out of memory for the windows");
		goto out;
	}
	uint64_t busy = 0, passes = 0;
	double on_s = 0;
	size_t k = 0;
	for (; k < pairs && !session_stop_signal(); k++) {
		struct window w[2];   /* [0] paused, [1] sampling */
		bool first_on = next_random(rng) & 1;
		for (int j = 0; j < 2; j++) {
			bool on = (j == 0) == first_on;
			sampler_pause(s, !on);
			/* Applied between two passes: a pass under way ends first. */
			double give_up = now_s() + COUNT_WAIT_S;
			while (sampler_paused(s) == on && sampler_end_state(s) == SAMPLER_RUNNING &&
			       now_s() < give_up)
				sleep_s(0.0005);
			sleep_s(SETTLE_S);
			uint64_t n0 = get(&es->samples), b0 = get(&es->busy_ns);
			double t0 = now_s();
			if (sampler_end_state(s) != SAMPLER_RUNNING) {
				st = tt_fail(err, TT_EIO, 0, "the sampler stopped: %s",
					     sampler_end_state(s) == SAMPLER_FAILED ? s->error.msg
										  : "the target ended");
				goto out;
			}
			if (!measure_window(c, &w[on])) {
				st = tt_fail(err, TT_EIO, 0, "the target (pid %d) stopped counting its "
							     "work", (int)c->pid);
				goto out;
			}
			if (on) {
				busy += get(&es->busy_ns) - b0;
				passes += get(&es->samples) - n0;
				on_s += now_s() - t0;
			} else {
				row->paused_passes += get(&es->samples) - n0;
			}
		}
		pairs_put(&fig, k, w);
	}
	sampler_pause(s, false);
	sleep_s(0.02);   /* the resumption applied: the perf samples of the last pause counted */
	pairs_summarize(&fig, k, row);
	row->sampler_cpu = on_s > 0 ? (double)busy / 1e9 / on_s : 0;
	row->samples_per_s = on_s > 0 ? (double)passes / on_s : 0;
	row->paused_perf = get(&es->native_paused_samples);
	if (set->native) {
		uint64_t walks = get(&es->native_walks);
		row->us_per_walk = walks ? (double)get(&es->native_walk_ns) / (double)walks / 1e3 : 0;
		struct native_shares ns;
		sampler_native_shares(s, &ns);
		row->native_pct = ns.native_pct;
	}
	row->done = k == pairs;
out:
	pairs_free(&fig);
	session_end(&session);
	return st;
}

/* `watch -p PID` of the target as a child of ours, its output on a pipe
 * read until its first line (attached); thresholds it will not reach: it
 * is measured, not reporting. 0 when it could not be started. */
static pid_t
start_watch(pid_t target, double hz, char *dir)
{
	char pid_s[24], rate_s[32];
	snprintf(pid_s, sizeof pid_s, "%d", (int)target);
	snprintf(rate_s, sizeof rate_s, "%g", hz);
	char *argv[] = {"tachyon-top", "watch", "-p", pid_s, "-r", rate_s, "-o", dir, "--stuck",
			"86400", "--spin", "86400", "--loop-blocked", "86400000", NULL};
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(p[1]);
	char line[512];
	size_t got = 0;
	while (pid > 0 && got < sizeof line - 1) {
		struct pollfd pfd = {.fd = p[0], .events = POLLIN};
		ssize_t n = poll(&pfd, 1, 20000) == 1 ? read(p[0], line + got, sizeof line - 1 - got)
						      : -1;
		if (n <= 0)
			break;
		got += (size_t)n;
		line[got] = '\0';
		if (strchr(line, '\n'))
			break;
	}
	close(p[0]);   /* later lines (none: nothing to report) would get SIGPIPE */
	if (pid > 0 && (got == 0 || strncmp(line, "watch: process", 14) != 0)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 0;
	}
	return pid < 0 ? 0 : pid;
}

/* The watch setting: pairs of windows with the watch process stopped
 * (SIGSTOP: its sampler, kernel watcher and task reader alike) and
 * running. Its CPU is its whole run's over the time it ran. */
static tt_status
measure_watch(struct counter *c, const struct cost_setting *set, size_t pairs, uint32_t *rng,
	      struct cost_row *row, struct tt_error *err)
{
	char dir[] = "/tmp/tt-cost-watch-XXXXXX";
	if (!mkdtemp(dir))
		return tt_fail(err, TT_EIO, errno, "cannot make a directory for watch's reports");
	pid_t w = start_watch(c->pid, set->hz, dir);
	if (!w) {
		rmdir(dir);
		return tt_fail(err, TT_EIO, 0, "cannot start tachyon-top watch -p %d", (int)c->pid);
	}
	double on_s = WARMUP_S;
	sleep_s(WARMUP_S);
	tt_status st = TT_OK;
	struct pair_figures fig;
	size_t k = 0;
	if (!pairs_alloc(&fig, pairs)) {
		st = tt_fail(err, TT_ENOMEM, 0, "out of memory for the windows");
		goto out;
	}
	for (; k < pairs && !session_stop_signal(); k++) {
		struct window win[2];
		bool first_on = next_random(rng) & 1;
		for (int j = 0; j < 2; j++) {
			bool on = (j == 0) == first_on;
			kill(w, on ? SIGCONT : SIGSTOP);
			sleep_s(SETTLE_S);
			double t0 = now_s();
			if (!measure_window(c, &win[on])) {
				st = tt_fail(err, TT_EIO, 0, "the target (pid %d) stopped counting its "
							     "work", (int)c->pid);
				goto out;
			}
			if (on)
				on_s += now_s() - t0 + SETTLE_S;
		}
		pairs_put(&fig, k, win);
	}
	pairs_summarize(&fig, k, row);
	row->samples_per_s = set->hz;
	row->done = k == pairs;
out:
	kill(w, SIGCONT);
	kill(w, SIGTERM);
	struct rusage ru;
	int status;
	if (wait4(w, &status, 0, &ru) == w) {
		double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			     (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		row->sampler_cpu = on_s > 0 ? cpu / on_s : 0;
	}
	pairs_free(&fig);
	rmdir(dir);
	return st;
}

/* Start the counting target with its stdout on a pipe. */
static tt_status
start_counter(char **python, struct counter *c, struct tt_error *err)
{
	size_t n = 0;
	while (python[n])
		n++;
	char **argv = calloc(n + 3, sizeof *argv);
	int p[2];
	if (!argv)
		return tt_fail(err, TT_ENOMEM, 0, "out of memory");
	memcpy(argv, python, n * sizeof *argv);
	argv[n] = "-c";
	argv[n + 1] = (char *)COUNTER_PROGRAM;
	int failed[2];   /* the child's errno when exec fails; closed by a good exec */
	if (pipe2(p, O_CLOEXEC) != 0) {
		free(argv);
		return tt_fail(err, TT_EIO, errno, "pipe");
	}
	if (pipe2(failed, O_CLOEXEC) != 0) {
		free(argv);
		close(p[0]);
		close(p[1]);
		return tt_fail(err, TT_EIO, errno, "pipe");
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		free(argv);
		close(p[0]);
		close(p[1]);
		close(failed[0]);
		close(failed[1]);
		return tt_fail(err, TT_EIO, e, "fork");
	}
	if (pid == 0) {
		setpgid(0, 0);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		dup2(p[1], 1);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		fdlimit_restore();
		execvp(argv[0], argv);
		int e = errno;
		if (write(failed[1], &e, sizeof e) < 0)
			_exit(126);
		_exit(127);
	}
	free(argv);
	close(p[1]);
	close(failed[1]);
	int e = 0;
	ssize_t got = read(failed[0], &e, sizeof e);
	close(failed[0]);
	if (got == (ssize_t)sizeof e) {
		*c = (struct counter){.pid = pid, .fd = p[0]};
		return tt_fail(err, TT_EUSAGE, e, "cannot run %s: %s", python[0], strerror(e));
	}
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	*c = (struct counter){.pid = pid, .fd = p[0]};
	/* Counting: the interpreter is up and its work under way. */
	if (!counter_after(c, 0) || !counter_after(c, c->at + 0.5))
		return tt_fail(err, TT_EIO, 0, "%s -c PROGRAM printed no count within %.0f s "
					       "(is it a Python interpreter?)", python[0], COUNT_WAIT_S);
	return TT_OK;
}

static void
stop_counter(struct counter *c)
{
	if (c->pid <= 0)
		return;
	close(c->fd);
	kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	c->pid = 0;
}

static void
print_row_text(const struct cost_setting *set, const struct cost_row *r)
{
	printf("%-14s %9.0f %9.0f %+7.2f%% %+6.2f..%+5.2f %+6.1f..%+5.1f %+7.1f%%   %5.1f%% %8.0f",
	       set->name, r->alone, r->sampled, r->loss, r->ci_low, r->ci_high, r->q1, r->q3,
	       r->cpu_loss, 100 * r->sampler_cpu, r->samples_per_s);
	if (set->native)
		printf("   %6.0f us, native in %.0f%%", r->us_per_walk, r->native_pct);
	printf("\n");
	fflush(stdout);
}

static void
print_json(pid_t pid, const char *python, size_t pairs, const struct cost_row *rows, bool interrupted)
{
	struct jsonw w;
	jsonw_init(&w, stdout);
	jsonw_object(&w, NULL);
	jsonw_i64(&w, "pid", pid);
	jsonw_string(&w, "python", python);
	jsonw_u64(&w, "pairs", pairs);
	jsonw_double(&w, "window_s", 3, WINDOW_S);
	jsonw_array(&w, "settings");
	jsonw_style(&w, true, "\n  ");
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct cost_row *r = &rows[i];
		if (!r->pairs)
			continue;
		jsonw_object(&w, NULL);
		jsonw_string(&w, "setting", SETTINGS[i].name);
		jsonw_double(&w, "rate", 0, SETTINGS[i].hz);
		jsonw_bool(&w, "native", SETTINGS[i].native);
		jsonw_u64(&w, "pairs", r->pairs);
		jsonw_double(&w, "alone_per_s", 1, r->alone);
		jsonw_double(&w, "sampled_per_s", 1, r->sampled);
		jsonw_double(&w, "loss_pct", 2, r->loss);
		jsonw_double(&w, "loss_ci_low", 2, r->ci_low);
		jsonw_double(&w, "loss_ci_high", 2, r->ci_high);
		jsonw_double(&w, "loss_q1", 2, r->q1);
		jsonw_double(&w, "loss_q3", 2, r->q3);
		jsonw_double(&w, "cpu_loss_pct", 2, r->cpu_loss);
		jsonw_double(&w, "sampler_cpu", 4, r->sampler_cpu);
		jsonw_double(&w, "samples_per_s", 1, r->samples_per_s);
		jsonw_double(&w, "us_per_native_walk", 1, r->us_per_walk);
		jsonw_double(&w, "native_pct", 1, r->native_pct);
		jsonw_u64(&w, "paused_passes", r->paused_passes);
		jsonw_u64(&w, "paused_perf_samples", r->paused_perf);
		jsonw_end(&w);
	}
	jsonw_end(&w);
	jsonw_break(&w, "\n ");
	jsonw_bool(&w, "interrupted", interrupted);
	jsonw_end(&w);
	putchar('\n');
}

int
benchcost_run(char **python, double seconds, bool json)
{
	struct tt_error err = {0};
	if (session_catch_stop_signals(&err) != TT_OK)
		return cli_report(&err);
	size_t pairs = (size_t)lround(seconds / (2 * (WINDOW_S + SETTLE_S)));
	if (pairs < 4)
		pairs = 4;   /* a median and quartiles need a few */
	struct counter c = {0};
	if (start_counter(python, &c, &err) != TT_OK) {
		stop_counter(&c);
		return cli_report(&err);
	}
	struct cost_row rows[NSETTINGS];
	memset(rows, 0, sizeof rows);
	char label[256];
	if (!json) {
		printf("target        ");
		for (size_t i = 0; python[i]; i++) {
			sanitize_for_terminal(python[i], label, sizeof label);
			printf("%s ", label);
		}
		printf("-c PROGRAM (pid %d): one thread counting units of its work; per setting "
		       "%zu pairs of %.0f ms windows, sampled and alone (the sampler paused, perf "
		       "events off) in random order; loss: the median over the pairs, its 95%% "
		       "confidence interval and the pairs' interquartile range\n", (int)c.pid, pairs,
		       WINDOW_S * 1e3);
		printf("%-14s %9s %9s %8s %14s %13s %8s   %6s %8s   %s\n", "setting", "alone/s",
		       "sampled/s", "loss", "95% CI", "IQR", "loss/CPU", "sampler", "passes/s",
		       "per native walk");
	}
	uint32_t rng = 2463534242u;
	int rc = 0;
	uint64_t paused_passes = 0, paused_perf = 0;
	for (size_t i = 0; i < NSETTINGS && !session_stop_signal(); i++) {
		tt_status st = SETTINGS[i].watch
			       ? measure_watch(&c, &SETTINGS[i], pairs, &rng, &rows[i], &err)
			       : measure_setting(&c, &SETTINGS[i], pairs, &rng, &rows[i], &err);
		if (st != TT_OK) {
			rc = cli_report(&err);
			break;
		}
		paused_passes += rows[i].paused_passes;
		paused_perf += rows[i].paused_perf;
		if (!json && rows[i].pairs)
			print_row_text(&SETTINGS[i], &rows[i]);
	}
	bool interrupted = session_stop_signal() != 0;
	if (json) {
		print_json(c.pid, python[0], pairs, rows, interrupted);
	} else if (!rc) {
		printf("alone         the sampler read nothing in the paused windows (%llu passes) "
		       "and the kernel took %llu perf samples then\n",
		       (unsigned long long)paused_passes, (unsigned long long)paused_perf);
		if (interrupted)
			printf("interrupted\n");
	}
	stop_counter(&c);
	return rc;
}
