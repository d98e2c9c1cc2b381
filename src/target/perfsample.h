/* One sample of a running thread's user registers and stack top, taken by
 * the kernel (perf_event_open: a software clock event on that thread,
 * PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER). The kernel copies them
 * at the sample instant from its timer interrupt: the thread is not
 * stopped, signalled or written to. */
#ifndef TT_PERFSAMPLE_H
#define TT_PERFSAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFSAMPLE_STACK_BYTES 16384

struct user_sample {
	/* x86-64 DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 */
	uint64_t regs[16];
	uint64_t pc;
	uint64_t stack_at;      /* the address of stack[0]: the sampled %rsp */
	size_t stack_len;       /* bytes the kernel copied (up to the stack's end) */
	uint8_t stack[PERFSAMPLE_STACK_BYTES];
};

/* Wait up to timeout_ms for one sample of thread tid while it runs in user
 * space or the kernel on its behalf. false with *why: perf_event_open
 * refused ("... (perf_event_paranoid 2)"), or no sample in time (the
 * thread did not run). */
bool perfsample_thread(pid_t tid, int timeout_ms, struct user_sample *out, char *why,
		       size_t wlen);

#endif
