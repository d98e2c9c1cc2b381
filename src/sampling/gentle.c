#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "gentle.h"

/* Waiting half of a check's interval under SCHED_IDLE, twice in a row: too
 * busy. A thread pool keeping one CPU of two busy makes the idle sampler
 * wait 20-35% of a 250 ms interval; both CPUs taken by busy threads, ~95%. */
#define BUSY_WAIT_DIVISOR 2
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
gentle_start(struct gentle *g, bool want, uint64_t now_ns, uint64_t wait_ns)
{
	memset(g, 0, sizeof *g);
	g->last_ns = now_ns;
	g->last_wait_ns = wait_ns;
	g->hold_ns = HOLD_FIRST_NS;
	g->available = want && can_leave_idle();
	if (g->available)
		go_idle(g, now_ns);
}

void
gentle_check(struct gentle *g, uint64_t now_ns, uint64_t wait_ns)
{
	uint64_t dt = now_ns - g->last_ns;
	uint64_t waited = wait_ns >= g->last_wait_ns ? wait_ns - g->last_wait_ns : 0;
	if (g->idle)
		g->idle_ns += dt;
	g->last_ns = now_ns;
	g->last_wait_ns = wait_ns;
	if (!g->available || !dt)
		return;
	if (g->idle) {
		g->busy_checks = waited * BUSY_WAIT_DIVISOR >= dt ? g->busy_checks + 1 : 0;
		if (g->busy_checks >= BUSY_CHECKS) {
			if (!set_policy(SCHED_OTHER))
				return;   /* cannot happen once probed; stay and retry */
			g->idle = false;
			g->busy_checks = 0;
			g->fallbacks++;
			g->retry_ns = now_ns + g->hold_ns;
			g->hold_ns = g->hold_ns * 2 > HOLD_MAX_NS ? HOLD_MAX_NS : g->hold_ns * 2;
		} else if (now_ns - g->idle_since_ns >= CALM_NS) {
			g->hold_ns = HOLD_FIRST_NS;
		}
	} else if (now_ns >= g->retry_ns) {
		go_idle(g, now_ns);
	}
}
