/* The kernel's perf ring as the native sampler drains it: records of any
 * type, PERF_RECORD_SAMPLE's with a thread's registers and a copy of its
 * stack, wrapping at the ring's end. Input: where the reader's tail starts
 * (8 bytes), then the ring's data area (its size: the next power of two).
 *
 * parsers: src/target/native/perfsample.c
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "native/perfsample.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8 || size - 8 > (1u << 20))
		return 0;
	uint64_t tail;
	memcpy(&tail, data, 8);
	size_t len = size - 8, ring = 64;
	while (ring < len)
		ring *= 2;
	uint8_t *area = calloc(1, ring);
	if (!area)
		abort();
	memcpy(area, data + 8, len);
	/* the records written since the tail: up to a whole ring of them; the
	 * kernel's counters are 8-aligned and never near wrapping */
	tail &= ((uint64_t)1 << 62) - 8;
	uint64_t head = tail + len, start = tail;
	static struct user_sample out;
	if (perf_ring_newest(area, ring, &tail, head, &out)) {
		fuzz_check(out.stack_len <= PERFSAMPLE_STACK_MAX);
		fuzz_say("newest sample: time %llu, %zu bytes of stack; %llu of %zu bytes read\n",
			 (unsigned long long)out.time_ns, out.stack_len,
			 (unsigned long long)(tail - start), len);
	}
	fuzz_check(tail >= start && tail <= head);
	free(area);
	return 0;
}
