/* The sampler's guard: a thread of tachyon-top's under the normal policy,
 * which a busy machine cannot starve as it starves the sampler under
 * SCHED_IDLE. Every GENTLE_TICK_NS it reads what the scheduler says of the
 * sampler thread and of the machine, publishes it (engine_stats), decides
 * the sampler's policy (gentle.h), and ends the session when its duration
 * has passed, whatever the sampler thread is doing. */
#ifndef TT_GUARD_H
#define TT_GUARD_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "gentle.h"
#include "hostload.h"
#include "workers.h"

struct sampler;

struct guard {
	struct worker worker;
	struct sampler *sampler;
	bool want_idle;           /* the sampler may go idle (a set rate, no --native) */
	bool started_gentle;      /* gentle holds the sampler thread's id */
	struct gentle gentle;
	cpu_set_t cpus;           /* where the sampler thread may run */
	bool all_cpus;
	struct host_cpu last;     /* the machine at the last published figures */
	uint64_t last_ns;
	uint64_t runnable_sum, runnable_n;  /* tasks wanting a CPU, since then */
};

/* Start s's guard (s->guard); 0 or the error number. */
int guard_start(struct guard *g, struct sampler *s, bool want_idle);
/* Stop it; nothing when it never started. */
void guard_stop(struct guard *g);

#endif
