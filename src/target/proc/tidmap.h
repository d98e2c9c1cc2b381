/* Which kernel task a Python thread is.
 *
 * A thread state records the id gettid() gave the thread, in the thread's
 * own PID namespace. tachyon-top reads /proc from its own namespace, and
 * the two differ for a target in a container (its threads are 1, 5, 7
 * there, 16475... here). And a process forked without Python's after-fork
 * hook (uWSGI's workers) keeps its parent's id in the thread state of the
 * thread that forked. Reading /proc, or the kernel watcher's table, by the
 * recorded id then reads nothing, or another process's threads.
 *
 * So the id is established, never assumed: it is the host id when
 * /proc/PID/task/ID is the process's task whose innermost namespace id
 * (the last field of NSpid in its status) is ID; otherwise the process's
 * tasks are mapped by their NSpid lines (innermost id -> our id); a
 * recorded id not among them belongs, when the process has one thread
 * state and one task, to that task; for a main thread, to the main task;
 * otherwise to no task we can tell (0: unknown), and nothing is read by it. */
#ifndef TT_TIDMAP_H
#define TT_TIDMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tidmap_entry {
	uint64_t inner, host;
};

struct tidmap {
	pid_t pid;
	struct tidmap_entry *e;   /* the process's tasks, as last listed */
	uint32_t n, cap;
	uint64_t listed_ns;       /* 0: never */
	uint64_t listings;        /* how many times the tasks were listed (cost) */
	int8_t same_ns;           /* the process is in our PID namespace: 1 yes, 0 no, -1 unknown */
};

void tidmap_init(struct tidmap *m, pid_t pid);
void tidmap_free(struct tidmap *m);

/* The id in our namespace of the thread whose state records `recorded`;
 * is_main: it is the interpreter's main thread; only_thread: the only
 * thread state of the process. 0 when it cannot be told. *in_namespace:
 * `recorded` is the thread's id in its own PID namespace (not a stale one).
 * *retry: 0 only because the tasks were listed too recently to list them
 * again (a thread born since): ask again later.
 * Costs one small /proc read when the id is ours; a listing of the tasks
 * (at most every 100 ms) otherwise, but for a process in our own PID
 * namespace, whose ids are ours: there a thread whose task is not found
 * has ended (or is a fork's parent's: the main thread, or the only one). */
uint64_t tidmap_resolve(struct tidmap *m, uint64_t recorded, bool is_main, bool only_thread,
		       bool *in_namespace, bool *retry);

/* The first and last ids of the "NSpid:" line of a status text (ours and
 * the innermost namespace's; the same outside a namespace). Pure. */
bool tidmap_parse_nspid(const char *status, uint64_t *ours, uint64_t *inner);

/* Is pid in another PID namespace than ours (its NSpid has more than one
 * id)? *inner receives its id there. False when not, or unknown. */
bool tidmap_process_ns_pid(pid_t pid, uint64_t *inner);

#endif
