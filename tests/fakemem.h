/* A fake target memory for unit and fuzz tests: a set of byte regions at
 * chosen addresses behind the remote_backend interface. */
#ifndef TT_FAKEMEM_H
#define TT_FAKEMEM_H

#include <stddef.h>
#include <stdint.h>

#include "mem/remote.h"

#define FAKEMEM_MAX_REGIONS 64

struct fakemem {
	struct { uint64_t addr; uint8_t *data; size_t len; } regions[FAKEMEM_MAX_REGIONS];
	size_t nregions;
	uint64_t reads;
};

/* Add a zeroed region; returns its bytes for the test to fill. */
uint8_t *fakemem_add(struct fakemem *m, uint64_t addr, size_t len);
/* Add a copy of each of src's regions to m. */
void fakemem_copy(struct fakemem *m, const struct fakemem *src);
/* Put src's bytes back into m, whose regions are src's (same order, sizes). */
void fakemem_restore(struct fakemem *m, const struct fakemem *src);
void fakemem_free(struct fakemem *m);
struct remote_backend fakemem_backend(struct fakemem *m);

#endif
