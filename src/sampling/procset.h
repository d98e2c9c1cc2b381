/* The processes one sampler follows: a process tree, or just one process.
 * Each process has its own target and walker (caches, interned frames and
 * stacks, code objects); thread slots are shared so that a slot number names
 * one OS thread of one process for the whole session, and consumers find a
 * slot's process, and through it the walker that resolves its stacks.
 *
 * Both tables are append-only logs published the lock-free way thread
 * slots always were: one thread adds processes (the session's attach, then
 * the discovery thread), the sampler thread adds thread slots; any thread
 * may read what it has seen counted.
 *
 * Memory follows the processes alive, not every process a tree ever had:
 * an ended process's index goes to a new process once it has been ended a
 * while (or sooner when many ended ones wait). Its entry is replaced, not
 * rewritten: a reader holding the old one (for a screen) may use it for
 * PROCSET_GRACE_NS more. Consumers tell a new occupant from the old one by
 * start_ns, and fold what they kept of the old one into their exited
 * processes' bucket. */
#ifndef TT_PROCSET_H
#define TT_PROCSET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "appendlog.h"
#include "graceq.h"
#include "error.h"
#include "intern.h"
#include "walk/stackwalk.h"
#include "target.h"

enum proc_state {
	PROC_LIVE = 0,
	PROC_EXITED,       /* the process ended */
	PROC_LOST,         /* not readable (permission, I/O); see note */
	PROC_STALE,        /* reads kept failing (an exec?): discovery re-validates it,
			      then marks it exited (and attaches the new program) */
	PROC_OTHER,        /* runs, but is not Python: a root such as a shell or tini,
			      shown and its descendants followed, never sampled */
};

struct proc_info {
	uint32_t index;
	pid_t pid, ppid;
	bool root;               /* the process the user named (or started) */
	char cmdline[256];       /* raw bytes from the target: sanitize before display; */
	char cmdline_late[256];  /* read again once, after start-up (setproctitle) */
	_Atomic(const char *) cmd;   /* the newest of the two: use procset_cmdline */
	char version[32];        /* "3.14.0", "3.15.0b3" */
	uint64_t ns_pid;         /* its pid in its own PID namespace (a container's), 0 when
				    it is in ours */
	struct target *target;   /* owned; NULL if never attached (see note) */
	struct stackwalk *walk;  /* owned; consumers use its read-safe views; NULL likewise */
	bool sampled;            /* attached with a walker (a copy has no walker) */
	_Atomic int state;       /* enum proc_state */
	bool adopted;                /* the sampler thread's: it samples this entry */
	_Atomic uint64_t samples;    /* sampling passes over this process */
	_Atomic uint64_t errors;     /* failed passes */
	uint64_t start_ns;           /* when it was added (clock_now_ns) */
	_Atomic uint64_t first_ns;   /* its first good sample (clock_now_ns), 0 before */
	_Atomic uint64_t end_ns;     /* when it ended (clock_now_ns), once not live */
	char note[160];          /* why it ended; valid once state is not PROC_LIVE */
};

struct procset {
	struct appendlog *procs;     /* _Atomic(struct proc_info *): one per index */
	struct thread_slots threads; /* shared by every walker: a slot may go from an
					exited process's thread to another's */
	/* Every walker's functions, frames and stacks, in one table: a tree's
	 * workers run the same code, and an exited process keeps nothing. */
	struct intern in;
	uint64_t epoch_ns;           /* slot times count from here (set before discovery starts) */
	uint32_t pinned;             /* entries below this index are never given away (the
					session's own: its root and first Python process) */
	_Atomic uint64_t adds;       /* processes published, for the sampler to look for new ones */
	_Atomic uint64_t recycled;   /* ended processes whose entry went to a new one */
	_Atomic uint64_t recycled_life_ns;   /* their sampled lives, summed */
	/* adder thread: replaced entries waiting out their grace, oldest first */
	struct graceq retired;
};

/* An ended process keeps its entry this long, or, when more than
 * PROCSET_KEEP_ENDED ended ones wait, at least PROCSET_MIN_ENDED_NS (its
 * last samples drained, discovery done with it). */
#define PROCSET_KEEP_ENDED_NS (60ull * 1000000000ull)
#define PROCSET_KEEP_ENDED 128u
#define PROCSET_MIN_ENDED_NS (2ull * 1000000000ull)
/* A reader holds an entry for a screen at most: a replaced one is freed
 * this long after. */
#define PROCSET_GRACE_NS (10ull * 1000000000ull)

int procset_init(struct procset *ps);
/* Free every walker and target (no sampler may be running). */
void procset_free(struct procset *ps);

/* Adder thread: take over an attached target (copied; the caller's struct
 * may go) and publish it with a walker of its own, started at now_ns
 * (clock_now_ns). */
tt_status procset_add(struct procset *ps, const struct target *t, pid_t ppid, bool root,
		      const struct stackwalk_options *o, uint64_t now_ns, uint32_t *index,
		      struct tt_error *err);

/* Adder thread: publish a process that is not sampled (no walker), so it
 * is shown: one that could not be attached (PROC_LOST, the reason in its
 * note, shown once) or a root that is not Python (PROC_OTHER). */
tt_status procset_add_unsampled(struct procset *ps, pid_t pid, pid_t ppid, bool root,
				enum proc_state how, const char *why, uint64_t now_ns,
				uint32_t *index, struct tt_error *err);

/* A set copying another's labels (the sample log's mirror): entry index
 * (at most one past the last) becomes a process known by these alone, with
 * no target or walker. Single-threaded: nobody reads this set meanwhile,
 * so a replaced entry is freed at once. */
tt_status procset_put_copy(struct procset *ps, uint32_t index, pid_t pid, uint64_t start_ns,
			   bool sampled, const char *cmdline, struct tt_error *err);

/* Discovery: a stale process is settled (PROC_EXITED or PROC_LOST). */
void procset_settle(struct procset *ps, uint32_t index, enum proc_state how);

/* Mark a live (or PROC_OTHER) process ended (sampler thread); the first
 * call wins. */
void procset_end(struct procset *ps, uint32_t index, enum proc_state how, const char *note,
		 uint64_t now_ns);

static inline uint32_t
procset_count(const struct procset *ps)
{
	return appendlog_count(ps->procs);
}

static inline struct proc_info *
procset_at(const struct procset *ps, uint32_t i)
{
	_Atomic(struct proc_info *) *ref = appendlog_at(ps->procs, i);
	return atomic_load_explicit(ref, memory_order_acquire);
}

static inline enum proc_state
procset_state(const struct proc_info *p)
{
	return (enum proc_state)atomic_load_explicit(&((struct proc_info *)p)->state,
						     memory_order_acquire);
}

/* The state as the process tables name it. */
static inline const char *
procset_state_label(const struct proc_info *p)
{
	switch (procset_state(p)) {
	case PROC_LIVE:
	case PROC_OTHER:
		return p->root ? "root" : "live";
	case PROC_EXITED:
		return "exited";
	case PROC_STALE:
		return "checking";
	case PROC_LOST:
		break;
	}
	return "error";
}

static inline const struct thread_slot *
procset_slot(const struct procset *ps, uint32_t slot)
{
	return threadslots_at(&ps->threads, slot);
}

/* Is the slot's thread still alive (not seen gone from its process)? */
static inline bool
procset_slot_live(const struct procset *ps, uint32_t slot)
{
	return !atomic_load_explicit(&((struct thread_slot *)procset_slot(ps, slot))->gone_ns,
				     memory_order_acquire);
}

/* The process of a thread slot's current occupant. */
static inline struct proc_info *
procset_of_slot(const struct procset *ps, uint32_t slot)
{
	return procset_at(ps, procset_slot(ps, slot)->proc);
}

/* The process whose thread took a sample of `slot` at time_ns (since the
 * epoch): the slot's occupant's, or the previous occupant's for a sample
 * taken before the occupant was born (slots go from an exited process's
 * threads to another's). */
static inline uint32_t
procset_proc_of_sample(const struct procset *ps, uint32_t slot, uint64_t time_ns)
{
	struct thread_slot *s = threadslots_at(&ps->threads, slot);
	for (;;) {
		uint64_t born = atomic_load_explicit(&s->born_ns, memory_order_acquire);
		uint32_t proc = time_ns < born ? s->prev_proc : s->proc;
		/* the sampler gave the slot away meanwhile: read again */
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&s->born_ns, memory_order_acquire) == born)
			return proc;
	}
}

/* Seconds of sampled life of every process (for a per-process rate's
 * expected sample count). */
double procset_lifetime_s(const struct procset *ps, uint64_t now_ns);

static inline const char *
procset_cmdline(const struct proc_info *p)
{
	const char *c = atomic_load_explicit(&((struct proc_info *)p)->cmd, memory_order_acquire);
	return c ? c : "";
}

/* Adder thread, once per process: read the command line again (workers
 * rename themselves after they start). */
void procset_refresh_cmdline(struct procset *ps, uint32_t index);

/* The indices of the n entries (a snapshot of procset_count) in the order
 * process tables list them: processes still running in the order they
 * started (the root first), then ended ones, the latest to end first (a
 * tree that recycles its workers keeps its live ones in view). Entries go
 * to new processes out of index order. Heap-allocated; NULL when memory
 * is short. */
uint32_t *procset_table_order(const struct procset *ps, uint32_t n);

/* Processes live and ended now; ended counts those whose entries went to
 * new processes. */
void procset_counts(const struct procset *ps, uint32_t *live, uint64_t *ended);

#endif
