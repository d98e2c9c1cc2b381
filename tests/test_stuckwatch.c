/* Which threads watch names (stuckwatch), from made-up samples: a thread
 * that sits in a place it moved to, past the threshold, once per place;
 * never one in the place it (or any other thread) was first seen in, one
 * with no Python frames, or one no longer sampled. An asyncio loop's
 * thread in one callback past the loop threshold; never one waiting in its
 * selector, however long. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stuckwatch.h"
#include "tap.h"

#define S 1000000000ull

static struct intern in;

/* A stack of frames "func@file:line", outermost first, NULL-ended. */
static uint32_t
stack_of(const char *const *frames)
{
	uint32_t id = 0;
	for (; *frames; frames++) {
		char func[64], file[64];
		int line = 0;
		const char *at = strchr(*frames, '@'), *colon = strrchr(*frames, ':');
		snprintf(func, sizeof func, "%.*s", (int)(at - *frames), *frames);
		snprintf(file, sizeof file, "%.*s", (int)(colon - at - 1), at + 1);
		line = atoi(colon + 1);
		uint32_t f = intern_func(&in, func, file, 1, FUNC_PYTHON);
		id = intern_stack(&in, id, intern_frame(&in, f, line));
	}
	return id;
}

/* A one-frame stack: place n. */
static uint32_t
place(int n)
{
	char frame[64];
	snprintf(frame, sizeof frame, "f%d@/app/x.py:%d", n, n);
	const char *frames[] = {frame, NULL};
	return stack_of(frames);
}

/* Every thread named by now_ns, as a bit set of slots; *loops the ones
 * named as blocked event loops. */
static unsigned
named_loops(struct stuckwatch *w, uint64_t now_ns, unsigned *loops)
{
	unsigned set = 0;
	uint32_t cursor = 0;
	int64_t slot;
	enum stuck_kind kind;
	*loops = 0;
	while ((slot = stuckwatch_next(w, now_ns, &cursor, &kind)) >= 0) {
		set |= 1u << slot;
		if (kind == STUCK_LOOP)
			*loops |= 1u << slot;
	}
	return set;
}

static unsigned
named(struct stuckwatch *w, uint64_t now_ns)
{
	unsigned loops;
	return named_loops(w, now_ns, &loops);
}

/* Samples of slot every 100 ms from from_s to to_s, at place n (0: no
 * Python frames). */
static void
sit(struct stuckwatch *w, uint32_t slot, uint64_t born, uint32_t proc, int n,
    double from_s, double to_s)
{
	uint32_t stack = n ? place(n) : 0;
	for (double t = from_s; t <= to_s + 1e-9; t += 0.1)
		stuckwatch_see(w, slot, born, proc, stack, false, (uint64_t)(t * S));
}

/* The same at a given stack, every 50 ms, off a CPU or on one. */
static void
sit_at(struct stuckwatch *w, uint32_t slot, uint32_t stack, double from_s, double to_s)
{
	for (double t = from_s; t <= to_s + 1e-9; t += 0.05)
		stuckwatch_see(w, slot, 1, 0, stack, false, (uint64_t)(t * S));
}

static void
run_at(struct stuckwatch *w, uint32_t slot, uint32_t stack, double from_s, double to_s)
{
	for (double t = from_s; t <= to_s + 1e-9; t += 0.05)
		stuckwatch_see(w, slot, 1, 0, stack, true, (uint64_t)(t * S));
}

int
main(void)
{
	struct stuckwatch w;
	intern_init(&in);
	stuckwatch_init(&w, &in, 30 * S, 30 * S, 1000 * S, 2 * S);

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

	/* an event loop: waiting in its selector, running callbacks, one
	 * callback blocked in time.sleep */
	stuckwatch_init(&w, &in, 30 * S, S / 2, 1000 * S, 2 * S);
	const char *waiting[] = {"<module>@/app/srv.py:9", "BaseEventLoop.run_forever@"
		"/usr/lib/python3.14/asyncio/base_events.py:683", "BaseEventLoop._run_once@"
		"/usr/lib/python3.14/asyncio/base_events.py:2012", "EpollSelector.select@"
		"/usr/lib/python3.14/selectors.py:452", NULL};
	const char *blocked[] = {"<module>@/app/srv.py:9", "BaseEventLoop.run_forever@"
		"/usr/lib/python3.14/asyncio/base_events.py:683", "BaseEventLoop._run_once@"
		"/usr/lib/python3.14/asyncio/base_events.py:2050", "Handle._run@"
		"/usr/lib/python3.14/asyncio/events.py:94", "Task.__step@"
		"/usr/lib/python3.14/asyncio/tasks.py:293", "handler@/app/srv.py:4",
		"sleepy@/app/srv.py:2", NULL};
	const char *other[] = {"<module>@/app/srv.py:9", "BaseEventLoop.run_forever@"
		"/usr/lib/python3.14/asyncio/base_events.py:683", "BaseEventLoop._run_once@"
		"/usr/lib/python3.14/asyncio/base_events.py:2050", "Handle._run@"
		"/usr/lib/python3.14/asyncio/events.py:94", "Task.__step@"
		"/usr/lib/python3.14/asyncio/tasks.py:293", "handler@/app/srv.py:5", NULL};
	uint32_t wait_s = stack_of(waiting), block_s = stack_of(blocked), other_s = stack_of(other);
	const struct interned_func *h = intern_func_at(&in, stuckwatch_loop_holder(&w, block_s));
	tap_ok(stuckwatch_loop_holder(&w, wait_s) == 0 && strcmp(h->qualname, "handler") == 0,
	       "the loop waiting in its selector is held by nothing; blocked, by handler (%s)",
	       h->qualname);
	unsigned loops;
	sit_at(&w, 0, wait_s, 0, 1);      /* first seen waiting */
	sit_at(&w, 1, other_s, 0, 40);    /* another loop, first seen in a callback */
	for (int i = 0; i < 20; i++) {    /* callbacks between waits, 0.25 s each */
		sit_at(&w, 0, i % 2 ? wait_s : other_s, 1 + 0.25 * i, 1.2 + 0.25 * i);
	}
	sit_at(&w, 0, wait_s, 6, 40);
	tap_ok(named_loops(&w, 40 * S, &loops) == 2u && loops == 2u,
	       "callbacks of 0.25 s, and 34 s waiting in the selector: not named; a loop first "
	       "seen in a callback and held by it for 40 s: named, once, as a blocked loop");
	sit_at(&w, 0, block_s, 40.05, 40.5);
	tap_ok(named(&w, (uint64_t)(40.5 * S)) == 0, "a callback blocked 0.45 s: not yet");
	sit_at(&w, 0, block_s, 40.55, 40.6);
	tap_ok(named_loops(&w, (uint64_t)(40.6 * S), &loops) == 1u && loops == 1u,
	       "0.55 s: named as a blocked loop");
	sit_at(&w, 0, block_s, 40.65, 80);
	tap_ok(named(&w, 80 * S) == 0, "the same callback past --stuck: no second report");
	/* a loaded loop: the same lines of the same handler request after
	 * request, on a CPU; then that callback off a CPU for 0.55 s */
	sit_at(&w, 0, wait_s, 80.05, 81);
	run_at(&w, 0, block_s, 81.05, 90);
	sit_at(&w, 0, block_s, 90.05, 90.5);
	tap_ok(named(&w, (uint64_t)(90.5 * S)) == 0, "9 s of one callback's stack on a CPU, "
	       "then 0.45 s off one: not named");
	sit_at(&w, 0, block_s, 90.55, 90.6);
	tap_ok(named_loops(&w, (uint64_t)(90.6 * S), &loops) == 1u && loops == 1u,
	       "0.55 s off a CPU: named as a blocked loop");
	stuckwatch_free(&w);

	/* spinning: on a CPU in one function, its lines changing */
	stuckwatch_init(&w, &in, 30 * S, S / 2, 10 * S, 2 * S);
	const char *spin_a[] = {"main@/app/job.py:3", "spin@/app/job.py:10", NULL};
	const char *spin_b[] = {"main@/app/job.py:3", "spin@/app/job.py:11", NULL};
	const char *other_f[] = {"main@/app/job.py:3", "tally@/app/job.py:20", NULL};
	uint32_t sa = stack_of(spin_a), sb = stack_of(spin_b), so = stack_of(other_f);
	sit_at(&w, 0, sa, 0, 1);                  /* first seen waiting, then: */
	for (int i = 0; i < 190; i++)            /* 9.5 s on a CPU in spin() */
		run_at(&w, 0, i % 2 ? sa : sb, 1.05 + 0.05 * i, 1.05 + 0.05 * i);
	run_at(&w, 0, so, 10.6, 10.6);            /* a moment in another function */
	for (int i = 0; i < 190; i++)
		run_at(&w, 0, i % 2 ? sa : sb, 10.65 + 0.05 * i, 10.65 + 0.05 * i);
	tap_ok(named(&w, (uint64_t)(20.1 * S)) == 0, "9.5 s on a CPU in one function, a moment "
	       "in another, 9.5 s again: not named");
	for (int i = 0; i < 20; i++)
		run_at(&w, 0, i % 2 ? sa : sb, 20.15 + 0.05 * i, 20.15 + 0.05 * i);
	unsigned spins = 0, set;
	uint32_t cursor = 0;
	enum stuck_kind kind;
	int64_t slot;
	while ((slot = stuckwatch_next(&w, (uint64_t)(21.1 * S), &cursor, &kind)) >= 0)
		spins |= (kind == STUCK_SPIN) << slot;
	set = named(&w, (uint64_t)(21.2 * S));
	tap_ok(spins == 1u && set == 0, "10.45 s: named as spinning, once");
	stuckwatch_free(&w);

	/* a loop sleeping 0.8 s at one line, again and again (the kernel
	 * watcher sees each sleep begin), in a place it moved to: not stuck;
	 * then one sleep that does not end: stuck 30 s after it began */
	stuckwatch_init(&w, &in, 30 * S, S / 2, 1000 * S, 2 * S);
	sit(&w, 0, 1, 0, 20, 0, 1);
	for (double t = 1.1; t < 60; t += 0.8) {
		sit(&w, 0, 1, 0, 21, t, t + 0.7);
		w.threads[0].wait_ns = (uint64_t)(t * S);
	}
	tap_ok(named(&w, (uint64_t)(60.2 * S)) == 0, "59 s at one line in 0.8 s sleeps: not "
	       "named");
	w.threads[0].wait_ns = 60 * S;
	sit(&w, 0, 1, 0, 21, 60, 89.8);
	tap_ok(named(&w, (uint64_t)(89.8 * S)) == 0, "a sleep of 29.9 s: not yet");
	sit(&w, 0, 1, 0, 21, 89.9, 90.2);
	w.threads[0].for_client = true;
	tap_ok(named(&w, (uint64_t)(90.2 * S)) == 0, "30.1 s, waiting on a listening socket: "
	       "not named");
	w.threads[0].for_client = false;
	tap_ok(named(&w, (uint64_t)(90.2 * S)) == 1u, "30.1 s: named");
	stuckwatch_free(&w);

	/* on a CPU at one line, in a place it moved to, past the stuck
	 * threshold: busy, not stuck; spinning once past the spin one */
	stuckwatch_init(&w, &in, 1 * S, S / 2, 3 * S, 2 * S);
	sit_at(&w, 0, so, 0, 0.1);                /* first seen elsewhere */
	run_at(&w, 0, sa, 0.15, 2.5);
	tap_ok(named(&w, (uint64_t)(2.5 * S)) == 0, "2.35 s on a CPU at one line (--stuck 1, "
	       "--spin 3): not named");
	run_at(&w, 0, sa, 2.55, 3.5);
	cursor = 0;
	spins = 0;
	while ((slot = stuckwatch_next(&w, (uint64_t)(3.5 * S), &cursor, &kind)) >= 0)
		spins |= (1u << kind) << (4 * slot);
	tap_ok(spins == 1u << STUCK_SPIN, "3.35 s: named as spinning, not as stuck");
	sit_at(&w, 0, sa, 3.55, 5);               /* now waiting there */
	tap_ok(named(&w, 5 * S) == 0, "then waiting there: the same stretch, not named again");
	stuckwatch_free(&w);
	intern_free(&in);
	return tap_done();
}
