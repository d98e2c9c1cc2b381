/* The threads: the panel over the function table (key t), the header's
 * count of threads by what they do now, and the threads view (key H): every
 * thread, a page at a time, sorted and filtered by name or id, for pools of
 * thousands. */
#ifndef TT_THREADSVIEW_H
#define TT_THREADSVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termkey.h>

struct ui;

/* The header's count of live threads by what they do now: "threads 1001:
 * 1 GIL, 1000 blocked   " (states no thread is in left out). */
void threads_format_now(const struct ui *u, char *buf, size_t len);

/* Does slot i's thread have a row (seen, of the process shown if one is,
 * alive or ended a moment ago)? Tab and the arrows visit those only. */
bool threads_shown(const struct ui *u, uint32_t slot);

/* The panel: its height with the current layout (0 when hidden), drawing. */
int threads_panel_height(const struct ui *u);
int threads_panel_draw(struct ui *u, int y, int height);

/* The view, in the function table's place. */
struct threads_ui;
struct threads_ui *threadsview_new(void);
void threadsview_free(struct threads_ui *t);
/* H: open the view on the thread shown (its operations: threadsview_ops,
 * view.h). The keys of the other views close it and go on to them. */
void threadsview_open(struct ui *u);

#endif
