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

#endif
