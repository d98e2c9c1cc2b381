/* An append-only array whose elements never move, written by one thread
 * (the sampler) and read concurrently by others (the UI). The writer fills
 * an element, then publishes the new count with a release store; a reader
 * that acquire-loads the count may read every element below it. */
#ifndef TT_APPENDLOG_H
#define TT_APPENDLOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Segment k holds APPENDLOG_BASE << k elements, so a log costs memory in
 * proportion to what it holds (a short-lived process's tables are a few
 * small segments), and elements never move as it grows. */
#define APPENDLOG_BASE_BITS 6
#define APPENDLOG_BASE (1u << APPENDLOG_BASE_BITS)
#define APPENDLOG_SEGMENTS (33 - APPENDLOG_BASE_BITS)   /* enough for any uint32_t index */

struct appendlog {
	_Atomic uint32_t count;
	uint32_t elem_size;
	uint32_t limit;                          /* most elements allowed */
	_Atomic(void *) segments[APPENDLOG_SEGMENTS];
};

/* Heap-allocate an empty log; limit 0: as many as a uint32_t index allows. */
struct appendlog *appendlog_new(uint32_t elem_size, uint32_t limit);
void appendlog_free(struct appendlog *log);

/* Writer: a zeroed slot for the next element, not yet visible to readers,
 * or NULL when the limit is reached or memory is short. */
void *appendlog_reserve(struct appendlog *log);
/* Writer: make the reserved element visible; returns its index. */
uint32_t appendlog_publish(struct appendlog *log);

/* Reader: how many elements are visible. */
static inline uint32_t
appendlog_count(const struct appendlog *log)
{
	return atomic_load_explicit((_Atomic uint32_t *)&log->count, memory_order_acquire);
}

/* Where element i lives: segment *k, at offset the return value. */
static inline size_t
appendlog_locate(uint32_t i, unsigned *k)
{
	*k = 31u - (unsigned)__builtin_clz((i >> APPENDLOG_BASE_BITS) + 1u);
	return (size_t)i + APPENDLOG_BASE - ((size_t)APPENDLOG_BASE << *k);
}

/* Element i (i < a count this thread has observed). */
static inline void *
appendlog_at(const struct appendlog *log, uint32_t i)
{
	unsigned k;
	size_t off = appendlog_locate(i, &k);
	char *seg = atomic_load_explicit((_Atomic(void *) *)&log->segments[k], memory_order_relaxed);
	return seg + off * log->elem_size;
}

#endif
