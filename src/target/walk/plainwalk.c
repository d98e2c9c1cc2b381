#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "cycle.h"
#include "grow.h"
#include "proc/procstat.h"
#include "walk/plainwalk.h"

tt_status
plainwalk_init(struct plainwalk *u, struct target *t, unsigned flags, struct tt_error *err)
{
	memset(u, 0, sizeof *u);
	u->target = t;
	u->flags = flags;
	tidmap_init(&u->tids, t->pid);
	if (codecache_init(&u->codes) != 0)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the code cache");
	return TT_OK;
}

void
plainwalk_free(struct plainwalk *u)
{
	codecache_free(&u->codes);
	tidmap_free(&u->tids);
}

static tt_status
push_frame(struct tt_sample *s, struct tt_frame f, struct tt_error *err)
{
	if (!grow_array((void **)&s->frames, &s->frames_cap, s->nframes + 1, sizeof *s->frames))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for frames");
	s->frames[s->nframes++] = f;
	return TT_OK;
}

static tt_status
push_thread(struct tt_sample *s, struct tt_thread **out, struct tt_error *err)
{
	if (!grow_array((void **)&s->threads, &s->threads_cap, s->nthreads + 1, sizeof *s->threads))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for threads");
	*out = &s->threads[s->nthreads++];
	memset(*out, 0, sizeof **out);
	return TT_OK;
}

/* What one interpreter's state tells us, read in one vectored call. */
struct interp_view {
	int64_t id;
	uint64_t threads_main;
	int32_t gil_locked;
	uint64_t gil_holder;
	int32_t gc_collecting;
};

static tt_status
read_interp(struct plainwalk *u, uint64_t addr, struct interp_view *v, struct tt_error *err)
{
	const struct py_layout *l = &u->target->layout;
	memset(v, 0, sizeof *v);
	/* The GIL's state: in the interpreter (3.13+), in _PyRuntime (3.11),
	 * or behind interp->ceval.gil (3.12, one more read). */
	uint64_t gil = 0, gil_ptr = 0;
	uint64_t locked_at = addr + l->is_gil_locked, holder_at = addr + l->is_gil_holder;
	if (l->gil_place == PY_GIL_IN_RUNTIME)
		gil = u->target->runtime_addr + l->rt_gil;
	struct remote_seg segs[5] = {
		{addr + l->is_id, &v->id, 8},
		{addr + l->is_gc_collecting, &v->gc_collecting, 4},
	};
	size_t n = 2;
	if (l->has_threads_main)
		segs[n++] = (struct remote_seg){addr + l->is_threads_main, &v->threads_main, 8};
	if (l->gil_place == PY_GIL_BEHIND_POINTER)
		segs[n++] = (struct remote_seg){addr + l->is_gil_ptr, &gil_ptr, 8};
	size_t done;
	tt_status st = remote_readv(&u->target->mem, segs, n, &done, err);
	if (st != TT_OK)
		return st;
	if (done != n)
		return tt_fail(err, TT_EFAULT, EFAULT, "cannot read interpreter state at 0x%llx",
			       (unsigned long long)addr);
	if (l->gil_place == PY_GIL_BEHIND_POINTER) {
		if (gil_ptr == 0 || (gil_ptr & 7))
			return tt_fail(err, TT_EBADMEM, 0, "interpreter has no GIL yet (starting?)");
		gil = gil_ptr;
	}
	if (l->gil_place != PY_GIL_IN_INTERP) {
		locked_at = gil + l->gil_locked;
		holder_at = gil + l->gil_holder;
	}
	struct remote_seg gsegs[2] = {
		{locked_at, &v->gil_locked, 4},
		{holder_at, &v->gil_holder, 8},
	};
	if ((st = remote_readv(&u->target->mem, gsegs, 2, &done, err)) != TT_OK)
		return st;
	if (done != 2)
		return tt_fail(err, TT_EFAULT, EFAULT, "cannot read the GIL's state of interpreter 0x%llx",
			       (unsigned long long)addr);
	return TT_OK;
}

static bool
zeros(const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* Walk one thread's frame chain, innermost first, appending to s. */
static tt_status
walk_frames(struct plainwalk *u, struct tt_sample *s, struct tt_thread *th, uint64_t frame,
	    uint64_t base_frame, struct tt_error *err)
{
	const struct py_layout *l = &u->target->layout;
	struct remote *mem = &u->target->mem;
	uint8_t buf[512];
	if (l->fr_read_size > sizeof buf)
		return tt_fail(err, TT_EBADMEM, 0, "frame layout too large");
	bool reached_base = false;
	th->first_frame = s->nframes;
	/* A chain that loops (a torn read) is refused within a few laps; one
	 * that is merely long keeps its innermost frames. */
	struct cycle_guard guard;
	cycle_guard_init(&guard);
	for (unsigned walked = 0; frame != 0; walked++) {
		if (l->has_base_frame && frame == base_frame) {
			reached_base = true;
			break;
		}
		if (cycle_guard_seen(&guard, frame))
			return tt_fail(err, TT_EBADMEM, 0, "frame chain loops back on itself");
		if (walked >= WALK_MAX_VISITS) {
			th->status |= TT_THREAD_TRUNCATED;
			break;
		}
		if (frame & 7)
			return tt_fail(err, TT_EBADMEM, 0, "misaligned frame pointer 0x%llx",
				       (unsigned long long)frame);
		tt_status st = remote_read(mem, frame, buf, l->fr_read_size, err);
		if (st != TT_OK)
			return st;
		int owner = (int8_t)buf[l->fr_owner];
		uint64_t previous = load_u64(buf, l->fr_previous);
		if (u->target->core && zeros(buf, l->fr_read_size)) {
			/* what a core could not keep: the innermost frames stand */
			th->status |= TT_THREAD_CORE_ZEROS;
			break;
		}
		/* the frame the evaluator call below this shim started with */
		bool entry_here = false;
		switch (pylayout_frame_kind(l, owner)) {
		case PY_FRAME_SHIM:
			if (th->nframes)
				s->frames[s->nframes - 1].entry = true;
			break;
		case PY_FRAME_INVALID:
			return tt_fail(err, TT_EBADMEM, 0, "frame at 0x%llx has invalid owner %d",
				       (unsigned long long)frame, owner);
		case PY_FRAME_PYTHON: {
			if (th->nframes >= WALK_MAX_FRAMES) {
				/* Deeper than we keep: the rest is not read at all. */
				th->status |= TT_THREAD_TRUNCATED;
				return TT_OK;
			}
			uint64_t code = load_u64(buf, l->fr_executable) & ~l->tag_mask;
			uint32_t id;
			st = codecache_lookup(&u->codes, mem, l, code, &id, err);
			if (st != TT_OK)
				return st;
			uint64_t instr_ptr = load_u64(buf, l->fr_instr_ptr);
			entry_here = l->has_is_entry && buf[l->fr_is_entry];
			/* Not yet at its first RESUME (the __init__ shim): CPython's
			 * f_back leaves it out, and so do we (its evaluator call's
			 * end goes to the frame inside it). */
			if (owner != l->owner_generator &&
			    codecache_frame_incomplete(&u->codes, id, instr_ptr)) {
				if (entry_here && th->nframes)
					s->frames[s->nframes - 1].entry = true;
				break;
			}
			struct tt_frame f = {
				.addr = frame,
				.instr = instr_ptr,
				.code_id = id,
				.line = codecache_line(&u->codes, id, instr_ptr),
				.entry = entry_here,
			};
			if ((st = push_frame(s, f, err)) != TT_OK)
				return st;
			th->nframes++;
			break;
		}
		}
		frame = previous;
	}
	/* 3.15 threads end in an embedded base frame; stopping short of it
	 * means we followed a pointer that changed under us. */
	if (l->has_base_frame && !reached_base && base_frame != 0 &&
	    !(th->status & (TT_THREAD_TRUNCATED | TT_THREAD_CORE_ZEROS)))
		return tt_fail(err, TT_EBADMEM, 0, "incomplete stack: did not reach the base frame");
	return TT_OK;
}

/* The thread lists read from the process, the first failure's error kept. */
struct list_read {
	struct remote *mem;
	tt_status st;
	struct tt_error err;
};

static bool
list_read_u64(void *ctx, uint64_t addr, uint64_t *out)
{
	struct list_read *r = ctx;
	tt_status st = remote_read_u64(r->mem, addr, out, &r->err);
	if (st != TT_OK && r->st == TT_OK)
		r->st = st;
	return st == TT_OK;
}

static tt_status
sample_thread(struct plainwalk *u, struct tt_sample *s, uint64_t tstate, uint64_t interp,
	      const struct interp_view *iv, struct tt_error *err)
{
	const struct py_layout *l = &u->target->layout;
	uint8_t buf[4096];
	if (l->ts_read_size > sizeof buf)
		return tt_fail(err, TT_EBADMEM, 0, "thread state layout too large");
	tt_status st = remote_read(&u->target->mem, tstate, buf, l->ts_read_size, err);
	if (st != TT_OK)
		return st;
	/* A thread state that does not point back at its interpreter was freed
	 * or reused while we read the list. */
	if (load_u64(buf, l->ts_interp) != interp)
		return tt_fail(err, TT_EBADMEM, 0, "thread state 0x%llx changed while read",
			       (unsigned long long)tstate);
	/* A thread state whose OS thread has not started yet (or has already
	 * unbound) has no native id and no frames: not a thread to show. */
	uint64_t native_tid = load_u64(buf, l->ts_native_thread_id);
	if (native_tid == 0)
		return TT_OK;

	struct tt_thread *th = NULL;
	if ((st = push_thread(s, &th, err)) != TT_OK)
		return st;
	th->tstate = tstate;
	th->interp_id = iv->id;
	th->native_tid = native_tid;
	if (l->has_tstate_gil) {
		bool holds = load_i32(buf, l->ts_holds_gil) != 0;
		if (holds)
			th->status |= TT_THREAD_GIL;
		else if (load_i32(buf, l->ts_gil_requested) != 0)
			th->status |= TT_THREAD_GIL_WAIT;
	} else if (iv->gil_locked && iv->gil_holder == tstate) {
		th->status |= TT_THREAD_GIL;
	}
	if (iv->gc_collecting && (th->status & TT_THREAD_GIL))
		th->status |= TT_THREAD_GC;
	if (l->has_exception_state && load_u64(buf, l->ts_current_exception) != 0)
		th->status |= TT_THREAD_EXCEPTION;
	if (l->has_threads_main ? tstate == iv->threads_main : load_u64(buf, l->ts_next) == 0)
		th->status |= TT_THREAD_MAIN; /* 3.13's list is head-inserted: main is last */
	uint64_t base = l->has_base_frame ? load_u64(buf, l->ts_base_frame) : 0;
	uint64_t frame;
	if (l->has_cframe) {
		/* 3.11/3.12: tstate->cframe->current_frame */
		uint64_t cf = load_u64(buf, l->ts_cframe), at = cf + l->cf_current_frame;
		if (cf == 0)
			frame = 0;
		else if (cf & 7)
			return tt_fail(err, TT_EBADMEM, 0, "misaligned cframe pointer");
		else if (at >= tstate && at - tstate <= l->ts_read_size - 8)
			frame = load_u64(buf, at - tstate);
		else if ((st = remote_read_u64(&u->target->mem, at, &frame, err)) != TT_OK)
			return st;
	} else {
		frame = load_u64(buf, l->ts_current_frame);
	}
	return walk_frames(u, s, th, frame, base, err);
}

/* 3.11 gives a thread state made for a new thread its creator's thread ids
 * until the new thread runs: a frameless thread sharing its native id with
 * another one of the interpreter is such a state, not a thread yet. Its
 * entry holds no frames, so dropping it moves no frame. */
static void
drop_unstarted(struct tt_sample *s, uint32_t from)
{
	uint32_t kept = from;
	for (uint32_t k = from; k < s->nthreads; k++) {
		bool drop = false;
		for (uint32_t j = from; j < s->nthreads && !drop && s->threads[k].nframes == 0; j++)
			drop = j != k && s->threads[j].native_tid == s->threads[k].native_tid;
		if (!drop)
			s->threads[kept++] = s->threads[k];
	}
	s->nthreads = kept;
}

/* Which of the process's tasks each thread is (tidmap.h), then what the
 * kernel says of it. A fake target (pid 0: fuzzing) keeps the recorded ids. */
static void
resolve_threads(struct plainwalk *u, struct tt_sample *s, bool only_thread)
{
	pid_t pid = u->target->pid;
	for (uint32_t i = 0; i < s->nthreads && pid > 0; i++) {
		struct tt_thread *th = &s->threads[i];
		bool in_ns, retry;
		uint64_t ours = tidmap_resolve(&u->tids, th->native_tid,
					       (th->status & TT_THREAD_MAIN) != 0, only_thread, &in_ns,
					       &retry);
		th->tid_unknown = ours == 0;
		th->ns_tid = in_ns ? th->native_tid : ours ? ours : th->native_tid;
		if (ours)
			th->native_tid = ours;
		if (!(u->flags & PLAINWALK_CPU_STATE))
			continue;
		switch (th->tid_unknown ? RUN_STATE_UNKNOWN : procstat_cpu_state(pid, (long)ours)) {
		/* one look: runnable is all it can tell */
		case RUN_STATE_RUNNING: th->status |= TT_THREAD_ON_CPU | TT_THREAD_RUNNABLE; break;
		case RUN_STATE_IDLE: break;
		case RUN_STATE_UNKNOWN: th->status |= TT_THREAD_CPU_UNKNOWN; break;
		}
	}
	for (uint32_t i = 0; i < s->nthreads && pid <= 0; i++)
		s->threads[i].ns_tid = s->threads[i].native_tid;
}

tt_status
plainwalk_sample(struct plainwalk *u, struct tt_sample *s, struct tt_error *err)
{
	const struct py_layout *l = &u->target->layout;
	s->nthreads = 0;
	s->nframes = 0;
	struct list_read rd = {.mem = &u->target->mem};
	struct target_threads_iter it;
	target_threads_begin(&it, u->target, list_read_u64, &rd);
	unsigned ninterp = 0;
	uint64_t interp, ts;
	tt_status st;
	while (target_threads_next_interp(&it, &interp)) {
		ninterp++;
		struct interp_view iv;
		if ((st = read_interp(u, interp, &iv, err)) != TT_OK)
			return st;
		uint32_t first_thread = s->nthreads;
		while (target_threads_next(&it, &ts))
			if ((st = sample_thread(u, s, ts, interp, &iv, err)) != TT_OK)
				return st;
		if (it.broken)
			break;
		if (l->has_cframe)
			drop_unstarted(s, first_thread);
	}
	if (it.broken && it.read_failed) {
		*err = rd.err;
		return rd.st;
	}
	if (it.broken)
		return tt_fail(err, TT_EBADMEM, 0, "%s", it.broken);
	if (ninterp == 0)
		return tt_fail(err, TT_EBADMEM, 0, "the runtime has no interpreter (starting or exiting)");
	resolve_threads(u, s, ninterp == 1 && s->nthreads == 1);
	return TT_OK;
}
