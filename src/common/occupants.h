/* Who a consumer counted at each index of a table whose indices go to new
 * occupants (process entries, thread slots): the occupant's identity then
 * (its start or birth time) and a generation. Counts kept under an older
 * generation than their index's are about an occupant that left; the
 * consumer reads them as such at once and folds them later, all in one pass
 * over its table, instead of one pass per departure. */
#ifndef TT_OCCUPANTS_H
#define TT_OCCUPANTS_H

#include <stdbool.h>
#include <stdint.h>

#include "grow.h"

struct occupant {
	uint64_t id;
	uint16_t gen;
	bool known;
	bool retired;            /* its counts were folded while it stayed */
};

struct occupants {
	struct occupant *at;
	uint32_t n;
	uint32_t retired;        /* generations retired since the last sweep */
};

/* A consumer sweeps (folds every count of an older generation) at least
 * this often, in retirements: what left costs memory until swept, and no
 * index's generation may wrap around to one it still holds counts under. */
#define OCCUPANTS_SWEEP_EVERY 1024u

/* The generation to count index i's occupant `id` under. A different
 * occupant than the one recorded retires the index's generation and sets
 * *left (the consumer folds what it keeps per index, e.g. a thread's
 * figures), unless that one was retired already. false when memory is
 * short (nothing recorded). */
static inline bool
occupants_enter(struct occupants *o, uint32_t i, uint64_t id, uint16_t *gen, bool *left)
{
	*left = false;
	if (!grow_array((void **)&o->at, &o->n, i + 1, sizeof *o->at))
		return false;
	struct occupant *c = &o->at[i];
	if (c->known && c->id != id && !c->retired) {
		c->gen++;
		o->retired++;
		*left = true;
	}
	c->id = id;
	c->known = true;
	c->retired = false;
	*gen = c->gen;
	return true;
}

/* Retire index i's generation while its occupant stays: what was counted
 * of it is folded away (a thread that ended). */
static inline void
occupants_retire(struct occupants *o, uint32_t i)
{
	if (i < o->n && !o->at[i].retired) {
		o->at[i].gen++;
		o->at[i].retired = true;
		o->retired++;
	}
}

/* Are counts kept at index i under generation gen about an occupant that
 * left (or was retired)? */
static inline bool
occupants_stale(const struct occupants *o, uint32_t i, uint16_t gen)
{
	return i < o->n && o->at[i].gen != gen;
}

/* The key a count kept under (thread slot, process index, their
 * generations) has now: a process index that went to a new process makes
 * it the exited processes' (slot and process OCCUPANTS_EXITED); a thread
 * slot that went to a new thread, or whose thread was folded, makes it its
 * process's exited threads' (slot OCCUPANTS_EXITED). */
#define OCCUPANTS_EXITED 0xffffu
static inline void
occupants_owner(const struct occupants *procs, const struct occupants *slots, uint16_t *slot,
		uint16_t *proc, uint16_t *tgen, uint16_t *pgen)
{
	if (*proc != OCCUPANTS_EXITED && occupants_stale(procs, *proc, *pgen)) {
		*proc = *slot = OCCUPANTS_EXITED;
		*pgen = *tgen = 0;
	} else if (*slot != OCCUPANTS_EXITED && occupants_stale(slots, *slot, *tgen)) {
		*slot = OCCUPANTS_EXITED;
		*tgen = 0;
	}
}

static inline void
occupants_free(struct occupants *o)
{
	free(o->at);
	o->at = NULL;
	o->n = o->retired = 0;
}

#endif
