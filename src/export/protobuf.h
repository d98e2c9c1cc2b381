/* A protocol-buffers encoder, just what profile.proto needs: varints,
 * length-delimited fields and nested messages, appended to a growable
 * buffer. Out of memory is sticky (pb.oom) and checked once at the end. */
#ifndef TT_PROTOBUF_H
#define TT_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb {
	uint8_t *buf;
	uint32_t len, cap;   /* a profile's encoding stays under 4 GiB */
	bool oom;
};

void pb_free(struct pb *b);
void pb_reset(struct pb *b);
void pb_varint(struct pb *b, uint64_t v);
/* Field `field` as a varint (int64, uint64, bool); zero is written too. */
void pb_uint(struct pb *b, uint32_t field, uint64_t v);
/* Field `field` as length-delimited bytes (string, nested message, packed). */
void pb_bytes(struct pb *b, uint32_t field, const void *data, size_t len);

#endif
