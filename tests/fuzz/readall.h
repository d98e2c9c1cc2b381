/* What the memory fuzz targets read of a target, and so what a snapshot
 * (snapshot.c) must have read for their seeds to reach it: the same
 * function runs on the live target while it is recorded and on the
 * mutated image. */
#ifndef TT_READALL_H
#define TT_READALL_H

#include <stdint.h>

#include "target.h"

enum {
	READ_WALK = 1u << 0,    /* both walkers, the threads' names */
	READ_VALUES = 1u << 1,  /* every frame's locals, their values' reprs */
	READ_TASKS = 1u << 2,   /* asyncio tasks (asyncio_table != 0) */
};

void readall(struct target *t, uint64_t asyncio_table, unsigned what);

#endif
