/* The append-only log's segments: every index lands in its own place
 * across segment boundaries, memory follows the count, and the limit
 * holds; a reader thread sees published elements only (built again with
 * ThreadSanitizer as test_appendlog_tsan). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "appendlog.h"
#include "tap.h"

#define MANY 300000u

struct elem {
	uint32_t index;
	uint32_t check;
};

static uint32_t
segments_used(const struct appendlog *log)
{
	uint32_t n = 0;
	for (unsigned k = 0; k < APPENDLOG_SEGMENTS; k++)
		n += atomic_load_explicit((_Atomic(void *) *)&log->segments[k], memory_order_relaxed) != NULL;
	return n;
}

static void *
reader(void *arg)
{
	const struct appendlog *log = arg;
	uint32_t bad = 0, seen = 0;
	while (seen < MANY) {
		uint32_t n = appendlog_count(log);
		for (; seen < n; seen++) {
			const struct elem *e = appendlog_at(log, seen);
			bad += e->index != seen || e->check != ~seen;
		}
	}
	return (void *)(uintptr_t)bad;
}

int
main(void)
{
	unsigned k;
	size_t off = appendlog_locate(0, &k);
	tap_ok(k == 0 && off == 0, "index 0: segment 0, offset 0");
	off = appendlog_locate(APPENDLOG_BASE - 1, &k);
	tap_ok(k == 0 && off == APPENDLOG_BASE - 1, "the last of segment 0");
	off = appendlog_locate(APPENDLOG_BASE, &k);
	tap_ok(k == 1 && off == 0, "the first of segment 1");
	off = appendlog_locate(3 * APPENDLOG_BASE, &k);
	tap_ok(k == 2 && off == 0, "segment 2 starts after 64 + 128 elements");
	off = appendlog_locate(UINT32_MAX - 1, &k);
	tap_ok(k < APPENDLOG_SEGMENTS && off < ((size_t)APPENDLOG_BASE << k),
	       "the largest index fits a segment (%u, offset %zu)", k, off);

	struct appendlog *log = appendlog_new(sizeof(struct elem), 0);
	pthread_t th;
	int rc = pthread_create(&th, NULL, reader, log);
	uint32_t wrong_segments = 0;
	for (uint32_t i = 0; i < MANY; i++) {
		struct elem *e = appendlog_reserve(log);
		if (!e)
			break;
		e->index = i;
		e->check = ~i;
		appendlog_publish(log);
		if (i == 10 && segments_used(log) != 1)
			wrong_segments++;
	}
	void *bad = NULL;
	if (rc == 0)
		pthread_join(th, &bad);
	tap_ok(rc == 0 && bad == NULL, "a concurrent reader saw every element whole, in order");
	tap_ok(wrong_segments == 0, "11 elements take one segment");
	uint32_t errors = 0;
	for (uint32_t i = 0; i < MANY; i++) {
		const struct elem *e = appendlog_at(log, i);
		errors += e->index != i || e->check != ~i;
	}
	tap_ok(errors == 0 && appendlog_count(log) == MANY, "%u elements read back (%u wrong)",
	       MANY, errors);
	/* 300,000 elements: segments 0..12 (64 * (2^13 - 1) = 524,224 places). */
	tap_ok(segments_used(log) == 13, "%u segments for %u elements", segments_used(log), MANY);
	appendlog_free(log);

	log = appendlog_new(sizeof(struct elem), 100);
	uint32_t got = 0;
	while (appendlog_reserve(log)) {
		appendlog_publish(log);
		got++;
	}
	tap_ok(got == 100, "a limit of 100 gives 100 elements (%u)", got);
	appendlog_free(log);
	return tap_done();
}
