/* `dump --tasks`: asyncio tasks as an indented await tree and greenlets
 * under their parents, or as JSON. */
#ifndef TT_DUMPTASKS_H
#define TT_DUMPTASKS_H

#include <stdio.h>

#include "asynctasks.h"
#include "codecache.h"
#include "greenlets.h"

/* Text: the tasks nobody awaits first, each followed by the tasks it awaits.
 * A task awaited by several is drawn in full once and named elsewhere; a
 * cycle is cut where it closes. */
void dumptasks_text(FILE *f, const struct tt_tasks *ts, const struct code_cache *codes,
		    const struct greenlet_reader *g);

/* JSON: `"tasks": [...]` (the key included), for the process object. */
void dumptasks_json(FILE *f, const struct tt_tasks *ts, const struct code_cache *codes,
		    const struct greenlet_reader *g);

/* Read the tasks and greenlets (g NULL: no greenlets) for a dump, retrying
 * a read that lost some to torn memory a few times. */
tt_status dumptasks_read(struct task_reader *r, struct greenlet_reader *g, struct tt_tasks *ts,
			 struct tt_error *err);

#endif
