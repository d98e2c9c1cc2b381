/* --native in the sampler: each thread's sampled stack extended with its
 * native (C) frames, in one order with its Python frames (mixedstack.h).
 *
 * Per process: a native unwinder (native/unwind.h) following every thread with a
 * perf event at the sampling rate. A blocked thread's native frames come
 * from its system call's registers and are kept while it stays at the same
 * stack and instruction pointers; a running thread's from the newest perf
 * sample since the last pass. Native functions are interned as
 * FUNC_NATIVE ("symbol" in "library"). Sampler thread only. */
#ifndef TT_NATIVESTACK_H
#define TT_NATIVESTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "walk/stackwalk.h"

struct nativestack;

struct native_counts {
	uint64_t threads;     /* thread samples asked about */
	uint64_t native;      /* ... given native frames */
	uint64_t merged;      /* ... of which in their true order with the Python ones */
	uint64_t walks;       /* native walks made (the rest reused a blocked thread's) */
	uint64_t walk_ns;     /* time spent in them */
	uint64_t paused_samples; /* perf samples taken while paused (the kernel did not stop) */
	uint64_t moved;       /* thread samples not given them: running, its perf sample was
				 taken in another Python frame (native_expect_frame) */
	uint64_t unverified;  /* ... given them from a perf sample not shown to be taken in
				 its Python frame */
};

/* period_ns: the sampler's interval (a running thread's perf sample every
 * period_ns of its CPU time). TT_EIO when its modules cannot be listed. */
tt_status nativestack_new(pid_t pid, uint64_t period_ns, struct nativestack **out,
			  struct tt_error *err);
void nativestack_free(struct nativestack *ns);

/* Threads with their stacks replaced: valid until the next call. With
 * --async, bases[i] (awaitstack_bases; NULL: none) is the stack thread i's
 * running task was put on: its native and Python frames down to the
 * task's coroutine go on it, those of the event loop below are left out. */
const struct walk_thread *nativestack_apply(struct nativestack *ns, struct stackwalk *w,
					    const struct walk_thread *threads, uint32_t n,
					    const uint32_t *bases);

/* Pause or resume the kernel's samples of running threads (while the
 * sampler is paused: the target pays nothing). Resuming counts those
 * found taken while paused into counts.paused_samples. */
void nativestack_pause(struct nativestack *ns, bool paused);

const struct native_counts *nativestack_counts(const struct nativestack *ns);

/* Why a running thread had no native frames when the kernel refused to
 * sample it (perf_event_open), or NULL: said once, not per sample. */
const char *nativestack_refusal(const struct nativestack *ns);

#endif
