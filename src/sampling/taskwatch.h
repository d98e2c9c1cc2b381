/* Watching a target's asyncio tasks for the live view: a thread of its own
 * reads every task a few times a second (never the sampler's hot loop),
 * remembers how long each task has sat at the same point (its coroutine
 * chain and lines unchanged) and groups tasks by where they are suspended.
 * It reads one process or each process of a tree (the sampler's procset),
 * the tree's in one pass under one budget, and groups the tree's tasks by
 * content: the same function and line in two workers is one point.
 * Each read is published as an immutable snapshot the UI takes. */
#ifndef TT_TASKWATCH_H
#define TT_TASKWATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "async/asynctasks.h"
#include "python/codecache.h"
#include "error.h"
#include "async/greenlets.h"
#include "idindex.h"
#include "intern.h"
#include "procset.h"
#include "target.h"
#include "waits/tcpdiag.h"
#include "workers.h"

/* Tasks of one suspension point: the same innermost function and caller,
 * at the same lines, in whichever process. What a view shows of it (how
 * many run, in how many processes, the longest stuck) it counts over the
 * members it shows. */
struct task_group {
	uint32_t func0, func1;     /* interned in the snapshot's funcs; 0 when absent */
	int32_t line0, line1;
	uint32_t count;
	uint32_t first;            /* its tasks: members[first .. first + count) */
};

/* One process of a snapshot. */
struct task_proc {
	pid_t pid;
	uint32_t proc_index;       /* its entry in the followed procset (0 for a single target) */
	uint64_t proc_start_ns;    /* that entry's start_ns: tells its occupants apart */
	enum tasks_state state;
	uint32_t first_task, ntasks;   /* its tasks: tasks.tasks[first_task ..) */
	uint32_t lost;
	uint64_t ts_running_task;  /* where a thread state keeps its running task; 0: unknown */
	char error[384];           /* "" when its read worked */
	char greenlets_note[400];  /* why its greenlets are not read (an unknown greenlet), or "" */
	/* its TCP connections (tcpdiag.h), read when a task of it has waited
	 * taskwatch.peers_after_ns: */
	bool peers_read;
	bool serving;              /* it listens, or holds connections it accepted */
	bool owes;                 /* an answer is owed, to a client or from a server: */
	uint32_t owed_ms;          /* the longest for so long */
};

struct task_snapshot {
	struct tt_tasks tasks;     /* every process's, one process after another; state:
				      READ when any process's tasks were read */
	uint32_t *frame_func;      /* per frame of tasks.frames: its function in funcs */
	uint32_t *task_proc;       /* per task: its process in procs */
	struct task_proc *procs;
	uint32_t nprocs;
	const struct intern *funcs;    /* the watcher's (append-only: safe to read) */
	uint64_t *stuck_ns;        /* per task: how long at its current point */
	bool *stuck_before;        /* per task: there at the first read (stuck_ns is "at least") */
	struct task_group *groups;
	uint32_t ngroups;
	uint32_t *members;         /* task indexes, grouped, longest stuck first (of equal
				      times, one there before the first read first) */
	uint64_t taken_ns;
	double read_ms;            /* what the read of every process cost */
	uint64_t reads;            /* reads so far */
	uint64_t next_in_ns;       /* when the next read starts, from this one's start */
};

struct watched;

struct taskwatch {
	const struct procset *follow;   /* read each live process of this set, or the one
					   target given (watched[0]) */
	struct watched **watched;       /* the processes read (their own reader and caches) */
	uint32_t nwatched, watched_cap;
	struct intern funcs;            /* frames' functions by content, across processes */
	uint32_t unknown_func;          /* "?" when interning fails */
	uint64_t interval_ns;
	struct worker worker;
	struct task_snapshot *latest;   /* published, not taken yet (under worker.lock) */
	char error[512];                /* last failed read (under worker.lock) */
	_Atomic uint64_t peers_after_ns;   /* read a process's TCP connections when a
					      task of it has waited this long (0: never) */
	uint64_t reads;
	struct tcp_conn *peers;         /* scratch for read_peers (the reader's thread) */
};

/* A read may take at most 1/TASKWATCH_SHARE of the time: with many tasks
 * the interval stretches (up to TASKWATCH_MAX_INTERVAL_NS) rather than the
 * watcher reading back to back. */
#define TASKWATCH_SHARE 10
/* The live view's interval (4 reads a second, stretched as above). */
#define TASKWATCH_INTERVAL_NS 250000000ull
#define TASKWATCH_MAX_INTERVAL_NS 5000000000ull

/* Watch one target's tasks. */
tt_status taskwatch_start(struct taskwatch *w, const struct target *t, uint64_t interval_ns,
			  struct tt_error *err);
/* Watch the tasks of every live Python process of a procset as it comes
 * and goes (the sampler's: a tree), all read in one pass whose cost the
 * interval stretches for. */
tt_status taskwatch_start_tree(struct taskwatch *w, const struct procset *ps,
			       uint64_t interval_ns, struct tt_error *err);
/* The newest snapshot if one came since the last call (the caller owns it),
 * else NULL. */
struct task_snapshot *taskwatch_take(struct taskwatch *w);
/* Copy the last read's error ("" if it worked). */
void taskwatch_error(struct taskwatch *w, char *buf, size_t len);
void taskwatch_stop(struct taskwatch *w);
void task_snapshot_free(struct task_snapshot *s);

#endif
