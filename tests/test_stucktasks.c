/* Which asyncio tasks and greenlets watch names (stucktasks), from
 * made-up task snapshots: a task past the threshold at a point no task sat
 * at in its process's first snapshot, once per point whatever the tasks
 * there; never one at such a point (in any process), one running on its
 * thread, a hub or a main greenlet, one awaiting another task, one of a
 * server owing no answer that long; a point is named again once it has
 * been left empty. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "stucktasks.h"
#include "tap.h"

#define S 1000000000ull

enum { PLAIN = 0, RUNNING = 1, HUB = 2, GREENLET = 4 };

static struct task_snapshot snap;
static uint32_t frames_cap, tasks_cap;

/* An empty snapshot of nprocs processes (pids 100, 101, ...). */
static void
begin(uint32_t nprocs)
{
	tt_tasks_free(&snap.tasks);
	free(snap.frame_func);
	free(snap.task_proc);
	free(snap.procs);
	free(snap.stuck_ns);
	memset(&snap, 0, sizeof snap);
	frames_cap = tasks_cap = 0;
	snap.procs = calloc(nprocs, sizeof *snap.procs);
	snap.nprocs = nprocs;
	for (uint32_t p = 0; p < nprocs; p++)
		snap.procs[p] = (struct task_proc){.pid = 100 + (pid_t)p, .proc_start_ns = 1,
						   .state = TASKS_READ};
	snap.tasks.state = TASKS_READ;
}

/* Task id of process proc (added in process order), at point (a handler
 * line under a server frame), there for wait_s. */
static void
task(uint32_t proc, uint64_t id, int point, double wait_s, int how)
{
	struct tt_task *t = tt_tasks_begin(&snap.tasks, how & GREENLET ? TASK_GREENLET
								       : TASK_ASYNCIO);
	t->id = id;
	t->coro = id * 7;
	t->running = how & RUNNING;
	t->hub = how & HUB;
	char name[32];
	snprintf(name, sizeof name, "Task-%llu", (unsigned long long)id);
	tt_tasks_push_name(&snap.tasks, name, strlen(name), &t->name_off);
	tt_tasks_push_frame(&snap.tasks, (uint32_t)point, point);   /* innermost */
	tt_tasks_push_frame(&snap.tasks, 1000, 1);                   /* the server's */
	t->nframes = 2;
	grow_array((void **)&snap.frame_func, &frames_cap, snap.tasks.nframes,
		   sizeof *snap.frame_func);
	snap.frame_func[t->first_frame] = (uint32_t)point;
	snap.frame_func[t->first_frame + 1] = 1000;
	uint32_t i = snap.tasks.n, cap = tasks_cap;
	tt_tasks_keep(&snap.tasks, t);
	grow_array((void **)&snap.task_proc, &tasks_cap, i + 1, sizeof *snap.task_proc);
	grow_array((void **)&snap.stuck_ns, &cap, i + 1, sizeof *snap.stuck_ns);
	snap.task_proc[i] = proc;
	snap.stuck_ns[i] = (uint64_t)(wait_s * S);
	if (!snap.procs[proc].ntasks)
		snap.procs[proc].first_task = i;
	snap.procs[proc].ntasks++;
}

/* The ids named by judging the snapshot, as a bit set of ids < 32. */
static unsigned
judge(struct stucktasks *j)
{
	uint32_t *named = NULL, n = 0, cap = 0;
	stucktasks_judge(j, &snap, &named, &n, &cap);
	unsigned set = 0;
	for (uint32_t k = 0; k < n; k++)
		set |= 1u << snap.tasks.tasks[named[k]].id;
	free(named);
	return set;
}

int
main(void)
{
	struct stucktasks j;
	stucktasks_init(&j, 30 * S);
	/* the first snapshot: a connection waiting for its next request (K=1)
	 * and the server's accept (A=2) */
	begin(2);
	task(0, 1, 1, 0, PLAIN);
	task(0, 2, 2, 0, PLAIN);
	task(1, 3, 2, 0, PLAIN);
	tap_ok(judge(&j) == 0, "the first snapshot: none named");

	/* a request's task (4) first seen at an upstream's read (U=3), the
	 * connection idle at K for 100 s, a running task for 100 s */
	unsigned all = 0;
	for (int t = 1; t <= 29; t++) {
		begin(2);
		task(0, 1, 1, t + 60, PLAIN);
		task(0, 4, 3, t - 1, PLAIN);
		task(0, 5, 4, t + 70, RUNNING);
		task(0, 6, 4, t + 70, GREENLET | HUB);
		task(1, 3, 2, t + 60, PLAIN);
		all |= judge(&j);
	}
	tap_ok(all == 0, "28 s at a new point, 89 s at an idle one, a running task and a hub "
	       "for 99 s: none named");
	begin(2);
	task(0, 1, 1, 90, PLAIN);
	task(0, 4, 3, 30, PLAIN);
	task(0, 7, 3, 12, PLAIN);
	task(1, 3, 2, 90, PLAIN);
	tap_ok(judge(&j) == 1u << 4, "30 s at a new point: named");
	/* more tasks stuck there, in both processes: the same thing */
	begin(2);
	task(0, 4, 3, 50, PLAIN);
	task(0, 7, 3, 32, PLAIN);
	task(1, 8, 3, 40, PLAIN);
	tap_ok(judge(&j) == 0, "others stuck at that point, in either process: not named again");

	/* the point left empty, then a new hang there */
	begin(2);
	task(1, 3, 2, 95, PLAIN);
	judge(&j);
	begin(2);
	task(0, 9, 3, 31, PLAIN);
	tap_ok(judge(&j) == 1u << 9, "once the point was empty, a new task stuck there: named");

	/* a process that comes later: its first snapshot's points are idle, for
	 * every process */
	begin(3);
	task(2, 10, 5, 40, PLAIN);
	tap_ok(judge(&j) == 0, "a new process's first snapshot: none named");
	begin(3);
	task(0, 11, 5, 31, PLAIN);
	task(2, 10, 5, 41, PLAIN);
	tap_ok(judge(&j) == 0, "a point another process sat at in its first snapshot is idle");
	/* a greenlet (not a hub) stuck */
	begin(3);
	task(1, 12, 6, 31, GREENLET);
	tap_ok(judge(&j) == 1u << 12, "a greenlet 31 s at a new point: named");
	/* a connection's task (13) awaiting its handler's task (14), both stuck */
	begin(3);
	task(1, 13, 7, 31, PLAIN);
	task(1, 14, 8, 31, PLAIN);
	snap.tasks.tasks[snap.tasks.n - 1].first_awaiter = snap.tasks.nawaiters;
	tt_tasks_push_awaiter(&snap.tasks, &snap.tasks.tasks[snap.tasks.n - 1], 13);
	tap_ok(judge(&j) == 1u << 14, "a task awaiting a stuck task: the awaited one alone named");
	/* a server's task past the threshold: stuck only while an answer has
	 * been owed about that long on one of its connections */
	begin(3);
	task(0, 15, 9, 31, PLAIN);
	snap.procs[0].peers_read = snap.procs[0].serving = true;
	snap.procs[0].owed_ms = 0;
	tap_ok(judge(&j) == 0, "a server owing no answer: its task 31 s at a new point waits for "
	       "its client, not named");
	begin(3);
	task(0, 15, 9, 32, PLAIN);
	snap.procs[0].peers_read = snap.procs[0].serving = true;
	snap.procs[0].owes = true;
	snap.procs[0].owed_ms = 31500;
	tap_ok(judge(&j) == 1u << 15, "owing an answer 31.5 s: named");
	stucktasks_free(&j);
	begin(0);
	free(snap.procs);
	return tap_done();
}
