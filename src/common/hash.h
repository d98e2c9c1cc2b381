/* Mixing a 64-bit key into a well-spread 32-bit hash (murmur3's finalizer
 * step), for the open-addressing tables. */
#ifndef TT_HASH_H
#define TT_HASH_H

#include <stdbool.h>
#include <stddef.h>
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

/* FNV-1a over len bytes, continuing from h (pieces chain). */
static inline uint64_t
hash_fnv_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* FNV-1a over a NUL-terminated string, continuing from h (strings chain). */
static inline uint64_t
hash_fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The tables that fold what left (the live view's aggregate, record's
 * profile) keep their entries dense, in an array a quarter larger than the
 * entries it holds, in steps of HASH_TABLE_STEP, with an idindex beside: a
 * churning tree's entries settle at any count, and memory then follows the
 * count instead of doubling at a power of two the count wanders across. */
#define HASH_TABLE_STEP 1024u

/* Capacity for n entries. */
static inline uint32_t
hash_dense_size(uint32_t n)
{
	uint64_t c = ((uint64_t)n + n / 4 + HASH_TABLE_STEP) / HASH_TABLE_STEP * HASH_TABLE_STEP;
	return c > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)c;
}

/* Is a capacity of cap worth giving back for n entries (a sweep left a
 * quarter of it or more unused)? */
static inline bool
hash_dense_oversized(uint32_t n, uint32_t cap)
{
	return cap > hash_dense_size(n) + n / 4;
}

#endif
