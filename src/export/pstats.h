/* Python's pstats format (cProfile's dump_stats): see pstats.c. */
#ifndef TT_PSTATS_H
#define TT_PSTATS_H

#include <stdio.h>

#include "export.h"

/* Write p as a marshal'ed pstats dict. 0 on success, -1 on a write or
 * memory error. */
int pstats_write(const struct profile *p, const struct procset *ps, const struct export_meta *meta,
		 FILE *f);

#endif
