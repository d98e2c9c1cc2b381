/* A profile: sample weights per (thread, stack), built by draining sample
 * records (record) or from the live counts (the live view's export key);
 * the writers in src/export read it once it is finished. */
#ifndef TT_PROFILE_H
#define TT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idindex.h"
#include "occupants.h"
#include "procset.h"
#include "ring.h"
#include "walk/stackwalk.h"
#include "walk/sample.h"

struct profile_entry {
	uint32_t stack_id;
	uint16_t thread_slot;
	uint16_t proc;            /* its thread's process (slots go from one process's
				     threads to another's) */
	uint16_t tgen, pgen;      /* generations of the slot and process index
				     (occupants.h): folded when either left */
	uint64_t weight;
};

struct profile {
	struct profile_entry *entries;   /* dense, count of them (hash.h) */
	uint32_t count, cap;
	struct idindex index;            /* (slot, process, generations, stack) -> position + 1 */
	uint64_t total;                  /* samples added */
	uint64_t idle_skipped;           /* samples not added (filtered out) */
	struct occupants procs_at, slots_at;  /* whom each process index and thread
						 slot's counts are about */
	uint64_t procs_folded;           /* processes folded under PROFILE_EXITED_PROC */
	uint64_t threads_folded;         /* threads folded under PROFILE_EXITED_SLOT */
	uint64_t ended_checked_ns;       /* sample time ended threads were last looked at */
};

/* Threads that ended keep their own stacks while at most this many have;
 * past that, those that ended first fold into "exited threads" (a tree
 * churning threads all day keeps a bounded profile). */
#define PROFILE_KEEP_ENDED_THREADS 256u
#define PROFILE_ENDED_CHECK_NS 1000000000ull

/* Entries of processes whose index went to a new process (procset.h). */
#define PROFILE_EXITED_PROC OCCUPANTS_EXITED

enum profile_filter {
	PROFILE_WALL,       /* every sample */
	PROFILE_CPU,        /* only samples of threads on CPU */
	PROFILE_GIL,        /* only samples of threads holding the GIL */
};

/* Does a sample in this state count in this mode? */
static inline bool
profile_filter_keeps(enum profile_filter f, uint8_t state)
{
	return f == PROFILE_WALL || (f == PROFILE_CPU && (state & TT_THREAD_ON_CPU)) ||
	       (f == PROFILE_GIL && (state & TT_THREAD_GIL));
}

void profile_init(struct profile *p);
void profile_free(struct profile *p);
/* ps: whose threads the records' slots name (NULL: process 0's). What is
 * counted of a process whose index went to a new one, or of a thread whose
 * slot went to a new thread, is folded (at the latest by profile_settle). */
bool profile_add(struct profile *p, const struct procset *ps, const struct sample_record *rec,
		 enum profile_filter filter);
bool profile_add_weight(struct profile *p, uint16_t slot, uint32_t stack_id, uint64_t weight);
/* The same for a slot that names no thread (the live view's exited bucket,
 * which holds every process's stacks): proc says whose stack it is. */
bool profile_add_proc_weight(struct profile *p, uint16_t slot, uint16_t proc, uint32_t stack_id,
			     uint64_t weight);

/* Bytes held by the entries and their index. */
size_t profile_entries_bytes(const struct profile *p);

/* Fold every process whose index went to a new one, and every thread
 * whose slot went to a new thread (before reading the entries). */
void profile_settle(struct profile *p, const struct procset *ps);

/* The process of an entry's thread (PROFILE_EXITED_PROC: folded). */
static inline uint32_t
profile_entry_proc(const struct profile_entry *e)
{
	return e->proc;
}

/* The slot whose thread an entry is labelled with: its own while the
 * slot's occupant is of the entry's process, else PROFILE_EXITED_SLOT (its
 * thread left and the slot went to another process's thread; and the live
 * view's bucket of exited threads). */
#define PROFILE_EXITED_SLOT OCCUPANTS_EXITED
static inline uint32_t
profile_entry_thread(const struct procset *ps, const struct profile_entry *e)
{
	return e->proc != PROFILE_EXITED_PROC && e->thread_slot < appendlog_count(ps->threads.log) &&
			       procset_slot(ps, e->thread_slot)->proc == e->proc
		       ? e->thread_slot
		       : PROFILE_EXITED_SLOT;
}

/* Its entries, heaviest first (a stable order makes outputs comparable);
 * p->count of them, to free. NULL when memory is short. */
struct profile_entry *profile_sorted_entries(const struct profile *p);

#endif
