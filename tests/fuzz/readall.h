/* What the memory fuzz targets read of a target, and so what a snapshot
 * (snapshot.c) must have read for their seeds to reach it: the same
 * function runs on the live target while it is recorded and on the
 * mutated image. */
#ifndef TT_READALL_H
#define TT_READALL_H

#include <stddef.h>
#include <stdint.h>

#include "async/greenlets.h"
#include "target.h"

enum {
	READ_WALK = 1u << 0,    /* both walkers, the threads' names */
	READ_VALUES = 1u << 1,  /* every frame's locals, their values' reprs */
	READ_TASKS = 1u << 2,   /* asyncio tasks (at->asyncio_table != 0) */
	READ_JIT = 1u << 3,     /* the JIT's objects (at->jit_descriptor != 0) */
	READ_GREENLETS = 1u << 4,   /* greenlets (at->greenlet_vtables[0] != 0, or a
				       core's: greenlet found by its files) */
};

/* Where the readers start that the runtime does not lead to. */
struct readall_at {
	uint64_t asyncio_table;    /* the .AsyncioDebug offsets */
	uint64_t jit_descriptor;   /* __jit_debug_descriptor */
	/* greenlet's, which a live target's files would tell: its version, its
	 * vtable symbols, the memory to scan for its objects */
	const char *greenlet_version;
	uint64_t greenlet_vtables[3];
	const struct gl_region *greenlet_regions;
	uint32_t ngreenlet_regions;
	/* Called once, between the first reader's first and second reads
	 * (the sampler's, else the greenlet reader's; NULL: nothing moves):
	 * the live process runs on a moment, an image takes its patches. */
	void (*between_samples)(void *ctx);
	void *between_ctx;
};

void readall(struct target *t, const struct readall_at *at, unsigned what);

/* A memory fuzz target's whole input: the bytes as an image (memimage.h),
 * attached and read for what. Bytes that are not an image read nothing. */
void readall_image(const uint8_t *data, size_t size, unsigned what);

#endif
