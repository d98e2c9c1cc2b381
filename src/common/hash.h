/* Mixing a 64-bit key into a well-spread 32-bit hash (murmur3's finalizer
 * step), for the open-addressing tables. */
#ifndef TT_HASH_H
#define TT_HASH_H

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

#endif
