/* Which threads watch names as stuck (stuckwatch), from made-up samples:
 * a thread that sits in a place it moved to, past the threshold, once per
 * place; never one in the place it (or any other thread) was first seen
 * in, one with no Python frames, or one no longer sampled. */
#include "config.h"

#include <stdint.h>

#include "stuckwatch.h"
#include "tap.h"

#define S 1000000000ull

/* Every thread named by now_ns, as a bit set of slots. */
static unsigned
named(struct stuckwatch *w, uint64_t now_ns)
{
	unsigned set = 0;
	uint32_t cursor = 0;
	int64_t slot;
	while ((slot = stuckwatch_next(w, now_ns, &cursor)) >= 0)
		set |= 1u << slot;
	return set;
}

/* Samples of slot every 100 ms from from_s to to_s, at stack. */
static void
sit(struct stuckwatch *w, uint32_t slot, uint64_t born, uint32_t proc, uint32_t stack,
    double from_s, double to_s)
{
	for (double t = from_s; t <= to_s + 1e-9; t += 0.1)
		stuckwatch_see(w, slot, born, proc, stack, (uint64_t)(t * S));
}

int
main(void)
{
	struct stuckwatch w;
	stuckwatch_init(&w, 30 * S, 2 * S);

	/* slot 0: idle where first seen for a minute; slot 1: first seen at
	 * 5, moves to 7 at 10 s and stays */
	sit(&w, 0, 1, 0, 5, 0, 60);
	sit(&w, 1, 1, 0, 5, 0, 9.9);
	sit(&w, 1, 1, 0, 7, 10, 39.8);
	tap_ok(named(&w, (uint64_t)(39.8 * S)) == 0,
	       "29.8 s in a place it moved to, 60 s where it was first seen: none named");
	sit(&w, 1, 1, 0, 7, 39.9, 40.1);
	tap_ok(named(&w, (uint64_t)(40.1 * S)) == 2u, "30 s in the place it moved to: named");
	sit(&w, 1, 1, 0, 7, 40.2, 80);
	tap_ok(named(&w, 80 * S) == 0, "named once per place, however long it stays");

	/* back where it was first seen, then to 7 again */
	sit(&w, 1, 1, 0, 5, 80.1, 85);
	sit(&w, 1, 1, 0, 7, 85.1, 115.2);
	tap_ok(named(&w, (uint64_t)(115.2 * S)) == 2u, "it moved and came back: named again");

	/* slot 2: first seen at 9, moves to 5 (slot 0's first place): a pool's
	 * other worker; slot 3 of another process (a server's other worker)
	 * likewise; slot 6 moves to 14, where no thread was first seen */
	sit(&w, 2, 1, 0, 9, 0, 1);
	sit(&w, 2, 1, 0, 5, 1.1, 60);
	sit(&w, 3, 1, 1, 9, 0, 1);
	sit(&w, 3, 1, 1, 5, 1.1, 60);
	sit(&w, 6, 1, 1, 9, 0, 1);
	sit(&w, 6, 1, 1, 14, 1.1, 60);
	tap_ok(named(&w, 60 * S) == 64u, "a place another thread was first seen in is idle, in "
	       "any process; another place is not");

	/* a slot's new occupant is a new thread: its first place is its own */
	sit(&w, 1, 200, 0, 11, 120, 200);
	tap_ok(named(&w, 200 * S) == 0, "a slot's new occupant, where it was first seen: none");

	/* no Python frames; a thread no longer sampled */
	sit(&w, 4, 1, 0, 12, 0, 1);
	sit(&w, 4, 1, 0, 0, 1.1, 60);
	sit(&w, 5, 1, 0, 12, 0, 1);
	sit(&w, 5, 1, 0, 13, 1.1, 40);
	tap_ok(named(&w, 60 * S) == 0, "no Python frames, or unsampled for 20 s: none named");
	stuckwatch_free(&w);
	return tap_done();
}
