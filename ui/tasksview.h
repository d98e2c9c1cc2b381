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

bool tasksview_shown(const struct ui *u);
/* Take a new snapshot if the reader published one; sets u->dirty. */
void tasksview_poll(struct ui *u);
void tasksview_draw(struct ui *u, int y, int h);
/* Keys of the view (and T, which opens it). True when handled. */
bool tasksview_key(struct ui *u, const TermKeyKey *k);
/* The status line while the view is shown: its own keys. */
void tasksview_status(const struct ui *u, char *buf, size_t len);

#endif
