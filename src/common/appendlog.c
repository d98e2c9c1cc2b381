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
	log->limit = limit && limit < UINT32_MAX ? limit : UINT32_MAX - 1;
	atomic_init(&log->count, 0);
	return log;
}

void
appendlog_free(struct appendlog *log)
{
	if (!log)
		return;
	for (uint32_t k = 0; k < APPENDLOG_SEGMENTS; k++)
		free(atomic_load_explicit(&log->segments[k], memory_order_relaxed));
	free(log);
}

void *
appendlog_reserve(struct appendlog *log)
{
	uint32_t n = atomic_load_explicit(&log->count, memory_order_relaxed);
	if (n >= log->limit)
		return NULL;
	unsigned k;
	size_t off = appendlog_locate(n, &k);
	char *seg = atomic_load_explicit(&log->segments[k], memory_order_relaxed);
	if (!seg) {
		/* Not calloc: each slot is zeroed as it is reserved, and a large
		 * segment's untouched pages then cost nothing. */
		seg = malloc(((size_t)APPENDLOG_BASE << k) * log->elem_size);
		if (!seg)
			return NULL;
		/* Published to readers by the release store of count. */
		atomic_store_explicit(&log->segments[k], seg, memory_order_relaxed);
	}
	void *slot = seg + off * log->elem_size;
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
