/* The folded ("collapsed") format that flamegraph.pl, inferno and
 * speedscope read. */
#ifndef TT_COLLAPSED_H
#define TT_COLLAPSED_H

#include <stdbool.h>
#include <stdio.h>

#include "procset.h"
#include "profile.h"

/* Folded stacks: one line per distinct stack, root first, frames
 * "qualname (file:line)" joined by ';', a space and the count. Strings from
 * the target are escaped so no control character, ';' or newline breaks the
 * format. With per_thread, each line starts with the thread; with
 * per_process, before that with "process PID (command)". */
int profile_write_collapsed(const struct profile *p, const struct procset *ps, FILE *f,
			    bool per_thread, bool per_process);

#endif
