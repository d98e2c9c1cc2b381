#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "samplelog.h"

int
samplelog_init(struct samplelog *l, struct profile *prof, enum profile_filter filter)
{
	memset(l, 0, sizeof *l);
	if (procset_init(&l->mirror) != 0)
		return -1;
	l->prof = prof;
	l->filter = filter;
	return 0;
}

void
samplelog_free(struct samplelog *l)
{
	procset_free(&l->mirror);
	free(l->func_of);
	free(l->frame_of);
	free(l->stack_of);
	free(l->chain);
	memset(l, 0, sizeof *l);
}

static tt_status
undefined(struct tt_error *err, const char *what, uint32_t id)
{
	return tt_fail(err, TT_EUSAGE, 0, "a %s names id %u, not defined before it", what, id);
}

static tt_status
apply_sample(struct samplelog *l, const struct sample_record *r, struct tt_error *err)
{
	if (r->stack_id >= appendlog_count(l->mirror.in.stacks))
		return undefined(err, "sample", r->stack_id);
	if (!profile_add(l->prof, &l->mirror, r, l->filter))
		l->lost += r->weight;
	if (l->timeline && profile_filter_keeps(l->filter, r->state))
		timeline_add(l->timeline, &l->mirror, r);
	return TT_OK;
}

static tt_status
apply_thread(struct samplelog *l, const struct samplelog_event *ev, struct tt_error *err)
{
	uint32_t procs = procset_count(&l->mirror);
	if (ev->thread.proc >= procs || ev->thread.prev_proc >= procs)
		return tt_fail(err, TT_EUSAGE, 0, "thread slot %u names process entry %u, not defined "
			       "before it", ev->thread.slot, ev->thread.proc);
	struct thread_slot v = {
		.native_tid = ev->thread.native_tid, .ns_tid = ev->thread.native_tid,
		.proc = ev->thread.proc, .prev_proc = ev->thread.prev_proc,
	};
	atomic_init(&v.born_ns, ev->thread.born_ns);
	atomic_init(&v.gone_ns, ev->thread.gone_ns);
	return threadslots_put(&l->mirror.threads, ev->thread.slot, &v, ev->thread.name, err);
}

tt_status
samplelog_apply(struct samplelog *l, const struct samplelog_event *ev, uint32_t *id,
		struct tt_error *err)
{
	if (l->sink)
		l->sink(l->sink_ctx, ev);
	struct intern *in = &l->mirror.in;
	uint32_t made = 0;
	switch (ev->kind) {
	case SAMPLELOG_FUNC:
		made = intern_func(in, ev->func.qualname, ev->func.filename, ev->func.firstlineno,
				   (enum func_kind)ev->func.kind);
		break;
	case SAMPLELOG_FRAME:
		/* id 0 is "no function": never defined, so never named */
		if (ev->frame.func == 0 || ev->frame.func >= appendlog_count(in->funcs))
			return undefined(err, "frame", ev->frame.func);
		made = intern_frame(in, ev->frame.func, ev->frame.line);
		break;
	case SAMPLELOG_STACK:
		if (ev->stack.parent >= appendlog_count(in->stacks))
			return undefined(err, "stack", ev->stack.parent);
		if (ev->stack.frame >= appendlog_count(in->frames))
			return undefined(err, "stack", ev->stack.frame);
		made = intern_stack(in, ev->stack.parent, ev->stack.frame);
		break;
	case SAMPLELOG_PROC:
		return procset_put_copy(&l->mirror, ev->proc.index, ev->proc.pid, ev->proc.start_ns,
					ev->proc.sampled, ev->proc.cmdline ? ev->proc.cmdline : "",
					err);
	case SAMPLELOG_THREAD:
		return apply_thread(l, ev, err);
	case SAMPLELOG_SAMPLE:
		return apply_sample(l, &ev->sample, err);
	default:
		return tt_fail(err, TT_EUSAGE, 0, "an event of unknown kind %d", (int)ev->kind);
	}
	if (!made)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "too many functions, frames or stacks "
			       "(or out of memory)");
	if (id)
		*id = made;
	return TT_OK;
}

/* --- record side --- */

static bool
same_proc(const struct proc_info *live, const struct proc_info *m)
{
	return live->pid == m->pid && live->start_ns == m->start_ns &&
	       live->sampled == m->sampled && strcmp(procset_cmdline(live), m->cmdline) == 0;
}

static tt_status
sync_procs(struct samplelog *l, const struct procset *live, struct tt_error *err)
{
	uint32_t n = procset_count(live), have = procset_count(&l->mirror);
	for (uint32_t i = 0; i < n; i++) {
		const struct proc_info *p = procset_at(live, i);
		if (i < have && same_proc(p, procset_at(&l->mirror, i)))
			continue;
		struct samplelog_event ev = {.kind = SAMPLELOG_PROC, .proc = {
			.index = i, .pid = p->pid, .start_ns = p->start_ns, .sampled = p->sampled,
			.cmdline = procset_cmdline(p),
		}};
		tt_status st = samplelog_apply(l, &ev, NULL, err);
		if (st != TT_OK)
			return st;
	}
	return TT_OK;
}

/* A consistent read of a live slot (the sampler may be giving it to a new
 * thread: the birth is stored last, so read it first and again after). */
static void
read_slot(const struct procset *live, uint32_t i, struct samplelog_event *ev)
{
	struct thread_slot *t = (struct thread_slot *)procset_slot(live, i);
	for (;;) {
		uint64_t born = atomic_load_explicit(&t->born_ns, memory_order_acquire);
		*ev = (struct samplelog_event){.kind = SAMPLELOG_THREAD, .thread = {
			.slot = i, .proc = t->proc, .prev_proc = t->prev_proc,
			.native_tid = t->native_tid, .born_ns = born,
			.gone_ns = atomic_load_explicit(&t->gone_ns, memory_order_acquire),
			.name = atomic_load_explicit(&t->name, memory_order_acquire),
		}};
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&t->born_ns, memory_order_acquire) == born)
			return;
	}
}

static bool
same_slot(const struct samplelog_event *ev, const struct thread_slot *m)
{
	const char *name = atomic_load_explicit(&((struct thread_slot *)m)->name,
						memory_order_relaxed);
	return ev->thread.native_tid == m->native_tid && ev->thread.proc == m->proc &&
	       ev->thread.prev_proc == m->prev_proc &&
	       ev->thread.born_ns == atomic_load_explicit(&((struct thread_slot *)m)->born_ns,
							  memory_order_relaxed) &&
	       ev->thread.gone_ns == atomic_load_explicit(&((struct thread_slot *)m)->gone_ns,
							  memory_order_relaxed) &&
	       (ev->thread.name == name ||
		(ev->thread.name && name && strcmp(ev->thread.name, name) == 0));
}

static tt_status
sync_threads(struct samplelog *l, const struct procset *live, struct tt_error *err)
{
	uint32_t n = appendlog_count(live->threads.log);
	uint32_t procs = procset_count(&l->mirror);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t have = appendlog_count(l->mirror.threads.log);
		struct samplelog_event ev;
		read_slot(live, i, &ev);
		/* A thread of a process added since the processes were read: no
		 * record drained yet is of it. Its slot is read next time. */
		if (ev.thread.proc >= procs || ev.thread.prev_proc >= procs) {
			if (i >= have)
				break;
			continue;
		}
		if (i < have && same_slot(&ev, procset_slot(&l->mirror, i)))
			continue;
		tt_status st = samplelog_apply(l, &ev, NULL, err);
		if (st != TT_OK)
			return st;
	}
	return TT_OK;
}

tt_status
samplelog_sync(struct samplelog *l, const struct procset *live, struct tt_error *err)
{
	tt_status st = sync_procs(l, live, err);
	return st == TT_OK ? sync_threads(l, live, err) : st;
}

/* The mirror's id for the sampler's function / frame, defined first if new. */
static tt_status
define_func(struct samplelog *l, const struct intern *in, uint32_t f, uint32_t *out,
	    struct tt_error *err)
{
	if (!f || (f < l->nfunc && l->func_of[f])) {
		*out = f ? l->func_of[f] : 0;
		return TT_OK;
	}
	if (!grow_array((void **)&l->func_of, &l->nfunc, f + 1, sizeof *l->func_of))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sample log");
	const struct interned_func *fn = intern_func_at(in, f);
	struct samplelog_event ev = {.kind = SAMPLELOG_FUNC, .func = {
		.qualname = fn->qualname, .filename = fn->filename,
		.firstlineno = fn->firstlineno, .kind = fn->kind,
	}};
	tt_status st = samplelog_apply(l, &ev, &l->func_of[f], err);
	*out = l->func_of[f];
	return st;
}

static tt_status
define_frame(struct samplelog *l, const struct intern *in, uint32_t fr, uint32_t *out,
	     struct tt_error *err)
{
	if (!fr || (fr < l->nframe && l->frame_of[fr])) {
		*out = fr ? l->frame_of[fr] : 0;
		return TT_OK;
	}
	if (!grow_array((void **)&l->frame_of, &l->nframe, fr + 1, sizeof *l->frame_of))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sample log");
	const struct interned_frame *frame = intern_frame_at(in, fr);
	struct samplelog_event ev = {.kind = SAMPLELOG_FRAME, .frame = {.line = frame->line}};
	tt_status st = define_func(l, in, frame->func_id, &ev.frame.func, err);
	if (st == TT_OK)
		st = samplelog_apply(l, &ev, &l->frame_of[fr], err);
	*out = l->frame_of[fr];
	return st;
}

static bool
stack_known(const struct samplelog *l, uint32_t s)
{
	return !s || (s < l->nstack && l->stack_of[s]);
}

/* The mirror's id for the sampler's stack s: its ancestors not defined yet
 * are defined root first. */
static tt_status
define_stack(struct samplelog *l, const struct intern *in, uint32_t s, uint32_t *out,
	     struct tt_error *err)
{
	if (!grow_array((void **)&l->stack_of, &l->nstack, s + 1, sizeof *l->stack_of))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sample log");
	uint32_t n = 0;
	for (uint32_t a = s; !stack_known(l, a); a = intern_stack_at(in, a)->parent) {
		if (!grow_array((void **)&l->chain, &l->chain_cap, n + 1, sizeof *l->chain))
			return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the sample log");
		l->chain[n++] = a;
	}
	while (n--) {
		uint32_t a = l->chain[n];
		const struct interned_stack *st = intern_stack_at(in, a);
		struct samplelog_event ev = {.kind = SAMPLELOG_STACK,
					     .stack = {.parent = st->parent ? l->stack_of[st->parent] : 0}};
		tt_status rc = define_frame(l, in, st->frame, &ev.stack.frame, err);
		if (rc == TT_OK)
			rc = samplelog_apply(l, &ev, &l->stack_of[a], err);
		if (rc != TT_OK)
			return rc;
	}
	*out = s ? l->stack_of[s] : 0;
	return TT_OK;
}

tt_status
samplelog_take(struct samplelog *l, const struct procset *live, const struct sample_record *r,
	       struct tt_error *err)
{
	struct samplelog_event ev = {.kind = SAMPLELOG_SAMPLE, .sample = *r};
	if (!stack_known(l, r->stack_id)) {
		tt_status st = define_stack(l, &live->in, r->stack_id, &ev.sample.stack_id, err);
		if (st != TT_OK)
			return st;
	} else {
		ev.sample.stack_id = r->stack_id ? l->stack_of[r->stack_id] : 0;
	}
	return samplelog_apply(l, &ev, NULL, err);
}
