/* Reading fields out of byte buffers copied from the target (which need not
 * be aligned): little-endian, as x86-64 targets are. */
#ifndef TT_BYTES_H
#define TT_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint64_t
load_u64(const uint8_t *buf, uint64_t off)
{
	uint64_t v;
	memcpy(&v, buf + off, 8);
	return v;
}

static inline int32_t
load_i32(const uint8_t *buf, uint64_t off)
{
	int32_t v;
	memcpy(&v, buf + off, 4);
	return v;
}

#endif
