/* The asyncio tasks view (key T): one row per suspension point with the
 * number of tasks there, how long the longest-waiting one has sat unchanged
 * and their names; Enter opens a point to its tasks and a task to its
 * coroutine chain and the tasks awaiting it. Tasks are read by their own
 * thread (taskwatch) a few times a second, from attach on Python 3.14+
 * (else the first time the view opens, to say why there are none). */
#ifndef TT_TASKSVIEW_H
#define TT_TASKSVIEW_H

#include <stdbool.h>
#include <termkey.h>

struct ui;
struct tasks_ui;

struct tasks_ui *tasksview_new(void);
void tasksview_free(struct tasks_ui *t);

/* T: open the view (its operations: tasksview_ops, view.h). */
void tasksview_open(struct ui *u);
/* Take a new snapshot if the reader published one; sets u->dirty. */
void tasksview_poll(struct ui *u);

#endif
