#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "walk/sample.h"
#include "stuckwatch.h"

struct idle_place {
	uint64_t key;    /* the stack */
};

struct loop_holder {
	uint64_t key;    /* the stack */
	uint32_t func;   /* stuckwatch_loop_holder's answer */
};

/* Frames looked at for an event loop, innermost first. */
#define LOOP_DEPTH_MAX 256

void
stuckwatch_init(struct stuckwatch *w, const struct intern *in, uint64_t stuck_ns,
		uint64_t loop_ns, uint64_t spin_ns, uint64_t gone_ns)
{
	memset(w, 0, sizeof *w);
	w->in = in;
	keytab_init(&w->idle, sizeof(struct idle_place));
	keytab_init(&w->holders, sizeof(struct loop_holder));
	w->stuck_ns = stuck_ns;
	w->loop_ns = loop_ns;
	w->spin_ns = spin_ns;
	w->gone_ns = gone_ns;
}

void
stuckwatch_free(struct stuckwatch *w)
{
	free(w->threads);
	keytab_free(&w->idle);
	keytab_free(&w->holders);
	memset(w, 0, sizeof *w);
}

static uint32_t
innermost_func(const struct intern *in, uint32_t stack)
{
	return intern_frame_at(in, intern_stack_at(in, stack)->frame)->func_id;
}

bool
stuckwatch_see(struct stuckwatch *w, uint32_t slot, uint64_t born_ns, uint32_t proc,
	       uint32_t stack, bool on_cpu, uint64_t time_ns)
{
	if (slot >= w->nthreads) {
		if (!grow_array((void **)&w->threads, &w->cap, slot + 1, sizeof *w->threads))
			return false;
		memset(w->threads + w->nthreads, 0,
		       (slot + 1 - w->nthreads) * sizeof *w->threads);
		w->nthreads = slot + 1;
	}
	struct stuck_thread *t = &w->threads[slot];
	if (t->born_ns != born_ns || t->last_ns == 0) {   /* a new occupant */
		bool added;
		if (stack && !keytab_put(&w->idle, stack, &added))
			return false;
		*t = (struct stuck_thread){.born_ns = born_ns, .proc = proc, .first_stack = stack,
					   .stack = stack, .since_ns = time_ns};
	} else if (t->stack != stack) {
		t->stack = stack;
		t->since_ns = time_ns;
		t->wait_ns = 0;
		t->for_client = false;
		t->off_cpu_ns = 0;
		t->named = t->loop_named = false;
	}
	if (on_cpu)
		t->off_cpu_ns = 0;
	else if (!t->off_cpu_ns)
		t->off_cpu_ns = time_ns;
	uint32_t func = on_cpu && stack ? innermost_func(w->in, stack) : 0;
	if (func != t->spin_func) {
		t->spin_func = func;
		t->spin_ns = time_ns;
		t->spin_named = false;
	}
	if (time_ns > t->last_ns)
		t->last_ns = time_ns;
	return true;
}

bool
stuckwatch_idle(const struct stuckwatch *w, const struct stuck_thread *t)
{
	return t->stack == t->first_stack ||
	       keytab_find(&w->idle, t->stack) != NULL;
}

static bool
ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && memcmp(s + n - m, tail, m) == 0;
}

static uint32_t
find_holder(const struct intern *in, uint32_t stack)
{
	uint32_t funcs[LOOP_DEPTH_MAX];
	uint32_t n = 0;
	for (uint32_t id = stack; id && n < LOOP_DEPTH_MAX;) {
		const struct interned_stack *st = intern_stack_at(in, id);
		funcs[n++] = intern_frame_at(in, st->frame)->func_id;
		id = st->parent;
	}
	uint32_t loop = 0;
	while (loop < n) {
		const struct interned_func *f = intern_func_at(in, funcs[loop]);
		if (strcmp(f->qualname, "BaseEventLoop._run_once") == 0 &&
		    ends_with(f->filename, "asyncio/base_events.py"))
			break;
		loop++;
	}
	if (loop == n || loop == 0)   /* no loop, or the loop between callbacks */
		return 0;
	const struct interned_func *inner = intern_func_at(in, funcs[loop - 1]);
	if (ends_with(inner->qualname, ".select") && ends_with(inner->filename, "/selectors.py"))
		return 0;
	for (uint32_t k = loop; k-- > 0;)
		if (!strstr(intern_func_at(in, funcs[k])->filename, "/asyncio/"))
			return funcs[k];
	return funcs[0];
}

uint32_t
stuckwatch_loop_holder(struct stuckwatch *w, uint32_t stack)
{
	if (!stack)
		return 0;
	struct loop_holder *h = keytab_find(&w->holders, stack);
	if (h)
		return h->func;
	uint32_t func = find_holder(w->in, stack);
	bool added;
	h = keytab_put(&w->holders, stack, &added);
	if (h)
		h->func = func;
	return func;
}

enum stuck_kind
stuckwatch_state(struct stuckwatch *w, uint32_t slot, uint64_t now_ns)
{
	if (slot >= w->nthreads)
		return STUCK_NONE;
	struct stuck_thread *t = &w->threads[slot];
	if (!t->last_ns || !t->stack || now_ns < t->since_ns ||
	    (now_ns > t->last_ns && now_ns - t->last_ns > w->gone_ns))
		return STUCK_NONE;
	/* on a CPU it is not stuck but busy: the spin rule's */
	uint64_t there = stuckwatch_since(t, STUCK_PLACE);
	if (now_ns >= there && now_ns - there >= w->stuck_ns && t->off_cpu_ns &&
	    !t->for_client && !stuckwatch_idle(w, t))
		return STUCK_PLACE;
	if (t->spin_func && now_ns >= t->spin_ns && now_ns - t->spin_ns >= w->spin_ns)
		return STUCK_SPIN;
	if (t->off_cpu_ns && now_ns >= t->off_cpu_ns && now_ns - t->off_cpu_ns >= w->loop_ns &&
	    stuckwatch_loop_holder(w, t->stack))
		return STUCK_LOOP;
	return STUCK_NONE;
}

int64_t
stuckwatch_next(struct stuckwatch *w, uint64_t now_ns, uint32_t *cursor, enum stuck_kind *kind)
{
	for (; *cursor < w->nthreads; (*cursor)++) {
		struct stuck_thread *t = &w->threads[*cursor];
		enum stuck_kind k = stuckwatch_state(w, *cursor, now_ns);
		bool named = k == STUCK_PLACE ? t->named : k == STUCK_SPIN ? t->spin_named
			     : t->loop_named;
		if (k == STUCK_NONE || named)
			continue;
		/* one report of one thing */
		t->named = t->loop_named = t->spin_named = true;
		*kind = k;
		return (int64_t)(*cursor)++;
	}
	return -1;
}

bool
stuckwatch_take(struct stuckwatch *w, const struct procset *ps, const struct sample_record *r,
		size_t n)
{
	uint32_t nslots = appendlog_count(ps->threads.log);
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		if (r[i].thread_slot >= nslots)
			continue;
		struct thread_slot *ts = (struct thread_slot *)procset_slot(ps, r[i].thread_slot);
		uint64_t born = atomic_load_explicit(&ts->born_ns, memory_order_acquire);
		if (r[i].time_ns < born)   /* the slot's previous thread's: gone */
			continue;
		uint32_t proc = procset_proc_of_sample(ps, r[i].thread_slot, r[i].time_ns);
		/* runnable, not only its CPU time's share: one waiting for a
		 * CPU on a busy machine is busy, not stuck */
		bool on_cpu = r[i].state & (TT_THREAD_RUNNABLE | TT_THREAD_CPU_UNKNOWN);
		if (!stuckwatch_see(w, r[i].thread_slot, born, proc, r[i].stack_id, on_cpu,
				    r[i].time_ns))
			ok = false;
	}
	return ok;
}

uint64_t
stuckwatch_since(const struct stuck_thread *t, enum stuck_kind kind)
{
	if (kind == STUCK_PLACE)   /* in its place and in its kernel wait there */
		return t->wait_ns > t->since_ns ? t->wait_ns : t->since_ns;
	return kind == STUCK_LOOP ? t->off_cpu_ns : t->spin_ns;
}

void
stuckwatch_waits(struct stuckwatch *w, const struct procset *ps,
		 const struct waitwatch_snapshot *snap, uint64_t start_ns)
{
	uint32_t nslots = appendlog_count(ps->threads.log);
	for (uint32_t i = 0; snap && i < w->nthreads && i < nslots; i++) {
		struct stuck_thread *t = &w->threads[i];
		const struct thread_slot *ts = procset_slot(ps, i);
		if (!t->last_ns || ts->tid_unknown)
			continue;
		const struct waitwatch_entry *e = waitwatch_find(snap, ts->native_tid);
		/* a thread not in a call keeps what was said: between two
		 * sleeps of a loop it runs a moment */
		if (e && e->since_ns > start_ns)
			t->wait_ns = e->since_ns - start_ns;
		if (e)
			t->for_client = strstr(e->info.object, " LISTEN") != NULL;
	}
}
