/* Labels of frames, processes and threads in a profile, escaped for the
 * folded format (no control character, ';' as \x3b): the collapsed and
 * speedscope writers and the live view's export use the same. */
#ifndef TT_LABELS_H
#define TT_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "intern.h"
#include "procset.h"
#include "profile.h"   /* PROFILE_EXITED_PROC, PROFILE_EXITED_SLOT */

/* Format one frame as "qualname (file:line)", escaped for the collapsed
 * format, into buf. */
void profile_frame_label(const struct intern *in, uint32_t frame_id, char *buf, size_t len);

/* "process PID (command)", or "exited processes" for PROFILE_EXITED_PROC,
 * escaped for the collapsed format. */
void profile_proc_label(const struct procset *ps, uint32_t proc, char *buf, size_t len);

/* "thread TID NAME", or "exited threads" for PROFILE_EXITED_SLOT. */
void profile_thread_label(const struct procset *ps, uint32_t slot, char *buf, size_t len);

#endif
