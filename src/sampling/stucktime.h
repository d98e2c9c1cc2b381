/* How long each task or greenlet has sat at the same point, over
 * successive reads of a process: a task keeps the time of the first read
 * that saw it where it is (its frames and lines unchanged, and the same
 * task: see tt_task.coro). Used by the tasks view's reader (taskwatch.h)
 * and `dump --tasks --watch`. */
#ifndef TT_STUCKTIME_H
#define TT_STUCKTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "async/asynctasks.h"
#include "keytab.h"

struct stuck_time {
	struct keytab points;      /* per task of the last read, by address */
	uint64_t reads;
};

void stuck_time_init(struct stuck_time *st);
void stuck_time_free(struct stuck_time *st);

/* Take read ts, made at now_ns: per task i, how long it has been at its
 * point in stuck_ns[i], and in before[i] whether it was there at the first
 * read already (stuck_ns is then a lower bound). false when memory is
 * short. */
bool stuck_time_update(struct stuck_time *st, const struct tt_tasks *ts, uint64_t now_ns,
		       uint64_t *stuck_ns, bool *before);

#endif
