#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gentle.h"

/* Waiting half of a check's interval under SCHED_IDLE: back to the normal
 * policy at once (a thread pool keeping one CPU of two busy makes the idle
 * sampler wait 20-35%; both CPUs taken by busy threads, ~95%). Missing more
 * deadlines than the normal policy did by MISS_MARGIN per mille, two
 * windows in a row: back too. Going idle needs the CPUs the sampler may
 * run on idle a quarter of a window (SPARE_DIVISOR), the sampler's own
 * time not counted. */
#define BUSY_WAIT_DIVISOR 2
#define MISS_MARGIN 50u
#define BUSY_WINDOWS 2
#define SPARE_DIVISOR 4
#define WINDOW_NS (250ull * 1000000ull)
#define HOLD_FIRST_NS (2ull * 1000000000ull)
#define HOLD_MAX_NS (64ull * 1000000000ull)
/* Idle this long without falling back: the machine is calm again. */
#define CALM_NS (60ull * 1000000000ull)

/* Under the normal policy, the sampler asks for the shortest time slice
 * the kernel grants (EEVDF, Linux 6.12+): a waking thread whose slice is
 * shorter than the running one's takes the CPU at once, so a pass due
 * while busy threads hold the CPUs runs then, not when their slices end;
 * older kernels ignore the request. And for a higher weight (nice -10,
 * where CAP_SYS_NICE or RLIMIT_NICE allow it): a thread that sleeps
 * between passes is owed less than it needs by the fair share of five
 * busy threads on two CPUs, and waits for them. It takes no more CPU for
 * it: a pass's work and the rate asked bound its time. */
#define SHORT_SLICE_NS 100000ull
#define SAMPLER_NICE (-10)

/* sched_setattr(2)'s argument, first version (glibc has no wrapper). */
struct sched_attr_v0 {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

static bool
set_policy(pid_t tid, int policy)
{
	/* A thread id: Linux schedules threads, not processes (0: the caller). */
	if (policy == SCHED_OTHER) {
		struct sched_attr_v0 attr;
		memset(&attr, 0, sizeof attr);
		attr.size = sizeof attr;
		attr.sched_policy = SCHED_OTHER;
		attr.sched_runtime = SHORT_SLICE_NS;
		attr.sched_nice = SAMPLER_NICE;
		if (syscall(SYS_sched_setattr, tid, &attr, 0u) == 0)
			return true;
		attr.sched_nice = 0;   /* not allowed a higher weight */
		if (syscall(SYS_sched_setattr, tid, &attr, 0u) == 0)
			return true;
	}
	struct sched_param p;
	memset(&p, 0, sizeof p);
	return sched_setscheduler(tid, policy, &p) == 0;
}

/* Leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE that allows the
 * thread's nice value: try both ways on a thread of no consequence. */
static void *
probe(void *arg)
{
	bool *ok = arg;
	*ok = set_policy(0, SCHED_IDLE) && set_policy(0, SCHED_OTHER);
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

/* Deadlines missed per mille of those due. */
static uint32_t
missed_per_mille(uint64_t passes, uint64_t missed)
{
	return passes + missed ? (uint32_t)(missed * 1000 / (passes + missed)) : 0;
}

static void
new_window(struct gentle *g, uint64_t now_ns)
{
	g->win_start_ns = now_ns;
	g->win_passes = g->win_missed = g->win_spare_ns = 0;
}

void
gentle_start(struct gentle *g, bool want, pid_t tid, uint64_t now_ns, const struct gentle_counts *c)
{
	memset(g, 0, sizeof *g);
	g->tid = tid;
	g->last_ns = now_ns;
	g->last_wait_ns = c->wait_ns;
	g->last_passes = c->passes;
	g->last_missed = c->missed;
	g->last_spare_ns = c->spare_ns;
	g->hold_ns = HOLD_FIRST_NS;
	g->retry_ns = now_ns;
	new_window(g, now_ns);
	if (want)
		set_policy(tid, SCHED_OTHER);   /* its short slice, from the start */
	g->available = want && can_leave_idle();
}

static void
fall_back(struct gentle *g, uint64_t now_ns)
{
	if (!set_policy(g->tid, SCHED_OTHER))
		return;   /* cannot happen once probed; stay and retry */
	g->idle = false;
	g->busy_windows = 0;
	g->fallbacks++;
	g->held_passes = g->held_missed = 0;
	g->retry_ns = now_ns + g->hold_ns;
	g->hold_ns = g->hold_ns * 2 > HOLD_MAX_NS ? HOLD_MAX_NS : g->hold_ns * 2;
}

static void
go_idle(struct gentle *g, uint64_t now_ns)
{
	/* What the normal policy missed is the bar idle has to meet. */
	g->normal_miss = missed_per_mille(g->held_passes, g->held_missed);
	if (set_policy(g->tid, SCHED_IDLE)) {
		g->idle = true;
		g->idle_since_ns = now_ns;
		g->busy_windows = 0;
	}
}

void
gentle_check(struct gentle *g, uint64_t now_ns, const struct gentle_counts *c)
{
	uint64_t dt = now_ns - g->last_ns;
	uint64_t waited = c->wait_ns >= g->last_wait_ns ? c->wait_ns - g->last_wait_ns : 0;
	uint64_t passes = c->passes - g->last_passes, missed = c->missed - g->last_missed;
	uint64_t spare = c->spare_ns >= g->last_spare_ns ? c->spare_ns - g->last_spare_ns : 0;
	if (g->idle)
		g->idle_ns += dt;
	g->last_ns = now_ns;
	g->last_wait_ns = c->wait_ns;
	g->last_passes = c->passes;
	g->last_missed = c->missed;
	g->last_spare_ns = c->spare_ns;
	if (!g->available || !dt)
		return;
	g->win_passes += passes;
	g->win_missed += missed;
	g->win_spare_ns += spare;
	uint64_t win = now_ns - g->win_start_ns;
	bool window_done = win >= WINDOW_NS;
	if (window_done)
		g->calm = !c->spare_known || g->win_spare_ns * SPARE_DIVISOR >= win;
	if (g->idle) {
		if (window_done) {
			bool costly = missed_per_mille(g->win_passes, g->win_missed) >
				      g->normal_miss + MISS_MARGIN;
			g->busy_windows = costly ? g->busy_windows + 1 : 0;
		}
		if (waited * BUSY_WAIT_DIVISOR >= dt || g->busy_windows >= BUSY_WINDOWS)
			fall_back(g, now_ns);
		else if (now_ns - g->idle_since_ns >= CALM_NS)
			g->hold_ns = HOLD_FIRST_NS;
	} else {
		g->held_passes += passes;
		g->held_missed += missed;
		if (window_done && g->calm && now_ns >= g->retry_ns)
			go_idle(g, now_ns);
	}
	if (window_done)
		new_window(g, now_ns);
}
