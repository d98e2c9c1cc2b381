/* The live view's baseline (`d`): each function's share of the samples at
 * the moment it is marked, kept by function and by line, so that the
 * table can show how much each has moved since (the tuning loop: mark,
 * change something, watch the deltas). */
#ifndef TT_BASELINE_H
#define TT_BASELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "aggregate.h"

struct baseline;

/* The shares of every function (and line) under q's mode, thread and
 * process, in q's scope, now; NULL when memory is short. */
struct baseline *baseline_take(struct aggregate *a, const struct agg_query *q,
			       uint64_t wall_s);
void baseline_free(struct baseline *b);

/* Does the baseline compare with what q shows (the same mode, thread and
 * process)? */
bool baseline_applies(const struct baseline *b, const struct agg_query *q);
/* When it was marked (seconds since the epoch). */
uint64_t baseline_when(const struct baseline *b);

/* The TOTAL% of function `func` (at `line`, by_line) at the mark; false
 * when it had no samples then. */
bool baseline_share(const struct baseline *b, bool by_line, uint32_t func, int32_t line,
		    double *pct);

#endif
