/* `dump --tasks`: asyncio tasks as an indented await tree and greenlets
 * under their parents, or as JSON. */
#ifndef TT_DUMPTASKS_H
#define TT_DUMPTASKS_H

#include <stdio.h>

#include "async/asynctasks.h"
#include "python/codecache.h"
#include "async/greenlets.h"

/* `--watch SECONDS`: per task of the last read, how long it sat where it
 * is (stucktime.h), read four times a second over the watch. */
struct dump_unmoved {
	double watch_s;            /* 0: one read, nothing measured */
	uint64_t *stuck_ns;        /* per task of the last read */
	bool *before;              /* there at the first read: at least stuck_ns */
};

/* Text: the tasks nobody awaits first, each followed by the tasks it awaits.
 * A task awaited by several is drawn in full once and named elsewhere; a
 * cycle is cut where it closes. */
void dumptasks_text(FILE *f, const struct tt_tasks *ts, const struct code_cache *codes,
		    const struct greenlet_reader *g, const struct dump_unmoved *u);

/* JSON: "tasks": [...] and what goes with it, members of the process
 * object w is in. */
struct jsonw;
void dumptasks_json(struct jsonw *w, const struct tt_tasks *ts, const struct code_cache *codes,
		    const struct greenlet_reader *g, const struct dump_unmoved *u);

void dump_unmoved_free(struct dump_unmoved *u);

/* Read the tasks and greenlets (g NULL: no greenlets) for a dump, retrying
 * a read that lost some to torn memory a few times; with u->watch_s, read
 * again four times a second for that long and fill u for the last read. */
tt_status dumptasks_read(struct task_reader *r, struct greenlet_reader *g, struct tt_tasks *ts,
			 struct dump_unmoved *u, struct tt_error *err);

#endif
