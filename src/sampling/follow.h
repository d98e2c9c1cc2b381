/* Following a process tree: a thread that finds the root's descendants
 * (src/target/proc/discover.h) about every 100 ms, attaches to the Python ones
 * and publishes them in the sampler's process set. Non-Python descendants
 * are remembered and skipped (their children are still followed), and
 * looked at again only when they exec another program. A fork is attached
 * reusing its parent's layout (re-validated); anything else from scratch,
 * whatever its Python version. */
#ifndef TT_FOLLOW_H
#define TT_FOLLOW_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "procset.h"
#include "walk/stackwalk.h"

/* Costs, for bench and measurements (any thread; relaxed). */
struct follow_stats {
	_Atomic uint64_t passes;          /* fast passes */
	_Atomic uint64_t scans;           /* full /proc scans */
	_Atomic uint64_t busy_ns;         /* thread CPU time spent */
	_Atomic uint64_t attaches;        /* processes attached */
	_Atomic uint64_t skipped;         /* descendants found not to be Python */
	_Atomic uint64_t stat_reads;      /* /proc/N/stat reads by full scans */
};

struct follow;

/* Start following the descendants of procs' root (entry 0). NULL if the
 * thread cannot start (the root alone is then sampled). */
struct follow *follow_start(struct procset *procs, const struct stackwalk_options *o);
/* Stop and free (NULL is fine). */
void follow_stop(struct follow *f);
const struct follow_stats *follow_stats(const struct follow *f);

/* The parent pid of a process, or 0. */
pid_t follow_ppid(pid_t pid);

#endif
