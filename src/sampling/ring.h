/* A lock-free single-producer/single-consumer ring of fixed-size sample
 * records, from the sampler thread to whoever consumes samples (the UI,
 * record, bench). The producer never blocks: when the ring is full the
 * record is dropped and counted. Indices run freely and are only compared
 * through their unsigned difference; the size is a power of two. */
#ifndef TT_RING_H
#define TT_RING_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One thread's sample, or a run of identical consecutive ones. */
struct sample_record {
	uint64_t time_ns;      /* when the (last folded) sample was taken, since sampler start */
	uint32_t stack_id;     /* interned stack, 0 = no Python frames */
	uint16_t thread_slot;  /* index into the sampler's thread table */
	uint8_t state;         /* TT_THREAD_* bits (low 8) */
	uint8_t weight;        /* samples this record stands for, 1..255 */
};

struct ring {
	/* Producer and consumer indices on their own cache lines so the two
	 * threads do not false-share. */
	alignas(64) _Atomic uint32_t head;   /* next slot to write (producer) */
	alignas(64) _Atomic uint32_t tail;   /* next slot to read (consumer) */
	alignas(64) _Atomic uint64_t dropped;
	_Atomic uint32_t high_water;         /* most records ever waiting */
	uint32_t mask;
	struct sample_record *slots;
};

/* capacity is rounded up to a power of two (at least 2). */
bool ring_init(struct ring *r, uint32_t capacity);
void ring_free(struct ring *r);

/* Producer side: false (and a counted drop) when full. */
bool ring_push(struct ring *r, const struct sample_record *rec);

/* Consumer side: copies up to max records out; returns how many. */
size_t ring_pop(struct ring *r, struct sample_record *out, size_t max);

/* Records waiting now (approximate while the other side runs). */
uint32_t ring_fill(struct ring *r);
uint64_t ring_dropped(struct ring *r);
uint32_t ring_capacity(const struct ring *r);

#endif
