/* Async-aware stacks (--async): a sample of a thread running an asyncio
 * task is re-rooted on the task's await chain, as CPython's own
 * --async-aware profiles do, so time is charged to the request path that
 * awaits the work rather than to the event loop's _run_once.
 *
 * A thread's stack above its running task's coroutine stays as sampled;
 * below it go a `task NAME` frame, then the coroutines of the task awaiting
 * it, its `task NAME` frame, and so on up to the root task. Task names and
 * await relations come from a task watcher of our own (taskwatch.h: a
 * separate thread reading every task a few times a second), so the sampler
 * itself adds one pointer per thread state to its reads. A task younger
 * than the last task read (a request served in milliseconds) is read once
 * on its own, for its name and awaiters; one that cannot be shows as
 * `task (new)` over its own frames.
 *
 * One per sampled process, used by the sampler thread only. */
#ifndef TT_AWAITSTACK_H
#define TT_AWAITSTACK_H

#include <stdint.h>

#include "error.h"
#include "walk/stackwalk.h"
#include "target.h"

/* The marker frames' file name, as exports and views show it. */
#define AWAITSTACK_FILE "<asyncio task>"
/* Awaiting tasks followed up from a running task. */
#define AWAITSTACK_MAX_LEVELS 32
/* Distinct task names given their own marker; later ones share one. */
#define AWAITSTACK_MAX_NAMES 4096

struct awaitstack;

/* Start watching t's tasks (Python 3.14+; TT_ENOTPY before that). */
tt_status awaitstack_new(struct target *t, uint64_t task_interval_ns,
			 struct awaitstack **out, struct tt_error *err);
void awaitstack_free(struct awaitstack *a);

/* This sample's threads with the stacks of task-running threads rewritten
 * (a copy owned by `a`, valid until the next call), interned in w. */
const struct walk_thread *awaitstack_apply(struct awaitstack *a, struct stackwalk *w,
					   const struct walk_thread *threads, uint32_t n,
					   uint64_t now_ns);

/* For each of the last awaitstack_apply's threads, the stack its running
 * task's frames were put on (its task marker over its awaiters'), 0 when
 * it was left as sampled: for a stack rebuilt since (nativestack.h).
 * NULL when there was no memory for them. */
const uint32_t *awaitstack_bases(const struct awaitstack *a);

#endif
