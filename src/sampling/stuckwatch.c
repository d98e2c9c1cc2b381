#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "stuckwatch.h"

struct idle_place {
	uint64_t key;    /* the stack */
};

void
stuckwatch_init(struct stuckwatch *w, uint64_t stuck_ns, uint64_t gone_ns)
{
	memset(w, 0, sizeof *w);
	keytab_init(&w->idle, sizeof(struct idle_place));
	w->stuck_ns = stuck_ns;
	w->gone_ns = gone_ns;
}

void
stuckwatch_free(struct stuckwatch *w)
{
	free(w->threads);
	keytab_free(&w->idle);
	memset(w, 0, sizeof *w);
}

bool
stuckwatch_see(struct stuckwatch *w, uint32_t slot, uint64_t born_ns, uint32_t proc,
	       uint32_t stack, uint64_t time_ns)
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
		t->named = false;
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

int64_t
stuckwatch_next(struct stuckwatch *w, uint64_t now_ns, uint32_t *cursor)
{
	for (; *cursor < w->nthreads; (*cursor)++) {
		struct stuck_thread *t = &w->threads[*cursor];
		if (!t->last_ns || t->named || !t->stack || now_ns < t->since_ns ||
		    now_ns - t->since_ns < w->stuck_ns || now_ns - t->last_ns > w->gone_ns ||
		    stuckwatch_idle(w, t))
			continue;
		t->named = true;
		return (int64_t)(*cursor)++;
	}
	return -1;
}
