/* One sample of a target's Python threads, as both walkers give it (the
 * sampler's cached one, stackwalk.h, and the plain one, plainwalk.h):
 * each thread's state bits and frames, innermost first. */
#ifndef TT_SAMPLE_H
#define TT_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Thread state bits carried by samples. */
enum {
	TT_THREAD_GIL = 1u << 0,         /* holds the GIL */
	TT_THREAD_ON_CPU = 1u << 1,      /* on a CPU: found runnable, in the share
					    of such samples its time on a CPU makes
					    up (a thread waiting for a CPU is not) */
	TT_THREAD_CPU_UNKNOWN = 1u << 2, /* the kernel's state could not be read */
	TT_THREAD_GIL_WAIT = 1u << 3,    /* asked for the GIL and waits (3.15+) */
	TT_THREAD_EXCEPTION = 1u << 4,   /* an exception is propagating (3.15+) */
	TT_THREAD_MAIN = 1u << 5,        /* the interpreter's main thread */
	TT_THREAD_GC = 1u << 6,          /* runs the garbage collector */
	TT_THREAD_RUNNABLE = 1u << 7,    /* running or runnable per the kernel now */
	TT_THREAD_CORE_ZEROS = 1u << 8,  /* a core holds zeros where its older
					    frames were (gdb's gcore, a stack
					    it could not read) */
	TT_THREAD_TRUNCATED = 1u << 9,   /* stack deeper than we keep */
};
/* The bits a sample record carries (sampling/ring.h): the low 8. */

/* Python frames kept per thread; deeper stacks keep their innermost frames,
 * marked TT_THREAD_TRUNCATED, and the rest is not read. */
#define WALK_MAX_FRAMES 8192
/* Frames visited per thread, shim frames included, before a walk stops
 * (truncated): shims are at most one per Python frame. */
#define WALK_MAX_VISITS (WALK_MAX_FRAMES * 2)

struct tt_frame {
	uint64_t addr;          /* the _PyInterpreterFrame: its locals follow it */
	uint64_t instr;         /* its instruction pointer as read (native/unwind.h) */
	uint32_t code_id;       /* index into the walker's code cache */
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

static inline void
tt_sample_free(struct tt_sample *s)
{
	free(s->threads);
	free(s->frames);
	memset(s, 0, sizeof *s);
}

#endif
