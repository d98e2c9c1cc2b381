/* `watch`'s judge of asyncio tasks and greenlets, from the task watcher's
 * snapshots (taskwatch.h): a task or greenlet suspended at one point (its
 * await chain and lines unchanged) for longer than the threshold, but the
 * idle ones. Tasks come and go with requests and connections, so where a
 * task is first seen says little (a request that hangs is first seen
 * where it hangs): idle are the points tasks sat at in their process's
 * first snapshot (at attach, or when the process came): connections
 * waiting for their next request, a server's accept, background tasks.
 * Points are compared by content: the same code at the same lines in a
 * server's other worker processes is the same point.
 *
 * A point is named once, for its first task past the threshold: the
 * others stuck there with it (the same upstream down) are the same thing.
 * It can be named again once a snapshot finds no task there.
 *
 * A task awaiting another task waits for that one, which is named if it
 * is stuck. A task running on its thread right now, a thread's main
 * greenlet and gevent's hub are their thread's, judged by stuckwatch. No
 * I/O. */
#ifndef TT_STUCKTASKS_H
#define TT_STUCKTASKS_H

#include <stdbool.h>
#include <stdint.h>

#include "keytab.h"
#include "taskwatch.h"

struct stucktasks {
	struct keytab idle;     /* points tasks sat at in their process's first snapshot */
	struct keytab procs;    /* processes seen */
	struct keytab named;    /* points named, while a task is there */
	uint64_t stuck_ns;
};

void stucktasks_init(struct stucktasks *j, uint64_t stuck_ns);
void stucktasks_free(struct stucktasks *j);

/* A task's point: its frames' functions and lines, by content. */
uint64_t stucktasks_point(const struct task_snapshot *s, const struct tt_task *t);

/* Judge snapshot s: the tasks to name now (indexes into s->tasks.tasks)
 * appended to (*named)[0..*n), grown as needed (the caller frees it).
 * false when memory is short (then some may be left unnamed). */
bool stucktasks_judge(struct stucktasks *j, const struct task_snapshot *s, uint32_t **named,
		      uint32_t *n, uint32_t *cap);

#endif
