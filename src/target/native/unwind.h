/* Native (C) frames of a target's thread, read without stopping it.
 *
 * A thread blocked in a system call: the kernel gives its stack pointer and
 * program counter (/proc/PID/task/TID/syscall); the stack is read with
 * process_vm_readv and unwound by the call frame information (.eh_frame,
 * .debug_frame) of the executable and libraries, with elfutils' libdwfl.
 * Nothing is attached to, stopped or written. The kernel does not give
 * %rbp, which code built with frame pointers needs to find its caller:
 * it is looked for on the stack, and a walk with it is kept only when it
 * then reaches the thread's first frame through real return addresses;
 * else the walk ends at that frame and says so. A thread running on a
 * CPU: the kernel samples all its registers and copies its stack top
 * (perfsample.h), and the walk starts from those.
 *
 * Files are opened through the target's own root (/proc/PID/root), so a
 * target in a container or a chroot is unwound with its own libraries.
 * Symbol names come from those files (.symtab, else .dynsym): callers
 * sanitize them before they reach a terminal or a document. */
#ifndef TT_NATIVE_UNWIND_H
#define TT_NATIVE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define NATIVE_MAX_FRAMES 64

struct native_frame {
	uint64_t pc;
	char symbol[160];     /* "" when no symbol covers pc */
	uint64_t offset;      /* pc - the symbol's start */
	char library[96];     /* the file's base name, "" when pc is in no file;
				 code no file holds: "perf-PID.map" when that names
				 it, else "[jit]" */
	bool anon_code;       /* in executable memory no file holds */
	/* Without a symbol: where the function's call frame information (its
	 * FDE) starts, from the start of the file's mapping, so that samples of
	 * one nameless function, in any process, are one function. */
	bool fde_known;
	uint64_t fde_offset;
};

struct native_unwinder;

/* The target's modules, reported from /proc/PID/maps; TT_EIO when libdwfl
 * cannot report them. */
tt_status native_open(struct native_unwinder **out, pid_t pid, struct tt_error *err);
void native_close(struct native_unwinder *n);
struct corefile;
/* The same for the process a core was taken of (corefile.h): its modules
 * from the core's notes, their files under its root, each thread's
 * registers from its NT_PRSTATUS note, memory from the core. */
tt_status native_open_core(struct native_unwinder **out, struct corefile *core,
			   struct tt_error *err);

/* For a sampler: follow each thread asked about with a perf event from the
 * first ask (a sample every period_ns of its CPU time, stack_bytes of its
 * stack), and never wait for a running thread's sample: the newest since
 * the last ask, or none. */
void native_continuous(struct native_unwinder *n, uint64_t period_ns, size_t stack_bytes);
/* Why the kernel refused to sample running threads (perf_event_open), or
 * NULL: once refused, it is not asked again. */
const char *native_perf_refusal(const struct native_unwinder *n);
/* Stop or resume the kernel's samples of running threads (perf_threads_enable):
 * the count of samples found taken while stopped, on resuming. */
uint64_t native_sampling(struct native_unwinder *n, bool on);
/* Thread tid ended: stop sampling it. */
void native_forget(struct native_unwinder *n, pid_t tid);
/* Is thread tid in a system call? Its stack and instruction pointers, which
 * stay the same while it waits there (a caller may keep its frames). What
 * it read serves the next native_thread_frames of the same thread. */
bool native_blocked_at(struct native_unwinder *n, pid_t tid, uint64_t *sp, uint64_t *pc);

/* Before asking for the frames of several threads: sample those running
 * on a CPU all at once (waiting up to 250 ms for them together). */
void native_prepare(struct native_unwinder *n, const pid_t *tids, size_t count);

/* A running thread's native frames come from the kernel's newest perf
 * sample of it, taken at its own time, while its Python frames were read
 * at another: a thread that moved meanwhile (an event loop switching tasks
 * every millisecond) would get another frame's native calls. Before
 * native_thread_frames of such a thread: the innermost Python frame just
 * read of it, its _PyInterpreterFrame address and instruction pointer.
 * The innermost evaluator call on the sampled stack ran that frame if its
 * callee-saved registers (as the walk recovers them) hold the address and
 * a word within 64 bytes of the instruction pointer. At a call site where
 * a sample once found them there, they always are (register allocation is
 * fixed per site): a sample there without them was taken in another frame,
 * gives no frames, and native_moved says so. At a site where the evaluator
 * keeps them in stack slots nothing is proven (slots may hold a frame run
 * before): native_unverified. For the next call only; 0: no check. */
void native_expect_frame(struct native_unwinder *n, uint64_t frame, uint64_t instr);
/* The last native_thread_frames gave none: its sample was of another frame. */
bool native_moved(const struct native_unwinder *n);
/* The last native_thread_frames gave frames that could not be checked. */
bool native_unverified(const struct native_unwinder *n);

/* Thread tid's native frames, innermost first, up to max: the count (0
 * when there are none to give). *why says why the walk ended, or why
 * there is none (perf_event_open refused, no sample in time, the thread
 * ended); "" when it reached the thread's first frame. */
size_t native_thread_frames(struct native_unwinder *n, pid_t tid, struct native_frame *out,
			    size_t max, char *why, size_t wlen);

#endif
