/* A fake target memory for unit and fuzz tests: a set of byte regions at
 * chosen addresses behind the remote_backend interface. */
#ifndef TT_FAKEMEM_H
#define TT_FAKEMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem/remote.h"

struct fakemem_region {
	uint64_t addr;
	uint8_t *data;
	size_t len;
};

struct fakemem {
	struct fakemem_region *regions;
	size_t nregions;
	uint32_t cap;
	bool ascending;       /* each region added above the last: looked up by halves */
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
