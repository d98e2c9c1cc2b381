/* The walker's life cycle, its asyncio hooks, and the sample: which
 * threads to read, one batched read, each thread walked (stackwalk.h). */
#include "config.h"

#include <sys/resource.h>

#include "walk/walkstate.h"

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
tt_status
sw_arena_exhausted(struct stackwalk *w, struct tt_error *err)
{
	if (w->arena_size < ARENA_MAX)
		return tt_fail(err, TT_EBADMEM, 0,
			       "sample buffer of %zu MB too small: grown for the next sample",
			       w->arena_size >> 20);
	return tt_fail(err, TT_ENOMEM, ENOMEM, "sample buffer exhausted");
}

void *
sw_arena_take(struct stackwalk *w, size_t n)
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
	struct rlimit files;
	w->max_open_fds = MAX_STAT_FDS;
	if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur / STAT_FDS_SHARE < MAX_STAT_FDS)
		w->max_open_fds = (int)(files.rlim_cur / STAT_FDS_SHARE);
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

void
sw_tcache_release(struct stackwalk *w, struct tcache *tc)
{
	free(tc->frames);
	int *fds[] = {&tc->stat_fd, &tc->schedstat_fd};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
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
	w->nout = w->out_cap = w->out_tc_cap = 0;
	tidmap_free(&w->tids);
	threadnames_free(&w->names);
}

void
stackwalk_free(struct stackwalk *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->ninterps; i++) {
		for (uint32_t k = 0; k < w->interps[i].nthreads; k++)
			sw_tcache_release(w, &w->interps[i].threads[k]);
		free(w->interps[i].threads);
	}
	free(w->interps);
	threadslots_free(&w->own_slots);
	free_sampling_state(w);
	codecache_free(&w->codes);
	intern_free(&w->own_in);
	free(w);
}


void
stackwalk_retire(struct stackwalk *w, uint64_t now_ns)
{
	for (uint32_t i = 0; i < w->ninterps; i++) {
		for (uint32_t k = 0; k < w->interps[i].nthreads; k++)
			sw_release_gone(w, &w->interps[i].threads[k], now_ns);
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

void
stackwalk_innermost(struct stackwalk *w, uint32_t i, uint64_t *frame, uint64_t *instr)
{
	*frame = *instr = 0;
	if (i >= w->nout)
		return;
	const struct tcache *tc = w->out_tc[i];
	for (uint32_t k = 0; k < tc->nframes; k++)
		if (tc->frames[k].frame_id) {   /* not a shim */
			*frame = tc->frames[k].addr;
			*instr = tc->frames[k].instr_ptr;
			return;
		}
}

/* Where threads[i]'s running task's frames end: the index of its
 * coroutine's frame, the outermost a generator owns (the event loop below
 * it runs in plain function frames); -1 when there is none. */
static int32_t
task_cut(const struct stackwalk *w, const struct tcache *tc)
{
	int32_t cut = -1;
	for (uint32_t k = 0; k < tc->nframes; k++)
		if (tc->frames[k].owner == w->l->owner_generator && tc->frames[k].frame_id)
			cut = (int32_t)k;
	return cut;
}

uint32_t
stackwalk_task_depth(struct stackwalk *w, uint32_t i)
{
	if (i >= w->nout)
		return 0;
	const struct tcache *tc = w->out_tc[i];
	int32_t cut = task_cut(w, tc);
	uint32_t n = 0;
	for (int32_t k = 0; k <= cut; k++)
		n += tc->frames[k].frame_id != 0;   /* shims are not counted */
	return n;
}

uint32_t
stackwalk_restack(struct stackwalk *w, uint32_t i, uint32_t base)
{
	if (i >= w->nout)
		return 0;
	const struct tcache *tc = w->out_tc[i];
	int32_t cut = task_cut(w, tc);
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
stackwalk_thread_frames(struct stackwalk *w, uint32_t i, uint32_t *frame_ids, bool *entry,
			uint32_t max)
{
	if (i >= w->nout)
		return 0;
	const struct tcache *tc = w->out_tc[i];
	uint32_t n = 0;
	for (uint32_t k = 0; k < tc->nframes; k++) {
		if (tc->frames[k].frame_id == 0) {
			/* a shim: below the first frame of an evaluator call */
			if (n)
				entry[n - 1] = true;
			continue;
		}
		if (n == max)
			break;
		frame_ids[n] = tc->frames[k].frame_id;
		entry[n++] = tc->frames[k].entry;
	}
	return n;
}

uint32_t
stackwalk_func_of(struct stackwalk *w, uint32_t code_id)
{
	/* The entry's own field, written by this thread alone. */
	struct code_entry *e = appendlog_at(w->codes.entries, code_id);
	if (!e->func_id)
		e->func_id = intern_func(w->in, e->qualname, e->filename, e->firstlineno, FUNC_PYTHON);
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
	if (!grow_array((void **)&w->out, &w->out_cap, w->nout + 1, sizeof *w->out) ||
	    !grow_array((void **)&w->out_tc, &w->out_tc_cap, w->nout + 1, sizeof *w->out_tc))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for threads");
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
		uint8_t *buf = sw_arena_take(w, w->ts_len);
		if (!buf)
			return sw_arena_exhausted(w, err);
		w->c.single_reads++;
		if ((st = remote_read(&w->t->mem, tc->tstate, buf, w->ts_len, err)) != TT_OK)
			return st;
		tc->tsbuf = buf;
		tc->cfbuf = NULL;
	}
	if (load_u64(tc->tsbuf, w->l->ts_interp) != iv->addr)
		return tt_fail(err, TT_EBADMEM, 0, "thread state changed while read");
	sw_read_thread_state(w, tc, now);
	*full = needs_full(w, iv, tc);
	return sw_walk_thread(w, tc, *full, err);
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
		/* The sample may have taken in a GIL switch and walked some of
		 * the threads it concerns but not the others: the next one
		 * walks every thread as after a switch. Stacks walked whole stay
		 * trusted (a torn walk dropped its own chain), and a list not
		 * rebuilt is rebuilt (sample_once): re-walking every stack whole
		 * here made the next sample so long that it tore in turn, over
		 * and over, on a big churning pool under load. */
		for (uint32_t i = 0; i < w->ninterps; i++)
			w->interps[i].resync = true;
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
		uint8_t *block = sw_arena_take(w, l->is_block_size);
		if (!block || !sw_add_seg(w, iv->addr + l->is_block_start, block, l->is_block_size))
			return sw_arena_exhausted(w, err);
		iv->block = block;
		iv->gilbuf = NULL;
		if (l->gil_place != PY_GIL_IN_INTERP) {
			uint8_t *g = sw_arena_take(w, l->gil_read_size);
			if (!g || !sw_add_seg(w, iv->gil_addr, g, l->gil_read_size))
				return sw_arena_exhausted(w, err);
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
			uint8_t *buf = sw_arena_take(w, w->ts_len);
			if (!buf || !sw_add_seg(w, tc->tstate, buf, w->ts_len))
				break;
			tc->tsbuf = buf;
			tc->ts_seg = w->nsegs - 1;
			tc->cfbuf = NULL;
			tc->planned_full = tc->was_running || tc->revalidate || !tc->have_chain ||
					   stack_is_small(w, tc);
			sw_plan_spans(w, tc, tc->planned_full ? 0 : w->o.check_depth + 1);
		}
	}
	uint32_t first_span_seg = w->nsegs;
	for (uint32_t s = 0; s < w->nspans; s++)
		if (!sw_add_seg(w, w->spans[s].addr, w->spans[s].buf, w->spans[s].len))
			break;
	for (uint32_t i = 0; i < w->ninterps && l->has_cframe; i++)
		for (uint32_t k = 0; k < w->interps[i].nthreads; k++)
			if (w->interps[i].threads[k].ts_seg != UINT32_MAX)
				sw_plan_cframe(w, &w->interps[i].threads[k]);
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
			sw_note_stack(w, tc);
		uint8_t *buf = sw_arena_take(w, w->ts_len);
		if (!buf || !sw_add_seg(w, tc->tstate, buf, w->ts_len))
			return sw_arena_exhausted(w, err);
		tc->tsbuf = buf;
		tc->ts_seg = w->nsegs - 1;
		tc->cfbuf = NULL;
		tc->planned_full = full;
		sw_plan_spans(w, tc, full ? 0 : w->o.check_depth + 1);
	}
	if (w->nsegs > 0 || w->nspans > span_mark) {
		uint32_t nts = w->nsegs;
		for (uint32_t s = span_mark; s < w->nspans; s++)
			if (!sw_add_seg(w, w->spans[s].addr, w->spans[s].buf, w->spans[s].len))
				break;
		for (uint32_t k = 0; k < iv->nthreads && l->has_cframe; k++)
			if (iv->threads[k].ts_seg != UINT32_MAX && iv->threads[k].ts_seg < nts)
				sw_plan_cframe(w, &iv->threads[k]);
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
				sw_refresh_cpu(w, tc, now);
		} else {
			w->c.full_hits++;
			w->c.frames_reused += tc->nframes;
		}
	}
	/* States after every walk (a new thread's id is known once its
	 * state is read), before any thread is handed on. */
	sw_refresh_cpu_states(w, iv, now);
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
		if ((st = sw_refresh_interps(w, now, err)) != TT_OK)
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
			sw_parse_block(l, iv, iv->block);
		struct list_change changed = {
			.list = !before.have || before.head != iv->head ||
				before.unique_id != iv->unique_id || before.count != iv->count ||
				!w->o.cache,
			.switched = !before.have || iv->resync || before.switch_no != iv->switch_no ||
				    before.holder != iv->holder,
		};
		any_switch |= changed.switched && before.have;
		if (l->has_code_generation && before.have && before.code_gen != iv->code_gen)
			codecache_invalidate(&w->codes);
		if (changed.list && (st = sw_rebuild_threads(w, iv, now, err)) != TT_OK) {
			iv->have = false;   /* the old list stays: rebuilt next sample */
			return st;
		}
		if ((st = read_unpredicted(w, iv, &before, changed, err)) != TT_OK ||
		    (st = walk_threads(w, iv, &before, changed, now, err)) != TT_OK)
			return st;
		iv->resync = false;
	}
	w->switch_rate = w->switch_rate * 0.95 + (any_switch ? 0.05 : 0.0);
	w->first = false;
	sw_refresh_names(w, now);
	return TT_OK;
}
