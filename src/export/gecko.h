/* The Firefox Profiler's processed profile (JSON), from a run's timeline. */
#ifndef TT_GECKO_H
#define TT_GECKO_H

#include <stdio.h>

#include "export.h"
#include "procset.h"
#include "timeline.h"

/* 0 on success, -1 on a write or memory error. ps: the mirror the
 * timeline's stacks and tracks are of. */
int gecko_write(const struct timeline *t, const struct procset *ps, const struct export_meta *meta,
		FILE *f);

#endif
