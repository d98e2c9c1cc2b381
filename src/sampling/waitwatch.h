/* The live views' kernel watcher: a low-rate thread of its own that reads,
 * a few times a second, what each thread of the target waits for in the
 * kernel (kwait.h) and since when, and publishes a snapshot; with follow,
 * the same for the target's descendants. It is apart
 * from the sampler: the hot loop never reads /proc for this.
 *
 * Publishing hands a snapshot over whole (an atomic exchange of a pointer):
 * the consumer takes ownership of what it takes, the watcher frees a
 * snapshot nobody took. No locks, no shared mutable data. */
#ifndef TT_WAITWATCH_H
#define TT_WAITWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "waits/kwait.h"

/* How often the watcher looks. */
#define WAITWATCH_INTERVAL_NS 250000000ull

struct waitwatch_entry {
	uint64_t tid;
	pid_t pid;                 /* the process of the thread */
	uint64_t since_ns;         /* clock_now_ns() when the thread entered this call
				      (as far as the watcher can tell) */
	uint64_t runs;             /* times it was put on a CPU (schedstat); 0: unknown */
	struct kwait_info info;    /* raw target text: sanitize before display */
};

/* The blocked threads at one moment, sorted by tid. Threads that run (or
 * could not be read) are absent. */
struct waitwatch_snapshot {
	uint64_t taken_ns;
	uint32_t n;
	struct waitwatch_entry e[];
};

struct waitwatch;

/* Lists the processes to watch besides the root, at each look, on the
 * watcher's thread: their pids into *pids (grown with grow_array, capacity
 * *cap); returns how many, or (size_t)-1 when it cannot say. */
typedef size_t waitwatch_tree_fn(void *ctx, pid_t **pids, uint32_t *cap);

/* Start watching process pid and, when tree is not NULL, the processes it
 * lists at each look (tree_ctx must outlive the watcher). */
tt_status waitwatch_start(struct waitwatch **out, pid_t pid, waitwatch_tree_fn *tree, void *tree_ctx,
		       struct tt_error *err);

/* Stop the thread and free everything (NULL is fine). */
void waitwatch_free(struct waitwatch *kw);

/* The newest snapshot published since the last take, or NULL. The caller
 * owns it (free()). */
struct waitwatch_snapshot *waitwatch_take(struct waitwatch *kw);

/* The entry of tid, or NULL (running, unknown). snap may be NULL. */
const struct waitwatch_entry *waitwatch_find(const struct waitwatch_snapshot *snap, uint64_t tid);

/* Seconds the entry's thread has been in its call at now_ns. */
double waitwatch_seconds(const struct waitwatch_entry *e, uint64_t now_ns);

#endif
