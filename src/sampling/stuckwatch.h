/* Which threads have not moved: what `watch` reports. Fed every sample
 * record (a thread slot's occupant, its process and its stack), it keeps
 * where each thread is and since when, and names the threads that have
 * sat in one place for longer than the threshold, but the idle ones: a
 * thread in the place it was first seen in (a pool's idle worker, a
 * server's accept loop), or in a place any other thread was first seen in
 * (the same pool's other workers, a server's other worker processes: a
 * tree's processes share their stacks' ids). A thread is named once per
 * place: it must move before it can be named again. No I/O. */
#ifndef TT_STUCKWATCH_H
#define TT_STUCKWATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "keytab.h"

struct stuck_thread {
	uint64_t born_ns;        /* which occupant of the slot (0: no sample yet) */
	uint32_t proc;
	uint32_t first_stack;    /* where it was first seen */
	uint32_t stack;          /* where it is (0: no Python frames) */
	uint64_t since_ns;       /* its first sample there */
	uint64_t last_ns;        /* its last sample */
	bool named;              /* named in this place */
};

struct stuckwatch {
	struct stuck_thread *threads;   /* by thread slot */
	uint32_t nthreads, cap;
	struct keytab idle;             /* stacks: the places threads were first seen in */
	uint64_t stuck_ns;
	uint64_t gone_ns;               /* a thread unsampled this long has left */
};

void stuckwatch_init(struct stuckwatch *w, uint64_t stuck_ns, uint64_t gone_ns);
void stuckwatch_free(struct stuckwatch *w);

/* A sample of the occupant of slot born at born_ns, a thread of process
 * proc, at stack, taken at time_ns (the sampler's clock). false when
 * memory is short (the sample is then left out). */
bool stuckwatch_see(struct stuckwatch *w, uint32_t slot, uint64_t born_ns, uint32_t proc,
		    uint32_t stack, uint64_t time_ns);

/* Is this thread idle by the rules above? */
bool stuckwatch_idle(const struct stuckwatch *w, const struct stuck_thread *t);

/* The next thread, from slot *cursor on, that has sat in one non-idle
 * place for the threshold by now_ns and was not named there yet: its slot
 * (marked named; *cursor moved past it), or -1 when none is left. */
int64_t stuckwatch_next(struct stuckwatch *w, uint64_t now_ns, uint32_t *cursor);

#endif
