/* The walker's own state, shared by the files that make it up and by no
 * one else: stackwalk.c (life cycle, asyncio hooks, the sample),
 * threadlist.c (interpreters, their thread lists, each thread's kernel-side
 * facts) and framewalk.c (planning the batch, walking one thread's frames).
 * Functions one of them defines for the others are named sw_*. Everything
 * outside uses stackwalk.h. */
#ifndef TT_WALKSTATE_H
#define TT_WALKSTATE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bytes.h"
#include "clock.h"
#include "cycle.h"
#include "grow.h"
#include "hash.h"
#include "idindex.h"
#include "walk/stackwalk.h"
#include "proc/tidmap.h"
#include "proc/procstat.h"
#include "walk/threadnames.h"
#include "walk/sample.h"

#define MAX_INTERPS 16
/* Frames closer than this are read as one segment. */
#define SPAN_GAP 512
/* Read this far above the last stack top, to catch fresh calls in the batch. */
#define SPAN_SLACK 512
#define MAX_SPAN (256u << 10)
/* Per-sample buffer for everything the batch reads: mapped at this size,
 * doubled between samples when a sample ran short (thousands of threads),
 * up to ARENA_MAX. */
#define ARENA_SIZE (8u << 20)
#define ARENA_MAX (1u << 30)
/* Thread states the arena is first grown for when they are read longer
 * (stackwalk_read_running_task); more grow it as any sample would. */
#define ARENA_PLANNED_THREADS 8192u
/* /proc stat files kept open per process, at most, and at most a
 * sixteenth of the open-file limit (a tree of processes, the native
 * native unwinder's files and perf events need theirs); beyond that they are
 * opened per read. */
#define MAX_STAT_FDS 256
#define STAT_FDS_SHARE 16
/* How often to look for new or vanished interpreters. */
#define INTERP_CHECK_NS 50000000ull
/* A process with one thread cannot switch the GIL: its interpreter block
 * (thread list, GIL and GC state) is then re-read only this often, which
 * saves an iovec per sample; a new thread shows up within this time. */
#define SINGLE_THREAD_BLOCK_NS 200000ull
/* A walk that meets a second frame outside its planned spans (a deep stack
 * read for the first time, spread over many data-stack chunks) reads up to
 * this much below it at once, page by page, downward. */
#define READ_AHEAD (32u << 10)
/* At most this many idle threads are fully re-walked in one sample. */
#define REVALIDATIONS_PER_SAMPLE 8
/* Which threads are due for a re-walk or a new on-CPU state is looked
 * at most this often: a scan of every thread at every sample would cost
 * a thousand-thread target more than the reads it saves. */
#define DUE_SCAN_NS 1000000ull
/* Stacks deeper than this are fully re-walked less often than
 * revalidate_ns, in proportion to their depth. */
#define REVALIDATE_DEPTH 1024
/* 3.13 has no code-object generation counter: re-check code objects this often. */
#define CODE_RECHECK_NS 200000000ull

struct cframe {
	uint64_t addr, previous, executable, instr_ptr;
	int owner;
	bool entry;          /* 3.11: is_entry, the first frame of its evaluator call */
	uint32_t code_id;
	int32_t line;
	uint32_t frame_id;   /* 0 for a shim frame */
	uint32_t stack_id;   /* the stack from this frame down to the root */
};

struct tcache {
	uint64_t tstate;
	uint64_t recorded_tid;       /* the id the thread state records (its namespace's) */
	uint64_t native_tid;         /* its task's id in ours (tidmap.h), or recorded_tid
					when tid_unknown */
	bool tid_unknown;            /* no task of the process could be told to be it */
	bool tid_retry;              /* unknown only for now: resolve again (refresh_cpu) */
	uint64_t ns_tid;             /* its id in its own PID namespace */
	uint32_t slot;
	struct cframe *frames;       /* innermost first, shims included */
	uint32_t nframes, cap;
	bool have_chain;
	bool truncated;              /* the chain stops short of the root (too deep) */
	uint32_t stack_id;
	uint32_t sticky;             /* state bits known from the last read of this thread */
	uint64_t chunk, chunk_end, stack_top;
	uint64_t validated_ns, cpu_checked_ns, born_ns;
	bool revalidate;             /* due for a full re-walk, and chosen this sample */
	unsigned name_reads;
	uint64_t ident;              /* its state's thread_id: threading's key for it */
	uint32_t code_epoch;
	int stat_fd, schedstat_fd;
	/* Its time on a CPU (schedstat) when last read, when that was, the
	 * checks since, and the on-CPU states its time is owed and was not
	 * yet given (ran_by_time). */
	uint64_t ran_ns, ran_read_ns;
	uint32_t ran_checks;
	double ran_owed;
	/* this sample */
	const uint8_t *tsbuf;
	uint32_t ts_seg;             /* its segment in the current batch, UINT32_MAX if none */
	/* 3.11/3.12: tstate->cframe->current_frame, read in the same batch at
	 * the cframe address seen last time (it moves only when an eval loop
	 * is entered or left through C) */
	uint64_t cframe;
	const uint8_t *cfbuf;        /* 8 bytes read at cf_addr with tsbuf, or NULL */
	uint64_t cf_addr;
	uint32_t cf_seg;
	bool planned_full;           /* its spans cover the whole stack */
	uint32_t span_lo, span_hi;   /* this thread's spans in w->spans */
	bool was_running;            /* held the GIL at the last read */
	bool skipped;                /* left out of this sample: ended while read */
	uint8_t skips;               /* samples in a row it was left out of */
	bool was_main;               /* the main thread when first read */
	uint64_t running_task;       /* its asyncio task at the last read of its state */
	/* stack_is_small's answer, for this chain, chunk and stack top */
	uint32_t chain_gen, small_gen;
	uint64_t small_chunk, small_top;
	bool small;
};

struct interp {
	uint64_t addr;
	int64_t id;
	uint64_t next, head, main, unique_id, count, holder, switch_no, code_gen;
	int32_t locked, gc;
	bool have;
	bool resync;                 /* a sample failed part-way: walk every thread next */
	const uint8_t *block;        /* this sample's read of the hot block */
	uint64_t gil_addr;           /* GIL state outside the interpreter (3.11/3.12); 0: unknown */
	const uint8_t *gilbuf;       /* this sample's read of it */
	struct tcache *threads;
	uint32_t nthreads, cap;
	uint32_t cpu_cursor;         /* whose on-CPU state is refreshed first next */
	uint64_t cpu_scan_ns;        /* when its threads' states were last looked at */
	uint32_t revalidate_cursor;  /* whose re-walk is chosen first next */
};

struct span {
	uint64_t addr;
	uint32_t len;
	uint8_t *buf;
	bool ok;
};


struct stackwalk {
	struct target *t;
	const struct py_layout *l;
	struct tidmap tids;          /* recorded thread ids -> ours */
	struct stackwalk_options o;
	struct code_cache codes;
	struct intern *in;           /* own_in, or one shared with other walkers */
	struct intern own_in;
	struct thread_slots *slots;  /* own_slots, or one shared with other walkers */
	struct thread_slots own_slots;
	uint32_t proc;
	struct interp *interps;      /* MAX_INTERPS of them, freed when the process ends */
	uint32_t ninterps;
	uint64_t interps_checked_ns, code_checked_ns, block_read_ns;
	bool first;
	/* per-sample scratch */
	struct remote_seg *segs;     /* as many as a sample needs (remote_readv */
	uint32_t nsegs, segs_cap;    /* splits them); freed with the rest of */
	struct span *spans;          /* the scratch when the process ends */
	uint32_t nspans, spans_cap;
	uint8_t *arena;
	size_t arena_used, arena_size;
	bool arena_short;            /* a take failed this sample: grow before the next */
	struct cframe *chain;
	uint32_t chain_cap;
	uint8_t *ra_buf;              /* read-ahead for frames outside every span */
	uint64_t ra_base;             /* the address at ra_buf[0] */
	uint64_t ra_lo, ra_hi;        /* what it holds, this sample */
	struct walk_thread *out;
	struct tcache **out_tc;       /* whose stack each out[] is (this sample) */
	uint32_t nout, out_cap, out_tc_cap;
	/* thread state bytes read per thread: the layout's, or more to reach
	 * the running asyncio task (ts_running_task, 0 when not read) */
	uint64_t ts_len, ts_running_task;
	int open_fds, max_open_fds;   /* stat files kept open, and how many may be */
	uint64_t epoch_ns;
	double switch_rate;          /* how often the GIL changed hands recently */
	unsigned cpu_reads_left;     /* on-CPU state refreshes this sample may still make */
	uint64_t revalidate_scan_ns; /* when due re-walks were last chosen */
	/* the names Python gives the threads: read when threads are new,
	 * and now and then for renames (sw_refresh_names) */
	struct thread_names names;
	unsigned names_due;          /* reads owed for threads new since the last */
	uint64_t names_read_ns, names_gap_ns;
	struct walk_counters c;
};

/* stackwalk.c: the per-sample arena and releasing a thread's cache */
tt_status sw_arena_exhausted(struct stackwalk *w, struct tt_error *err);
void *sw_arena_take(struct stackwalk *w, size_t n);
void sw_tcache_release(struct stackwalk *w, struct tcache *tc);

/* threadlist.c: interpreters and thread lists; on-CPU state and names */
void sw_refresh_cpu(struct stackwalk *w, struct tcache *tc, uint64_t now);
void sw_refresh_cpu_states(struct stackwalk *w, struct interp *iv, uint64_t now);
void sw_refresh_names(struct stackwalk *w, uint64_t now);
void sw_parse_block(const struct py_layout *l, struct interp *iv, const uint8_t *block);
void sw_release_gone(struct stackwalk *w, struct tcache *tc, uint64_t now);
tt_status sw_rebuild_threads(struct stackwalk *w, struct interp *iv, uint64_t now,
			      struct tt_error *err);
tt_status sw_refresh_interps(struct stackwalk *w, uint64_t now, struct tt_error *err);

/* framewalk.c: the batch's segments and spans; walking a thread */
bool sw_add_seg(struct stackwalk *w, uint64_t addr, void *buf, size_t len);
void sw_plan_spans(struct stackwalk *w, struct tcache *tc, uint32_t depth);
tt_status sw_current_frame(struct stackwalk *w, struct tcache *tc, uint64_t *out,
			   struct tt_error *err);
void sw_plan_cframe(struct stackwalk *w, struct tcache *tc);
tt_status sw_walk_thread(struct stackwalk *w, struct tcache *tc, bool full, struct tt_error *err);
void sw_read_thread_state(struct stackwalk *w, struct tcache *tc, uint64_t now);
void sw_note_stack(struct stackwalk *w, struct tcache *tc);

#endif
