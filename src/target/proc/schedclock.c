#include "config.h"

#include <ctype.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "grow.h"
#include "readfile.h"
#include "proc/schedclock.h"
#include "proc/procstat.h"

/* An offset older than this is learnt again: it drifts by the time the
 * hypervisor steals from its CPU, a few percent of a second per second on
 * a busy host. */
#define OFFSET_MAX_AGE_NS 1000000000ull
/* An offset is known to within half its bracket: one of 1 ms is kept at
 * once; otherwise the narrowest of a few, if it is under 40 ms (a CPU a
 * busy thread holds). */
#define BRACKET_GOOD_NS 1000000ull
#define BRACKET_MAX_NS 40000000ull
#define BRACKET_TRIES 6
/* How far in the future a reading may be before it is inconsistent. */
#define FUTURE_SLACK_NS 20000000

struct cpu_clock {
	uint64_t learnt_ns;  /* CLOCK_MONOTONIC when learnt (or refused); 0: never */
	int64_t offset_ns;   /* monotonic = this CPU's scheduler clock + offset */
	bool refused;        /* we may not run there, or could not read it */
};

struct schedclock {
	struct cpu_clock *cpus;
	uint32_t cap;
	uint64_t calibrations;
};

static const char *
skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

bool
schedclock_parse_exec_start(const char *text, uint64_t *ns)
{
	/* "se.exec_start    :     351526.545882" (milliseconds, 6 decimals) */
	const char *p = text;
	while ((p = strstr(p, "se.exec_start")) != NULL) {
		if (p != text && p[-1] != '\n') {
			p++;
			continue;
		}
		p = skip_spaces(p + strlen("se.exec_start"));
		if (*p != ':')
			return false;
		p = skip_spaces(p + 1);
		uint64_t ms = 0, frac = 0;
		int digits = 0;
		if (!isdigit((unsigned char)*p))
			return false;
		for (; isdigit((unsigned char)*p); p++) {
			if (ms > UINT64_MAX / 10 / 1000000)
				return false;
			ms = ms * 10 + (uint64_t)(*p - '0');
		}
		if (*p == '.') {
			for (p++; isdigit((unsigned char)*p); p++)
				if (digits < 6) {
					frac = frac * 10 + (uint64_t)(*p - '0');
					digits++;
				}
		}
		if (*p && *p != '\n' && *p != ' ')
			return false;
		while (digits < 6) {
			frac *= 10;
			digits++;
		}
		*ns = ms * 1000000 + frac;
		return true;
	}
	return false;
}

static bool
read_exec_start(const char *path, uint64_t *ns)
{
	char buf[4096];
	return read_small_file(path, buf, sizeof buf) > 0 && schedclock_parse_exec_start(buf, ns);
}

struct schedclock *
schedclock_new(void)
{
	return calloc(1, sizeof(struct schedclock));
}

void
schedclock_free(struct schedclock *c)
{
	if (!c)
		return;
	free(c->cpus);
	free(c);
}

bool
schedclock_offset_now(struct schedclock *c, int cpu, int64_t *offset_ns)
{
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return false;
	cpu_set_t old, one;
	if (sched_getaffinity(0, sizeof old, &old) != 0)
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	/* As a real-time thread for these few microseconds, our wake-up on a
	 * CPU that busy threads hold is not put off behind their time slices
	 * (seconds, under nice -20 hogs). Without the privilege, we wait. */
	int policy = sched_getscheduler(0);
	struct sched_param old_param, rt = {.sched_priority = 1};
	bool realtime = policy == SCHED_OTHER && sched_getparam(0, &old_param) == 0 &&
			sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &rt) == 0;
	if (sched_setaffinity(0, sizeof one, &one) != 0) {
		if (realtime)
			sched_setscheduler(0, policy, &old_param);
		return false;
	}
	c->calibrations++;
	/* The narrowest of a few brackets: on a CPU a busy thread holds, our
	 * wake-up may wait for its time slice (a few ms). */
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < BRACKET_TRIES && best > BRACKET_GOOD_NS; i++) {
		/* Coming back from a sleep, the scheduler sets our se.exec_start
		 * from this CPU's clock when it picks us: after `before`, and
		 * before the read that returns it. */
		uint64_t before = clock_now_ns();
		struct timespec nap = {0, 1000};
		nanosleep(&nap, NULL);
		uint64_t exec;
		bool read = read_exec_start("/proc/thread-self/sched", &exec);
		uint64_t after = clock_now_ns();
		if (!read || exec == 0)
			break;
		if (sched_getcpu() != cpu || after - before >= best)
			continue;
		best = after - before;
		*offset_ns = (int64_t)(before + (after - before) / 2) - (int64_t)exec;
	}
	bool ok = best <= BRACKET_MAX_NS;
	sched_setaffinity(0, sizeof old, &old);
	if (realtime)
		sched_setscheduler(0, policy, &old_param);
	return ok;
}

/* The offset of cpu's clock, learnt again when old or when `stale`; false
 * when it cannot be had. *fresh: learnt by this call. */
static bool
cpu_offset(struct schedclock *c, int cpu, bool stale, int64_t *offset_ns, bool *fresh)
{
	*fresh = false;
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return false;
	if (!grow_array((void **)&c->cpus, &c->cap, (uint32_t)cpu + 1, sizeof c->cpus[0]))
		return false;
	struct cpu_clock *k = &c->cpus[cpu];
	uint64_t now = clock_now_ns();
	bool young = k->learnt_ns && now - k->learnt_ns < OFFSET_MAX_AGE_NS;
	if (young && k->refused)
		return false;
	if (!young || stale) {
		k->learnt_ns = now;
		k->refused = !schedclock_offset_now(c, cpu, &k->offset_ns);
		*fresh = true;
		if (k->refused)
			return false;
	}
	*offset_ns = k->offset_ns;
	return true;
}

/* Why a duration is not known (schedclock_since_last_ran's *why). */
static double
unknown(const char **why, const char *because)
{
	if (why)
		*why = because;
	return -1;
}

double
schedclock_since_last_ran(struct schedclock *c, pid_t pid, long tid, const char **why)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/sched", (int)pid, tid);
	/* The CPU read before and after the clock: if it changed, the
	 * thread ran in between; look once more. */
	int cpu = -1;
	uint64_t then = 0;
	for (int i = 0; i < 2; i++) {
		int before = procstat_last_cpu(pid, tid);
		if (!read_exec_start(path, &then))
			return unknown(why, "no scheduler clock reading for the thread (its sched "
					    "file unreadable: gone, or a kernel without it)");
		/* The kernel zeroes it when it migrates a task, until the task
		 * runs again: no honest duration exists then. */
		if (then == 0)
			return unknown(why, "the kernel keeps no last-run time for the thread "
					    "(moved to another CPU and not run since)");
		cpu = procstat_last_cpu(pid, tid);
		if (before == cpu)
			break;
		cpu = -1;
	}
	if (cpu < 0)
		return unknown(why, "the thread moved between CPUs while it was read");
	int64_t offset;
	bool fresh;
	if (!cpu_offset(c, cpu, false, &offset, &fresh))
		return unknown(why, "its CPU's clock could not be compared with ours (a CPU outside "
				    "tachyon-top's CPU set, or a wake-up there waited over 40 ms)");
	int64_t ago = (int64_t)clock_now_ns() - ((int64_t)then + offset);
	if (ago < -FUTURE_SLACK_NS && !fresh) {
		if (!cpu_offset(c, cpu, true, &offset, &fresh))
			return unknown(why, "its CPU's clock could not be compared with ours again "
					    "(a wake-up there waited over 40 ms)");
		ago = (int64_t)clock_now_ns() - ((int64_t)then + offset);
	}
	if (ago < -FUTURE_SLACK_NS)
		return unknown(why, "its CPU's clock read ahead of ours even after comparing them "
				    "again");
	return ago > 0 ? (double)ago / 1e9 : 0.0;
}
