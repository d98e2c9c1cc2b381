/* The frame inspector (key i on a thread): the thread's Python stack, one
 * frame selected, its arguments and locals beside it as repr() writes
 * them, read again each second while the view is open (framewatch.h) and
 * marked with when they were read. */
#ifndef TT_FRAMEVIEW_H
#define TT_FRAMEVIEW_H

#include <stdint.h>

struct ui;
struct frames_ui;

struct frames_ui *frameview_new(void);
void frameview_free(struct frames_ui *f);
/* Open it on the thread of slot `slot` (its operations: frameview_ops). */
void frameview_open(struct ui *u, uint32_t slot);

#endif
