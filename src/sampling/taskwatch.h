/* Watching a target's asyncio tasks for the live view: a thread of its own
 * reads every task a few times a second (never the sampler's hot loop),
 * remembers how long each task has sat at the same point (its coroutine
 * chain and lines unchanged) and groups tasks by where they are suspended.
 * Each read is published as an immutable snapshot the UI takes. */
#ifndef TT_TASKWATCH_H
#define TT_TASKWATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "asynctasks.h"
#include "codecache.h"
#include "error.h"
#include "idindex.h"
#include "target.h"

/* Tasks of one suspension point: the same innermost frame and caller. */
struct task_group {
	uint32_t frame0, frame1;   /* code IDs; UINT32_MAX when absent */
	int32_t line0, line1;
	uint32_t count;
	uint32_t running;          /* of them, running right now */
	uint64_t stuck_ns;         /* longest any of them has sat unchanged */
	bool stuck_before;         /* ... and it sat there before the watcher's first read */
	uint32_t first;            /* its tasks: members[first .. first + count) */
};

struct task_snapshot {
	struct tt_tasks tasks;
	uint64_t *stuck_ns;        /* per task: how long at its current point */
	bool *stuck_before;        /* per task: there at the first read (stuck_ns is "at least") */
	struct task_group *groups;
	uint32_t ngroups;
	uint32_t *members;         /* task indexes, grouped, longest stuck first */
	const struct code_cache *codes; /* frames' code IDs (append-only: safe to read) */
	uint64_t taken_ns;
	double read_ms;            /* what the read cost */
	uint64_t reads;            /* reads so far */
	uint64_t ts_running_task;  /* where a thread state keeps its running task; 0: unknown yet */
	uint64_t next_in_ns;       /* when the next read starts, from this one's start */
};

struct fp_entry;

struct taskwatch {
	struct target target;      /* a copy: its own remote counters */
	struct code_cache codes;
	struct task_reader reader;
	uint64_t interval_ns;
	pthread_t thread;
	bool started;
	_Atomic bool stop;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct task_snapshot *latest;   /* published, not taken yet */
	char error[512];                /* last failed read (under lock) */
	/* per task of the last read: fingerprint of its chain and since when
	 * it holds, and their index by task address */
	struct fp_entry *fps;
	uint32_t nfps;
	struct idindex fp_index;
	uint64_t reads;
};

/* A read may take at most 1/TASKWATCH_SHARE of the time: with many tasks
 * the interval stretches (up to TASKWATCH_MAX_INTERVAL_NS) rather than the
 * watcher reading back to back. */
#define TASKWATCH_SHARE 10
#define TASKWATCH_MAX_INTERVAL_NS 5000000000ull

tt_status taskwatch_start(struct taskwatch *w, const struct target *t, uint64_t interval_ns,
			  struct tt_error *err);
/* The newest snapshot if one came since the last call (the caller owns it),
 * else NULL. */
struct task_snapshot *taskwatch_take(struct taskwatch *w);
/* Copy the last read's error ("" if it worked). */
void taskwatch_error(struct taskwatch *w, char *buf, size_t len);
void taskwatch_stop(struct taskwatch *w);
void task_snapshot_free(struct task_snapshot *s);

#endif
