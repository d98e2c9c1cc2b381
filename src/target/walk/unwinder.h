/* Walking a target's interpreters, threads and frames into a sample. */
#ifndef TT_UNWINDER_H
#define TT_UNWINDER_H

#include <stdbool.h>
#include <stdint.h>

#include "python/codecache.h"
#include "proc/tidmap.h"
#include "error.h"
#include "target.h"

/* Thread state bits carried by samples. */
enum {
	TT_THREAD_GIL = 1u << 0,         /* holds the GIL */
	TT_THREAD_ON_CPU = 1u << 1,      /* running or runnable per the kernel */
	TT_THREAD_CPU_UNKNOWN = 1u << 2, /* the kernel's state could not be read */
	TT_THREAD_GIL_WAIT = 1u << 3,    /* asked for the GIL and waits (3.15+) */
	TT_THREAD_EXCEPTION = 1u << 4,   /* an exception is propagating (3.15+) */
	TT_THREAD_MAIN = 1u << 5,        /* the interpreter's main thread */
	TT_THREAD_GC = 1u << 6,          /* runs the garbage collector */
	TT_THREAD_TRUNCATED = 1u << 7,   /* stack deeper than we keep */
};

/* Python frames kept per thread; deeper stacks keep their innermost frames,
 * marked TT_THREAD_TRUNCATED, and the rest is not read. */
#define UNWIND_MAX_FRAMES 8192
/* Frames visited per thread, shim frames included, before a walk stops
 * (truncated): shims are at most one per Python frame. */
#define UNWIND_MAX_WALK (UNWIND_MAX_FRAMES * 2)

struct tt_frame {
	uint64_t addr;          /* the _PyInterpreterFrame: its locals follow it */
	uint64_t instr;         /* its instruction pointer as read (native.h) */
	uint32_t code_id;       /* index into the unwinder's code cache */
	int32_t line;           /* -1 when unknown */
	bool entry;             /* the outermost frame one C call of the evaluator
				   (_PyEval_EvalFrameDefault) runs: the native stack
				   goes on below it */
};

struct tt_thread {
	uint64_t tstate;
	int64_t interp_id;
	uint64_t native_tid;    /* its task's id in our PID namespace (tidmap.h); the
				   recorded id when tid_unknown */
	uint64_t ns_tid;        /* its id in its own PID namespace (native_tid outside one) */
	bool tid_unknown;       /* no task of the process is known to be it: nothing is
				   read of the kernel by its id */
	uint32_t status;        /* TT_THREAD_* */
	uint32_t first_frame;   /* index into tt_sample.frames */
	uint32_t nframes;       /* innermost first */
};

struct tt_sample {
	struct tt_thread *threads;
	uint32_t nthreads, threads_cap;
	struct tt_frame *frames;
	uint32_t nframes, frames_cap;
};

enum {
	UNWIND_CPU_STATE = 1u << 0,  /* ask the kernel whether each thread is on CPU */
};

struct unwinder {
	struct target *target;
	struct code_cache codes;
	struct tidmap tids;
	unsigned flags;
};

tt_status unwinder_init(struct unwinder *u, struct target *t, unsigned flags,
			 struct tt_error *err);
void unwinder_free(struct unwinder *u);

/* Take one sample of every thread of every interpreter. On failure the
 * sample's content is unspecified; the error says why (a torn read shows as
 * TT_EBADMEM or TT_EFAULT and is worth retrying). */
tt_status unwinder_sample(struct unwinder *u, struct tt_sample *s, struct tt_error *err);

void tt_sample_free(struct tt_sample *s);

#endif
