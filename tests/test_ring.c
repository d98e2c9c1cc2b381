/* Producer/consumer stress test of the SPSC ring. Built twice by make check:
 * as is, and with ThreadSanitizer (test_ring_tsan), which reports any data
 * race in the ring's synchronization. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "ring.h"
#include "tap.h"

#define RECORDS 2000000u

struct shared {
	struct ring ring;
	_Atomic bool done;
	uint64_t pushed, dropped;
};

static void *
producer(void *arg)
{
	struct shared *sh = arg;
	for (uint32_t i = 1; i <= RECORDS; i++) {
		/* Every field derives from i so the consumer can check integrity. */
		struct sample_record rec = {.time_ns = i, .stack_id = i * 7u,
					    .thread_slot = (uint16_t)(i & 0xffff),
					    .state = (uint8_t)(i & 0x7f), .weight = (uint8_t)(1 + i % 200)};
		if (ring_push(&sh->ring, &rec))
			sh->pushed++;
		else
			sh->dropped++;
	}
	atomic_store_explicit(&sh->done, true, memory_order_release);
	return NULL;
}

int
main(void)
{
	for (int round = 0; round < 2; round++) {
		/* A tiny ring forces the full path; a large one the fast path. */
		uint32_t capacity = round == 0 ? 64 : 1u << 16;
		struct shared sh = {0};
		if (!ring_init(&sh.ring, capacity))
			return 1;
		tap_ok(ring_capacity(&sh.ring) == capacity, "capacity %u is a power of two", capacity);
		pthread_t t;
		pthread_create(&t, NULL, producer, &sh);
		uint64_t consumed = 0, last = 0, corrupt = 0, disorder = 0;
		struct sample_record buf[37]; /* odd batch size on purpose */
		for (;;) {
			bool done = atomic_load_explicit(&sh.done, memory_order_acquire);
			size_t n = ring_pop(&sh.ring, buf, 37);
			for (size_t i = 0; i < n; i++) {
				uint64_t v = buf[i].time_ns;
				if (buf[i].stack_id != (uint32_t)(v * 7u) ||
				    buf[i].thread_slot != (uint16_t)(v & 0xffff) ||
				    buf[i].state != (uint8_t)(v & 0x7f) ||
				    buf[i].weight != (uint8_t)(1 + v % 200))
					corrupt++;
				if (v <= last)
					disorder++;
				last = v;
			}
			consumed += n;
			if (n == 0 && done && ring_fill(&sh.ring) == 0)
				break;
		}
		pthread_join(t, NULL);
		tap_ok(corrupt == 0, "ring %u: no torn records (%llu)", capacity,
		       (unsigned long long)corrupt);
		tap_ok(disorder == 0, "ring %u: records arrive in order (%llu out of order)", capacity,
		       (unsigned long long)disorder);
		tap_ok(consumed == sh.pushed, "ring %u: consumed %llu = pushed %llu", capacity,
		       (unsigned long long)consumed, (unsigned long long)sh.pushed);
		tap_ok(sh.pushed + sh.dropped == RECORDS && ring_dropped(&sh.ring) == sh.dropped,
		       "ring %u: pushed %llu + dropped %llu = %u, drops counted", capacity,
		       (unsigned long long)sh.pushed, (unsigned long long)sh.dropped, RECORDS);
		tap_ok(atomic_load(&sh.ring.high_water) <= capacity, "ring %u: high water %u <= capacity",
		       capacity, atomic_load(&sh.ring.high_water));
		if (round == 0)
			tap_ok(sh.dropped > 0, "ring 64: a slow consumer causes counted drops (%llu)",
			       (unsigned long long)sh.dropped);
		ring_free(&sh.ring);
	}
	return tap_done();
}
