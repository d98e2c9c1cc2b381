/* What `watch` reports, judged from the samples. Fed every sample record
 * (a thread slot's occupant, its process and its stack), it names:
 *
 * - a thread stuck: it has sat in one place (its stack unchanged) and in
 *   one wait in the kernel (when the kernel watcher says so: a loop that
 *   sleeps a moment at one line, again and again, is not stuck) for
 *   longer than the threshold, and waits (is off a CPU at its last
 *   sample: one on a CPU all along is busy, for the spin rule), but the
 *   idle ones: a thread waiting in the kernel on a listening socket
 *   (a server's worker waiting for its next client, however long), and a thread in the place it
 *   was first seen in (a pool's idle worker, a server's accept loop), or
 *   in a place any other thread was first seen in (the same pool's other
 *   workers, a server's other worker processes: a tree's processes share
 *   their stacks' ids). Named once per place: it must move first to be
 *   named again.
 * - an asyncio event loop blocked: its thread runs a callback under the
 *   loop's _run_once (not waiting in its selector), its stack unchanged
 *   and off a CPU, for longer than the loop threshold: asyncio's "slow
 *   callback" warning, from outside, for a callback blocked in a call (a
 *   sleep, a blocking read). A loop busy on a CPU is not blocked by this
 *   rule: a loaded loop runs the same lines for request after request.
 *   Named once per place, as above.
 * - a thread spinning: on a CPU in one function (its innermost frame's,
 *   whatever the line) for longer than the spin threshold. Named once per
 *   such stretch.
 *
 * No I/O: the stacks' frames are read from the intern tables. */
#ifndef TT_STUCKWATCH_H
#define TT_STUCKWATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "intern.h"
#include "keytab.h"
#include "procset.h"
#include "ring.h"
#include "waitwatch.h"

/* The rules' defaults: watch's and the live view's. */
#define STUCKWATCH_STUCK_S 30
#define STUCKWATCH_LOOP_MS 500
#define STUCKWATCH_SPIN_S 60

struct stuck_thread {
	uint64_t born_ns;        /* which occupant of the slot (0: no sample yet) */
	uint32_t proc;
	uint32_t first_stack;    /* where it was first seen */
	uint32_t stack;          /* where it is (0: no Python frames) */
	uint64_t since_ns;       /* its first sample there */
	uint64_t wait_ns;        /* since when it has been in its kernel wait there, as
				    the kernel watcher last said (0: not known) */
	bool for_client;         /* that wait is on a listening socket */
	uint64_t off_cpu_ns;     /* its first sample there off a CPU since it was last
				    on one (0: on one) */
	uint64_t last_ns;        /* its last sample */
	bool named;              /* named in this place */
	bool loop_named;         /* named as a blocked event loop in this place */
	uint32_t spin_func;      /* the function it has been on a CPU in (0: off one) */
	uint64_t spin_ns;        /* since when */
	bool spin_named;
};

enum stuck_kind {
	STUCK_NONE = -1,
	STUCK_PLACE,             /* one place past the threshold */
	STUCK_LOOP,              /* an event loop held by one callback */
	STUCK_SPIN,              /* on a CPU in one function */
};

struct stuckwatch {
	const struct intern *in;        /* the stacks' frames */
	struct stuck_thread *threads;   /* by thread slot */
	uint32_t nthreads, cap;
	struct keytab idle;             /* stacks: the places threads were first seen in */
	struct keytab holders;          /* stack -> the callback it runs under an event loop */
	uint64_t stuck_ns, loop_ns, spin_ns;
	uint64_t gone_ns;               /* a thread unsampled this long has left */
};

void stuckwatch_init(struct stuckwatch *w, const struct intern *in, uint64_t stuck_ns,
		     uint64_t loop_ns, uint64_t spin_ns, uint64_t gone_ns);
void stuckwatch_free(struct stuckwatch *w);

/* A sample of the occupant of slot born at born_ns, a thread of process
 * proc, at stack, taken at time_ns (the sampler's clock), on a CPU or not
 * (or not known: as on one). false when memory is short (the sample is
 * then left out). */
bool stuckwatch_see(struct stuckwatch *w, uint32_t slot, uint64_t born_ns, uint32_t proc,
		    uint32_t stack, bool on_cpu, uint64_t time_ns);

/* A drain sink: n records of the sampler whose threads and processes are
 * ps's, each seen as above (a record of a slot's previous thread left
 * out). false when memory was short for some. */
bool stuckwatch_take(struct stuckwatch *w, const struct procset *ps,
		     const struct sample_record *r, size_t n);

/* The kernel watcher's newest look (snap: its clock, the sampler's started
 * at start_ns): each thread blocked in a call has been in it since the
 * entry says. */
void stuckwatch_waits(struct stuckwatch *w, const struct procset *ps,
		      const struct waitwatch_snapshot *snap, uint64_t start_ns);

/* What the thread of slot is by now_ns, named or not: why it would be
 * named (the first that holds of stuck, spinning, a blocked loop), or
 * STUCK_NONE. What the live view marks and watch reports, by the same
 * rules. */
enum stuck_kind stuckwatch_state(struct stuckwatch *w, uint32_t slot, uint64_t now_ns);

/* Is this thread idle by the rules above? */
bool stuckwatch_idle(const struct stuckwatch *w, const struct stuck_thread *t);

/* The function of the callback that holds the event loop in stack (the
 * outermost frame inside _run_once not in asyncio's own files, else the
 * innermost), or 0 when the stack runs no loop or waits in its selector. */
uint32_t stuckwatch_loop_holder(struct stuckwatch *w, uint32_t stack);

/* Since when (the sampler's clock) the thread has been doing what it was
 * named for: in its place, off a CPU in its callback, or in its function
 * on a CPU. */
uint64_t stuckwatch_since(const struct stuck_thread *t, enum stuck_kind kind);

/* The next thread, from slot *cursor on, to name by now_ns: its slot and
 * in *kind why (it is marked named; *cursor moves past it), or -1 when
 * none is left. */
int64_t stuckwatch_next(struct stuckwatch *w, uint64_t now_ns, uint32_t *cursor,
			enum stuck_kind *kind);

#endif
