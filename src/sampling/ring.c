#include "config.h"

#include <stdlib.h>

#include "ring.h"

bool
ring_init(struct ring *r, uint32_t capacity)
{
	uint32_t n = 2;
	while (n < capacity && n < (1u << 30))
		n <<= 1;
	/* Touched now, not page by page as the ring first wraps: a slow
	 * session would otherwise grow its RSS for many minutes (4 MB for the
	 * live view's ring), which is indistinguishable from a leak. */
	r->slots = calloc(n, sizeof *r->slots);
	if (!r->slots)
		return false;
	for (size_t off = 0; off < n * sizeof *r->slots; off += 4096)
		((volatile char *)r->slots)[off] = 0;
	r->mask = n - 1;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	atomic_init(&r->dropped, 0);
	atomic_init(&r->high_water, 0);
	return true;
}

void
ring_free(struct ring *r)
{
	free(r->slots);
	r->slots = NULL;
}

bool
ring_push(struct ring *r, const struct sample_record *rec)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	/* Acquire pairs with the consumer's release of tail: the slot we are
	 * about to overwrite has been fully read. */
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t used = head - tail;
	if (used > r->mask) {
		atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
		return false;
	}
	r->slots[head & r->mask] = *rec;
	/* Release: the record's bytes are visible before the new head is. */
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
	if (used + 1 > atomic_load_explicit(&r->high_water, memory_order_relaxed))
		atomic_store_explicit(&r->high_water, used + 1, memory_order_relaxed);
	return true;
}

size_t
ring_pop(struct ring *r, struct sample_record *out, size_t max)
{
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	/* Acquire pairs with the producer's release of head. */
	uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	size_t n = head - tail;
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		out[i] = r->slots[(tail + (uint32_t)i) & r->mask];
	/* Release: our reads of the slots happen before the producer may
	 * reuse them. */
	atomic_store_explicit(&r->tail, tail + (uint32_t)n, memory_order_release);
	return n;
}

uint32_t
ring_fill(struct ring *r)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	return head - tail;
}

uint64_t
ring_dropped(struct ring *r)
{
	return atomic_load_explicit(&r->dropped, memory_order_relaxed);
}

uint32_t
ring_capacity(const struct ring *r)
{
	return r->mask + 1;
}
