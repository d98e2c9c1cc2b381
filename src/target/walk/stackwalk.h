/* Sampling every thread's stack fast: batched reads of predicted addresses,
 * per-thread frame caches and interning, producing per thread a small
 * record (thread slot, state bits, stack ID).
 *
 * What makes it cheap, and still exact:
 *  - One vectored process_vm_readv per sample fetches the interpreter's hot
 *    fields (one block), and the thread state and top frames of the threads
 *    that may have run, at the addresses seen last time; validated after.
 *  - A thread that did not hold the GIL since the last sample cannot have
 *    changed its Python stack. The GIL's switch_number moves whenever another
 *    thread takes it, so while it stands still only the last holder needs
 *    reading; every other thread reuses its cached stack with no read.
 *  - The thread running Python (GIL held), and the last holder when its
 *    stack is small (full_read_max), are re-read whole: the used part of
 *    the data-stack chunk is copied in one segment, with a fresh read of the
 *    thread state. Only an idle last holder with a deeper stack is trusted
 *    below check_depth frames that must match the cache exactly; it is
 *    fully re-walked at least every revalidate_ns.
 * Nothing is ever written to the target. */
#ifndef TT_STACKWALK_H
#define TT_STACKWALK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "appendlog.h"
#include "python/codecache.h"
#include "error.h"
#include "intern.h"
#include "target.h"
#include "walk/threadslots.h"

/* One thread's part of a sample. */
struct walk_thread {
	uint32_t slot;
	uint32_t stack_id;
	uint32_t state;           /* TT_THREAD_* */
	uint64_t running_task;    /* the asyncio task it runs (see stackwalk_read_running_task) */
};

struct walk_counters {
	uint64_t samples;
	uint64_t full_hits;       /* thread stacks reused whole (frozen or verified) */
	uint64_t partial_hits;    /* part of the cached chain reused */
	uint64_t misses;          /* walked with nothing reused */
	uint64_t frames_reused, frames_read;
	uint64_t batch_attempts, batch_successes;
	uint64_t single_reads;    /* reads outside the batch (unpredicted frames, list changes) */
	uint64_t proc_reads;      /* /proc reads for on-CPU state and names */
	uint64_t list_rebuilds;
	uint64_t popped_tops;     /* top frame popped between reading it and its thread */
	uint64_t threads_seen;    /* OS threads ever seen */
	uint64_t threads_gone;    /* ... of which left the target */
	uint64_t slots_revived;   /* threads a torn list read had dropped, back in their slot */
	uint64_t threads_skipped; /* thread samples left out: the thread ended while read */
	uint64_t name_reads;      /* reads of threading's registry for the threads' names */
};

struct stackwalk_options {
	bool cache;               /* false: re-read everything every sample */
	uint64_t cpu_period_ns;   /* refresh each thread's on-CPU state this often (0: never) */
	unsigned cpu_reads_per_sample;  /* at most this many such refreshes a sample,
					   threads in turn (0: no limit) */
	uint64_t revalidate_ns;   /* fully re-walk idle threads at least this often */
	unsigned check_depth;     /* frames an idle thread must match before its cached rest is trusted */
	uint64_t full_read_max;   /* data stacks up to this many bytes are always copied whole */
};

struct stackwalk;

void stackwalk_default_options(struct stackwalk_options *o);

tt_status stackwalk_new(struct target *t, const struct stackwalk_options *o,
			struct stackwalk **out, struct tt_error *err);
/* A walker whose threads take slots in a table shared with other walkers
 * (not owned), marked proc, and that interns into a shared intern (NULL:
 * its own). */
tt_status stackwalk_new_shared(struct target *t, const struct stackwalk_options *o,
			       struct thread_slots *slots, struct intern *in, uint32_t proc,
			       struct stackwalk **out, struct tt_error *err);
void stackwalk_free(struct stackwalk *w);

/* The process is gone (at now_ns): its threads' slots are marked gone, as
 * when a thread leaves (consumers fold them into their exited bucket);
 * free what only sampling needs (scratch, per-thread caches and their open
 * files, its code cache), keep what consumers resolve IDs with (the
 * intern, whose names do not depend on the process). The walker must not
 * sample again. */
void stackwalk_retire(struct stackwalk *w, uint64_t now_ns);
/* Times in thread slots count from here (the sampler's start). */
void stackwalk_set_epoch(struct stackwalk *w, uint64_t epoch_ns);
uint64_t stackwalk_epoch(const struct stackwalk *w);

/* Sample every thread; *threads stays valid until the next call. */
tt_status stackwalk_sample(struct stackwalk *w, uint64_t now_ns, const struct walk_thread **threads,
			   uint32_t *nthreads, struct tt_error *err);

/* Async-aware stacks (sampler thread only; see awaitstack.h).
 * Read each thread's running asyncio task, the pointer at ts_offset in its
 * thread state, along with the state; false when the offset is implausible. */
bool stackwalk_read_running_task(struct stackwalk *w, uint64_t ts_offset);
/* The stack of this sample's threads[i] cut below its running task's
 * coroutine (the outermost frame a generator owns) and put on `base`
 * instead of the event loop's frames; 0 when it has no such frame. */
uint32_t stackwalk_restack(struct stackwalk *w, uint32_t i, uint32_t base);
/* This sample's threads[i]'s innermost Python frame: its address and its
 * instruction pointer as read (native_expect_frame); 0, 0 when none. */
void stackwalk_innermost(struct stackwalk *w, uint32_t i, uint64_t *frame, uint64_t *instr);
/* How many of threads[i]'s Python frames (as stackwalk_thread_frames
 * counts them) are its running task's: from the innermost through the
 * task's coroutine; 0 when it has no such frame. */
uint32_t stackwalk_task_depth(struct stackwalk *w, uint32_t i);
/* The Python frames of this sample's threads[i], innermost first, at most
 * max: their interned frame IDs, and entry[k] when frame k is the first an
 * evaluator call runs (mixedstack.h); the count. */
uint32_t stackwalk_thread_frames(struct stackwalk *w, uint32_t i, uint32_t *frame_ids, bool *entry,
				 uint32_t max);
/* The walker's interning and code cache, to add stacks and (made-up) code
 * entries its consumers can resolve, and read task objects with the same
 * code IDs. */
struct intern *stackwalk_intern_rw(struct stackwalk *w);
/* Sampler thread: the interned function of one of the walker's code IDs
 * (0 when memory is short). */
uint32_t stackwalk_func_of(struct stackwalk *w, uint32_t code_id);
struct code_cache *stackwalk_codes_rw(struct stackwalk *w);

/* Shared, read-safe views for consumers on other threads. */
const struct intern *stackwalk_intern(const struct stackwalk *w);
const struct code_cache *stackwalk_codes(const struct stackwalk *w);
const struct appendlog *stackwalk_slots(const struct stackwalk *w);

/* Counters (sampler thread only; copy them out under your own sync). */
const struct walk_counters *stackwalk_counters(const struct stackwalk *w);

#endif
