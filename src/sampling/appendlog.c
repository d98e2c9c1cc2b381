#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "appendlog.h"

struct appendlog *
appendlog_new(uint32_t elem_size, uint32_t limit)
{
	struct appendlog *log = calloc(1, sizeof *log);
	if (!log)
		return NULL;
	log->elem_size = elem_size;
	uint64_t max = (uint64_t)APPENDLOG_MAX_CHUNKS * APPENDLOG_CHUNK;
	log->limit = limit && limit < max ? limit : (uint32_t)(max - 1);
	atomic_init(&log->count, 0);
	return log;
}

void
appendlog_free(struct appendlog *log)
{
	if (!log)
		return;
	for (uint32_t i = 0; i < APPENDLOG_MAX_CHUNKS; i++)
		free(atomic_load_explicit(&log->chunks[i], memory_order_relaxed));
	free(log);
}

void *
appendlog_reserve(struct appendlog *log)
{
	uint32_t n = atomic_load_explicit(&log->count, memory_order_relaxed);
	if (n >= log->limit)
		return NULL;
	uint32_t c = n >> APPENDLOG_CHUNK_BITS;
	char *chunk = atomic_load_explicit(&log->chunks[c], memory_order_relaxed);
	if (!chunk) {
		chunk = calloc(APPENDLOG_CHUNK, log->elem_size);
		if (!chunk)
			return NULL;
		/* Published to readers by the release store of count. */
		atomic_store_explicit(&log->chunks[c], chunk, memory_order_relaxed);
	}
	void *slot = chunk + (size_t)(n & (APPENDLOG_CHUNK - 1)) * log->elem_size;
	memset(slot, 0, log->elem_size);
	return slot;
}

uint32_t
appendlog_publish(struct appendlog *log)
{
	uint32_t n = atomic_load_explicit(&log->count, memory_order_relaxed);
	atomic_store_explicit(&log->count, n + 1, memory_order_release);
	return n;
}
