#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "gentle.h"

/* Waiting half of a check's interval under SCHED_IDLE, or missing more
 * deadlines than the normal policy did by MISS_MARGIN per mille, twice in
 * a row: back to the normal policy. A thread pool keeping one CPU of two
 * busy makes the idle sampler wait 20-35% of a 250 ms interval, missing
 * what it misses anyway (a pass over 21 threads is longer than 100 us);
 * both CPUs taken by busy threads, ~95%; the demo's three processes, 27%,
 * missing 26% of deadlines where the normal policy misses 13%. */
#define BUSY_WAIT_DIVISOR 2
#define MISS_MARGIN 50u
#define BUSY_CHECKS 2
#define HOLD_FIRST_NS (2ull * 1000000000ull)
#define HOLD_MAX_NS (64ull * 1000000000ull)
/* Idle this long without falling back: the machine is calm again. */
#define CALM_NS (60ull * 1000000000ull)

static bool
set_policy(int policy)
{
	struct sched_param p;
	memset(&p, 0, sizeof p);
	/* pid 0: the calling thread (Linux schedules threads, not processes). */
	return sched_setscheduler(0, policy, &p) == 0;
}

/* Leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE that allows the
 * thread's nice value: try both ways on a thread of no consequence. */
static void *
probe(void *arg)
{
	bool *ok = arg;
	*ok = set_policy(SCHED_IDLE) && set_policy(SCHED_OTHER);
	return NULL;
}

static bool
can_leave_idle(void)
{
	pthread_t t;
	bool ok = false;
	if (pthread_create(&t, NULL, probe, &ok) != 0)
		return false;
	pthread_join(t, NULL);
	return ok;
}

static void
go_idle(struct gentle *g, uint64_t now_ns)
{
	if (set_policy(SCHED_IDLE)) {
		g->idle = true;
		g->idle_since_ns = now_ns;
	}
}

void
gentle_start(struct gentle *g, bool want, uint64_t now_ns, const struct gentle_counts *c)
{
	memset(g, 0, sizeof *g);
	g->last_ns = now_ns;
	g->last_wait_ns = c->wait_ns;
	g->last_passes = c->passes;
	g->last_missed = c->missed;
	g->hold_ns = HOLD_FIRST_NS;
	g->available = want && can_leave_idle();
	if (g->available)
		go_idle(g, now_ns);
}

/* Deadlines missed per mille of those due. */
static uint32_t
missed_per_mille(uint64_t passes, uint64_t missed)
{
	return passes + missed ? (uint32_t)(missed * 1000 / (passes + missed)) : 0;
}

void
gentle_check(struct gentle *g, uint64_t now_ns, const struct gentle_counts *c)
{
	uint64_t dt = now_ns - g->last_ns;
	uint64_t waited = c->wait_ns >= g->last_wait_ns ? c->wait_ns - g->last_wait_ns : 0;
	uint64_t passes = c->passes - g->last_passes, missed = c->missed - g->last_missed;
	if (g->idle)
		g->idle_ns += dt;
	g->last_ns = now_ns;
	g->last_wait_ns = c->wait_ns;
	g->last_passes = c->passes;
	g->last_missed = c->missed;
	if (!g->available || !dt)
		return;
	if (g->idle) {
		bool starved = waited * BUSY_WAIT_DIVISOR >= dt;
		bool costly = missed_per_mille(passes, missed) > g->normal_miss + MISS_MARGIN;
		g->busy_checks = starved || costly ? g->busy_checks + 1 : 0;
		if (g->busy_checks >= BUSY_CHECKS) {
			if (!set_policy(SCHED_OTHER))
				return;   /* cannot happen once probed; stay and retry */
			g->idle = false;
			g->busy_checks = 0;
			g->fallbacks++;
			g->held_passes = g->held_missed = 0;
			g->retry_ns = now_ns + g->hold_ns;
			g->hold_ns = g->hold_ns * 2 > HOLD_MAX_NS ? HOLD_MAX_NS : g->hold_ns * 2;
		} else if (now_ns - g->idle_since_ns >= CALM_NS) {
			g->hold_ns = HOLD_FIRST_NS;
		}
	} else {
		/* What the normal policy misses is the bar idle has to meet. */
		g->held_passes += passes;
		g->held_missed += missed;
		if (now_ns >= g->retry_ns) {
			g->normal_miss = missed_per_mille(g->held_passes, g->held_missed);
			go_idle(g, now_ns);
		}
	}
}
