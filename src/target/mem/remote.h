/* Reading another process's memory. Everything the engine learns about a
 * target goes through remote_read/remote_readv, which sit on a pluggable
 * backend: process_vm_readv for real targets, a memory image for the fuzz
 * and unit tests. The target is never written to and never stopped. */
#ifndef TT_REMOTE_H
#define TT_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* One piece of a vectored read: len bytes at remote addr into buf. */
struct remote_seg {
	uint64_t addr;
	void *buf;
	size_t len;
};

/* A memory backend. readv reads segments in order and returns the number of
 * bytes transferred (stopping at the first segment it cannot read fully), or
 * -1 with errno set when not even the first segment could be read. This is
 * the process_vm_readv contract. */
struct remote_backend {
	ssize_t (*readv)(void *ctx, const struct remote_seg *segs, size_t nsegs);
	void *ctx;
};

struct remote_counters {
	uint64_t reads;      /* backend calls (syscalls for a real target) */
	uint64_t bytes;      /* bytes transferred */
	uint64_t failures;   /* calls that failed or came back short */
};

struct remote {
	pid_t pid;                       /* 0 for a fake backend */
	pid_t read_pid;                  /* task whose mm we read: pid, or another of its
					    threads once the main thread has exited */
	struct remote_backend backend;
	struct remote_counters counters;
};

/* Largest number of segments one backend call takes (the kernel's IOV_MAX). */
#define REMOTE_MAX_SEGS 1024

/* Attach to a live process: checks it exists and that we may read it. */
tt_status remote_open_pid(struct remote *r, pid_t pid, struct tt_error *err);

/* Use a custom backend (tests). */
void remote_open_backend(struct remote *r, struct remote_backend backend);

/* Read exactly len bytes. A short read is an error (TT_EFAULT). */
tt_status remote_read(struct remote *r, uint64_t addr, void *buf, size_t len,
		      struct tt_error *err);

/* Read several segments with as few backend calls as possible. *ncomplete
 * receives how many leading segments were read in full; the call fails only
 * when the process is gone or unreadable, not for a short read, so callers
 * that predicted addresses can fall back for the rest. */
tt_status remote_readv(struct remote *r, struct remote_seg *segs, size_t nsegs,
		       size_t *ncomplete, struct tt_error *err);

/* Up to len bytes from addr: as many as are mapped from there on (a
 * stack's top, whose end is not known). Returns the bytes read, 0 when
 * none could be. */
size_t remote_read_upto(struct remote *r, uint64_t addr, void *buf, size_t len);

/* Read a pointer-sized little-endian value. */
tt_status remote_read_u64(struct remote *r, uint64_t addr, uint64_t *out,
			  struct tt_error *err);

/* Map a failed read's errno to a user-level error naming the fix. */
tt_status remote_errno_error(const struct remote *r, int e, uint64_t addr,
			     struct tt_error *err);

/* The permission-denied error, naming the ways to get permission. */
tt_status remote_permission_error(pid_t pid, int e, struct tt_error *err);

/* What the cheapest possible remote read costs here, in microseconds:
 * a sampler that reads the target at all cannot take less per sample. */
struct remote_floor {
	double syscall_us;   /* a bare syscall (getppid), for scale */
	double readv_us;     /* one process_vm_readv of 8 bytes */
	double readv2_us;    /* one process_vm_readv of 8 bytes from each of two pages: the
				least a sample needs (a thread state and a frame) */
	double proc_mem_us;  /* one pread of 8 bytes from /proc/PID/mem; 0 if unavailable */
};

/* Measure the floor for about `seconds`, reading 8 bytes at addr (and at
 * addr + 4096 for readv2_us; 0 when that is unmapped). */
tt_status remote_measure_floor(struct remote *r, uint64_t addr, double seconds,
			       struct remote_floor *out, struct tt_error *err);

/* Does the process still exist? (kill(pid, 0) semantics; EPERM counts as yes) */
bool remote_pid_alive(pid_t pid);

#endif
