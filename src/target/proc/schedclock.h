/* How long a blocked thread has not run, on a clock that holds across CPUs.
 *
 * /proc/PID/task/TID/sched gives se.exec_start: the scheduler's clock of the
 * thread's CPU when the thread last ran. Every CPU keeps its own such clock,
 * and it leaves out that CPU's interrupt time and the time a hypervisor
 * stole from it, so on a virtual machine the CPUs' clocks drift apart by
 * up to seconds. A reading means something only beside "now" on the same
 * CPU's clock.
 *
 * A schedclock keeps, per CPU, the offset of that CPU's scheduler clock from
 * CLOCK_MONOTONIC. To learn it, the calling thread moves itself onto the CPU
 * for a moment (two affinity changes and a 1 µs sleep there), reads its own
 * se.exec_start, and brackets it with the monotonic clock; then it goes back
 * to the CPUs it was allowed before. An offset is learnt again when it is
 * over a second old, or when a reading against it comes out negative.
 *
 * Not thread-safe: one schedclock per thread, and only on threads that may
 * migrate (never the sampler's). */
#ifndef TT_SCHEDCLOCK_H
#define TT_SCHEDCLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct schedclock;

/* se.exec_start from the text of a /proc/.../sched file, in ns. False
 * without it (kernels built without CONFIG_SCHED_DEBUG have no such file). */
bool schedclock_parse_exec_start(const char *text, uint64_t *ns);

/* NULL when out of memory. */
struct schedclock *schedclock_new(void);
void schedclock_free(struct schedclock *c);

/* Seconds since thread tid of pid last ran, by the clock of the CPU it last
 * ran on. < 0 when it cannot be known: no /proc/.../sched (kernels without
 * CONFIG_SCHED_DEBUG), a thread never run or just woken on another CPU, a
 * CPU this thread may not move to (a cpuset), or a reading that stays
 * inconsistent; then *why (when why is not NULL) says which, in a static
 * phrase. Callers fall back to what they saw themselves. */
double schedclock_since_last_ran(struct schedclock *c, pid_t pid, long tid, const char **why);

/* The offset of cpu's scheduler clock from CLOCK_MONOTONIC, in ns, learnt
 * now (monotonic = scheduler clock + offset). False when the calling thread
 * cannot run there or the clock cannot be read. For measurements and tests. */
bool schedclock_offset_now(struct schedclock *c, int cpu, int64_t *offset_ns);

#endif
