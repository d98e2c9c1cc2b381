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
 * In a process that serves (it listens, or holds connections it
 * accepted) a task is stuck only while one of its TCP connections has
 * been owed an answer about that long, a client's request or a called
 * server's answer (tcpdiag.h; the task watcher reads them into the
 * snapshot): otherwise it waits for its client (a keep-alive connection).
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
	struct keytab waiting;  /* the last snapshot's tasks that await another task */
	uint64_t stuck_ns;
};

void stucktasks_init(struct stucktasks *j, uint64_t stuck_ns);
void stucktasks_free(struct stucktasks *j);

/* A task's point: its frames' functions and lines, by content. */
uint64_t stucktasks_point(const struct task_snapshot *s, const struct tt_task *t);

/* How much shorter than a task's wait the answer it stands for may have
 * been owed, in ms (and at most half the wait): a loaded server always
 * owes some answer for a moment. */
#define STUCKTASKS_BLUR_MS 1000

/* Learn from snapshot s (a process's first snapshot's points are idle;
 * which tasks await others): before stucktasks_stuck on it. false when
 * memory is short. */
bool stucktasks_learn(struct stucktasks *j, const struct task_snapshot *s);

/* Is task i of s stuck by the rules above (named or not)? What the tasks
 * view marks and watch reports. */
bool stucktasks_stuck(const struct stucktasks *j, const struct task_snapshot *s, uint32_t i);

/* How long an answer owed stands for a task's wait of wait_ns, at least. */
uint64_t stucktasks_owed_ms(uint64_t wait_ns);

/* Its process serves and owes no answer about as long as wait_ns: a task
 * of it waiting that long waits for its client. */
bool stucktasks_peers_idle(const struct task_proc *p, uint64_t wait_ns);

/* Learn from snapshot s, then judge it: the tasks to name now (indexes into s->tasks.tasks)
 * appended to (*named)[0..*n), grown as needed (the caller frees it).
 * false when memory is short (then some may be left unnamed). */
bool stucktasks_judge(struct stucktasks *j, const struct task_snapshot *s, uint32_t **named,
		      uint32_t *n, uint32_t *cap);

#endif
