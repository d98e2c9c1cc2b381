/* asyncio tasks read from a target (CPython 3.14+): every task of every
 * event loop, its coroutine chain and the tasks awaiting it.
 *
 * The _asyncio module describes its task objects and the per-thread and
 * per-interpreter task lists in a `.AsyncioDebug` ELF section: in the
 * `_asyncio` extension module (mapped only after `import asyncio`) or in
 * the interpreter itself. The reader looks for it until it is found.
 *
 * Everything is bounded (tasks per read, coroutines per chain, awaiters
 * per task); a task whose memory changes while it is read is left out of
 * that read and counted in `lost`, never failing the whole read. */
#ifndef TT_ASYNCTASKS_H
#define TT_ASYNCTASKS_H

#include <stdbool.h>
#include <stdint.h>

#include "python/codecache.h"
#include "error.h"
#include "target.h"
#include "walk/sample.h"

#define TASKS_MAX 200000          /* tasks kept per read */
#define TASKS_MAX_CHAIN 256       /* coroutines followed per task */
#define TASKS_MAX_AWAITERS 4096   /* awaiters kept per task */
#define TASKS_MAX_SET_SLOTS (1u << 20) /* table slots of an awaited-by set we scan */
#define TASKS_NAME_MAX 255        /* characters of a task name */

enum task_kind {
	TASK_ASYNCIO,             /* an asyncio Task */
	TASK_GREENLET,            /* a greenlet (greenlets.h): its one awaiter is its parent */
};

struct tt_task {
	uint64_t id;              /* the task object's address */
	uint64_t coro;            /* its coroutine object's address: with the name, tells a
				     new task at a finished one's address from the old */
	uint64_t thread;          /* native id of the thread whose list holds it; 0: the
				     interpreter's list (its thread has exited) */
	int64_t interp_id;
	bool running;             /* its thread's loop is running it right now */
	uint32_t name_off;        /* into tt_tasks.names; UTF-8 from the target */
	uint32_t first_frame, nframes;       /* innermost first */
	uint32_t first_awaiter, nawaiters;   /* ids of tasks awaiting it */
	bool chain_cut;           /* chain longer than TASKS_MAX_CHAIN */
	uint8_t kind;             /* enum task_kind */
	bool hub;                 /* a greenlet: gevent's hub (runs the event loop) */
	bool main_greenlet;       /* a greenlet: its thread's main greenlet */
};

enum tasks_state {
	TASKS_UNSUPPORTED,        /* Python 3.13: no asyncio introspection */
	TASKS_NO_ASYNCIO,         /* asyncio not imported (yet) */
	TASKS_READ,
};

struct tt_tasks {
	enum tasks_state state;
	struct tt_task *tasks;
	uint32_t n, cap;
	struct tt_frame *frames;
	uint32_t nframes, frames_cap;
	uint64_t *awaiters;
	uint32_t nawaiters, awaiters_cap;
	char *names;
	uint32_t names_len, names_cap;
	uint32_t lost;            /* tasks left out: torn while read */
	bool incomplete;          /* a task list could not be followed to its end */
	bool truncated;           /* more than TASKS_MAX tasks */
	uint64_t syscalls;        /* remote reads this read took */
	uint32_t ngreenlets;      /* of n, tasks of kind TASK_GREENLET */
	uint32_t greenlets_lost;  /* of lost, greenlets */
};

static inline const char *
tt_task_name(const struct tt_tasks *ts, const struct tt_task *t)
{
	return ts->names + t->name_off;
}

struct task_page;

struct task_reader {
	struct target *target;
	struct code_cache *codes;  /* borrowed: frames' code IDs point into it */
	bool found;                /* the .AsyncioDebug table is known */
	uint64_t last_probe_ns;    /* when we last looked for it */
	uint64_t probe_interval_ns;
	uint64_t code_generation;
	/* Py_AsyncioModuleDebugOffsets */
	uint64_t task_size, task_name, task_awaited_by, task_is_set, task_coro, task_node;
	uint64_t interp_tasks_head, ts_running_loop, ts_running_task, ts_tasks_head;
	/* per-read page cache: a task list is read many objects per page */
	struct task_page *pages;
	uint32_t page_epoch;
	/* type addresses seen for task names */
	uint64_t str_types[4], long_types[4];
};

/* `codes` receives the code objects of task frames (pass the walker's to
 * share it). probe_interval_ns: how often to look again for asyncio when a
 * read finds it absent (0: every read). */
tt_status task_reader_init(struct task_reader *r, struct target *t, struct code_cache *codes,
			   uint64_t probe_interval_ns, struct tt_error *err);
void task_reader_free(struct task_reader *r);

/* Read every task. Fails only when the target is gone or unreadable as a
 * whole; torn tasks are left out (out->lost). */
tt_status task_reader_read(struct task_reader *r, struct tt_tasks *out, struct tt_error *err);

/* Take the Py_AsyncioModuleDebugOffsets table at addr in the target rather
 * than looking for the section (a target read from a memory image). */
tt_status task_reader_use_table(struct task_reader *r, uint64_t addr, struct tt_error *err);

/* Read the one task object at `task` (out holds it alone, its thread
 * unknown): for a task born since the last full read. */
tt_status task_reader_read_task(struct task_reader *r, uint64_t task, struct tt_tasks *out,
				struct tt_error *err);

void tt_tasks_free(struct tt_tasks *ts);
/* Empty ts for a new read, keeping its buffers (its state stays). */
void tt_tasks_clear(struct tt_tasks *ts);

/* A reader adds a task in steps: tt_tasks_begin makes the next entry (NULL
 * when memory is short), its name, frames and awaiters are pushed, then
 * tt_tasks_keep counts it, or tt_tasks_drop takes back all it added and
 * counts it lost (torn while read). */
struct tt_task *tt_tasks_begin(struct tt_tasks *ts, enum task_kind kind);
void tt_tasks_keep(struct tt_tasks *ts, const struct tt_task *t);
void tt_tasks_drop(struct tt_tasks *ts, const struct tt_task *t);
/* Append a name (NUL-terminated), a frame or an awaiter (at most
 * TASKS_MAX_AWAITERS a task) to ts; false when memory is short. */
bool tt_tasks_push_name(struct tt_tasks *ts, const char *s, size_t len, uint32_t *off);
bool tt_tasks_push_frame(struct tt_tasks *ts, uint32_t code_id, int line);
bool tt_tasks_push_awaiter(struct tt_tasks *ts, struct tt_task *t, uint64_t id);

/* Add src's tasks after dst's (their frames, awaiters and names with
 * them; lost, incomplete and truncated add up). false when memory is short
 * (dst is as it was). */
bool tt_tasks_append(struct tt_tasks *dst, const struct tt_tasks *src);

#endif
