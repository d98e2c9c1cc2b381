/* Thread slots: the small numbers sample records name threads by (ring
 * records carry 16 bits), in one table for every process one sampler
 * follows. A slot names one OS thread at a time: once its thread has been
 * gone for a while (THREADSLOTS_GONE_NS, or sooner when more than
 * THREADSLOTS_KEEP_GONE threads are gone) the slot goes to a new thread, of
 * any process, so that memory follows the threads alive, not every thread
 * a worker tree ever had. Consumers tell occupants apart by born_ns: a
 * sample taken before it was the previous occupant's (prev_proc says whose
 * process that was).
 *
 * One thread (the sampler) writes; any thread reads the table through
 * `log` (appendlog.h). Names are replaced under the readers: a replaced
 * name is freed only after a grace period. */
#ifndef TT_THREADSLOTS_H
#define TT_THREADSLOTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "appendlog.h"
#include "error.h"
#include "graceq.h"

struct thread_slot {
	uint64_t native_tid;      /* its task's id in our PID namespace (tidmap.h) */
	uint64_t ns_tid;          /* its id in its own PID namespace (a container's):
				     native_tid outside one */
	_Atomic bool tid_unknown; /* no task of the process is known to be it: native_tid
				     is its recorded id and nothing is read of the kernel
				     by it. Cleared (after the ids) once a thread born
				     between two listings is found: test it first. */
	int64_t interp_id;
	uint32_t proc;            /* its process's index (0 for a lone walker) */
	uint32_t prev_proc;       /* the previous occupant's (samples before born_ns) */
	_Atomic(char *) name;     /* what the thread is called: the name Python gives it
				     (threading's) once known, else the kernel's,
				     refreshed while young */
	bool py_named;            /* the writer's: name is Python's */
	_Atomic uint64_t born_ns; /* when this occupant got the slot, since the epoch */
	_Atomic uint64_t gone_ns; /* when its thread left its process; 0 while alive */
};

/* 0xffff is the consumers' "exited threads". */
#define THREADSLOTS_MAX 65535u
#define THREADSLOTS_GONE_NS (60ull * 1000000000ull)
#define THREADSLOTS_KEEP_GONE 4096u


/* Who a new occupant is. */
struct slot_owner {
	uint64_t native_tid, ns_tid;
	bool tid_unknown;
	int64_t interp_id;
	uint32_t proc;
};

struct thread_slots {
	struct appendlog *log;       /* struct thread_slot: readers use this */
	/* writer only: slots of gone threads, oldest first (a ring) */
	uint32_t *gone;
	uint32_t gone_head, ngone, gone_cap;
	/* replaced names, freed once no reader can hold them (a ring) */
	struct graceq retired;
	uint64_t reused, revived;    /* slots given to a new thread; threads back in theirs */
};

int threadslots_init(struct thread_slots *s);
/* Frees the names too: no reader may be left. */
void threadslots_free(struct thread_slots *s);

static inline struct thread_slot *
threadslots_at(const struct thread_slots *s, uint32_t i)
{
	return appendlog_at(s->log, i);
}

/* A slot for a new thread at now_rel (ns since the epoch).
 * A thread whose slot was among the last given up (a torn list read made it
 * seem gone) gets it back: *revived says so. */
tt_status threadslots_take(struct thread_slots *s, const struct slot_owner *who,
			   uint64_t now_rel, uint32_t *slot, bool *revived, struct tt_error *err);
/* The slot's thread left its process at now_rel. */
void threadslots_gone(struct thread_slots *s, uint32_t slot, uint64_t now_rel);
/* A table copying another's (the sample log's mirror): slot (at most one
 * past the last) takes v's ids, processes and times and the name `name`
 * (NULL: none yet). Single-threaded: nobody reads this table meanwhile, so
 * a replaced name is freed at once. */
tt_status threadslots_put(struct thread_slots *s, uint32_t slot, const struct thread_slot *v,
			  const char *name, struct tt_error *err);
/* Give the slot's thread the kernel's (new) name, unless Python's is
 * known; false when memory is short. */
bool threadslots_set_name(struct thread_slots *s, uint32_t slot, const char *name,
			  uint64_t now_rel);
/* Give the slot's thread the name Python gives it (a rename replaces it). */
bool threadslots_set_pyname(struct thread_slots *s, uint32_t slot, const char *name,
			    uint64_t now_rel);

#endif
