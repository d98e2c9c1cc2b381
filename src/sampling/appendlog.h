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

#define APPENDLOG_CHUNK_BITS 12
#define APPENDLOG_CHUNK (1u << APPENDLOG_CHUNK_BITS)
#define APPENDLOG_MAX_CHUNKS (1u << 14)   /* 64M elements */

struct appendlog {
	_Atomic uint32_t count;
	uint32_t elem_size;
	uint32_t limit;                          /* most elements allowed */
	_Atomic(void *) chunks[APPENDLOG_MAX_CHUNKS];
};

/* Heap-allocate an empty log; limit <= APPENDLOG_MAX_CHUNKS * APPENDLOG_CHUNK. */
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

/* Element i (i < a count this thread has observed). */
static inline void *
appendlog_at(const struct appendlog *log, uint32_t i)
{
	char *chunk = atomic_load_explicit((_Atomic(void *) *)&log->chunks[i >> APPENDLOG_CHUNK_BITS],
					   memory_order_relaxed);
	return chunk + (size_t)(i & (APPENDLOG_CHUNK - 1)) * log->elem_size;
}

#endif
