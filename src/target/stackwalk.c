#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bytes.h"
#include "cycle.h"
#include "grow.h"
#include "hash.h"
#include "idindex.h"
#include "stackwalk.h"
#include "tidmap.h"
#include "taskinfo.h"
#include "unwinder.h"

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
/* /proc stat files kept open; beyond that they are opened per read. */
#define MAX_STAT_FDS 256
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
	uint32_t code_epoch;
	int stat_fd;
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
	uint32_t nout, out_cap;
	/* thread state bytes read per thread: the layout's, or more to reach
	 * the running asyncio task (ts_running_task, 0 when not read) */
	uint64_t ts_len, ts_running_task;
	int open_fds;
	uint64_t epoch_ns;
	double switch_rate;          /* how often the GIL changed hands recently */
	unsigned cpu_reads_left;     /* on-CPU state refreshes this sample may still make */
	uint64_t revalidate_scan_ns; /* when due re-walks were last chosen */
	struct walk_counters c;
};

void
stackwalk_default_options(struct stackwalk_options *o)
{
	o->cache = true;
	o->cpu_period_ns = 5000000ull;
	o->cpu_reads_per_sample = 8;
	o->revalidate_ns = 20000000ull;
	o->check_depth = 4;
	o->full_read_max = 16384;
}

/* The arena is mapped, not malloc'd: it goes back to the system whole
 * when its process ends. From malloc, the 8 MB blocks of processes that
 * come and go land in the heap (glibc raises its mmap threshold to the
 * size of a freed mapping), and their touched pages stay resident. */
static uint8_t *
arena_map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* A sample that did not fit the arena fails, like a torn read, and the
 * next one has twice the room (arena_grow_if_short); at ARENA_MAX it is
 * out of memory for good. */
static tt_status
arena_exhausted(struct stackwalk *w, struct tt_error *err)
{
	if (w->arena_size < ARENA_MAX)
		return tt_fail(err, TT_EBADMEM, 0,
			       "sample buffer of %zu MB too small: grown for the next sample",
			       w->arena_size >> 20);
	return tt_fail(err, TT_ENOMEM, ENOMEM, "sample buffer exhausted");
}

static void *
arena_take(struct stackwalk *w, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (w->arena_used + n > w->arena_size) {
		w->arena_short = true;
		return NULL;
	}
	void *p = w->arena + w->arena_used;
	w->arena_used += n;
	return p;
}

tt_status
stackwalk_new(struct target *t, const struct stackwalk_options *o, struct stackwalk **out,
	      struct tt_error *err)
{
	return stackwalk_new_shared(t, o, NULL, NULL, 0, out, err);
}

tt_status
stackwalk_new_shared(struct target *t, const struct stackwalk_options *o,
		     struct thread_slots *slots, struct intern *in, uint32_t proc,
		     struct stackwalk **out, struct tt_error *err)
{
	struct stackwalk *w = calloc(1, sizeof *w);
	if (!w)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sampler");
	w->t = t;
	w->l = &t->layout;
	w->o = *o;
	tidmap_init(&w->tids, t->pid);
	w->ts_len = t->layout.ts_read_size;
	if (w->o.check_depth == 0)
		w->o.check_depth = 1;
	w->first = true;
	w->arena_size = ARENA_SIZE;  /* mapped at the first sample (sampling_scratch) */
	w->interps = calloc(MAX_INTERPS, sizeof *w->interps);
	w->proc = proc;
	w->in = in ? in : &w->own_in;
	w->slots = slots ? slots : &w->own_slots;
	if (!w->interps || codecache_init(&w->codes) != 0 || (!in && intern_init(&w->own_in) != 0) ||
	    (!slots && threadslots_init(&w->own_slots) != 0)) {
		stackwalk_free(w);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sampler");
	}
	*out = w;
	return TT_OK;
}

/* The read scratch, made at the first sample: a process that ends (or
 * execs) before it is ever sampled costs none of it. */
static tt_status
sampling_scratch(struct stackwalk *w, struct tt_error *err)
{
	if (w->arena)
		return TT_OK;
	w->arena = arena_map(w->arena_size);
	w->ra_buf = malloc(READ_AHEAD + 2 * 4096);
	if (w->arena && w->ra_buf &&
	    grow_array((void **)&w->segs, &w->segs_cap, 256, sizeof *w->segs) &&
	    grow_array((void **)&w->spans, &w->spans_cap, 256, sizeof *w->spans))
		return TT_OK;
	if (w->arena)
		munmap(w->arena, w->arena_size);
	w->arena = NULL;
	free(w->ra_buf);
	free(w->segs);
	free(w->spans);
	w->ra_buf = NULL;
	w->segs = NULL;
	w->spans = NULL;
	w->segs_cap = w->spans_cap = 0;
	return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sampler");
}

static void
tcache_release(struct stackwalk *w, struct tcache *tc)
{
	free(tc->frames);
	if (tc->stat_fd >= 0) {
		close(tc->stat_fd);
		w->open_fds--;
	}
}

/* What only sampling needs, freed when the walker is (or its process
 * ends: stackwalk_retire): read scratch, outputs, the task-id map. */
static void
free_sampling_state(struct stackwalk *w)
{
	if (w->arena)
		munmap(w->arena, w->arena_size);
	w->arena = NULL;
	free(w->chain);
	w->chain = NULL;
	w->chain_cap = 0;
	free(w->ra_buf);
	w->ra_buf = NULL;
	free(w->segs);
	w->segs = NULL;
	free(w->spans);
	w->spans = NULL;
	w->segs_cap = w->spans_cap = 0;
	free(w->out);
	free(w->out_tc);
	w->out = NULL;
	w->out_tc = NULL;
	w->nout = w->out_cap = 0;
	tidmap_free(&w->tids);
}

void
stackwalk_free(struct stackwalk *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->ninterps; i++) {
		for (uint32_t k = 0; k < w->interps[i].nthreads; k++)
			tcache_release(w, &w->interps[i].threads[k]);
		free(w->interps[i].threads);
	}
	free(w->interps);
	threadslots_free(&w->own_slots);
	free_sampling_state(w);
	codecache_free(&w->codes);
	intern_free(&w->own_in);
	free(w);
}

static void release_gone(struct stackwalk *w, struct tcache *tc, uint64_t now);

void
stackwalk_retire(struct stackwalk *w, uint64_t now_ns)
{
	for (uint32_t i = 0; i < w->ninterps; i++) {
		for (uint32_t k = 0; k < w->interps[i].nthreads; k++)
			release_gone(w, &w->interps[i].threads[k], now_ns);
		free(w->interps[i].threads);
		w->interps[i].threads = NULL;
		w->interps[i].nthreads = w->interps[i].cap = 0;
	}
	w->ninterps = 0;
	free(w->interps);
	w->interps = NULL;
	/* Only what resolves the IDs consumers hold stays: the intern and the
	 * thread slots (the code cache's names are in the intern). */
	free_sampling_state(w);
	codecache_seal(&w->codes);
}

const struct intern *
stackwalk_intern(const struct stackwalk *w)
{
	return w->in;
}

const struct code_cache *
stackwalk_codes(const struct stackwalk *w)
{
	return &w->codes;
}

const struct appendlog *
stackwalk_slots(const struct stackwalk *w)
{
	return w->slots->log;
}

const struct walk_counters *
stackwalk_counters(const struct stackwalk *w)
{
	return &w->c;
}

/* ---------------------------------------------------------------------
 * Kernel-side thread facts: on-CPU state and names
 * ------------------------------------------------------------------- */

static void
refresh_name(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	char name[64];
	if (tc->tid_unknown)
		return;
	w->c.proc_reads++;
	taskinfo_comm(w->t->pid, (long)tc->native_tid, name, sizeof name);
	if (!name[0])
		return;
	threadslots_set_name(w->slots, tc->slot, name, now - w->epoch_ns);
}

static void resolve_tid(struct stackwalk *w, struct tcache *tc, bool only_thread);

static void
refresh_cpu(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	if (!w->o.cpu_period_ns || w->t->pid <= 0)
		return;
	/* Names: right away, then twice more while the thread is young. */
	uint64_t age = now - tc->born_ns;
	if ((tc->name_reads == 1 && age > 20000000ull) || (tc->name_reads == 2 && age > 500000000ull)) {
		tc->name_reads++;
		refresh_name(w, tc, now);
	}
	if (now - tc->cpu_checked_ns < w->o.cpu_period_ns && tc->cpu_checked_ns)
		return;
	tc->cpu_checked_ns = now;
	w->cpu_reads_left -= w->cpu_reads_left > 0;
	if (tc->tid_retry) {
		resolve_tid(w, tc, false);
		if (!tc->tid_unknown) {
			/* Its slot learns the task: ids first, then the flag the
			 * readers test before they use them. */
			struct thread_slot *s = threadslots_at(w->slots, tc->slot);
			s->native_tid = tc->native_tid;
			s->ns_tid = tc->ns_tid;
			atomic_store_explicit(&s->tid_unknown, false, memory_order_release);
			refresh_name(w, tc, now);
		}
	}
	if (tc->tid_unknown) {
		/* Never another task's state: unknown. */
		tc->sticky = (tc->sticky & ~(uint32_t)TT_THREAD_ON_CPU) | TT_THREAD_CPU_UNKNOWN;
		return;
	}
	w->c.proc_reads++;
	char buf[1024];
	ssize_t n = -1;
	if (tc->stat_fd < 0 && w->open_fds < MAX_STAT_FDS) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/task/%llu/stat", (int)w->t->pid,
			 (unsigned long long)tc->native_tid);
		tc->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (tc->stat_fd >= 0)
			w->open_fds++;
	}
	enum task_cpu cpu;
	if (tc->stat_fd >= 0) {
		n = pread(tc->stat_fd, buf, sizeof buf - 1, 0);
		cpu = n > 0 ? taskinfo_parse_stat(buf, (size_t)n) : TASK_CPU_UNKNOWN;
	} else {
		cpu = taskinfo_cpu_state(w->t->pid, (long)tc->native_tid);
	}
	tc->sticky &= ~(uint32_t)(TT_THREAD_ON_CPU | TT_THREAD_CPU_UNKNOWN);
	if (cpu == TASK_CPU_RUNNING)
		tc->sticky |= TT_THREAD_ON_CPU;
	else if (cpu == TASK_CPU_UNKNOWN)
		tc->sticky |= TT_THREAD_CPU_UNKNOWN;
}

/* Every due on-CPU state of an interpreter's threads, in turn from where
 * the last sample left off, up to the sample's budget: a thousand idle
 * threads then cost a few /proc reads a sample, not a thousand (their
 * states refresh less often instead; the GIL holder's is refreshed as it
 * is walked). */
static void
refresh_cpu_states(struct stackwalk *w, struct interp *iv, uint64_t now)
{
	uint32_t n = iv->nthreads;
	bool limited = w->o.cpu_reads_per_sample > 0;
	if (limited && iv->cpu_scan_ns && now - iv->cpu_scan_ns < DUE_SCAN_NS)
		return;
	iv->cpu_scan_ns = now;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t k = (iv->cpu_cursor + j) % n;
		if (limited && !w->cpu_reads_left) {
			iv->cpu_cursor = k;
			return;
		}
		refresh_cpu(w, &iv->threads[k], now);
	}
}

/* ---------------------------------------------------------------------
 * Interpreters and their thread lists
 * ------------------------------------------------------------------- */

static void
parse_block(const struct py_layout *l, struct interp *iv, const uint8_t *block)
{
	/* The block starts at is_block_start; fields are at interpreter offsets. */
	uint64_t o = l->is_block_start;
	iv->id = (int64_t)load_u64(block, l->is_id - o);
	iv->next = load_u64(block, l->is_next - o);
	iv->head = load_u64(block, l->is_threads_head - o);
	iv->main = l->has_threads_main ? load_u64(block, l->is_threads_main - o) : 0;
	iv->unique_id = load_u64(block, l->is_threads_unique_id - o);
	iv->count = load_u64(block, l->is_threads_count - o);
	if (l->gil_place == PY_GIL_IN_INTERP) {
		iv->holder = load_u64(block, l->is_gil_holder - o);
		iv->switch_no = load_u64(block, l->is_gil_switch - o);
		iv->locked = load_i32(block, l->is_gil_locked - o);
	} else if (iv->gilbuf) {
		iv->holder = load_u64(iv->gilbuf, l->gil_holder);
		iv->switch_no = load_u64(iv->gilbuf, l->gil_switch);
		iv->locked = load_i32(iv->gilbuf, l->gil_locked);
	}
	iv->code_gen = l->has_code_generation ? load_u64(block, l->is_code_generation - o) : 0;
	iv->gc = load_i32(block, l->is_gc_collecting - o);
	iv->have = true;
}

/* A thread left the target: its slot waits, then goes to a new thread. */
static void
slot_gone(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	if (tc->slot == UINT32_MAX)
		return;
	threadslots_gone(w->slots, tc->slot, now - w->epoch_ns);
	w->c.threads_gone++;
	tc->slot = UINT32_MAX;
}

static void
release_gone(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	slot_gone(w, tc, now);
	tcache_release(w, tc);
}

static tt_status
new_slot(struct stackwalk *w, struct tcache *tc, int64_t interp_id, uint64_t now,
	 struct tt_error *err)
{
	struct slot_owner who = {.native_tid = tc->native_tid, .ns_tid = tc->ns_tid,
				 .tid_unknown = tc->tid_unknown, .interp_id = interp_id,
				 .proc = w->proc};
	bool revived;
	tt_status st = threadslots_take(w->slots, &who, now - w->epoch_ns, &tc->slot, &revived, err);
	if (st != TT_OK) {
		tc->slot = UINT32_MAX;
		return st;
	}
	tc->born_ns = now;
	tc->name_reads = 1;
	if (revived) {
		w->c.threads_gone--;
		w->c.slots_revived++;
		return TT_OK;
	}
	w->c.threads_seen++;
	refresh_name(w, tc, now);
	return TT_OK;
}

/* 3.11 gives a thread state made for a new thread its creator's thread ids
 * until the new thread runs (3.12+ leave them 0): such a state shares its
 * native id with a live thread and sits at its root cframe with no frame.
 * It is not a thread yet; the new thread bumps threads.count when it starts,
 * which makes us read the list again. */
static bool
unstarted(const struct py_layout *l, const struct tcache *tc)
{
	uint64_t cf = load_u64(tc->tsbuf, l->ts_cframe);
	return cf == 0 || (cf == tc->tstate + l->ts_root_cframe &&
			   load_u64(tc->tsbuf, l->ts_root_cframe + l->cf_current_frame) == 0);
}

/* Which of the process's tasks a new thread is (tidmap.h). A fake target
 * (pid 0: fuzzing) keeps the recorded ids. */
static void
resolve_tid(struct stackwalk *w, struct tcache *tc, bool only_thread)
{
	if (w->t->pid <= 0) {
		tc->tid_unknown = false;
		tc->ns_tid = tc->native_tid;
		return;
	}
	w->c.proc_reads++;
	bool in_ns;
	uint64_t ours = tidmap_resolve(&w->tids, tc->recorded_tid, tc->was_main, only_thread, &in_ns,
				       &tc->tid_retry);
	tc->tid_unknown = ours == 0;
	tc->native_tid = ours ? ours : tc->recorded_tid;
	tc->ns_tid = in_ns ? tc->recorded_tid : tc->native_tid;
}

static uint32_t
drop_unstarted(struct stackwalk *w, struct tcache *fresh, uint32_t *moved_from, uint32_t n)
{
	uint32_t kept = 0;
	for (uint32_t k = 0; k < n; k++) {
		bool drop = false;
		for (uint32_t j = 0; j < n && !drop && unstarted(w->l, &fresh[k]); j++)
			drop = j != k && fresh[j].recorded_tid == fresh[k].recorded_tid;
		if (drop && fresh[k].slot == UINT32_MAX) {
			tcache_release(w, &fresh[k]);
		} else {
			moved_from[kept] = moved_from[k];
			fresh[kept++] = fresh[k];
		}
	}
	return kept;
}

void
stackwalk_set_epoch(struct stackwalk *w, uint64_t epoch_ns)
{
	w->epoch_ns = epoch_ns;
}

uint64_t
stackwalk_epoch(const struct stackwalk *w)
{
	return w->epoch_ns;
}

static bool add_seg(struct stackwalk *w, uint64_t addr, void *buf, size_t len);

/* The old list's entries by thread-state address, for a rebuild: IDs are
 * their indices + 1. */
static uint32_t
old_hash(const void *old, uint32_t id)
{
	return hash_mix64(((const struct tcache *)old)[id - 1].tstate);
}

static bool
old_index_build(struct idindex *x, const struct tcache *old, uint32_t nold)
{
	return idindex_reserve(x, 1, nold + 1, 16, old_hash, old);
}

/* The old entry at thread state ts not yet moved to the new list, or -1. */
static int64_t
old_index_find(const struct idindex *x, const struct tcache *old, uint64_t ts)
{
	for (uint32_t h = idindex_start(x, hash_mix64(ts)); x->slots[h]; h = idindex_next(x, h))
		if (old[x->slots[h] - 1].tstate == ts)
			return x->slots[h] - 1;
	return -1;
}

/* The thread list being read: the caches kept or made, and for each where
 * it came from in the old list. */
struct fresh_list {
	struct tcache *v;
	uint32_t *moved_from;    /* per entry: its old index, or UINT32_MAX */
	uint32_t n, cap, moved_cap;
};

/* The old list's states this sample has not read yet, in one batch, into
 * oldbuf (NULL where a read did not arrive). A thread that may have run
 * was read with the interpreter's block: that read is as fresh, and under
 * thread churn it is most of them. */
static tt_status
read_old_states(struct stackwalk *w, const struct tcache *old, uint32_t nold, uint8_t **oldbuf,
		struct tt_error *err)
{
	tt_status st = TT_OK;
	w->nsegs = 0;
	for (uint32_t k = 0; k < nold; k++) {
		if (old[k].tsbuf) {
			oldbuf[k] = (uint8_t *)old[k].tsbuf;
			continue;
		}
		uint8_t *b = arena_take(w, w->ts_len);
		if (!b || !add_seg(w, old[k].tstate, b, w->ts_len))
			break;
		oldbuf[k] = b;
	}
	size_t done = 0;
	if (w->nsegs) {
		w->c.batch_attempts++;
		st = remote_readv(&w->t->mem, w->segs, w->nsegs, &done, err);
		if (done == w->nsegs)
			w->c.batch_successes++;
	}
	/* This batch's segments are the states read here, in list order. */
	for (uint32_t k = 0, seg = 0; k < nold; k++)
		if (!old[k].tsbuf && oldbuf[k] && seg++ >= done)
			oldbuf[k] = NULL;
	w->nsegs = 0;
	return st;
}

/* A started thread's node (state at ts read into buf, native id tid) joins
 * the fresh list: its old cache moves over when old[was] is the same
 * thread, else a new cache is made. */
static tt_status
take_thread(struct stackwalk *w, struct interp *iv, struct fresh_list *f, struct tcache *old,
	    int64_t was, uint64_t ts, const uint8_t *buf, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	uint64_t tid = load_u64(buf, l->ts_native_thread_id);
	if (!grow_array((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v) ||
	    !grow_array((void **)&f->moved_from, &f->moved_cap, f->n + 1, sizeof *f->moved_from))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for threads");
	f->moved_from[f->n] = UINT32_MAX;
	struct tcache *tc = &f->v[f->n++];
	if (was >= 0 && old[was].recorded_tid == tid) {
		*tc = old[was];
		old[was].tstate = 0; /* moved */
		f->moved_from[f->n - 1] = (uint32_t)was;
	} else {
		memset(tc, 0, sizeof *tc);
		tc->tstate = ts;
		tc->recorded_tid = tc->native_tid = tid;
		/* which task it is: once the whole list is known */
		tc->tid_unknown = true;
		tc->was_main = l->has_threads_main ? ts == iv->main : load_u64(buf, l->ts_next) == 0;
		tc->stat_fd = -1;
		tc->slot = UINT32_MAX; /* given once the whole list has been read */
	}
	/* A state read with the block keeps the frames read with it. */
	if (buf != tc->tsbuf) {
		tc->cfbuf = NULL;
		tc->span_lo = tc->span_hi = 0;
		tc->planned_full = false;
	}
	tc->tsbuf = buf;
	tc->ts_seg = UINT32_MAX;
	return TT_OK;
}

/* Walks the list from its head into f, each state from oldbuf when the
 * batch read it, else read singly; *visited counts the nodes. */
static tt_status
read_list(struct stackwalk *w, struct interp *iv, struct fresh_list *f, struct tcache *old,
	  uint8_t **oldbuf, const struct idindex *index, uint64_t *visited, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	struct cycle_guard guard;
	cycle_guard_init(&guard);
	tt_status st = TT_OK;
	/* Every node counts towards the cap, started OS thread or not. */
	for (uint64_t ts = iv->head; ts != 0; (*visited)++) {
		if (*visited >= UNWIND_MAX_THREADS || (ts & 7) || cycle_guard_seen(&guard, ts))
			return tt_fail(err, TT_EBADMEM, 0, "thread list is corrupt (changing?)");
		int64_t was = old_index_find(index, old, ts);
		uint8_t *buf = was >= 0 ? oldbuf[was] : NULL;
		if (!buf) {
			if (!(buf = arena_take(w, w->ts_len)))
				return arena_exhausted(w, err);
			w->c.single_reads++;
			if ((st = remote_read(&w->t->mem, ts, buf, w->ts_len, err)) != TT_OK)
				return st;
		}
		if (load_u64(buf, l->ts_interp) != iv->addr)
			return tt_fail(err, TT_EBADMEM, 0, "thread state 0x%llx changed while read",
				       (unsigned long long)ts);
		/* A native id of 0: its OS thread has not started. */
		if (load_u64(buf, l->ts_native_thread_id) != 0 &&
		    (st = take_thread(w, iv, f, old, was, ts, buf, err)) != TT_OK)
			return st;
		ts = load_u64(buf, l->ts_next);
	}
	return TT_OK;
}

/* Re-read an interpreter's thread list, keeping caches of threads that are
 * still there. A list that changed mostly keeps its nodes (new threads come
 * in at the head): the old list's states are read in one batch first, and
 * the walk reads one by one only the nodes it has not seen. */
static tt_status
rebuild_threads(struct stackwalk *w, struct interp *iv, uint64_t now, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	struct tcache *old = iv->threads;
	uint32_t nold = iv->nthreads;
	struct fresh_list f = {0};
	w->c.list_rebuilds++;
	struct idindex index = {0};
	uint8_t **oldbuf = calloc(nold ? nold : 1, sizeof *oldbuf);
	if (!oldbuf || !old_index_build(&index, old, nold)) {
		free(oldbuf);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for threads");
	}
	uint64_t visited = 0;
	tt_status st = read_old_states(w, old, nold, oldbuf, err);
	if (st == TT_OK)
		st = read_list(w, iv, &f, old, oldbuf, &index, &visited, err);
	/* A node read after its thread ended can still name our interpreter
	 * and end the list (next 0): the walk then stops short, and taking it
	 * would drop every thread behind it, to be found again as new ones
	 * (a 500-thread pool lost and re-found some 40 times a second under
	 * thread churn). The interpreter's thread count, read with the head,
	 * tells: it counts the threads the threading module started, so a
	 * whole list has at least that many nodes, but for the few that end
	 * while it is read. */
	if (st == TT_OK && visited + 8 + iv->count / 32 < iv->count)
		st = tt_fail(err, TT_EBADMEM, 0, "thread list read torn (%llu of %llu threads)",
			     (unsigned long long)visited, (unsigned long long)iv->count);
	if (st == TT_OK && l->has_cframe)
		f.n = drop_unstarted(w, f.v, f.moved_from, f.n);
	/* New threads' tasks, now that the whole list is known. */
	for (uint32_t k = 0; k < f.n && st == TT_OK; k++)
		if (f.v[k].slot == UINT32_MAX)
			resolve_tid(w, &f.v[k], f.n == 1 && w->ninterps == 1);
	/* Slots are for good: only threads of a list read whole get one, or a
	 * list torn into a loop would use them up sample after sample. */
	for (uint32_t k = 0; k < f.n && st == TT_OK; k++)
		if (f.v[k].slot == UINT32_MAX)
			st = new_slot(w, &f.v[k], iv->id, now, err);
	idindex_free(&index);
	free(oldbuf);
	if (st != TT_OK) {
		/* Keep the old list; the caller retries next sample. Caches moved
		 * into the fresh list go back to their owners; the others are
		 * released. */
		for (uint32_t k = 0; k < f.n; k++) {
			if (f.moved_from[k] != UINT32_MAX)
				old[f.moved_from[k]] = f.v[k];
			else
				tcache_release(w, &f.v[k]);
		}
		free(f.v);
		free(f.moved_from);
		return st;
	}
	free(f.moved_from);
	for (uint32_t k = 0; k < nold; k++)
		if (old[k].tstate != 0)
			release_gone(w, &old[k], now);
	free(old);
	iv->threads = f.v;
	iv->nthreads = f.n;
	iv->cap = f.cap;
	return TT_OK;
}

/* Find the interpreters (rarely more than one). */
static tt_status
refresh_interps(struct stackwalk *w, uint64_t now, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	uint64_t addrs[MAX_INTERPS];
	uint32_t n = 0;
	uint64_t addr;
	w->c.single_reads++;
	tt_status st = remote_read_u64(&w->t->mem, w->t->runtime_addr + l->rt_interpreters_head,
				       &addr, err);
	if (st != TT_OK)
		return st;
	if (addr == 0)
		return tt_fail(err, TT_EBADMEM, 0, "the runtime has no interpreter (starting or exiting)");
	while (addr != 0 && n < MAX_INTERPS) {
		for (uint32_t i = 0; i < n; i++)
			if (addrs[i] == addr)
				return tt_fail(err, TT_EBADMEM, 0,
					       "interpreter list loops back on itself (changing?)");
		addrs[n++] = addr;
		w->c.single_reads++;
		if ((st = remote_read_u64(&w->t->mem, addr + l->is_next, &addr, err)) != TT_OK)
			return st;
	}
	bool same = n == w->ninterps;
	for (uint32_t i = 0; same && i < n; i++)
		same = w->interps[i].addr == addrs[i];
	if (same)
		return TT_OK;
	/* Keep state of interpreters that remain. */
	struct interp next[MAX_INTERPS];
	memset(next, 0, sizeof next);
	for (uint32_t i = 0; i < n; i++) {
		next[i].addr = addrs[i];
		for (uint32_t k = 0; k < w->ninterps; k++) {
			if (w->interps[k].addr == addrs[i]) {
				next[i] = w->interps[k];
				w->interps[k].addr = 0;   /* taken: its threads move */
				break;
			}
		}
	}
	for (uint32_t k = 0; k < w->ninterps; k++) {
		if (w->interps[k].addr != 0) {
			for (uint32_t j = 0; j < w->interps[k].nthreads; j++)
				release_gone(w, &w->interps[k].threads[j], now);
			free(w->interps[k].threads);
		}
	}
	memcpy(w->interps, next, MAX_INTERPS * sizeof *w->interps);
	w->ninterps = n;
	return TT_OK;
}

/* ---------------------------------------------------------------------
 * Planning the batch
 * ------------------------------------------------------------------- */

/* Queue one segment; a sample of many threads takes as many as it needs
 * (no cut-off that would leave threads to one read each). */
static bool
add_seg(struct stackwalk *w, uint64_t addr, void *buf, size_t len)
{
	if (!grow_array((void **)&w->segs, &w->segs_cap, w->nsegs + 1, sizeof *w->segs))
		return false;
	w->segs[w->nsegs++] = (struct remote_seg){.addr = addr, .buf = buf, .len = len};
	return true;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Frame addresses come innermost first, so in descending order within a
 * data-stack chunk: reversed, a check of the top frames is already sorted
 * and needs no qsort (which dominated a sample's own work). */
static void
sort_addrs(uint64_t *a, uint32_t n)
{
	for (uint32_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
		uint64_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	for (uint32_t i = 1; i < n; i++) {
		if (a[i - 1] > a[i]) {
			qsort(a, n, sizeof *a, cmp_u64);
			return;
		}
	}
}

/* Queue one span [lo, hi) for reading in this sample. */
static bool
add_span(struct stackwalk *w, uint64_t lo, uint64_t hi)
{
	if (hi <= lo ||
	    !grow_array((void **)&w->spans, &w->spans_cap, w->nspans + 1, sizeof *w->spans))
		return false;
	uint8_t *buf = arena_take(w, hi - lo);
	if (!buf)
		return false;
	w->spans[w->nspans++] = (struct span){.addr = lo, .len = (uint32_t)(hi - lo), .buf = buf};
	return true;
}

/* Plan reads of a thread's frames, queued on w->spans (the caller turns
 * them into iovecs after the thread states):
 *  - depth 0 (a full walk): the used part of the current data-stack chunk
 *    in one piece, like a snapshot, plus every cached frame elsewhere
 *    (older chunks, generators);
 *  - otherwise the first `depth` cached frames and room above the top for
 *    fresh calls.
 * Frames closer than SPAN_GAP are merged into one segment. */
static void
plan_spans(struct stackwalk *w, struct tcache *tc, uint32_t depth)
{
	const struct py_layout *l = w->l;
	tc->span_lo = w->nspans;
	tc->span_hi = w->nspans;
	uint64_t snap_lo = 0, snap_hi = 0;
	if (depth == 0 && tc->chunk && tc->chunk_end > tc->chunk + 64 && tc->stack_top > tc->chunk &&
	    tc->stack_top <= tc->chunk_end) {
		uint64_t lo = tc->chunk + 3 * 8; /* _PyStackChunk.data */
		uint64_t hi = tc->stack_top + SPAN_SLACK;
		if (tc->have_chain && tc->nframes && tc->frames[0].addr + l->fr_read_size > hi)
			hi = tc->frames[0].addr + l->fr_read_size + SPAN_SLACK;
		hi = hi < tc->chunk_end ? hi : tc->chunk_end;
		if (hi > lo && hi - lo <= MAX_SPAN && add_span(w, lo, hi)) {
			snap_lo = lo;
			snap_hi = hi;
		}
	}
	if (tc->have_chain && tc->nframes) {
		uint32_t n = depth && depth < tc->nframes ? depth : tc->nframes;
		uint64_t stackaddrs[64];
		uint64_t *addrs = n <= 64 ? stackaddrs : malloc(n * sizeof *addrs);
		if (addrs) {
			uint32_t m = 0;
			for (uint32_t i = 0; i < n; i++) {
				uint64_t a = tc->frames[i].addr;
				if (!(a >= snap_lo && a + l->fr_read_size <= snap_hi))
					addrs[m++] = a;
			}
			sort_addrs(addrs, m);
			uint64_t top = tc->frames[0].addr;
			for (uint32_t i = 0; i < m;) {
				uint64_t lo = addrs[i], hi = addrs[i] + l->fr_read_size;
				bool in_chunk = tc->chunk && lo >= tc->chunk && lo < tc->chunk_end;
				uint32_t j = i + 1;
				while (j < m && addrs[j] <= hi + SPAN_GAP &&
				       addrs[j] + l->fr_read_size - lo <= MAX_SPAN &&
				       (!in_chunk || addrs[j] + l->fr_read_size <= tc->chunk_end)) {
					hi = addrs[j] + l->fr_read_size;
					j++;
				}
				/* The segment holding the top frame also covers fresh calls. */
				if (in_chunk && lo <= top && top < hi) {
					uint64_t want = (tc->stack_top > hi ? tc->stack_top : hi) + SPAN_SLACK;
					hi = want < tc->chunk_end ? want : tc->chunk_end;
					if (hi - lo > MAX_SPAN)
						hi = lo + MAX_SPAN;
				}
				if (!add_span(w, lo, hi))
					break;
				i = j;
			}
			if (addrs != stackaddrs)
				free(addrs);
		}
	}
	tc->span_hi = w->nspans;
}

/* ---------------------------------------------------------------------
 * Walking one thread
 * ------------------------------------------------------------------- */

static const uint8_t *
span_lookup(const struct stackwalk *w, const struct tcache *tc, uint64_t addr, size_t len)
{
	/* In differences, not sums: a garbage address near 2^64 must not
	 * wrap around into a span. */
	for (uint32_t i = tc->span_lo; i < tc->span_hi; i++) {
		const struct span *s = &w->spans[i];
		if (s->ok && addr >= s->addr && len <= s->len && addr - s->addr <= s->len - len)
			return s->buf + (addr - s->addr);
	}
	return NULL;
}

static tt_status
chain_reserve(struct stackwalk *w, uint32_t n, struct tt_error *err)
{
	if (!grow_array((void **)&w->chain, &w->chain_cap, n, sizeof *w->chain))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for frames");
	return TT_OK;
}

/* Where does frame address `addr` sit in the cached chain? Looks at the
 * expected index first, then the top of the chain. */
static int32_t
cached_index(const struct tcache *tc, uint64_t addr, int32_t expect)
{
	if (expect >= 0 && (uint32_t)expect < tc->nframes && tc->frames[expect].addr == addr)
		return expect;
	uint32_t lim = tc->nframes < 64 ? tc->nframes : 64;
	for (uint32_t i = 0; i < lim; i++)
		if (tc->frames[i].addr == addr)
			return (int32_t)i;
	return -1;
}

/* Give frames chain[from..0] their stack IDs, building on the stack `below`
 * (that of frame from + 1). Shim frames share the stack below them. */
static tt_status
intern_upward(struct stackwalk *w, struct cframe *chain, int32_t from, uint32_t below,
	      struct tt_error *err)
{
	for (int32_t i = from; i >= 0; i--) {
		struct cframe *cf = &chain[i];
		if (cf->frame_id) {
			cf->stack_id = intern_stack(w->in, below, cf->frame_id);
			if (cf->stack_id == 0)
				return tt_fail(err, TT_ENOMEM, ENOMEM, "too many distinct stacks");
		} else {
			cf->stack_id = below;
		}
		below = cf->stack_id;
	}
	return TT_OK;
}

static void
count_walk(struct stackwalk *w, uint32_t reused, uint32_t total)
{
	if (reused == total && total > 0)
		w->c.full_hits++;
	else if (reused > 0)
		w->c.partial_hits++;
	else
		w->c.misses++;
	w->c.frames_reused += reused;
	w->c.frames_read += total - reused;
}

/* The walk met the cached chain at index `align` after reading n new
 * frames (w->chain[0..n-1], the last of which is cached frame `align`):
 * keep the cached rest where it is and put the new prefix in front of it.
 * Work is proportional to the prefix, not to the depth of the stack. */
static tt_status
splice_prefix(struct stackwalk *w, struct tcache *tc, uint32_t n, uint32_t align,
	      uint32_t matched, struct tt_error *err)
{
	uint32_t rest = tc->nframes - align - 1;
	uint32_t reused = matched + rest;
	bool identical = n == align + 1 && matched == n;
	if (!identical) {
		if (!grow_array((void **)&tc->frames, &tc->cap, n + rest, sizeof *tc->frames))
			return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for frames");
		if (n != align + 1)
			memmove(&tc->frames[n], &tc->frames[align + 1], rest * sizeof *tc->frames);
		tt_status st = intern_upward(w, w->chain, (int32_t)n - 1,
					     rest ? tc->frames[n].stack_id : 0, err);
		if (st != TT_OK)
			return st;
		memcpy(tc->frames, w->chain, n * sizeof *tc->frames);
		tc->nframes = n + rest;
		tc->chain_gen++;
	}
	count_walk(w, reused, tc->nframes);
	tc->stack_id = tc->nframes ? tc->frames[0].stack_id : 0;
	tc->code_epoch = w->codes.epoch;
	return TT_OK;
}

/* The thread's innermost frame: in the thread state (3.13+), or one hop
 * further at tstate->cframe->current_frame (3.11/3.12), which the batch
 * fetched at last sample's cframe address; only a cframe that moved costs a
 * read of its own. */
static tt_status
current_frame(struct stackwalk *w, struct tcache *tc, uint64_t *out, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	const uint8_t *ts = tc->tsbuf;
	if (!l->has_cframe) {
		*out = load_u64(ts, l->ts_current_frame);
		return TT_OK;
	}
	uint64_t cf = load_u64(ts, l->ts_cframe);
	tc->cframe = cf;
	if (cf == 0) {
		*out = 0;
		return TT_OK;
	}
	if (cf & 7)
		return tt_fail(err, TT_EBADMEM, 0, "misaligned cframe pointer");
	uint64_t at = cf + l->cf_current_frame;
	if (at >= tc->tstate && at - tc->tstate <= l->ts_read_size - 8) {
		*out = load_u64(ts, at - tc->tstate); /* the thread state's root_cframe */
		return TT_OK;
	}
	if (tc->cfbuf && tc->cf_addr == at) {
		*out = load_u64(tc->cfbuf, 0);
		return TT_OK;
	}
	w->c.single_reads++;
	return remote_read_u64(&w->t->mem, at, out, err);
}

/* Queue the read of a predicted cframe->current_frame for a thread whose
 * state is in this batch. Queued after the frame spans: a read that fails
 * (the thread went away) ends the vectored read, and only what follows it
 * is lost. */
static void
plan_cframe(struct stackwalk *w, struct tcache *tc)
{
	const struct py_layout *l = w->l;
	tc->cfbuf = NULL;
	tc->cf_seg = UINT32_MAX;
	if (!l->has_cframe || tc->cframe == 0 || (tc->cframe & 7))
		return;
	uint64_t at = tc->cframe + l->cf_current_frame;
	if (at >= tc->tstate && at - tc->tstate <= l->ts_read_size - 8)
		return; /* comes with the thread state */
	uint8_t *buf = arena_take(w, 8);
	if (!buf || !add_seg(w, at, buf, 8))
		return;
	tc->cfbuf = buf;
	tc->cf_addr = at;
	tc->cf_seg = w->nsegs - 1;
}

/* Read the frame at `addr` together with what lies below it in its page and
 * up to READ_AHEAD / 4096 pages further down (the caller frames of a deep
 * stack), stopping at the first unmapped page. */
static const uint8_t *
read_ahead(struct stackwalk *w, uint64_t addr, size_t len, struct tt_error *err)
{
	enum { PAGES = READ_AHEAD / 4096 };
	uint64_t end = addr + len, page = addr & ~4095ull;
	if (end - page > 4096 + 512 || page < PAGES * 4096ull)
		return NULL;
	uint64_t base = page - PAGES * 4096ull;
	struct remote_seg segs[PAGES + 1];
	/* Highest first: the frame's own page, then page after page down. */
	segs[0] = (struct remote_seg){.addr = page, .buf = w->ra_buf + (page - base),
				      .len = end - page};
	for (uint32_t k = 1; k <= PAGES; k++) {
		uint64_t p = page - 4096ull * k;
		segs[k] = (struct remote_seg){.addr = p, .buf = w->ra_buf + (p - base), .len = 4096};
	}
	size_t done;
	w->c.single_reads++;
	if (remote_readv(&w->t->mem, segs, PAGES + 1, &done, err) != TT_OK || done == 0)
		return NULL;
	w->ra_base = base;
	w->ra_lo = segs[done - 1].addr;
	w->ra_hi = end;
	return w->ra_buf + (addr - base);
}

/* The same upward, two pages at most: frames on a thread's C stack (entry
 * frames, and on 3.15 the frames of Python called from C) have their
 * callers above them, a few hundred bytes apart. */
static const uint8_t *
read_ahead_up(struct stackwalk *w, uint64_t addr, size_t len, struct tt_error *err)
{
	uint64_t page = addr & ~4095ull, next = page + 4096;
	if (addr + len > next + 4096)
		return NULL;
	struct remote_seg segs[2] = {
		{.addr = addr, .buf = w->ra_buf + (addr - page), .len = next - addr},
		{.addr = next, .buf = w->ra_buf + 4096, .len = 4096},
	};
	size_t done;
	w->c.single_reads++;
	if (remote_readv(&w->t->mem, segs, 2, &done, err) != TT_OK || done == 0 ||
	    (done == 1 && addr + len > next))
		return NULL;
	w->ra_base = page;
	w->ra_lo = addr;
	w->ra_hi = done == 2 ? next + 4096 : next;
	return w->ra_buf + (addr - page);
}

/* A frame read on its own (no span or read-ahead holds it) lands here. */
#define FRAME_LOCAL_MAX 512

/* Python frames in the cached chain below index `align`. */
static uint32_t
rest_depth(const struct stackwalk *w, const struct tcache *tc, uint32_t align)
{
	if (align + 1 >= tc->nframes)
		return 0;
	uint32_t id = tc->frames[align + 1].stack_id;
	return id ? intern_stack_at(w->in, id)->depth : 0;
}

/* The bytes of the frame at cur: from the thread's spans or the last
 * read-ahead, else read. A second miss in a walk reads ahead, towards the
 * callers: down a data stack, up a C stack (the last miss was below this
 * one); local takes a single read. */
static tt_status
frame_bytes(struct stackwalk *w, struct tcache *tc, uint64_t cur, unsigned *misses,
	    uint64_t *last_miss, uint8_t local[FRAME_LOCAL_MAX], const uint8_t **out,
	    struct tt_error *err)
{
	const struct py_layout *l = w->l;
	const uint8_t *fb = span_lookup(w, tc, cur, l->fr_read_size);
	if (!fb && cur >= w->ra_lo && cur < w->ra_hi && l->fr_read_size <= w->ra_hi - cur)
		fb = w->ra_buf + (cur - w->ra_base);
	bool missed = !fb;
	if (!fb && (*misses)++ > 0)
		fb = cur > *last_miss ? read_ahead_up(w, cur, l->fr_read_size, err)
				      : read_ahead(w, cur, l->fr_read_size, err);
	if (missed)
		*last_miss = cur;
	if (!fb) {
		if (l->fr_read_size > FRAME_LOCAL_MAX)
			return tt_fail(err, TT_EBADMEM, 0, "frame layout too large");
		w->c.single_reads++;
		tt_status st = remote_read(&w->t->mem, cur, local, l->fr_read_size, err);
		if (st != TT_OK)
			return st;
		fb = local;
	}
	*out = fb;
	return TT_OK;
}

/* A code frame not found in the cache: its code object, line and frame ID. */
static tt_status
resolve_frame(struct stackwalk *w, struct cframe *cf, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	uint64_t code = cf->executable & ~l->tag_mask;
	tt_status st = codecache_lookup(&w->codes, &w->t->mem, l, code, &cf->code_id, err);
	if (st != TT_OK)
		return st;
	if (cf->owner != l->owner_generator &&
	    codecache_frame_incomplete(&w->codes, cf->code_id, cf->instr_ptr)) {
		/* Left out, like a shim (as f_back leaves it out). */
		cf->line = 0;
		cf->frame_id = 0;
		return TT_OK;
	}
	cf->line = codecache_line(&w->codes, cf->code_id, cf->instr_ptr);
	cf->frame_id = intern_frame(w->in, stackwalk_func_of(w, cf->code_id), cf->line);
	if (cf->frame_id == 0)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "too many distinct frames");
	return TT_OK;
}

/* The walked chain (n frames in w->chain) with its stack IDs becomes the
 * thread's cache. */
static tt_status
keep_chain(struct stackwalk *w, struct tcache *tc, uint32_t n, bool truncated,
	   uint32_t matched_total, struct tt_error *err)
{
	/* Stack IDs from the root up, reusing the cached ones while the chain
	 * below is the same. */
	int32_t j = (int32_t)tc->nframes - 1, i = (int32_t)n - 1;
	uint32_t below = 0;
	if (tc->have_chain && w->o.cache && tc->truncated == truncated) {
		while (i >= 0 && j >= 0 && tc->frames[j].addr == w->chain[i].addr &&
		       tc->frames[j].frame_id == w->chain[i].frame_id) {
			w->chain[i].stack_id = tc->frames[j].stack_id;
			below = w->chain[i].stack_id;
			i--;
			j--;
		}
	}
	tt_status st = intern_upward(w, w->chain, i, below, err);
	if (st != TT_OK)
		return st;

	count_walk(w, matched_total, n);

	/* The new chain becomes the cache (swap buffers, no copy). */
	struct cframe *tmp = tc->frames;
	uint32_t tmpcap = tc->cap;
	tc->frames = w->chain;
	tc->cap = w->chain_cap;
	w->chain = tmp;
	w->chain_cap = tmpcap;
	tc->nframes = n;
	tc->chain_gen++;
	tc->have_chain = true;
	tc->truncated = truncated;
	tc->stack_id = n ? tc->frames[0].stack_id : 0;
	tc->code_epoch = w->codes.epoch;
	return TT_OK;
}

static tt_status
walk_thread(struct stackwalk *w, struct tcache *tc, bool full, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	const uint8_t *ts = tc->tsbuf;
	uint64_t cur;
	tt_status st = current_frame(w, tc, &cur, err);
	if (st != TT_OK)
		return st;
	uint64_t base = l->has_base_frame ? load_u64(ts, l->ts_base_frame) : 0;
	bool reuse_code = tc->have_chain && tc->code_epoch == w->codes.epoch && w->o.cache;
	uint32_t n = 0, matched_total = 0, run = 0, npy = 0;
	int32_t align = -1;
	bool spliced = false, popped_top = false, truncated = false;
	unsigned misses = 0;
	uint64_t last_miss = 0;
	uint8_t local[FRAME_LOCAL_MAX];
	/* A chain that loops (a torn read) is refused within a few laps; one
	 * that is merely long keeps its innermost UNWIND_MAX_FRAMES frames. */
	struct cycle_guard guard;
	cycle_guard_init(&guard);
	for (unsigned walked = 0; cur != 0 && !(l->has_base_frame && cur == base); walked++) {
		if (cycle_guard_seen(&guard, cur))
			return tt_fail(err, TT_EBADMEM, 0, "frame chain loops back on itself");
		if (walked >= UNWIND_MAX_WALK) {
			truncated = true;
			break;
		}
		if (cur & 7)
			return tt_fail(err, TT_EBADMEM, 0, "misaligned frame pointer");
		if ((st = chain_reserve(w, n + 1, err)) != TT_OK)
			return st;
		const uint8_t *fb = NULL;
		if ((st = frame_bytes(w, tc, cur, &misses, &last_miss, local, &fb, err)) != TT_OK)
			return st;
		struct cframe *cf = &w->chain[n];
		cf->addr = cur;
		cf->previous = load_u64(fb, l->fr_previous);
		cf->executable = load_u64(fb, l->fr_executable);
		cf->instr_ptr = load_u64(fb, l->fr_instr_ptr);
		cf->owner = (int8_t)fb[l->fr_owner];
		enum py_frame_kind kind = pylayout_frame_kind(l, cf->owner);
		if (kind == PY_FRAME_INVALID)
			return tt_fail(err, TT_EBADMEM, 0, "frame with invalid owner %d", cf->owner);
		/* A running thread may pop its top frame between our read of
		 * current_frame and our read of the frame (the interpreter clears
		 * f_executable on pop): then it is back in a caller, which is
		 * what we report. Cleared frames below a live one mean a torn read. */
		if (n == 0 && kind == PY_FRAME_PYTHON && cf->owner == l->owner_thread &&
		    (cf->executable & ~l->tag_mask) == 0) {
			if (!popped_top)
				w->c.popped_tops++;
			popped_top = true;
			cur = cf->previous;
			continue;
		}
		if (kind == PY_FRAME_PYTHON && npy >= UNWIND_MAX_FRAMES) {
			truncated = true; /* the rest is not read */
			break;
		}
		bool match = false;
		if (tc->have_chain && w->o.cache) {
			align = cached_index(tc, cur, align >= 0 ? align + 1 : (int32_t)n);
			if (align >= 0) {
				const struct cframe *old = &tc->frames[align];
				match = old->previous == cf->previous && old->executable == cf->executable &&
					old->instr_ptr == cf->instr_ptr && old->owner == cf->owner;
			}
		}
		run = match ? run + 1 : 0;
		if (kind == PY_FRAME_SHIM) {
			cf->code_id = 0;
			cf->line = 0;
			cf->frame_id = 0;
		} else if (match && reuse_code) {
			const struct cframe *old = &tc->frames[align];
			cf->code_id = old->code_id;
			cf->line = old->line;
			cf->frame_id = old->frame_id;
		} else if ((st = resolve_frame(w, cf, err)) != TT_OK) {
			return st;
		}
		if (match)
			matched_total++;
		if (kind == PY_FRAME_PYTHON && cf->frame_id)
			npy++;
		n++;
		cur = cf->previous;
		/* An idle thread whose top frames are exactly as cached kept the
		 * rest of its stack too (see the header for the reasoning), unless
		 * the new prefix makes it deeper than we keep: then walk on. */
		if (!full && match && run >= w->o.check_depth && reuse_code &&
		    npy + rest_depth(w, tc, (uint32_t)align) <= UNWIND_MAX_FRAMES) {
			spliced = true;
			break;
		}
	}
	if (spliced)
		return splice_prefix(w, tc, n, (uint32_t)align, matched_total, err);
	return keep_chain(w, tc, n, truncated, matched_total, err);
}

static void note_stack(struct stackwalk *w, struct tcache *tc);

/* What the thread state read says beyond the frames. */
static void
read_thread_state(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	const struct py_layout *l = w->l;
	const uint8_t *ts = tc->tsbuf;
	tc->sticky &= ~(uint32_t)(TT_THREAD_GIL_WAIT | TT_THREAD_EXCEPTION);
	if (l->has_tstate_gil && load_i32(ts, l->ts_gil_requested) && !load_i32(ts, l->ts_holds_gil))
		tc->sticky |= TT_THREAD_GIL_WAIT;
	if (l->has_exception_state && load_u64(ts, l->ts_current_exception))
		tc->sticky |= TT_THREAD_EXCEPTION;
	tc->running_task = w->ts_running_task ? load_u64(ts, w->ts_running_task) & ~l->tag_mask : 0;
	note_stack(w, tc);
	(void)now;
}

/* Where the thread's data stack is, from its thread state. */
static void
note_stack(struct stackwalk *w, struct tcache *tc)
{
	const struct py_layout *l = w->l;
	const uint8_t *ts = tc->tsbuf;
	uint64_t chunk = load_u64(ts, l->ts_datastack_chunk);
	tc->stack_top = load_u64(ts, l->ts_datastack_top);
	if (chunk != tc->chunk) {
		/* A new data stack chunk: learn its size once. */
		tc->chunk = chunk;
		tc->chunk_end = 0;
		uint64_t size;
		w->c.single_reads++;
		if (chunk && remote_read_u64(&w->t->mem, chunk + PY_STACKCHUNK_SIZE, &size, NULL) == TT_OK &&
		    size >= 64 && size <= (1u << 30))
			tc->chunk_end = chunk + size;
	}
}

/* ---------------------------------------------------------------------
 * Async-aware stacks: hooks for the sampler's asyncio layer
 * ------------------------------------------------------------------- */

/* Past this the running task is not read: the whole thread state would be
 * copied every sample for one pointer. */
#define RUNNING_TASK_MAX_OFFSET 4096u

bool
stackwalk_read_running_task(struct stackwalk *w, uint64_t ts_offset)
{
	if (ts_offset == 0 || (ts_offset & 7) || ts_offset + 8 > RUNNING_TASK_MAX_OFFSET)
		return false;
	if (ts_offset + 8 > w->ts_len) {
		/* Room for every thread's longer state, as for the shorter one.
		 * Between samples: no pointer into the arena outlives a sample. */
		size_t more = (size_t)ARENA_PLANNED_THREADS * ((ts_offset + 8 + 15) & ~15ull);
		void *a = w->arena ? mremap(w->arena, w->arena_size, w->arena_size + more,
					    MREMAP_MAYMOVE)
				   : NULL;   /* not mapped yet: mapped at this size */
		if (a == MAP_FAILED)
			return false;
		w->arena = a;
		w->arena_size += more;
		w->ts_len = ts_offset + 8;
	}
	w->ts_running_task = ts_offset;
	return true;
}

uint32_t
stackwalk_restack(struct stackwalk *w, uint32_t i, uint32_t base)
{
	if (i >= w->nout)
		return 0;
	const struct tcache *tc = w->out_tc[i];
	/* The task's coroutine is the outermost frame a generator owns: the
	 * event loop below it runs in plain function frames. */
	int32_t cut = -1;
	for (uint32_t k = 0; k < tc->nframes; k++)
		if (tc->frames[k].owner == w->l->owner_generator && tc->frames[k].frame_id)
			cut = (int32_t)k;
	if (cut < 0)
		return 0;
	uint32_t id = base;
	for (int32_t k = cut; k >= 0; k--) {
		if (tc->frames[k].frame_id == 0)
			continue; /* a shim */
		id = intern_stack(w->in, id, tc->frames[k].frame_id);
		if (id == 0)
			return 0;
	}
	return id;
}

uint32_t
stackwalk_func_of(struct stackwalk *w, uint32_t code_id)
{
	/* The entry's own field, written by this thread alone. */
	struct code_entry *e = appendlog_at(w->codes.entries, code_id);
	if (!e->func_id)
		e->func_id = intern_func(w->in, e->qualname, e->filename, e->firstlineno, false);
	return e->func_id;
}

struct intern *
stackwalk_intern_rw(struct stackwalk *w)
{
	return w->in;
}

struct code_cache *
stackwalk_codes_rw(struct stackwalk *w)
{
	return &w->codes;
}

/* ---------------------------------------------------------------------
 * The sample
 * ------------------------------------------------------------------- */

/* Is the used part of the thread's data stack small enough to copy whole
 * every time? Then its walk is exact, with no trust in the cache. */
static bool
stack_is_small(const struct stackwalk *w, struct tcache *tc)
{
	if (!tc->chunk || tc->stack_top <= tc->chunk ||
	    tc->stack_top - tc->chunk > w->o.full_read_max || !tc->have_chain)
		return false;
	if (tc->small_gen == tc->chain_gen && tc->small_chunk == tc->chunk &&
	    tc->small_top == tc->stack_top)
		return tc->small;
	/* ...and the whole stack is in that chunk, bar a few generator frames. */
	unsigned outside = 0;
	for (uint32_t i = 0; i < tc->nframes && outside <= 8; i++)
		if (tc->frames[i].addr < tc->chunk || tc->frames[i].addr >= tc->stack_top)
			outside++;
	tc->small_gen = tc->chain_gen;
	tc->small_chunk = tc->chunk;
	tc->small_top = tc->stack_top;
	tc->small = outside <= 8;
	return tc->small;
}

/* Is an idle thread due for a full re-walk? A re-walk costs in proportion
 * to the depth: deep stacks are re-walked proportionally less often, so
 * that their cost per second does not grow with depth (a 20,000-frame
 * recursion samples as fast as a 1,000-frame one). */
static bool
revalidate_due(const struct stackwalk *w, const struct tcache *tc, uint64_t now)
{
	uint64_t period = w->o.revalidate_ns;
	if (tc->nframes > REVALIDATE_DEPTH)
		period = period / REVALIDATE_DEPTH * tc->nframes;
	return now - tc->validated_ns >= period;
}

/* Which due threads are re-walked whole: at most REVALIDATIONS_PER_SAMPLE
 * chosen per scan (every DUE_SCAN_NS), in turn from where the last scan
 * left off.
 * Otherwise a thousand idle threads due every revalidate_ns would all be
 * re-read by the sample, which, being slower, makes more of them due at
 * the next: their re-walks are spread out instead. After a failed sample
 * (w->first) every thread is re-walked. */
static void
choose_revalidations(struct stackwalk *w, uint64_t now)
{
	bool all = w->first || !w->o.cache;
	if (!all && now - w->revalidate_scan_ns < DUE_SCAN_NS)
		return;  /* those chosen last time keep their mark until re-walked */
	w->revalidate_scan_ns = now;
	unsigned left = REVALIDATIONS_PER_SAMPLE;
	for (uint32_t i = 0; i < w->ninterps; i++) {
		struct interp *iv = &w->interps[i];
		uint32_t n = iv->nthreads, next = iv->revalidate_cursor;
		bool cut = false;
		for (uint32_t j = 0; j < n; j++) {
			uint32_t k = (iv->revalidate_cursor + j) % n;
			struct tcache *tc = &iv->threads[k];
			tc->revalidate = false;
			if (!revalidate_due(w, tc, now))
				continue;
			if (!all && !left) {
				if (!cut)
					next = k;
				cut = true;
				continue;
			}
			tc->revalidate = true;
			left -= left > 0;
		}
		iv->revalidate_cursor = next;
	}
}

/* Could the thread's stack have changed since we last read it? */
static bool
must_read(const struct stackwalk *w, const struct tcache *tc)
{
	return !w->o.cache || !tc->have_chain || tc->revalidate || tc->code_epoch != w->codes.epoch;
}

/* Must it be read whole, rather than checked at the top against the cache? */
static bool
needs_full(const struct stackwalk *w, const struct interp *iv, struct tcache *tc)
{
	return must_read(w, tc) || (iv->locked && iv->holder == tc->tstate) ||
	       stack_is_small(w, tc);
}

static tt_status
emit(struct stackwalk *w, const struct interp *iv, struct tcache *tc, bool is_last,
     struct tt_error *err)
{
	if (w->nout == w->out_cap) {
		uint32_t cap = w->out_cap ? w->out_cap * 2 : 64;
		struct walk_thread *o = realloc(w->out, cap * sizeof *o);
		if (o)
			w->out = o;
		struct tcache **otc = o ? realloc(w->out_tc, cap * sizeof *otc) : NULL;
		if (!otc)
			return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for threads");
		w->out_tc = otc;
		w->out_cap = cap;
	}
	uint32_t state = tc->sticky;
	if (tc->truncated)
		state |= TT_THREAD_TRUNCATED;
	if (iv->locked && iv->holder == tc->tstate) {
		state |= TT_THREAD_GIL;
		state &= ~(uint32_t)TT_THREAD_GIL_WAIT;
		if (iv->gc)
			state |= TT_THREAD_GC;
	}
	if (w->l->has_threads_main ? tc->tstate == iv->main : is_last)
		state |= TT_THREAD_MAIN;
	w->out_tc[w->nout] = tc;
	w->out[w->nout++] = (struct walk_thread){.slot = tc->slot, .stack_id = tc->stack_id,
						  .state = state, .running_task = tc->running_task};
	return TT_OK;
}

/* Read a thread that must be read (its state, if the batch did not bring
 * it) and walk its frames. */
static tt_status
read_walk(struct stackwalk *w, const struct interp *iv, struct tcache *tc, uint64_t now,
	  bool *full, struct tt_error *err)
{
	tt_status st;
	if (!tc->tsbuf) {
		uint8_t *buf = arena_take(w, w->ts_len);
		if (!buf)
			return arena_exhausted(w, err);
		w->c.single_reads++;
		if ((st = remote_read(&w->t->mem, tc->tstate, buf, w->ts_len, err)) != TT_OK)
			return st;
		tc->tsbuf = buf;
		tc->cfbuf = NULL;
	}
	if (load_u64(tc->tsbuf, w->l->ts_interp) != iv->addr)
		return tt_fail(err, TT_EBADMEM, 0, "thread state changed while read");
	read_thread_state(w, tc, now);
	*full = needs_full(w, iv, tc);
	return walk_thread(w, tc, *full, err);
}

/* A thread whose state or frames read wrong, that did not hold the GIL
 * when the sample began, most likely ended meanwhile: its memory freed
 * and re-used (a pool churning threads ends hundreds a second). It is
 * left out of this sample rather than failing every other thread's; the
 * next sample finds it gone from the list, or reads it again. A GIL
 * holder's torn read still fails the sample: leaving out the running
 * thread would bias a profile against running code. So does a thread left
 * out of several samples in a row: that is no ending thread. */
#define SKIPS_IN_A_ROW 3

static bool
ended_while_read(const struct interp *iv, const struct tcache *tc, tt_status st)
{
	return (st == TT_EBADMEM || st == TT_EFAULT) && !(iv->locked && iv->holder == tc->tstate) &&
	       tc->skips < SKIPS_IN_A_ROW;
}

static tt_status sample_once(struct stackwalk *w, uint64_t now, struct tt_error *err);

/* The last sample ran out of arena: double it, up to ARENA_MAX. Only
 * between samples (no pointer into the arena outlives one); its pages
 * are touched only as far as samples use them. */
static void
arena_grow_if_short(struct stackwalk *w)
{
	if (!w->arena_short || w->arena_size >= ARENA_MAX)
		return;
	w->arena_short = false;
	void *a = mremap(w->arena, w->arena_size, w->arena_size * 2, MREMAP_MAYMOVE);
	if (a == MAP_FAILED)
		return;
	w->arena = a;
	w->arena_size *= 2;
}

/* Where an interpreter's GIL state is when it is not inside the interpreter:
 * _PyRuntime's (3.11), or what interp->ceval.gil points at (3.12; set when
 * the interpreter is created, so read once). */
static tt_status
locate_gil(struct stackwalk *w, struct interp *iv, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	if (l->gil_place == PY_GIL_IN_RUNTIME) {
		iv->gil_addr = w->t->runtime_addr + l->rt_gil;
		return TT_OK;
	}
	uint64_t p;
	w->c.single_reads++;
	tt_status st = remote_read_u64(&w->t->mem, iv->addr + l->is_gil_ptr, &p, err);
	if (st != TT_OK)
		return st;
	if (p == 0 || (p & 7))
		return tt_fail(err, TT_EBADMEM, 0, "interpreter has no GIL yet (starting?)");
	iv->gil_addr = p;
	return TT_OK;
}

tt_status
stackwalk_sample(struct stackwalk *w, uint64_t now, const struct walk_thread **threads,
		 uint32_t *nthreads, struct tt_error *err)
{
	tt_status st = sampling_scratch(w, err);
	if (st == TT_OK) {
		arena_grow_if_short(w);
		st = sample_once(w, now, err);
	}
	if (st != TT_OK) {
		/* Whatever this sample half-learned is not to be trusted: the
		 * next one re-reads every thread and its whole stack. */
		for (uint32_t i = 0; i < w->ninterps; i++) {
			w->interps[i].have = false;
			for (uint32_t k = 0; k < w->interps[i].nthreads; k++)
				w->interps[i].threads[k].validated_ns = 0;
		}
		w->first = true;
		*nthreads = 0;
		return st;
	}
	*threads = w->out;
	*nthreads = w->nout;
	return TT_OK;
}

/* Whether an interpreter's list or its GIL changed since the last sample. */
struct list_change {
	bool list;       /* the thread list (head, count, id) */
	bool switched;   /* the GIL went to another thread, or changed hands */
};

/* Must thread tc be read and walked this sample? */
static bool
must_walk(const struct stackwalk *w, const struct interp *iv, const struct interp *before,
	  const struct tcache *tc, struct list_change changed)
{
	return changed.switched || changed.list || tc->tstate == iv->holder ||
	       tc->tstate == before->holder || must_read(w, tc);
}

/* After a vectored read that completed `done` segments: drop the thread's
 * state and cframe buffers planned in it that did not arrive. */
static void
forget_unread(struct tcache *tc, size_t done)
{
	if (tc->ts_seg != UINT32_MAX && tc->ts_seg >= done)
		tc->tsbuf = NULL;
	if (!tc->tsbuf || (tc->cfbuf && tc->cf_seg >= done))
		tc->cfbuf = NULL;
}

/* Round 1: every interpreter's hot block, and the threads we predict may
 * have run, with their top frames at last sample's addresses, in one
 * vectored read. *skip_block: the block was not read (one thread, read
 * recently). */
static tt_status
read_predicted(struct stackwalk *w, uint64_t now, bool *skip_block, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	tt_status st;
	bool prefetch_all = !w->o.cache || w->switch_rate > 0.25;
	bool skip = w->o.cache && !w->first && w->ninterps == 1 && w->interps[0].have &&
		    w->interps[0].nthreads == 1 && now - w->block_read_ns < SINGLE_THREAD_BLOCK_NS;
	for (uint32_t i = 0; i < w->ninterps && !skip; i++) {
		struct interp *iv = &w->interps[i];
		if (l->gil_place != PY_GIL_IN_INTERP && iv->gil_addr == 0 &&
		    (st = locate_gil(w, iv, err)) != TT_OK)
			return st;
		uint8_t *block = arena_take(w, l->is_block_size);
		if (!block || !add_seg(w, iv->addr + l->is_block_start, block, l->is_block_size))
			return arena_exhausted(w, err);
		iv->block = block;
		iv->gilbuf = NULL;
		if (l->gil_place != PY_GIL_IN_INTERP) {
			uint8_t *g = arena_take(w, l->gil_read_size);
			if (!g || !add_seg(w, iv->gil_addr, g, l->gil_read_size))
				return arena_exhausted(w, err);
			iv->gilbuf = g;
		}
	}
	if (!skip)
		w->block_read_ns = now;
	uint32_t first_thread_seg = w->nsegs;
	for (uint32_t i = 0; i < w->ninterps; i++) {
		struct interp *iv = &w->interps[i];
		for (uint32_t k = 0; k < iv->nthreads; k++) {
			struct tcache *tc = &iv->threads[k];
			tc->tsbuf = NULL;
			tc->ts_seg = UINT32_MAX;
			tc->span_lo = tc->span_hi = 0;
			tc->skipped = false;
			bool predicted = prefetch_all || !iv->have || tc->tstate == iv->holder ||
					 !tc->have_chain || tc->revalidate;
			if (!predicted)
				continue;
			uint8_t *buf = arena_take(w, w->ts_len);
			if (!buf || !add_seg(w, tc->tstate, buf, w->ts_len))
				break;
			tc->tsbuf = buf;
			tc->ts_seg = w->nsegs - 1;
			tc->cfbuf = NULL;
			tc->planned_full = tc->was_running || tc->revalidate || !tc->have_chain ||
					   stack_is_small(w, tc);
			plan_spans(w, tc, tc->planned_full ? 0 : w->o.check_depth + 1);
		}
	}
	uint32_t first_span_seg = w->nsegs;
	for (uint32_t s = 0; s < w->nspans; s++)
		if (!add_seg(w, w->spans[s].addr, w->spans[s].buf, w->spans[s].len))
			break;
	for (uint32_t i = 0; i < w->ninterps && l->has_cframe; i++)
		for (uint32_t k = 0; k < w->interps[i].nthreads; k++)
			if (w->interps[i].threads[k].ts_seg != UINT32_MAX)
				plan_cframe(w, &w->interps[i].threads[k]);
	size_t done;
	w->c.batch_attempts++;
	if ((st = remote_readv(&w->t->mem, w->segs, w->nsegs, &done, err)) != TT_OK)
		return st;
	if (done == w->nsegs)
		w->c.batch_successes++;
	for (uint32_t s = 0; s < w->nspans; s++)
		w->spans[s].ok = first_span_seg + s < done;
	if (done < first_thread_seg) {
		/* An interpreter block is unreadable: the interpreter went away. */
		w->interps_checked_ns = 0;
		w->first = true;
		return tt_fail(err, TT_EFAULT, EFAULT, "interpreter state unreadable");
	}
	/* Thread states that did not arrive are read again below. */
	for (uint32_t i = 0; i < w->ninterps; i++)
		for (uint32_t k = 0; k < w->interps[i].nthreads; k++)
			forget_unread(&w->interps[i].threads[k], done);
	*skip_block = skip;
	return TT_OK;
}

/* Round 2 (rare): threads of interpreter iv that must be read but were
 * not predicted, and frames of threads whose state arrived without them
 * (after a list rebuild). */
static tt_status
read_unpredicted(struct stackwalk *w, struct interp *iv, const struct interp *before,
		 struct list_change changed, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	tt_status st;
	size_t done;
	w->nsegs = 0;
	uint32_t span_mark = w->nspans;
	for (uint32_t k = 0; k < iv->nthreads; k++) {
		struct tcache *tc = &iv->threads[k];
		bool must = must_walk(w, iv, before, tc, changed);
		if (!must)
			continue;
		bool full = needs_full(w, iv, tc);
		bool planned_full = tc->span_hi > tc->span_lo && tc->planned_full;
		if (tc->tsbuf && (planned_full || (!full && tc->span_hi > tc->span_lo))) {
			tc->ts_seg = UINT32_MAX; /* what we have will do */
			continue;
		}
		/* Read the thread state again together with its frames, so
		 * the two describe the same moment as nearly as possible. */
		if (tc->tsbuf)
			note_stack(w, tc);
		uint8_t *buf = arena_take(w, w->ts_len);
		if (!buf || !add_seg(w, tc->tstate, buf, w->ts_len))
			return arena_exhausted(w, err);
		tc->tsbuf = buf;
		tc->ts_seg = w->nsegs - 1;
		tc->cfbuf = NULL;
		tc->planned_full = full;
		plan_spans(w, tc, full ? 0 : w->o.check_depth + 1);
	}
	if (w->nsegs > 0 || w->nspans > span_mark) {
		uint32_t nts = w->nsegs;
		for (uint32_t s = span_mark; s < w->nspans; s++)
			if (!add_seg(w, w->spans[s].addr, w->spans[s].buf, w->spans[s].len))
				break;
		for (uint32_t k = 0; k < iv->nthreads && l->has_cframe; k++)
			if (iv->threads[k].ts_seg != UINT32_MAX && iv->threads[k].ts_seg < nts)
				plan_cframe(w, &iv->threads[k]);
		w->c.batch_attempts++;
		if ((st = remote_readv(&w->t->mem, w->segs, w->nsegs, &done, err)) != TT_OK)
			return st;
		if (done == w->nsegs)
			w->c.batch_successes++;
		for (uint32_t s = span_mark; s < w->nspans; s++)
			w->spans[s].ok = nts + (s - span_mark) < done;
		for (uint32_t k = 0; k < iv->nthreads; k++)
			forget_unread(&iv->threads[k], done);
	}
	return TT_OK;
}

/* Walk the threads of iv that must be read, reuse the others' stacks,
 * and hand every thread on. */
static tt_status
walk_threads(struct stackwalk *w, struct interp *iv, const struct interp *before,
	     struct list_change changed, uint64_t now, struct tt_error *err)
{
	tt_status st;
	for (uint32_t k = 0; k < iv->nthreads; k++) {
		struct tcache *tc = &iv->threads[k];
		bool must = must_walk(w, iv, before, tc, changed);
		if (must) {
			bool full = false;
			if ((st = read_walk(w, iv, tc, now, &full, err)) != TT_OK) {
				tc->have_chain = false;
				if (!ended_while_read(iv, tc, st))
					return st;
				tc->skipped = true;
				tc->skips++;
				w->c.threads_skipped++;
				continue;
			}
			tc->skips = 0;
			if (full) {
				tc->validated_ns = now;
				tc->revalidate = false;
			}
			tc->was_running = iv->locked && iv->holder == tc->tstate;
			/* The GIL holder's state first, whatever the budget:
			 * in CPU mode it is the thread that matters. */
			if (tc->was_running)
				refresh_cpu(w, tc, now);
		} else {
			w->c.full_hits++;
			w->c.frames_reused += tc->nframes;
		}
	}
	/* States after every walk (a new thread's id is known once its
	 * state is read), before any thread is handed on. */
	refresh_cpu_states(w, iv, now);
	for (uint32_t k = 0; k < iv->nthreads; k++)
		if (!iv->threads[k].skipped &&
		    (st = emit(w, iv, &iv->threads[k], k + 1 == iv->nthreads, err)) != TT_OK)
			return st;
	return TT_OK;
}

static tt_status
sample_once(struct stackwalk *w, uint64_t now, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	tt_status st;
	w->nout = 0;
	w->nsegs = 0;
	w->nspans = 0;
	w->arena_used = 0;
	w->ra_lo = w->ra_hi = 0;
	w->c.samples++;
	w->cpu_reads_left = w->o.cpu_reads_per_sample;

	if (w->first || !w->o.cache || now - w->interps_checked_ns >= INTERP_CHECK_NS) {
		if ((st = refresh_interps(w, now, err)) != TT_OK)
			return st;
		w->interps_checked_ns = now;
	}
	if (!l->has_code_generation && now - w->code_checked_ns >= CODE_RECHECK_NS) {
		codecache_invalidate(&w->codes);
		w->code_checked_ns = now;
	}

	choose_revalidations(w, now);
	bool skip_block = false;
	if ((st = read_predicted(w, now, &skip_block, err)) != TT_OK)
		return st;
	bool any_switch = false;
	for (uint32_t i = 0; i < w->ninterps; i++) {
		struct interp *iv = &w->interps[i];
		struct interp before = *iv;
		if (!skip_block)
			parse_block(l, iv, iv->block);
		struct list_change changed = {
			.list = !before.have || before.head != iv->head ||
				before.unique_id != iv->unique_id || before.count != iv->count ||
				!w->o.cache,
			.switched = !before.have || before.switch_no != iv->switch_no ||
				    before.holder != iv->holder,
		};
		any_switch |= changed.switched && before.have;
		if (l->has_code_generation && before.have && before.code_gen != iv->code_gen)
			codecache_invalidate(&w->codes);
		if (changed.list && (st = rebuild_threads(w, iv, now, err)) != TT_OK)
			return st;
		if ((st = read_unpredicted(w, iv, &before, changed, err)) != TT_OK ||
		    (st = walk_threads(w, iv, &before, changed, now, err)) != TT_OK)
			return st;
	}
	w->switch_rate = w->switch_rate * 0.95 + (any_switch ? 0.05 : 0.0);
	w->first = false;
	return TT_OK;
}
