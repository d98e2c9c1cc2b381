/* The names Python gives threads: threading's registry of live threads
 * (threading._active, {ident: Thread}) in each interpreter's sys.modules,
 * and each Thread's _name, read from a running target without stopping it.
 * threading.Thread(name=...), a pool's "ThreadPoolExecutor-0_0", a rename
 * after start and "MainThread": the names Python's own tools print, which
 * the kernel's thread names (all "python3.X" before 3.14, cut to 15 bytes
 * after) are not. What is read is the target's: sanitize it. */
#ifndef TT_THREADNAMES_H
#define TT_THREADNAMES_H

#include <stdint.h>

#include "target.h"

#define THREADNAME_MAX 128

struct thread_name {
	uint64_t ident;              /* threading.get_ident(): the thread's pthread_t */
	char name[THREADNAME_MAX];   /* UTF-8, cut at a character's end */
};

struct thread_names {
	struct thread_name *names;
	uint32_t n, cap;
};

/* Read every interpreter's registry into tn (what was there before is
 * replaced), sorted by ident; a process that has not imported threading
 * has none. Returns the number of names read. */
uint32_t threadnames_read(struct target *t, struct thread_names *tn);

/* The name of the thread whose ident (its state's thread_id) is ident, or
 * NULL. */
const char *threadnames_find(const struct thread_names *tn, uint64_t ident);

/* The name of the thread whose thread state is at tstate, or NULL. */
const char *threadnames_of(struct target *t, const struct thread_names *tn, uint64_t tstate);

void threadnames_free(struct thread_names *tn);

#endif
