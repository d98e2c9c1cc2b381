/* A Python process we attached to: its memory, its interpreter's layout and
 * the address of its _PyRuntime. */
#ifndef TT_TARGET_H
#define TT_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cycle.h"
#include "error.h"
#include "python/pylayout.h"
#include "mem/remote.h"

/* Most interpreters and threads per process walked through: longer lists
 * are taken for corrupt ones (a thread slot is 16 bits: threadslots.h). */
#define TARGET_MAX_INTERPRETERS 256
#define TARGET_MAX_THREADS 65535

struct target {
	pid_t pid;
	struct remote mem;
	struct py_layout layout;
	uint64_t runtime_addr;
	char binary[512];          /* mapped file that holds _PyRuntime */
	struct corefile *core;     /* a core's process (target_attach_core): its
				      mappings and files come from the core; NULL: live */
};

/* Find the CPython runtime in a live process and validate its layout. */
tt_status target_attach(struct target *t, pid_t pid, struct tt_error *err);

/* Attach to a process that may be a fork of `like` (already attached):
 * reuse its runtime address if a valid table of the same version is there,
 * else attach from scratch. */
tt_status target_attach_like(struct target *t, pid_t pid, const struct target *like,
			     struct tt_error *err);

/* How long a root that is not Python is given to show a Python descendant
 * (a shell's next command, a supervisor's restart). */
#define TARGET_DESCENDANT_WAIT_NS 3000000000ull

/* Attach to the first Python process below root, breadth first (a
 * shell's children before theirs), for a root that is not Python (a shell,
 * tini, a wrapper script); while there is none and root runs, look again
 * for up to wait_ns (it may start its Python later). TT_ENOTPY when none
 * appeared, TT_ENOPROC when root ended first. */
/* Attach to pid; when it runs but is not Python, to its first Python
 * descendant as above (*other_root: so). A zombie keeps its own error. */
tt_status target_attach_root(struct target *t, pid_t pid, uint64_t wait_ns, bool *other_root,
			     struct tt_error *err);
tt_status target_attach_descendant(struct target *t, pid_t root, uint64_t wait_ns,
				   struct tt_error *err);

struct corefile;
/* Find the CPython runtime in a core file's process (corefile.h): its
 * memory, and its mapped files under the core's root. t->pid is 0. */
tt_status target_attach_core(struct target *t, struct corefile *c, struct tt_error *err);

/* Attach through an arbitrary memory backend with a known runtime address
 * (fuzzing and unit tests). */
tt_status target_attach_memory(struct target *t, struct remote_backend backend,
			       uint64_t runtime_addr, struct tt_error *err);

/* The same for a 3.11/3.12 runtime, whose version the caller knows (tests). */
tt_status target_attach_memory_compiled(struct target *t, struct remote_backend backend,
					uint64_t runtime_addr, uint64_t version_hex,
					struct tt_error *err);

/* Find ELF section `section` (".AsyncioDebug") in a file the target has
 * mapped whose name contains `name_part`; *addr receives its run-time
 * address. TT_ENOTPY when no such file is mapped (yet). */
tt_status target_find_section(const struct target *t, const char *name_part,
			      const char *section, uint64_t *addr, uint64_t *size,
			      struct tt_error *err);

/* Look up n (at most ELF_MAX_LOOKUP) dynamic symbols in the first file the
 * target maps whose name starts with name_prefix: their run-time addresses
 * in addr[] (0: not defined there) and the file's path as the target maps
 * it. TT_ENOTPY when no such file is mapped. */
tt_status target_find_symbols(const struct target *t, const char *name_prefix,
			      const char *const *names, size_t n, uint64_t *addr, char *path,
			      size_t pathlen, struct tt_error *err);

/* One thread state: its address, the id gettid() gave its thread (in the
 * thread's own PID namespace) and its pthread_t. */
struct target_thread {
	uint64_t ts, native_id, pthread_id;
};

/* Walking every interpreter's thread states the plain way (the sampler
 * reads them batched: walk/threadlist.c): the runtime's interpreter list,
 * then each one's thread list, with their bounds, alignment and loops
 * checked here. Nodes are read through the caller's reader, which may
 * read the live process, a core or a cache of pages. */
typedef bool target_read_u64_fn(void *ctx, uint64_t addr, uint64_t *out);

struct target_threads_iter {
	const struct target *t;
	target_read_u64_fn *read;
	void *ctx;
	uint64_t next_interp, ts;   /* the current interpreter's next, its next thread */
	unsigned ninterps, nthreads;
	struct cycle_guard interps_seen, threads_seen;
	bool started, in_interp;
	const char *broken;        /* why a list ended before its end; NULL: it did not */
	bool read_failed;          /* it was a read that failed (the reader's own error) */
};

void target_threads_begin(struct target_threads_iter *it, const struct target *t,
			  target_read_u64_fn *read, void *ctx);
/* The next interpreter's address: false at the end of the list or where
 * it broke (it->broken). A thread list that broke ends that interpreter's
 * threads only. */
bool target_threads_next_interp(struct target_threads_iter *it, uint64_t *interp);
/* The current interpreter's next thread state: false at the end of its
 * list or where it broke. */
bool target_threads_next(struct target_threads_iter *it, uint64_t *ts);

/* The thread states of every interpreter, up to max, in *n. false when a
 * list could not be read to its end (what was read is kept). */
bool target_list_threads(struct target *t, struct target_thread *out, uint32_t max,
			 uint32_t *n);

#endif
