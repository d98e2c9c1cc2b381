/* The sampler's scheduling policy (gentle.c), driven with made-up counts
 * on this test's own thread: SCHED_IDLE while nothing is lost; the normal
 * policy when starved or when it misses more deadlines than the normal
 * policy did; back to idle after the hold, judged against what the normal
 * policy missed meanwhile. */
#include "config.h"

#include <sched.h>
#include <stdint.h>

#include "gentle.h"
#include "tap.h"

#define MS 1000000ull

static struct gentle_counts c;
static uint64_t now;

/* One 250 ms check in which the thread waited wait_pct% of the time and
 * missed miss_pct% of its 2,500 deadlines. */
static void
check(struct gentle *g, unsigned wait_pct, unsigned miss_pct)
{
	now += 250 * MS;
	c.wait_ns += 250 * MS * wait_pct / 100;
	c.missed += 25 * miss_pct;
	c.passes += 2500 - 25 * miss_pct;
	gentle_check(g, now, &c);
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
	gentle_start(&g, true, now, &c);
	if (!g.available) {
		printf("1..0 # SKIP this process cannot leave SCHED_IDLE again (no CAP_SYS_NICE)\n");
		return 0;
	}
	tap_ok(g.idle && policy() == SCHED_IDLE, "starts under SCHED_IDLE (policy %d)", policy());
	for (int i = 0; i < 8; i++)
		check(&g, 10, 0);
	tap_ok(g.idle && g.fallbacks == 0, "2 s of a little waiting, nothing missed: still idle");
	check(&g, 30, 26);
	tap_ok(g.idle, "one check missing 26%%: still idle (two in a row needed)");
	check(&g, 30, 26);
	tap_ok(!g.idle && g.fallbacks == 1 && policy() == SCHED_OTHER,
	       "two checks missing 26%% (nothing known of the normal policy yet): normal policy");
	for (int i = 0; i < 8; i++)
		check(&g, 10, 23);
	tap_ok(g.idle && policy() == SCHED_IDLE && g.normal_miss >= 225 && g.normal_miss <= 235,
	       "after the 2 s hold, idle again; the normal policy missed %u per mille", g.normal_miss);
	for (int i = 0; i < 8; i++)
		check(&g, 30, 26);
	tap_ok(g.idle && g.fallbacks == 1,
	       "missing 26%% where the normal policy missed 23%%: stays idle (the work misses, not the policy)");
	check(&g, 30, 40);
	check(&g, 30, 40);
	tap_ok(!g.idle && g.fallbacks == 2, "missing 40%% twice: normal policy again");
	for (int i = 0; i < 16; i++)
		check(&g, 10, 23);
	tap_ok(g.idle, "after the doubled hold (4 s): idle again");
	check(&g, 60, 0);
	check(&g, 60, 0);
	tap_ok(!g.idle && g.fallbacks == 3 && policy() == SCHED_OTHER,
	       "waiting 60%% of two checks (a busy machine): normal policy");
	check(&g, 10, 0);
	tap_ok(!g.idle, "held: 8 s this time, not over after 250 ms");
	return tap_done();
}
