/* Finding a process's descendants through /proc, cheaply.
 *
 * The fast path reads /proc/PID/task/TID/children of the processes already
 * followed: a few small reads, independent of how many processes the host
 * runs. The kernel documents that file as able to miss a child created
 * during the read, so a slower full scan of parent pids backs it up; it
 * reads /proc/N/stat only for pids it has not seen in its previous scan
 * (a known pid's parent changes only when it is orphaned, which takes it
 * out of the tree anyway). */
#ifndef TT_DISCOVER_H
#define TT_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Parent pid from /proc/PID/stat; 0 if gone or unreadable. */
pid_t discover_ppid(pid_t pid);

/* Does pid run (exists and is not a zombie)? */
bool discover_running(pid_t pid);

/* Children of every thread of pid, appended to *out (grown as needed, its
 * capacity in *cap: grow_array's);
 * returns the new count, or (size_t)-1 when memory is short. */
size_t discover_children(pid_t pid, pid_t **out, uint32_t *cap, size_t n);

/* The same from the main thread and at most `budget` others, those from
 * the *from-th on (in the order /proc lists them); *from moves on to the
 * next ones, back to the first after the last. A big pool's children are
 * then read over several calls, not all at each. */
size_t discover_children_some(pid_t pid, uint32_t budget, uint32_t *from, pid_t **out,
			      uint32_t *cap, size_t n);

/* Identity of the program a process runs (device and inode of
 * /proc/PID/exe): changes when it execs another program. false if gone. */
bool discover_exe_id(pid_t pid, uint64_t *id);

/* Full scan state: the pids seen last time, sorted. */
struct discover_scan {
	pid_t *seen;
	size_t nseen;
	uint32_t cap;
	uint64_t stat_reads;      /* /proc/N/stat reads made (for measurements) */
	uint64_t entries;         /* /proc entries looked at */
};

/* Call is_parent(ctx, ppid) for each pid new since the last scan and
 * append the new pids whose parent it accepts to *out. Returns the new
 * count or (size_t)-1. The first scan only records what exists (the fast
 * path has found the children there were). */
size_t discover_scan(struct discover_scan *sc, bool (*is_parent)(void *ctx, pid_t ppid),
		     void *ctx, pid_t **out, uint32_t *cap, size_t n);
void discover_scan_free(struct discover_scan *sc);

#endif
