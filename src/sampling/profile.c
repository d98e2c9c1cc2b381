#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "profile.h"
#include "walk/sample.h"
#include "order.h"

void
profile_init(struct profile *p)
{
	memset(p, 0, sizeof *p);
}

void
profile_free(struct profile *p)
{
	free(p->entries);
	idindex_free(&p->index);
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

static uint32_t
key_hash_at(const void *ctx, uint32_t id)
{
	const struct profile *p = ctx;
	return key_hash(&p->entries[id - 1]);
}

/* The entry for key k, appended (with no weight) if new; room for one
 * more must have been made (make_room). */
static struct profile_entry *
entry_for(struct profile *p, const struct profile_entry *k)
{
	struct idindex *ix = &p->index;
	uint32_t h = idindex_start(ix, key_hash(k));
	for (; ix->slots[h]; h = idindex_next(ix, h)) {
		struct profile_entry *e = &p->entries[ix->slots[h] - 1];
		if (same_key(e, k))
			return e;
	}
	struct profile_entry *e = &p->entries[p->count];
	*e = *k;
	e->weight = 0;
	ix->slots[h] = ++p->count;
	return e;
}

/* Fold every entry under the key it has now (occupants_owner), compacting
 * in place in this one pass (an entry is only written at or before the one
 * being read), then give back what the smaller count leaves unused: the
 * profile follows its count both ways (hash.h). */
static bool
sweep(struct profile *p)
{
	if (!p->procs_at.retired && !p->slots_at.retired)
		return true;
	uint32_t n = p->count;
	/* room for them all (there is, unless memory was short at the last fit) */
	if (n && !idindex_reserve(&p->index, 1, n, HASH_TABLE_STEP, key_hash_at, p))
		return false;
	p->count = 0;
	idindex_clear(&p->index);
	for (uint32_t i = 0; i < n; i++) {
		struct profile_entry o = p->entries[i];
		occupants_owner(&p->procs_at, &p->slots_at, &o.thread_slot, &o.proc, &o.tgen, &o.pgen);
		entry_for(p, &o)->weight += o.weight;
	}
	p->procs_at.retired = p->slots_at.retired = 0;
	if (hash_dense_oversized(p->count, p->cap))
		resize_array((void **)&p->entries, &p->cap, hash_dense_size(p->count),
			     sizeof *p->entries);
	return idindex_fit(&p->index, 1, p->count + 1, HASH_TABLE_STEP, key_hash_at, p);
}

/* Room for one more entry. What left is folded at least every
 * OCCUPANTS_SWEEP_EVERY retirements, and before the entries grow: under
 * churn, dead entries waiting for the periodic sweep would otherwise grow
 * the profile for good. */
static bool
make_room(struct profile *p)
{
	uint32_t retired = p->procs_at.retired + p->slots_at.retired;
	if (retired >= OCCUPANTS_SWEEP_EVERY && !sweep(p))
		return false;
	if (p->count == p->cap) {
		if (retired && !sweep(p))
			return false;
		if (p->count == p->cap &&
		    !resize_array((void **)&p->entries, &p->cap, hash_dense_size(p->count + 1),
				  sizeof *p->entries))
			return false;
	}
	return idindex_reserve(&p->index, 1, p->count + 1, HASH_TABLE_STEP, key_hash_at, p);
}

size_t
profile_entries_bytes(const struct profile *p)
{
	return (size_t)p->cap * sizeof *p->entries + (size_t)p->index.nslots * sizeof *p->index.slots;
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
		order_sort(v, ended, sizeof *v, cmp_ended);
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
	if (!weight)
		return true;
	if (!make_room(p))
		return false;
	entry_for(p, k)->weight += weight;
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
	if (!profile_filter_keeps(filter, rec->state)) {
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
	if (p->count)
		memcpy(v, p->entries, p->count * sizeof *v);
	order_sort(v, p->count, sizeof *v, cmp_entries);
	return v;
}
