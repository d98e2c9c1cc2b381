/* The sampler thread's scheduling policy. While the machine has a CPU to
 * spare the sampler runs under SCHED_IDLE: a target thread that wakes takes
 * its CPU at once, and the kernel counts a CPU running only the sampler as
 * free when it places a waking thread, so the target's hand-overs (a pool's
 * jobs, a lock passed on) never wait for a pass to end. An idle-policy
 * thread hardly runs on a busy machine, and when it runs only while a CPU
 * is free its samples lean towards the moments the target leaves one: so
 * it goes back to the normal policy when it spends half of its time
 * waiting for a CPU, or misses more sampling deadlines than under the
 * normal policy (by 5 points), and tries again later (2 s, doubling to
 * 64 s while that lasts). */
#ifndef TT_GENTLE_H
#define TT_GENTLE_H

#include <stdbool.h>
#include <stdint.h>

struct gentle {
	bool available;          /* SCHED_IDLE can be left again by this process */
	bool idle;               /* the thread is under SCHED_IDLE now */
	uint64_t last_ns, last_wait_ns;
	uint64_t idle_since_ns;  /* when it last went idle */
	uint32_t busy_checks;    /* checks in a row that found it starved or missing */
	uint64_t last_passes, last_missed;
	uint32_t normal_miss;    /* deadlines missed under the normal policy, per mille
				    (measured while held there; 0 before) */
	uint64_t held_passes, held_missed;  /* counted while held there */
	uint64_t retry_ns;       /* under the normal policy: when to try idle again */
	uint64_t hold_ns;        /* the next fall-back's length */
	uint64_t idle_ns;        /* time spent under SCHED_IDLE, up to last_ns */
	uint64_t fallbacks;      /* times the machine was too busy for it */
};

/* What the sampler thread has done so far: its time waiting for a CPU
 * (schedstat), its passes and the deadlines it skipped. */
struct gentle_counts {
	uint64_t wait_ns, passes, missed;
};

/* With want, put the calling thread under SCHED_IDLE if it can be taken
 * out of it again (a process without CAP_SYS_NICE whose RLIMIT_NICE
 * forbids that stays under the normal policy). */
void gentle_start(struct gentle *g, bool want, uint64_t now_ns, const struct gentle_counts *c);

/* Called by the same thread every so often (every 250 ms): falls back or
 * tries idle again. */
void gentle_check(struct gentle *g, uint64_t now_ns, const struct gentle_counts *c);

#endif
