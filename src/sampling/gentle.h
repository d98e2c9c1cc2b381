/* The sampler thread's scheduling policy, decided by another thread (the
 * guard, which keeps the normal policy and so cannot be starved). While the
 * machine has a CPU to spare the sampler runs under SCHED_IDLE: a target
 * thread that wakes takes its CPU at once, and the kernel counts a CPU
 * running only the sampler as free when it places a waking thread, so the
 * target's hand-overs (a pool's jobs, a lock passed on) never wait for a
 * pass to end. An idle-policy thread hardly runs on a busy machine, so the
 * sampler starts under the normal policy, goes idle only once the CPUs it
 * may run on were idle a quarter of the time, goes back at the first check
 * that finds it waiting for a CPU half the time (or missing more sampling
 * deadlines than under the normal policy), and tries again later (2 s,
 * doubling to 64 s while that lasts). */
#ifndef TT_GENTLE_H
#define TT_GENTLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How often gentle_check is meant to be called. */
#define GENTLE_TICK_NS (50ull * 1000000ull)

struct gentle {
	bool available;          /* SCHED_IDLE can be left again by this process */
	bool idle;               /* the thread is under SCHED_IDLE now */
	pid_t tid;               /* the thread whose policy this is */
	uint64_t last_ns, last_wait_ns, last_spare_ns;
	uint64_t idle_since_ns;  /* when it last went idle */
	uint64_t last_passes, last_missed;
	/* the window (>= GENTLE_WINDOW_NS) being added up */
	uint64_t win_start_ns, win_passes, win_missed, win_spare_ns;
	bool calm;               /* the last window left a CPU to spare */
	uint32_t busy_windows;   /* windows in a row that missed too much */
	uint32_t normal_miss;    /* deadlines missed under the normal policy, per mille
				    (measured while held there; 0 before) */
	uint64_t held_passes, held_missed;  /* counted while held there */
	uint64_t retry_ns;       /* under the normal policy: when to try idle again */
	uint64_t hold_ns;        /* the next fall-back's length */
	uint64_t idle_ns;        /* time spent under SCHED_IDLE, up to last_ns */
	uint64_t fallbacks;      /* times the machine was too busy for it */
};

/* What has happened so far: the sampler thread's time waiting for a CPU
 * (schedstat), its passes and the deadlines it skipped, and the CPU time
 * left idle on the CPUs it may run on (spare_known false: not known, taken
 * as a CPU to spare). */
struct gentle_counts {
	uint64_t wait_ns, passes, missed;
	uint64_t spare_ns;
	bool spare_known;
};

/* Thread tid's policy from now on, under the normal policy (with a short
 * time slice and, where allowed, nice -10) for a start. want false: never
 * idle, and the policy left as it is; a process without CAP_SYS_NICE whose
 * RLIMIT_NICE would not let it leave SCHED_IDLE again: never idle. */
void gentle_start(struct gentle *g, bool want, pid_t tid, uint64_t now_ns,
		  const struct gentle_counts *c);

/* Called every GENTLE_TICK_NS or so: falls back or tries idle again. */
void gentle_check(struct gentle *g, uint64_t now_ns, const struct gentle_counts *c);

#endif
