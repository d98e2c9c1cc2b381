/* The flight recorder (flightrec): it keeps the records of the last window
 * in the order they came, across its buffer's growth and wrap; drops the
 * oldest at its cap; and its marks give the window's span and passes. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flightrec.h"
#include "tap.h"

#define MS 1000000ull

static struct sample_record
rec(uint64_t time_ns, uint32_t stack)
{
	return (struct sample_record){.time_ns = time_ns, .stack_id = stack, .thread_slot = 1,
				      .weight = 1};
}

/* Are the kept records those of stacks from..to, in order? */
static bool
holds(const struct flightrec *f, uint32_t from, uint32_t to)
{
	if (flightrec_count(f) != to - from + 1)
		return false;
	for (uint32_t i = 0; i < flightrec_count(f); i++)
		if (flightrec_at(f, i)->stack_id != from + i)
			return false;
	return true;
}

int
main(void)
{
	struct flightrec f;

	/* 1 ms apart, a 1 s window: the last 1,001 records (5,000 in batches of 7) */
	flightrec_init(&f, 1000 * MS, 1u << 20);
	uint32_t n = 0;
	while (n < 5000) {
		struct sample_record batch[7];
		size_t k = 0;
		for (; k < 7 && n < 5000; k++, n++)
			batch[k] = rec(n * MS, n + 1);
		flightrec_add(&f, batch, k);
	}
	tap_ok(holds(&f, 4000, 5000), "a 1 s window of records 1 ms apart keeps the last 1,001, "
	       "in order (%u kept, first stack %u)", flightrec_count(&f),
	       flightrec_count(&f) ? flightrec_at(&f, 0)->stack_id : 0);
	flightrec_free(&f);

	/* the cap: 3,000 records, a window that would hold them all */
	flightrec_init(&f, 3600000 * MS, 2500);
	for (n = 0; n < 3000; n++) {
		struct sample_record r = rec(n * MS, n + 1);
		flightrec_add(&f, &r, 1);
	}
	tap_ok(holds(&f, 501, 3000) && f.dropped == 500, "at a cap of 2,500 records the oldest "
	       "500 of 3,000 go (%u kept, %llu dropped)", flightrec_count(&f),
	       (unsigned long long)f.dropped);
	/* grown while wrapped: the window drops the oldest so the buffer
	 * wraps, then it grows past its size */
	flightrec_free(&f);
	flightrec_init(&f, 100 * MS, 1u << 20);
	for (n = 0; n < 1500; n++) {    /* 1,000 ahead of a window of 101: wraps */
		struct sample_record r = rec(n * MS, n + 1);
		flightrec_add(&f, &r, 1);
	}
	f.window_ns = 10000 * MS;       /* now longer: grows while wrapped */
	for (; n < 4000; n++) {
		struct sample_record r = rec(n * MS, n + 1);
		flightrec_add(&f, &r, 1);
	}
	tap_ok(holds(&f, 1400, 4000), "grown while wrapped, the records stay in order "
	       "(%u kept)", flightrec_count(&f));
	flightrec_free(&f);

	/* marks: drained every 100 ms, 20 passes a second, a 2 s window */
	flightrec_init(&f, 2000 * MS, 1024);
	uint64_t from, to, passes;
	tap_ok(!flightrec_span(&f, &from, &to, &passes), "no span before two marks");
	for (int i = 0; i <= 100; i++)
		flightrec_mark(&f, (uint64_t)i * 100 * MS, (uint64_t)i * 2);
	bool spans = flightrec_span(&f, &from, &to, &passes);
	tap_ok(spans && from == 8000 * MS &&
	       to == 10000 * MS && passes == 40, "after 10 s the span is the last 2 s and its "
	       "40 passes (%llu..%llu ms, %llu)", (unsigned long long)(from / MS),
	       (unsigned long long)(to / MS), (unsigned long long)passes);
	flightrec_free(&f);

	/* off: a window of 0 keeps nothing */
	flightrec_init(&f, 0, 1024);
	struct sample_record r = rec(1, 1);
	flightrec_add(&f, &r, 1);
	flightrec_mark(&f, 1, 1);
	flightrec_mark(&f, 2, 2);
	tap_ok(flightrec_count(&f) == 0 && !flightrec_span(&f, &from, &to, &passes),
	       "a window of 0 keeps nothing");
	flightrec_free(&f);
	return tap_done();
}
