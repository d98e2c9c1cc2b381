#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "protobuf.h"

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

void
pb_free(struct pb *b)
{
	free(b->buf);
	memset(b, 0, sizeof *b);
}

void
pb_reset(struct pb *b)
{
	b->len = 0;
}

static bool
reserve(struct pb *b, size_t more)
{
	if (b->oom)
		return false;
	if (more > UINT32_MAX - 1 - b->len ||
	    !grow_array((void **)&b->buf, &b->cap, b->len + (uint32_t)more, 1)) {
		b->oom = true;
		return false;
	}
	return true;
}

void
pb_varint(struct pb *b, uint64_t v)
{
	if (!reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->buf[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->buf[b->len++] = (uint8_t)v;
}

void
pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	pb_varint(b, v);
}

void
pb_bytes(struct pb *b, uint32_t field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | WIRE_LEN);
	pb_varint(b, len);
	if (len && reserve(b, len)) {
		memcpy(b->buf + b->len, data, len);
		b->len += (uint32_t)len;
	}
}
