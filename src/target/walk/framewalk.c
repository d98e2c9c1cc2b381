/* Planning a sample's batch (segments and the spans of data stacks) and
 * walking one thread's frames over it, reusing its cached chain. */
#include "config.h"

#include "order.h"
#include "walk/walkstate.h"

/* ---------------------------------------------------------------------
 * Planning the batch
 * ------------------------------------------------------------------- */

/* Queue one segment; a sample of many threads takes as many as it needs
 * (no cut-off that would leave threads to one read each). */
bool
sw_add_seg(struct stackwalk *w, uint64_t addr, void *buf, size_t len)
{
	if (!grow_array((void **)&w->segs, &w->segs_cap, w->nsegs + 1, sizeof *w->segs))
		return false;
	w->segs[w->nsegs++] = (struct remote_seg){.addr = addr, .buf = buf, .len = len};
	return true;
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
			order_sort(a, n, sizeof *a, order_u64);
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
	uint8_t *buf = sw_arena_take(w, hi - lo);
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
void
sw_plan_spans(struct stackwalk *w, struct tcache *tc, uint32_t depth)
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
tt_status
sw_current_frame(struct stackwalk *w, struct tcache *tc, uint64_t *out, struct tt_error *err)
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
void
sw_plan_cframe(struct stackwalk *w, struct tcache *tc)
{
	const struct py_layout *l = w->l;
	tc->cfbuf = NULL;
	tc->cf_seg = UINT32_MAX;
	if (!l->has_cframe || tc->cframe == 0 || (tc->cframe & 7))
		return;
	uint64_t at = tc->cframe + l->cf_current_frame;
	if (at >= tc->tstate && at - tc->tstate <= l->ts_read_size - 8)
		return; /* comes with the thread state */
	uint8_t *buf = sw_arena_take(w, 8);
	if (!buf || !sw_add_seg(w, at, buf, 8))
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

tt_status
sw_walk_thread(struct stackwalk *w, struct tcache *tc, bool full, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	const uint8_t *ts = tc->tsbuf;
	uint64_t cur;
	tt_status st = sw_current_frame(w, tc, &cur, err);
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
	 * that is merely long keeps its innermost WALK_MAX_FRAMES frames. */
	struct cycle_guard guard;
	cycle_guard_init(&guard);
	for (unsigned walked = 0; cur != 0 && !(l->has_base_frame && cur == base); walked++) {
		if (cycle_guard_seen(&guard, cur))
			return tt_fail(err, TT_EBADMEM, 0, "frame chain loops back on itself");
		if (walked >= WALK_MAX_VISITS) {
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
		cf->entry = l->has_is_entry && fb[l->fr_is_entry];
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
		if (kind == PY_FRAME_PYTHON && npy >= WALK_MAX_FRAMES) {
			truncated = true; /* the rest is not read */
			break;
		}
		bool match = false;
		if (tc->have_chain && w->o.cache) {
			align = cached_index(tc, cur, align >= 0 ? align + 1 : (int32_t)n);
			if (align >= 0) {
				const struct cframe *old = &tc->frames[align];
				match = old->previous == cf->previous && old->executable == cf->executable &&
					old->instr_ptr == cf->instr_ptr && old->owner == cf->owner &&
					old->entry == cf->entry;
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
		    npy + rest_depth(w, tc, (uint32_t)align) <= WALK_MAX_FRAMES) {
			spliced = true;
			break;
		}
	}
	if (spliced)
		return splice_prefix(w, tc, n, (uint32_t)align, matched_total, err);
	return keep_chain(w, tc, n, truncated, matched_total, err);
}


/* What the thread state read says beyond the frames. */
void
sw_read_thread_state(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	const struct py_layout *l = w->l;
	const uint8_t *ts = tc->tsbuf;
	tc->sticky &= ~(uint32_t)(TT_THREAD_GIL_WAIT | TT_THREAD_EXCEPTION);
	if (l->has_tstate_gil && load_i32(ts, l->ts_gil_requested) && !load_i32(ts, l->ts_holds_gil))
		tc->sticky |= TT_THREAD_GIL_WAIT;
	if (l->has_exception_state && load_u64(ts, l->ts_current_exception))
		tc->sticky |= TT_THREAD_EXCEPTION;
	tc->running_task = w->ts_running_task ? load_u64(ts, w->ts_running_task) & ~l->tag_mask : 0;
	sw_note_stack(w, tc);
	(void)now;
}

/* Where the thread's data stack is, from its thread state. */
void
sw_note_stack(struct stackwalk *w, struct tcache *tc)
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
