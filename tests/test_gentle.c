/* The sampler's scheduling policy (gentle.c), driven with made-up counts
 * on this test's own thread, as the guard drives it every 50 ms: the
 * normal policy at first; SCHED_IDLE once the machine left a CPU to spare;
 * the normal policy at the first tick that finds it starved, or after two
 * windows missing more deadlines than the normal policy did; idle again
 * after the hold, only if the machine has a CPU to spare then. */
#include "config.h"

#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "gentle.h"
#include "tap.h"

#define MS 1000000ull

static struct gentle_counts c = {.spare_known = true};
static uint64_t now;

/* One 50 ms tick in which the thread waited wait_pct% of the time, missed
 * miss_pct% of its 500 deadlines, and the CPUs it may run on were idle
 * spare_pct% of the time. */
static void
tick(struct gentle *g, unsigned wait_pct, unsigned miss_pct, unsigned spare_pct)
{
	now += 50 * MS;
	c.wait_ns += 50 * MS * wait_pct / 100;
	c.missed += 5 * miss_pct;
	c.passes += 500 - 5 * miss_pct;
	c.spare_ns += 50 * MS * spare_pct / 100;
	gentle_check(g, now, &c);
}

/* n ticks alike. */
static void
ticks(struct gentle *g, int n, unsigned wait_pct, unsigned miss_pct, unsigned spare_pct)
{
	for (int i = 0; i < n; i++)
		tick(g, wait_pct, miss_pct, spare_pct);
}

static int
policy(void)
{
	return sched_getscheduler(0);
}

int
main(void)
{
	struct gentle g;
	now = 1000 * MS;
	gentle_start(&g, true, gettid(), now, &c);
	if (!g.available) {
		printf("1..0 # SKIP this process cannot leave SCHED_IDLE again (no CAP_SYS_NICE)\n");
		return 0;
	}
	tap_ok(!g.idle && policy() == SCHED_OTHER, "starts under the normal policy (%d)", policy());
	ticks(&g, 40, 5, 0, 10);
	tap_ok(!g.idle && policy() == SCHED_OTHER,
	       "2 s with its CPUs idle 10%% of the time (a busy machine): never idle");
	ticks(&g, 5, 5, 23, 60);
	tap_ok(g.idle && policy() == SCHED_IDLE,
	       "a 250 ms window with its CPUs idle 60%% of the time: SCHED_IDLE");
	ticks(&g, 40, 10, 0, 60);
	tap_ok(g.idle && g.fallbacks == 0, "2 s of a little waiting, nothing missed: still idle");
	tick(&g, 60, 30, 0);
	tap_ok(!g.idle && g.fallbacks == 1 && policy() == SCHED_OTHER,
	       "one 50 ms tick waiting 60%% (the machine got busy): normal policy at once");
	ticks(&g, 20, 5, 23, 60);
	tap_ok(!g.idle, "held: not idle again within 1 s");
	ticks(&g, 25, 5, 23, 60);
	tap_ok(g.idle && policy() == SCHED_IDLE && g.normal_miss >= 225 && g.normal_miss <= 235,
	       "after the 2 s hold, idle again; the normal policy missed %u per mille", g.normal_miss);
	ticks(&g, 40, 30, 26, 60);
	tap_ok(g.idle && g.fallbacks == 1,
	       "missing 26%% where the normal policy missed 23%%: stays idle (the work misses, not the policy)");
	ticks(&g, 5, 30, 40, 60);
	tap_ok(g.idle, "one window missing 40%%: still idle (two in a row needed)");
	ticks(&g, 5, 30, 40, 60);
	tap_ok(!g.idle && g.fallbacks == 2, "two windows missing 40%%: normal policy again");
	ticks(&g, 100, 5, 23, 5);
	tap_ok(!g.idle, "the doubled hold (4 s) over, but no CPU to spare for 5 s: still normal");
	ticks(&g, 5, 5, 23, 60);
	tap_ok(g.idle, "a CPU to spare again: idle");
	tick(&g, 55, 0, 0);
	tick(&g, 10, 0, 60);
	tap_ok(!g.idle && g.fallbacks == 3, "starved once more: normal");
	ticks(&g, 40, 5, 0, 60);
	tap_ok(!g.idle, "held 8 s this time, not over after 2 s");

	struct gentle u;
	c.spare_known = false;
	gentle_start(&u, true, gettid(), now, &c);
	ticks(&u, 5, 5, 0, 0);
	tap_ok(u.idle, "the machine's idle time unknown: taken as a CPU to spare");
	struct gentle never;
	gentle_start(&never, false, gettid(), now, &c);
	ticks(&never, 20, 0, 0, 100);
	tap_ok(!never.idle && policy() == SCHED_IDLE,
	       "not wanted (max rate, --native): never idle (and the policy left alone)");
	ticks(&u, 2, 80, 0, 0);
	tap_ok(!u.idle && policy() == SCHED_OTHER, "starved: back to normal");
	return tap_done();
}
