/* speedscope's JSON file format. */
#ifndef TT_SPEEDSCOPE_H
#define TT_SPEEDSCOPE_H

#include <stdbool.h>
#include <stdio.h>

#include "procset.h"
#include "profile.h"

/* speedscope's file format: one sampled profile per thread (per process
 * and thread with per_process). */
int profile_write_speedscope(const struct profile *p, const struct procset *ps, FILE *f,
			     const char *name, double interval_s, bool per_process);

#endif
