#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "profile.h"
#include "unwinder.h"

void
profile_init(struct profile *p)
{
	memset(p, 0, sizeof *p);
}

void
profile_free(struct profile *p)
{
	free(p->entries);
	occupants_free(&p->procs_at);
	occupants_free(&p->slots_at);
	memset(p, 0, sizeof *p);
}

static uint32_t
key_hash(const struct profile_entry *k)
{
	uint64_t x = ((uint64_t)k->proc << 48 | (uint64_t)k->thread_slot << 32 | k->stack_id) ^
		     ((uint64_t)k->tgen << 16 | k->pgen) << 7;
	return (uint32_t)((x * 0x9E3779B97F4A7C15ull) >> 32);
}

static bool
same_key(const struct profile_entry *x, const struct profile_entry *y)
{
	return x->stack_id == y->stack_id && x->thread_slot == y->thread_slot &&
	       x->proc == y->proc && x->tgen == y->tgen && x->pgen == y->pgen;
}

/* The entry for key k in table e of n slots, claimed (with no weight) if
 * new; the table must have room. */
static struct profile_entry *
probe(struct profile_entry *e, uint32_t n, const struct profile_entry *k, bool *fresh)
{
	uint32_t h = hash_table_start(key_hash(k), n);
	while (e[h].weight && !same_key(&e[h], k))
		h = hash_table_next(h, n);
	*fresh = !e[h].weight;
	if (*fresh) {
		e[h] = *k;
		e[h].weight = 0;
	}
	return &e[h];
}

/* Copy the entries into a table of n slots, each under the key it has now
 * (occupants_owner): what left is folded in this one pass. */
static bool
rehash(struct profile *p, uint32_t n)
{
	struct profile_entry *e = calloc(n, sizeof *e);
	if (!e)
		return false;
	uint32_t count = 0;
	for (uint32_t i = 0; i < p->nslots; i++) {
		struct profile_entry o = p->entries[i];
		if (!o.weight)
			continue;
		occupants_owner(&p->procs_at, &p->slots_at, &o.thread_slot, &o.proc, &o.tgen, &o.pgen);
		bool fresh;
		struct profile_entry *d = probe(e, n, &o, &fresh);
		count += fresh;
		d->weight += o.weight;
	}
	free(p->entries);
	p->entries = e;
	p->nslots = n;
	p->count = count;
	p->procs_at.retired = p->slots_at.retired = 0;
	return true;
}

/* Fold what left, then size the table for what stays when it is off by
 * more than an eighth (hash.h): it follows the count, both ways. */
static bool
sweep(struct profile *p)
{
	if (!p->procs_at.retired && !p->slots_at.retired)
		return true;
	if (!rehash(p, p->nslots))
		return false;
	return !hash_table_off_size(p->count, p->nslots) || rehash(p, hash_table_size(p->count));
}

/* Room for one more entry. A full table holding entries of those who left
 * first folds them at its size, and grows only if what stays still fills
 * more than 3/8 of it: under churn, dead entries waiting for the periodic
 * sweep would otherwise double the table for good. */
static bool
make_room(struct profile *p)
{
	uint32_t retired = p->procs_at.retired + p->slots_at.retired;
	if (retired >= OCCUPANTS_SWEEP_EVERY && !sweep(p))
		return false;
	if ((uint64_t)(p->count + 1) * 2 <= p->nslots)
		return true;
	if (retired && !rehash(p, p->nslots))
		return false;
	return (uint64_t)(p->count + 1) * 8 <= (uint64_t)p->nslots * 3 ||
	       rehash(p, hash_table_size(p->count + 1));
}

/* The generation of process index proc's process now (0 for an index the
 * set does not have). false when memory is short. */
static bool
enter_proc(struct profile *p, const struct procset *ps, uint32_t proc, uint16_t *pgen)
{
	*pgen = 0;
	if (proc >= procset_count(ps))
		return true;
	bool left;
	if (!occupants_enter(&p->procs_at, proc, procset_at(ps, proc)->start_ns, pgen, &left))
		return false;
	p->procs_folded += left;
	return true;
}

/* The same for thread slot `slot`, whose thread was born at born. */
static bool
enter_slot(struct profile *p, uint32_t slot, uint64_t born, uint16_t *tgen)
{
	bool left;
	if (!occupants_enter(&p->slots_at, slot, born, tgen, &left))
		return false;
	p->threads_folded += left;
	return true;
}

struct ended {
	uint64_t gone_ns;
	uint32_t slot;
};

static int
cmp_ended(const void *a, const void *b)
{
	const struct ended *x = a, *y = b;
	if (x->gone_ns != y->gone_ns)
		return x->gone_ns < y->gone_ns ? -1 : 1;
	return (x->slot > y->slot) - (x->slot < y->slot);
}

/* Fold the threads that ended first, beyond PROFILE_KEEP_ENDED_THREADS. */
static void
fold_ended(struct profile *p, const struct procset *ps)
{
	uint32_t n = appendlog_count(ps->threads.log);
	if (n > p->slots_at.n)
		n = p->slots_at.n;
	struct ended *v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return;
	uint32_t ended = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct occupant *c = &p->slots_at.at[i];
		struct thread_slot *ts = (struct thread_slot *)procset_slot(ps, i);
		uint64_t gone = atomic_load_explicit(&ts->gone_ns, memory_order_acquire);
		uint64_t born = atomic_load_explicit(&ts->born_ns, memory_order_acquire);
		if (c->known && !c->retired && gone && born == c->id)
			v[ended++] = (struct ended){gone, i};
	}
	if (ended > PROFILE_KEEP_ENDED_THREADS) {
		qsort(v, ended, sizeof *v, cmp_ended);
		for (uint32_t k = 0; k < ended - PROFILE_KEEP_ENDED_THREADS; k++) {
			occupants_retire(&p->slots_at, v[k].slot);
			p->threads_folded++;
		}
	}
	free(v);
}

void
profile_settle(struct profile *p, const struct procset *ps)
{
	fold_ended(p, ps);
	uint16_t gen;
	for (uint32_t i = 0; i < p->procs_at.n; i++)
		if (p->procs_at.at[i].known)
			enter_proc(p, ps, i, &gen);
	for (uint32_t i = 0; i < p->slots_at.n && i < appendlog_count(ps->threads.log); i++) {
		struct thread_slot *ts = (struct thread_slot *)procset_slot(ps, i);
		if (p->slots_at.at[i].known)
			enter_slot(p, i, atomic_load_explicit(&ts->born_ns, memory_order_acquire), &gen);
	}
	sweep(p);
}

static bool
add_key(struct profile *p, const struct profile_entry *k, uint64_t weight)
{
	if (!make_room(p))
		return false;
	bool fresh;
	struct profile_entry *e = probe(p->entries, p->nslots, k, &fresh);
	p->count += fresh;
	e->weight += weight;
	p->total += weight;
	return true;
}

bool
profile_add_weight(struct profile *p, uint16_t slot, uint32_t stack_id, uint64_t weight)
{
	return profile_add_proc_weight(p, slot, 0, stack_id, weight);
}

bool
profile_add_proc_weight(struct profile *p, uint16_t slot, uint16_t proc, uint32_t stack_id,
			uint64_t weight)
{
	struct profile_entry k = {.stack_id = stack_id, .thread_slot = slot, .proc = proc};
	return add_key(p, &k, weight);
}

bool
profile_add(struct profile *p, const struct procset *ps, const struct sample_record *rec,
	    enum profile_filter filter)
{
	if ((filter == PROFILE_CPU && !(rec->state & TT_THREAD_ON_CPU)) ||
	    (filter == PROFILE_GIL && !(rec->state & TT_THREAD_GIL))) {
		p->idle_skipped += rec->weight;
		return true;
	}
	struct profile_entry k = {.stack_id = rec->stack_id, .thread_slot = rec->thread_slot};
	if (ps && rec->thread_slot < appendlog_count(ps->threads.log)) {
		uint32_t proc = procset_proc_of_sample(ps, rec->thread_slot, rec->time_ns);
		if (!enter_proc(p, ps, proc, &k.pgen))
			return false;
		k.proc = (uint16_t)proc;
		struct thread_slot *ts = (struct thread_slot *)procset_slot(ps, rec->thread_slot);
		uint64_t born = atomic_load_explicit(&ts->born_ns, memory_order_acquire);
		/* Taken before the slot's thread was born: its previous thread's. */
		if (rec->time_ns < born)
			k.thread_slot = PROFILE_EXITED_SLOT;
		else if (!enter_slot(p, rec->thread_slot, born, &k.tgen))
			return false;
	}
	if (ps && rec->time_ns >= p->ended_checked_ns + PROFILE_ENDED_CHECK_NS) {
		p->ended_checked_ns = rec->time_ns;
		fold_ended(p, ps);
	}
	return add_key(p, &k, rec->weight);
}

static int
cmp_entries(const void *a, const void *b)
{
	const struct profile_entry *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	if (x->thread_slot != y->thread_slot)
		return x->thread_slot < y->thread_slot ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

struct profile_entry *
profile_sorted_entries(const struct profile *p)
{
	struct profile_entry *v = malloc((p->count ? p->count : 1) * sizeof *v);
	if (!v)
		return NULL;
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->nslots; i++)
		if (p->entries[i].weight)
			v[n++] = p->entries[i];
	qsort(v, n, sizeof *v, cmp_entries);
	return v;
}
