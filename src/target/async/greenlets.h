/* greenlets (gevent's, eventlet's, or greenlet's own) read from a live
 * target: every started greenlet that has not finished, its Python stack
 * where it is suspended, its parent, and which are hubs, main greenlets or
 * running.
 *
 * greenlet keeps no list of its greenlets. Each one is a C++ object whose
 * first word is its class's vtable (UserGreenlet or MainGreenlet, both
 * exported by _greenlet.so), with a pointer back to its Python object,
 * which points to it. The reader finds them by scanning the target's
 * anonymous writable memory for those vtable words, a budget of bytes per
 * read, resuming where the last read stopped (a small heap is scanned
 * whole every read); pages not in memory (the page map says) are passed
 * over; a core's writable segments are scanned whole. Each candidate is
 * kept only while both pointers agree.
 * A suspended greenlet's frames start at its saved top frame; the part of
 * its C stack another greenlet now uses is read from its saved copy (frames
 * of the evaluator's entry live there). A greenlet that moves or ends while
 * read is left out and counted, never shown half-read.
 *
 * The layout of greenlet's objects is per version (greenletlayout.h); an
 * unknown version is refused with one line (r->why), not guessed. */
#ifndef TT_GREENLETS_H
#define TT_GREENLETS_H

#include <stdbool.h>
#include <stdint.h>

#include "async/asynctasks.h"
#include "python/codecache.h"
#include "error.h"
#include "async/greenletlayout.h"
#include "target.h"

#define GREENLETS_MAX 200000               /* greenlets kept per read */
#define GREENLETS_SCAN_BUDGET (64u << 20)  /* bytes of memory scanned per read */

enum greenlets_state {
	GREENLETS_NONE,       /* greenlet is not imported */
	GREENLETS_UNKNOWN,    /* a greenlet version whose layout is not known: r->why */
	GREENLETS_READ,
};

struct gl_region {
	uint64_t lo, hi;
};

/* A thread's C stack, where every greenlet of the thread keeps its own
 * part while it runs (greenlet's stack_start points into it). */
struct gl_thread {
	struct gl_region span;      /* first: searched as regions are */
	uint64_t tid;               /* as its thread state records it (a core's: the core's) */
};

struct gl_type_name {
	uint64_t type;
	char name[48];
};

struct greenlet_reader {
	struct target *target;
	struct code_cache *codes;   /* borrowed, as the task reader's */
	enum greenlets_state state;
	char version[32];           /* "3.3.2" */
	char why[400];              /* GREENLETS_UNKNOWN: what is refused and why */
	const struct greenlet_layout *gl;
	uint64_t vptr_user, vptr_main, vptr_broken;   /* the vtable words objects hold */
	uint64_t last_probe_ns, probe_interval_ns;
	/* the scan: regions of this pass, where the next read resumes */
	struct gl_region *regions;
	uint32_t nregions, regions_cap, region_at;
	uint64_t offset_at;         /* within regions[region_at] */
	uint64_t main_stack_lo, main_stack_hi;   /* its main thread's stack (0, 0: not known) */
	uint64_t main_tid;                       /* its main thread's id */
	struct gl_thread *threads;  /* by lo, for this read */
	uint32_t nthreads, threads_cap;
	struct target_thread *states;
	uint32_t states_cap;
	uint8_t *scratch;           /* a read's per-greenlet buffers (greenlet_reader_read) */
	size_t scratch_len;
	uint64_t scan_budget;
	bool memory_only;           /* greenlet_reader_use_memory: no maps, no files */
	struct gl_region *given;    /* its regions to scan, in address order */
	uint32_t ngiven;
	uint8_t *chunk;
	int pagemap_fd;             /* which pages are in memory; -1: not open */
	/* greenlet objects found and still valid (C++ object addresses) */
	uint64_t *known;
	uint32_t nknown, known_cap;
	struct gl_type_name types[16];   /* type names seen, round robin */
	uint32_t ntypes;
	/* figures */
	uint64_t bytes_scanned, passes;
	double last_pass_ms;        /* the last whole pass, summed over its reads */
	double pass_ms;
};

/* scan_budget: bytes scanned per read (0: a whole pass each read, for a
 * one-shot read like dump's). */
tt_status greenlet_reader_init(struct greenlet_reader *r, struct target *t,
			       struct code_cache *codes, uint64_t probe_interval_ns,
			       uint64_t scan_budget, struct tt_error *err);
void greenlet_reader_free(struct greenlet_reader *r);

/* For a target known only by its memory (a memory image: no maps, no
 * files to find greenlet in): read greenlet `version`'s objects, its
 * vtable symbols at vtables[] (UserGreenlet's, MainGreenlet's,
 * BrokenGreenlet's; 0: absent), scanning the n regions given. A version
 * without a layout leaves r->why as a live target's would. */
tt_status greenlet_reader_use_memory(struct greenlet_reader *r, const char *version,
				     const uint64_t vtables[3], const struct gl_region *regions,
				     uint32_t n, struct tt_error *err);

/* Add the target's greenlets to out (after what it holds: the task
 * reader's read) as tasks of kind TASK_GREENLET: id the greenlet object's
 * address, coro its C++ object's, its parent as its one awaiter, thread
 * the thread whose C stack it runs on (0: not known: a main greenlet that
 * never switched, a thread born since the scan's pass began). Fails only
 * when the target is gone. */
tt_status greenlet_reader_read(struct greenlet_reader *r, struct tt_tasks *out,
			       struct tt_error *err);

#endif
