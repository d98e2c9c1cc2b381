/* Cycle detection for linked lists read from the target (Brent's method):
 * a torn read can link a list back on itself, and a walk must notice after
 * a few laps, not after its hard cap, when each node may cost a stack walk. */
#ifndef TT_CYCLE_H
#define TT_CYCLE_H

#include <stdbool.h>
#include <stdint.h>

struct cycle_guard {
	uint64_t mark;      /* a node seen earlier; meeting it again is a cycle */
	uint32_t since, window;
};

static inline void
cycle_guard_init(struct cycle_guard *g)
{
	g->mark = 0;
	g->since = 0;
	g->window = 1;
}

/* Call once per node, before moving on to the next; true: `node` was seen. */
static inline bool
cycle_guard_seen(struct cycle_guard *g, uint64_t node)
{
	if (node != 0 && node == g->mark)
		return true;
	if (++g->since >= g->window) {
		g->mark = node;
		g->since = 0;
		g->window *= 2;
	}
	return false;
}

#endif
