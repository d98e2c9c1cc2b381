/* An index over records kept elsewhere, each named by a non-zero id (an
 * appendlog's slot, a growable array's position + 1): open addressing on
 * the caller's hash, linear probing, a power of two slots at most half
 * full. The caller hashes and compares its records; the index holds ids.
 *
 *	uint32_t i = idindex_start(ix, h);
 *	for (; ix->slots[i]; i = idindex_next(ix, i))
 *		if (record ix->slots[i] is the one sought) return it;
 *	... add the record, then ix->slots[i] = its id;
 *
 * Call idindex_reserve() before such a lookup that may add. */
#ifndef TT_IDINDEX_H
#define TT_IDINDEX_H

#include <stdbool.h>
#include <stdint.h>

struct idindex {
	uint32_t *slots;      /* id, 0 = empty */
	uint32_t nslots;
};

/* The hash of record `id`, as the lookups compute it. */
typedef uint32_t idindex_hash_fn(const void *ctx, uint32_t id);

/* Room for one more id beside the ids [lo, hi) already in: when adding
 * one would fill more than half, the index doubles (from `first` slots, a
 * power of two) and takes those ids again by their hashes. false when
 * memory is short (the index is as it was). */
bool idindex_reserve(struct idindex *ix, uint32_t lo, uint32_t hi, uint32_t first,
		     idindex_hash_fn *hash_of, const void *ctx);

/* For ids compacted to [lo, hi): an index more than 8 times too big is
 * rebuilt at its size. false when memory is short (the index is empty). */
bool idindex_fit(struct idindex *ix, uint32_t lo, uint32_t hi, uint32_t first,
		 idindex_hash_fn *hash_of, const void *ctx);

/* Forget every id (the slots stay). */
void idindex_clear(struct idindex *ix);
void idindex_free(struct idindex *ix);

static inline uint32_t
idindex_start(const struct idindex *ix, uint32_t h)
{
	return h & (ix->nslots - 1);
}

static inline uint32_t
idindex_next(const struct idindex *ix, uint32_t i)
{
	return (i + 1) & (ix->nslots - 1);
}

#endif
