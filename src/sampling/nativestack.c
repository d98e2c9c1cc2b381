/* Native frames in the sampler's stacks (nativestack.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "grow.h"
#include "native/mixedstack.h"
#include "native/unwind.h"
#include "nativestack.h"
#include "native/perfsample.h"
#include "walk/sample.h"

/* Python frames taken into a mixed stack: deeper ones keep their own. */
#define PY_MAX 1024

/* A thread whose Python stack and state are as at its last native walk,
 * not on a CPU nor holding the GIL, is looked at again (a /proc read, a
 * walk when it moved) in turns: at most this many of them a pass. A pool
 * of thousands of waiting threads would otherwise take 10-20 ms of /proc
 * reads a pass; one that woke in C code without the GIL is seen within
 * threads / CHECKS_PER_PASS passes. */
#define CHECKS_PER_PASS 64

/* A thread's last native frames, by its slot. */
struct thread_native {
	uint64_t tid;                       /* the slot's occupant they are of; 0: none */
	uint64_t sp, pc;                    /* where it was blocked; 0: it was running */
	uint32_t ids[NATIVE_MAX_FRAMES];    /* interned frames, innermost first */
	bool evaluator[NATIVE_MAX_FRAMES];
	uint32_t count;
	bool complete;                      /* the walk reached the thread's start */
	uint32_t py_stack, py_state;        /* its Python sample when last looked at */
	/* The mixed stack last made of these frames, on Python stack
	 * mixed_py and base mixed_base: a pool's waiting threads give the
	 * same one pass after pass (0: none made since the last walk). */
	uint32_t mixed_id, mixed_py, mixed_base;
	bool mixed_merged;
};

struct nativestack {
	struct native_unwinder *u;
	struct thread_native *threads;      /* by slot */
	uint32_t cap;
	struct walk_thread *out;
	uint32_t out_cap;
	struct native_frame nf[NATIVE_MAX_FRAMES];
	uint32_t py_ids[PY_MAX];
	bool py_entry[PY_MAX];
	struct mixed_frame order[NATIVE_MAX_FRAMES + PY_MAX];
	struct native_counts counts;
	uint64_t passes;
	uint32_t sweep;                     /* the next slot forget_ended looks at */
};

tt_status
nativestack_new(pid_t pid, uint64_t period_ns, struct nativestack **out, struct tt_error *err)
{
	*out = NULL;
	struct nativestack *ns = calloc(1, sizeof *ns);
	if (!ns)
		return tt_fail(err, TT_ENOMEM, 0, "out of memory for native frames");
	tt_status st = native_open(&ns->u, pid, err);
	if (st != TT_OK) {
		free(ns);
		return st;
	}
	/* 8 KiB of stack a sample: the kernel copies it at each one, paid by
	 * the target; frames above it are read live */
	/* twice a pass: a thread that ran through a pass has a sample of it
	 * however the kernel's ticks and the passes fall */
	native_continuous(ns->u, period_ns ? period_ns / 2 : 500000, 8192);
	*out = ns;
	return TT_OK;
}

void
nativestack_free(struct nativestack *ns)
{
	if (!ns)
		return;
	native_close(ns->u);
	free(ns->threads);
	free(ns->out);
	free(ns);
}

const struct native_counts *
nativestack_counts(const struct nativestack *ns)
{
	return &ns->counts;
}

void
nativestack_pause(struct nativestack *ns, bool paused)
{
	ns->counts.paused_samples += native_sampling(ns->u, !paused);
}

const char *
nativestack_refusal(const struct nativestack *ns)
{
	return native_perf_refusal(ns->u);
}

/* A native frame's interned ID: function "symbol" in its library, line 0.
 * Without a symbol, "0xOFFSET" where its FDE starts in the library (one
 * function however many addresses are sampled in it, in every process of
 * a tree), else its address; code no file holds nor a perf map names is
 * one function, "[jit]". */
static uint32_t
intern_native(struct intern *in, const struct native_frame *f)
{
	char addr[24];
	const char *name = f->symbol;
	if (!name[0] && f->anon_code) {
		name = "[jit]";
	} else if (!name[0]) {
		snprintf(addr, sizeof addr, "0x%llx",
			 (unsigned long long)(f->fde_known ? f->fde_offset : f->pc));
		name = addr;
	}
	uint32_t func = intern_func(in, name, f->library[0] ? f->library : "?", 0, FUNC_NATIVE);
	return func ? intern_frame(in, func, 0) : 0;
}

/* Thread tid's native frames into t: reused while it stays blocked where it
 * was, else walked again; a running thread's only from a perf sample taken
 * in its innermost Python frame just read, threads[i]'s of w. */
static void
read_native(struct nativestack *ns, struct intern *in, uint64_t tid, struct thread_native *t,
	    struct stackwalk *w, uint32_t i)
{
	uint64_t sp = 0, pc = 0;
	bool blocked = native_blocked_at(ns->u, (pid_t)tid, &sp, &pc);
	if (t->tid == tid && blocked && t->sp == sp && t->pc == pc)
		return;
	if (t->tid && t->tid != tid)
		native_forget(ns->u, (pid_t)t->tid);   /* its slot's thread ended */
	uint64_t t0 = clock_now_ns();
	char why[512];
	uint64_t frame, instr;
	stackwalk_innermost(w, i, &frame, &instr);
	native_expect_frame(ns->u, frame, instr);
	size_t n = native_thread_frames(ns->u, (pid_t)tid, ns->nf, NATIVE_MAX_FRAMES, why, sizeof why);
	ns->counts.moved += native_moved(ns->u);
	ns->counts.unverified += native_unverified(ns->u);
	ns->counts.walks++;
	ns->counts.walk_ns += clock_now_ns() - t0;
	t->mixed_id = 0;
	t->tid = tid;
	t->sp = blocked ? sp : 0;
	t->pc = blocked ? pc : 0;
	t->complete = why[0] == '\0';
	t->count = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t id = intern_native(in, &ns->nf[k]);
		if (!id)
			break;
		t->evaluator[t->count] = mixed_is_evaluator(&ns->nf[k]);
		t->ids[t->count++] = id;
	}
	if (t->count < n)
		t->complete = false;
}

/* The stack of native frames t and the sample's Python frames i, in one
 * order, on base (0: the root); 0 when nothing is to change. On a task's
 * base only the frames down to its coroutine's (its first task_depth
 * Python frames) and the native ones they called are kept. */
static uint32_t
make_mixed_stack(struct nativestack *ns, struct stackwalk *w, struct intern *in, uint32_t i,
		 const struct thread_native *t, uint32_t base, bool *merged)
{
	*merged = false;
	uint32_t np = stackwalk_thread_frames(w, i, ns->py_ids, ns->py_entry, PY_MAX);
	struct mixed_stack ms;
	mixed_stack_build(t->evaluator, t->count, t->complete, ns->py_entry, np, ns->order, &ms);
	/* Unmerged, the native frames come first, the event loop's with them:
	 * the task's stack keeps its Python frames alone (as sampled). */
	if (base && !ms.merged)
		return 0;
	size_t from = ms.count;
	uint32_t depth = base ? stackwalk_task_depth(w, i) : 0;
	if (depth && depth <= np) {
		for (size_t k = 0; k < ms.count; k++)
			if (ns->order[k].python && ns->order[k].index == depth - 1)
				from = k + 1;
	} else {
		base = 0;
	}
	uint32_t id = base;
	for (size_t k = from; k-- > 0;) {
		const struct mixed_frame *m = &ns->order[k];
		id = intern_stack(in, id, m->python ? ns->py_ids[m->index] : t->ids[m->index]);
		if (!id)
			return 0;
	}
	*merged = ms.merged;
	return id;
}

/* make_mixed_stack's, made again only when the native frames, the Python
 * stack or the base changed since it was last made (the same frames
 * interned again give the same stack). */
static uint32_t
mixed_stack_id(struct nativestack *ns, struct stackwalk *w, struct intern *in, uint32_t i,
	       struct thread_native *t, uint32_t py_stack, uint32_t base)
{
	if (!t->mixed_id || t->mixed_py != py_stack || t->mixed_base != base) {
		t->mixed_id = make_mixed_stack(ns, w, in, i, t, base, &t->mixed_merged);
		t->mixed_py = py_stack;
		t->mixed_base = base;
	}
	/* counted with the stack it gave: merged never outnumbers native */
	if (t->mixed_id)
		ns->counts.merged += t->mixed_merged;
	return t->mixed_id;
}

/* A thread that ended lets go of its perf event (a descriptor and a
 * locked ring), else they pile up to perf_threads' limit under thread
 * churn and the oldest live ones are let go instead. Its slot says it: its
 * occupant is gone, or is another thread. CHECKS_PER_PASS slots a pass, in
 * turns: a pool churning all day leaves thousands of slots. */
static void
forget_ended(struct nativestack *ns, const struct appendlog *slots)
{
	uint32_t n = appendlog_count(slots);
	if (n > ns->cap)
		n = ns->cap;
	for (uint32_t k = 0; k < CHECKS_PER_PASS && k < n; k++) {
		uint32_t i = ns->sweep++ % n;
		struct thread_native *t = &ns->threads[i];
		if (!t->tid)
			continue;
		const struct thread_slot *slot = appendlog_at(slots, i);
		if (!atomic_load_explicit(&((struct thread_slot *)slot)->gone_ns,
					  memory_order_acquire) &&
		    slot->native_tid == t->tid)
			continue;
		native_forget(ns->u, (pid_t)t->tid);
		*t = (struct thread_native){0};
	}
}

const struct walk_thread *
nativestack_apply(struct nativestack *ns, struct stackwalk *w, const struct walk_thread *threads,
		  uint32_t n, const uint32_t *bases)
{
	/* no thread this pass (a list read between two threads' lives) */
	if (n == 0 || !grow_array((void **)&ns->out, &ns->out_cap, n, sizeof *ns->out))
		return threads;
	struct intern *in = stackwalk_intern_rw(w);
	const struct appendlog *slots = stackwalk_slots(w);
	/* unchanged threads whose slot's turn it is are looked at */
	uint64_t turns = (n + CHECKS_PER_PASS - 1) / CHECKS_PER_PASS, turn = ns->passes++ % turns;
	for (uint32_t i = 0; i < n; i++) {
		ns->out[i] = threads[i];
		const struct thread_slot *slot = appendlog_at(slots, threads[i].slot);
		ns->counts.threads++;
		if (atomic_load_explicit(&((struct thread_slot *)slot)->tid_unknown, memory_order_acquire) ||
		    !grow_array((void **)&ns->threads, &ns->cap, threads[i].slot + 1,
				sizeof *ns->threads))
			continue;
		struct thread_native *t = &ns->threads[threads[i].slot];
		bool same = t->tid == slot->native_tid && t->sp &&
			    t->py_stack == threads[i].stack_id && t->py_state == threads[i].state &&
			    !(threads[i].state & (TT_THREAD_RUNNABLE | TT_THREAD_ON_CPU | TT_THREAD_GIL));
		if (!same || threads[i].slot % turns == turn) {
			read_native(ns, in, slot->native_tid, t, w, i);
			t->py_stack = threads[i].stack_id;
			t->py_state = threads[i].state;
		}
		if (!t->count)
			continue;
		uint32_t id = mixed_stack_id(ns, w, in, i, t, threads[i].stack_id, bases ? bases[i] : 0);
		if (id) {
			ns->out[i].stack_id = id;
			ns->counts.native++;
		}
	}
	forget_ended(ns, slots);
	return ns->out;
}
