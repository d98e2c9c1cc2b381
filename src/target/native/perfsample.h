/* Samples of running threads' user registers and stack tops, taken by the
 * kernel: a software task-clock event on each followed thread
 * (perf_event_open, PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER). The
 * kernel copies them at a timer tick while the thread runs: it is not
 * stopped, signalled or written to, and pays for the copy itself. */
#ifndef TT_PERFSAMPLE_H
#define TT_PERFSAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFSAMPLE_STACK_MAX 16384

struct user_sample {
	/* x86-64 DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 */
	uint64_t regs[16];
	uint64_t pc;
	uint64_t time_ns;       /* CLOCK_MONOTONIC, when the kernel took it */
	uint64_t stack_at;      /* the address of stack[0]: the sampled %rsp */
	size_t stack_len;       /* bytes the kernel copied (up to the stack's end) */
	uint8_t stack[PERFSAMPLE_STACK_MAX];
};

struct perf_threads;

/* A sample every period_ns of each followed thread's CPU time, with
 * stack_bytes (8-aligned, at most PERFSAMPLE_STACK_MAX) of its stack, at
 * most max_live threads followed at once (each costs a file descriptor and
 * a locked ring). NULL when out of memory. */
struct perf_threads *perf_threads_new(uint64_t period_ns, size_t stack_bytes, uint32_t max_live);
void perf_threads_free(struct perf_threads *pt);

enum perf_follow {
	PERF_FOLLOWED,
	PERF_REFUSED,     /* the kernel refuses this process's threads: say it once */
	PERF_NO_ROOM,     /* out of file descriptors or locked memory: this thread, now */
	PERF_GONE,        /* the thread ended before it could be followed */
};

/* Start sampling thread tid (again); with max_live followed already, the
 * one that gave no sample for longest is let go first. *why says why not
 * ("... (perf_event_paranoid 2)"). */
enum perf_follow perf_threads_follow(struct perf_threads *pt, pid_t tid, char *why, size_t wlen);
/* Stop sampling it (it ended). Ended threads are not kept for long. */
void perf_threads_forget(struct perf_threads *pt, pid_t tid);
/* Stop or resume every followed thread's sampling (PERF_EVENT_IOC_DISABLE
 * / ENABLE): while stopped the kernel neither interrupts nor copies, and
 * the target pays nothing. Stopping drops what the rings hold; resuming
 * drops what came since and returns how many samples that was (none, if
 * the kernel did stop). Threads followed while stopped start stopped. */
uint64_t perf_threads_enable(struct perf_threads *pt, bool on);
/* Threads followed now (for tests and statistics). */
uint32_t perf_threads_live(const struct perf_threads *pt);
/* Threads on record, followed or ended (for tests and statistics). */
size_t perf_threads_kept(const struct perf_threads *pt);

/* Wait until each of the n threads has a sample waiting, or timeout_ms. */
void perf_threads_wait(struct perf_threads *pt, const pid_t *tids, size_t n, int timeout_ms);

/* The newest sample of tid since the last call, older ones dropped: false
 * when none came (it did not run, or is not followed). */
bool perf_threads_newest(struct perf_threads *pt, pid_t tid, struct user_sample *out);

/* The newest sample with user registers among the records of a perf
 * ring's data area (size bytes, a power of two) from *tail up to head,
 * *tail moved past each whole record read. The reader above, and the
 * fuzzer: the records are the kernel's, but parsed as anybody's. */
bool perf_ring_newest(const uint8_t *data, size_t size, uint64_t *tail, uint64_t head,
		      struct user_sample *out);

#endif
