/* Mixing a 64-bit key into a well-spread 32-bit hash (murmur3's finalizer
 * step), for the open-addressing tables. */
#ifndef TT_HASH_H
#define TT_HASH_H

#include <stdbool.h>
#include <stdint.h>

static inline uint32_t
hash_mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* Where hash_fnv starts: the tables' and the flame graph's colours share it,
 * so a function keeps its colour across releases. */
#define HASH_FNV_SEED 1469598103934665603ull

/* FNV-1a over a NUL-terminated string, continuing from h (strings chain). */
static inline uint64_t
hash_fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The open-addressing tables that fold what left and resize in one pass
 * (the live view's aggregate, record's profile) have any size, a multiple
 * of HASH_TABLE_STEP slots, sized a third full: a churning tree's entries
 * settle at any count, and memory then follows the count instead of
 * doubling at a power of two that the count happens to wander across. */
#define HASH_TABLE_STEP 1024u

/* Slots for count entries. */
static inline uint32_t
hash_table_size(uint32_t count)
{
	uint64_t n = ((uint64_t)count * 3 + HASH_TABLE_STEP - 1) / HASH_TABLE_STEP * HASH_TABLE_STEP;
	if (n < HASH_TABLE_STEP)
		n = HASH_TABLE_STEP;
	return n > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)n;
}

/* Is a table of n slots off the size for count entries by more than an
 * eighth (worth rebuilding at its size when it is rebuilt anyway)? */
static inline bool
hash_table_off_size(uint32_t count, uint32_t n)
{
	uint64_t want = hash_table_size(count);
	return want * 8 < (uint64_t)n * 7 || want * 8 > (uint64_t)n * 9;
}

/* Where key hash h starts probing in a table of n slots, and the slot
 * after slot i (linear probing, wrapping). */
static inline uint32_t
hash_table_start(uint32_t h, uint32_t n)
{
	return (uint32_t)(((uint64_t)h * n) >> 32);
}

static inline uint32_t
hash_table_next(uint32_t i, uint32_t n)
{
	return i + 1 < n ? i + 1 : 0;
}

#endif
