#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "idindex.h"

bool
idindex_reserve(struct idindex *ix, uint32_t lo, uint32_t hi, uint32_t first,
		idindex_hash_fn *hash_of, const void *ctx)
{
	uint64_t count = hi > lo ? hi - lo : 0;
	if ((count + 1) * 2 <= ix->nslots)
		return true;
	uint64_t n = ix->nslots ? (uint64_t)ix->nslots * 2 : first;
	while ((count + 1) * 2 > n)
		n *= 2;
	if (n > UINT32_MAX / 2 + 1)
		return false;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return false;
	struct idindex grown = {slots, (uint32_t)n};
	for (uint32_t id = lo; id < hi; id++) {
		uint32_t i = idindex_start(&grown, hash_of(ctx, id));
		while (slots[i])
			i = idindex_next(&grown, i);
		slots[i] = id;
	}
	free(ix->slots);
	*ix = grown;
	return true;
}

bool
idindex_fit(struct idindex *ix, uint32_t lo, uint32_t hi, uint32_t first,
	    idindex_hash_fn *hash_of, const void *ctx)
{
	uint64_t count = hi > lo ? hi - lo : 0;
	if ((count + 1) * 8 >= ix->nslots || ix->nslots <= first)
		return true;
	idindex_free(ix);
	return idindex_reserve(ix, lo, hi, first, hash_of, ctx);
}

void
idindex_clear(struct idindex *ix)
{
	if (ix->slots)
		memset(ix->slots, 0, ix->nslots * sizeof *ix->slots);
}

void
idindex_free(struct idindex *ix)
{
	free(ix->slots);
	ix->slots = NULL;
	ix->nslots = 0;
}
