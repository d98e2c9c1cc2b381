/* Why a sampler missed its deadlines (sampler_missed_reason), from made-up
 * figures: passes too long for the rate blame the work; a sampler that
 * waits for a CPU and whose passes fit is short of CPU, however much it
 * spun between deadlines or the host stole from it. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "sampler.h"
#include "tap.h"

#define MS 1000000ull

/* One second of sampling at rate_hz: passes of pass_us each, missed
 * deadlines, and the thread's time on a CPU and waiting for one. */
static void
reason(char *buf, size_t len, double rate_hz, uint64_t passes, uint64_t missed,
       double pass_us, uint64_t ran_ms, uint64_t waited_ms)
{
	struct engine_stats st;
	memset(&st, 0, sizeof st);
	atomic_store(&st.elapsed_ns, 1000 * MS);
	atomic_store(&st.samples, passes);
	atomic_store(&st.missed, missed);
	atomic_store(&st.busy_ns, (uint64_t)(pass_us * 1000 * (double)passes));
	atomic_store(&st.sched_cpu_ns, ran_ms * MS);
	atomic_store(&st.sched_wait_ns, waited_ms * MS);
	sampler_missed_reason(&st, rate_hz, 1, buf, len);
}

int
main(void)
{
	char buf[SAMPLER_REASON_MAX];

	reason(buf, sizeof buf, 1e6, 300000, 700000, 3.3, 990, 5);
	tap_ok(strcmp(buf, "a pass takes 3.3 us, the rate leaves 1.0 us") == 0,
	       "1 MHz, passes of 3.3 us, running throughout: the work (%s)", buf);

	/* Pinned beside two spinners: half the time waiting, most of the
	 * other half on the CPU (spinning to deadlines, or stolen by the
	 * host), passes of 15 us where 100 us are left. */
	reason(buf, sizeof buf, 1e4, 5000, 5000, 15, 500, 450);
	tap_ok(strcmp(buf, "short of CPU: waited for one 45% of the time") == 0,
	       "10 kHz, passes of 15 us, waited 45%% and ran 50%%: short of CPU (%s)", buf);

	reason(buf, sizeof buf, 1e4, 500, 9500, 150, 40, 950);
	tap_ok(strcmp(buf, "short of CPU: waited for one 95% of the time") == 0,
	       "10 kHz, waited 95%%, passes stretched to 150 us by preemption: short of CPU (%s)",
	       buf);

	reason(buf, sizeof buf, 1e4, 6000, 4000, 160, 700, 250);
	tap_ok(strcmp(buf, "a pass takes 160 us, the rate leaves 100 us") == 0,
	       "10 kHz, passes of 160 us, ran 70%% and waited 25%%: the work (%s)", buf);

	/* The guard's figures of the machine: said after the reason when
	 * more tasks want a CPU than there are, or the host steals. */
	struct engine_stats st;
	memset(&st, 0, sizeof st);
	atomic_store(&st.elapsed_ns, 1000 * MS);
	atomic_store(&st.samples, 500);
	atomic_store(&st.missed, 9500);
	atomic_store(&st.busy_ns, 500 * 20000);
	atomic_store(&st.sched_cpu_ns, 50 * MS);
	atomic_store(&st.sched_wait_ns, 900 * MS);
	atomic_store(&st.host_cpus, 2);
	atomic_store(&st.host_runnable_milli, 6200);
	atomic_store(&st.host_steal_pm, 118);
	sampler_missed_reason(&st, 1e4, 1, buf, sizeof buf);
	tap_ok(strcmp(buf, "short of CPU: waited for one 90% of the time; the machine is busy: "
			   "6 tasks want 2 CPUs; CPU stolen by the host: 12%") == 0,
	       "6.2 tasks wanting 2 CPUs, 11.8%% stolen: both said (%s)", buf);
	atomic_store(&st.host_runnable_milli, 2900);
	atomic_store(&st.host_steal_pm, 10);
	sampler_missed_reason(&st, 1e4, 1, buf, sizeof buf);
	tap_ok(strcmp(buf, "short of CPU: waited for one 90% of the time") == 0,
	       "2.9 tasks for 2 CPUs (not one waiting all the time), 1%% stolen: the machine not blamed (%s)", buf);
	atomic_store(&st.host_runnable_milli, 3200);
	atomic_store(&st.busy_ns, 500 * 300000);
	atomic_store(&st.sched_cpu_ns, 950 * MS);
	atomic_store(&st.sched_wait_ns, 40 * MS);
	sampler_missed_reason(&st, 1e4, 1, buf, sizeof buf);
	tap_ok(strcmp(buf, "a pass takes 300 us, the rate leaves 100 us; the machine is busy: "
			   "3 tasks want 2 CPUs") == 0,
	       "passes too long on a busy machine: both said (%s)", buf);

	atomic_store(&st.busy_ns, 500 * 30000);
	atomic_store(&st.sched_cpu_ns, 300 * MS);
	atomic_store(&st.sched_wait_ns, 50 * MS);
	sampler_missed_reason(&st, 1e4, 1, buf, sizeof buf);
	tap_ok(strcmp(buf, "the machine is busy: 3 tasks want 2 CPUs") == 0,
	       "passes that fit, waited 5%%, 3.2 tasks for 2 CPUs: the machine, not the passes (%s)",
	       buf);

	reason(buf, sizeof buf, 1e4, 8900, 1100, 37, 400, 20);
	tap_ok(strcmp(buf, "woke late: a pass takes 37 us of the 100 us the rate leaves") == 0,
	       "10 kHz, 11%% missed, passes of 37 us, waited 2%%, a machine not full: late "
	       "wake-ups, not the passes (%s)", buf);

	reason(buf, sizeof buf, 1e4, 9500, 500, 15, 300, 300);
	tap_ok(buf[0] == '\0', "5%% missed: no reason given (%s)", buf);

	reason(buf, sizeof buf, 0, 90000, 0, 11, 1000, 0);
	tap_ok(buf[0] == '\0', "max rate: no reason given (%s)", buf);
	return tap_done();
}
