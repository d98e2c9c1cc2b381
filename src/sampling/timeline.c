#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "timeline.h"
#include "walk/sample.h"

void
timeline_init(struct timeline *t)
{
	memset(t, 0, sizeof *t);
}

void
timeline_free(struct timeline *t)
{
	for (uint32_t i = 0; i < t->ntracks; i++) {
		free(t->tracks[i].name);
		free(t->tracks[i].cmdline);
	}
	free(t->tracks);
	free(t->moments);
	free(t->slot_track);
	memset(t, 0, sizeof *t);
}

static char *
copy_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* Who took sample r: its slot's occupant, or (taken before that one was
 * born) the slot's previous occupant, known by its process alone. */
static void
identify(const struct procset *m, const struct sample_record *r, struct timeline_track *k)
{
	memset(k, 0, sizeof *k);
	k->slot = r->thread_slot;
	k->proc = procset_proc_of_sample(m, r->thread_slot, r->time_ns);
	const struct thread_slot *s = procset_slot(m, r->thread_slot);
	uint64_t born = atomic_load_explicit(&((struct thread_slot *)s)->born_ns,
					     memory_order_relaxed);
	k->earlier = r->time_ns < born;
	k->born_ns = k->earlier ? 0 : born;
	const struct proc_info *p = procset_at(m, k->proc);
	k->proc_start = p->start_ns;
	k->pid = p->pid;
	k->tid = k->earlier ? 0 : s->native_tid;
}

static bool
same_track(const struct timeline_track *a, const struct timeline_track *b)
{
	return a->proc == b->proc && a->slot == b->slot && a->proc_start == b->proc_start &&
	       a->born_ns == b->born_ns && a->earlier == b->earlier;
}

/* The track of key k, added if new: its index, or UINT32_MAX when memory
 * is short. */
static uint32_t
track_for(struct timeline *t, const struct procset *m, const struct timeline_track *k)
{
	uint32_t c = k->slot < t->nslots ? t->slot_track[k->slot] : 0;
	if (c && same_track(&t->tracks[c - 1], k))
		return c - 1;
	uint32_t i;
	for (i = 0; i < t->ntracks && !same_track(&t->tracks[i], k); i++)
		;
	if (i == t->ntracks) {
		if (!grow_array((void **)&t->tracks, &t->tracks_cap, i + 1, sizeof *t->tracks))
			return UINT32_MAX;
		struct timeline_track *n = &t->tracks[i];
		*n = *k;
		const struct thread_slot *s = procset_slot(m, k->slot);
		n->name = !k->earlier ? copy_or_empty(atomic_load_explicit(
						&((struct thread_slot *)s)->name, memory_order_relaxed))
				     : strdup("exited thread");
		n->cmdline = copy_or_empty(procset_cmdline(procset_at(m, k->proc)));
		if (!n->name || !n->cmdline) {
			free(n->name);
			free(n->cmdline);
			return UINT32_MAX;
		}
		t->ntracks++;
	}
	if (grow_array((void **)&t->slot_track, &t->nslots, k->slot + 1u, sizeof *t->slot_track))
		t->slot_track[k->slot] = i + 1;
	return i;
}

void
timeline_add(struct timeline *t, const struct procset *mirror, const struct sample_record *r)
{
	if (r->thread_slot >= appendlog_count(mirror->threads.log) || t->count == TIMELINE_MAX ||
	    !grow_array((void **)&t->moments, &t->cap, t->count + 1, sizeof *t->moments)) {
		t->dropped += r->weight;
		return;
	}
	struct timeline_track k;
	identify(mirror, r, &k);
	uint32_t track = track_for(t, mirror, &k);
	if (track == UINT32_MAX) {
		t->dropped += r->weight;
		return;
	}
	struct timeline_track *tr = &t->tracks[track];
	tr->main |= (r->state & TT_THREAD_MAIN) != 0;
	t->moments[t->count++] = (struct timeline_moment){
		.time_ns = r->time_ns, .stack = r->stack_id, .track = track,
		.weight = r->weight,
	};
}

static void
replace(char **s, const char *now)
{
	if (!now || strcmp(*s, now) == 0)
		return;
	char *c = strdup(now);
	if (c) {
		free(*s);
		*s = c;
	}
}

void
timeline_settle(struct timeline *t, const struct procset *m)
{
	for (uint32_t i = 0; i < t->ntracks; i++) {
		struct timeline_track *tr = &t->tracks[i];
		if (tr->proc < procset_count(m) && procset_at(m, tr->proc)->start_ns == tr->proc_start)
			replace(&tr->cmdline, procset_cmdline(procset_at(m, tr->proc)));
		if (tr->earlier || tr->slot >= appendlog_count(m->threads.log))
			continue;
		struct thread_slot *s = (struct thread_slot *)procset_slot(m, tr->slot);
		if (atomic_load_explicit(&s->born_ns, memory_order_relaxed) == tr->born_ns &&
		    s->proc == tr->proc)
			replace(&tr->name, atomic_load_explicit(&s->name, memory_order_relaxed));
	}
}
