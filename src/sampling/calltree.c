#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "grow.h"
#include "hash.h"
#include "intern.h"
#include "walk/stackwalk.h"

#define ROOT_KEY 0x9e3779b97f4a7c15ull

static uint64_t
path_key(uint64_t parent_key, uint32_t func, int32_t line)
{
	uint64_t k = parent_key * 0xff51afd7ed558ccdull;
	k ^= ((uint64_t)func << 32 | (uint32_t)line) + 0x9e3779b97f4a7c15ull + (k << 6) + (k >> 2);
	k ^= k >> 31;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 29;
	return k;
}

static uint32_t
slot_hash(uint32_t parent, uint32_t func, int32_t line)
{
	/* murmur3's whole finalizer: parent and func both reach the low bits */
	uint64_t k = ((uint64_t)parent << 32 | func) ^ ((uint64_t)(uint32_t)line * 0x9e3779b97f4a7c15ull);
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return (uint32_t)k;
}

static uint32_t
node_hash(const void *ctx, uint32_t id)
{
	const struct ct_node *c = &((const struct calltree *)ctx)->nodes[id - 1];
	return slot_hash(c->parent, c->func, c->line);
}

static uint32_t
new_node(struct calltree *t)
{
	if (!grow_array((void **)&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes))
		return UINT32_MAX;
	memset(&t->nodes[t->n], 0, sizeof t->nodes[t->n]);
	return t->n++;
}

/* The child of `parent` for (func, line), created if new. */
static uint32_t
child_of(struct calltree *t, uint32_t parent, uint32_t func, int32_t line)
{
	/* Node 0, the root, is no one's child: IDs 2..n are in the index. */
	struct idindex *ix = &t->index;
	if (!idindex_reserve(ix, 2, t->n + 1, 4096, node_hash, t))
		return UINT32_MAX;
	uint32_t h = idindex_start(ix, slot_hash(parent, func, line));
	for (; ix->slots[h]; h = idindex_next(ix, h)) {
		uint32_t i = ix->slots[h] - 1;
		const struct ct_node *c = &t->nodes[i];
		if (c->parent == parent && c->func == func && c->line == line)
			return i;
	}
	uint32_t i = new_node(t);
	if (i == UINT32_MAX)
		return i;
	struct ct_node *c = &t->nodes[i];
	c->func = func;
	c->line = line;
	c->parent = parent;
	c->depth = t->nodes[parent].depth + 1;
	c->key = path_key(t->nodes[parent].key, func, line);
	ix->slots[h] = i + 1;
	return i;
}

static bool
grow_memo(struct ct_memo *t, uint32_t nstacks)
{
	/* three arrays side by side, one capacity: each grows to it (new room
	 * zeroed: no generation, no answer) before it is taken */
	uint32_t cap = t->nmemo, cap_gen = t->nmemo, cap_match = t->nmemo;
	if (!grow_array((void **)&t->memo, &cap, nstacks, sizeof *t->memo) ||
	    !grow_array((void **)&t->memo_gen, &cap_gen, cap, sizeof *t->memo_gen) ||
	    !grow_array((void **)&t->memo_match, &cap_match, cap, sizeof *t->memo_match))
		return false;
	t->nmemo = cap < cap_gen ? cap : cap_gen;
	if (cap_match < t->nmemo)
		t->nmemo = cap_match;
	return true;
}

/* The memo, grown to the stacks interned so far (one intern for every
 * process, so one memo). */
static struct ct_memo *
memo_of(struct calltree *t, const struct aggregate *a)
{
	if (!grow_memo(&t->memo, appendlog_count(agg_intern(a)->stacks)))
		return NULL;
	return &t->memo;
}

static bool
push_scratch(struct calltree *t, uint32_t v)
{
	if (!grow_array((void **)&t->scratch, &t->scratch_cap, t->nscratch + 1, sizeof *t->scratch))
		return false;
	t->scratch[t->nscratch++] = v;
	return true;
}

/* The node a stack ends in (the node at the depth cap for deeper stacks).
 * Walks up to the nearest stack resolved in this build, then down. */
static uint32_t
node_of_stack(struct aggregate *a, struct calltree *t, struct ct_memo *m, const struct intern *in,
	      bool by_line, uint32_t stack)
{
	t->nscratch = 0;
	uint32_t s = stack;
	while (s && m->memo_gen[s] != t->gen) {
		if (!push_scratch(t, s))
			return UINT32_MAX;
		s = intern_stack_at(in, s)->parent;
	}
	uint32_t node = s ? m->memo[s] : 0;
	while (t->nscratch) {
		s = t->scratch[--t->nscratch];
		const struct interned_stack *st = intern_stack_at(in, s);
		if (st->depth <= t->depth_cap) {
			int32_t line;
			uint32_t f = agg_innermost_func(a, s, &line);
			if (f == UINT32_MAX)
				return UINT32_MAX;
			node = child_of(t, node, f, by_line ? line : -1);
			if (node == UINT32_MAX)
				return node;
		}
		m->memo[s] = node;
		m->memo_gen[s] = t->gen;
	}
	return node;
}

/* Does any frame of the stack match the filter? memo_match holds
 * gen * 2 + answer for stacks decided in this build. */
static bool
stack_matches(struct aggregate *a, struct calltree *t, struct ct_memo *m, const struct intern *in,
	      uint32_t stack, const char *filter)
{
	t->nscratch = 0;
	uint32_t s = stack;
	bool yes = false;
	while (s) {
		if (m->memo_match[s] >> 1 == t->gen) {
			yes = m->memo_match[s] & 1;
			break;
		}
		uint32_t f = agg_innermost_func(a, s, NULL);
		if (f != UINT32_MAX && agg_func_matches(a, f, filter)) {
			m->memo_match[s] = t->gen * 2 + 1;
			yes = true;
			break;
		}
		if (!push_scratch(t, s))
			return false;
		s = intern_stack_at(in, s)->parent;
	}
	/* Everything walked through shares the answer of what it reached. */
	while (t->nscratch)
		m->memo_match[t->scratch[--t->nscratch]] = t->gen * 2 + (yes ? 1 : 0);
	return yes;
}

static int
cmp_kids(const void *pa, const void *pb, void *ctx)
{
	const struct ct_node *nodes = ctx;
	const struct ct_node *x = &nodes[*(const uint32_t *)pa], *y = &nodes[*(const uint32_t *)pb];
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	/* Ties: a stable order between refreshes. */
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Empty the tree to its root: node 0, "all samples". */
static bool
new_root(struct calltree *t)
{
	t->n = 0;
	t->nkids_built = 0;
	idindex_clear(&t->index);
	uint32_t root = new_node(t);
	if (root == UINT32_MAX)
		return false;
	t->nodes[root].func = UINT32_MAX;
	t->nodes[root].line = -1;
	t->nodes[root].parent = UINT32_MAX;
	t->nodes[root].key = ROOT_KEY;
	return true;
}

/* Forget the shape: the next build starts from the root again. */
static bool
reset_shape(struct calltree *t, const struct agg_query *q, uint32_t depth_cap)
{
	if (++t->gen >= 0x7fffffffu) {
		t->gen = 1;
		struct ct_memo *m = &t->memo;
		memset(m->memo_gen, 0, m->nmemo * sizeof *m->memo_gen);
		memset(m->memo_match, 0, m->nmemo * sizeof *m->memo_match);
	}
	t->depth_cap = depth_cap;
	t->by_line = q->by_line;
	snprintf(t->filter, sizeof t->filter, "%s", q->filter ? q->filter : "");
	return new_root(t);
}

/* After the counts: totals bottom-up (a child is always created after its
 * parent) and the children grouped by parent when nodes were added. */
bool
calltree_finish(struct calltree *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		t->nodes[i].total = t->nodes[i].own + t->nodes[i].cut;
	for (uint32_t i = t->n - 1; i > 0; i--) {
		struct ct_node *c = &t->nodes[i];
		t->nodes[c->parent].total += c->total;
	}
	if (t->nkids_built == t->n)
		return true;
	if (!resize_array((void **)&t->kids, &t->kids_cap, t->n, sizeof *t->kids))
		return false;
	uint32_t *kids = t->kids;
	for (uint32_t i = 0; i < t->n; i++)
		t->nodes[i].nkids = 0;
	for (uint32_t i = 1; i < t->n; i++)
		t->nodes[t->nodes[i].parent].nkids++;
	uint32_t at = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		t->nodes[i].kids = at;
		at += t->nodes[i].nkids;
		t->nodes[i].nkids = 0;
	}
	for (uint32_t i = 1; i < t->n; i++) {
		struct ct_node *p = &t->nodes[t->nodes[i].parent];
		kids[p->kids + p->nkids++] = i;
	}
	t->nkids_built = t->n;
	return true;
}

bool
calltree_build(struct aggregate *a, const struct agg_query *q, uint32_t depth_cap,
	       struct calltree *t)
{
	if (!depth_cap)
		depth_cap = CALLTREE_DEFAULT_DEPTH;
	/* The shape (which stack ends in which node) depends only on these;
	 * counts are redone every build, the shape only when they change. */
	const char *filter = q->filter ? q->filter : "";
	if (!t->n || t->depth_cap != depth_cap || t->by_line != q->by_line ||
	    strcmp(t->filter, filter) != 0) {
		if (!reset_shape(t, q, depth_cap))
			return false;
	}
	/* The memo is grown before counting: stacks interned after this are
	 * newer than the entries we were given a count for. */
	struct ct_memo *m = memo_of(t, a);
	if (!m)
		return false;
	t->build++;
	t->cut = 0;
	t->deepest = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		t->nodes[i].own = t->nodes[i].cut = 0;
	}
	bool filtered = *t->filter != '\0';
	for (uint32_t i = 0; i < a->count; i++) {
		const struct agg_entry *e = &a->entries[i];
		uint64_t w;
		if (!agg_entry_weight(a, q, e, &w))
			continue;
		/* Stacks interned after the memos grew are newer than the entries
		 * we were given a count for; the next build sees them. */
		if (e->stack_id >= m->nmemo)
			continue;
		const struct intern *in = agg_intern(a);
		if (filtered && !stack_matches(a, t, m, in, e->stack_id, t->filter))
			continue;
		uint32_t node = node_of_stack(a, t, m, in, q->by_line, e->stack_id);
		if (node == UINT32_MAX)
			return false;
		uint32_t depth = e->stack_id ? intern_stack_at(in, e->stack_id)->depth : 0;
		if (depth > t->deepest)
			t->deepest = depth;
		if (depth > t->depth_cap) {
			t->nodes[node].cut += w;
			t->cut += w;
		} else {
			t->nodes[node].own += w;
		}
	}
	return calltree_finish(t);
}

bool
calltree_start(struct calltree *t)
{
	t->build++;
	t->cut = 0;
	t->deepest = 0;
	t->by_line = false;
	t->filter[0] = '\0';
	t->depth_cap = UINT32_MAX;
	/* A tree of paths has no stack memo: the next calltree_build starts
	 * its shape again. */
	return new_root(t);
}

uint32_t
calltree_add_path(struct calltree *t, const uint32_t *ids, uint32_t n, uint64_t weight)
{
	uint32_t node = 0;
	for (uint32_t k = 0; k < n && node != UINT32_MAX; k++)
		node = child_of(t, node, ids[k], -1);
	if (node == UINT32_MAX)
		return node;
	t->nodes[node].own += weight;
	if (n > t->deepest)
		t->deepest = n;
	return node;
}

const uint32_t *
calltree_kids(struct calltree *t, uint32_t node)
{
	struct ct_node *p = &t->nodes[node];
	/* Sorted when first asked for in this build: a view visits few nodes. */
	if (p->sorted != t->build) {
		p->sorted = t->build;
		if (p->nkids > 1) {
			qsort_r(t->kids + p->kids, p->nkids, sizeof *t->kids, cmp_kids, t->nodes);
		}
	}
	return t->kids + p->kids;
}

uint32_t
calltree_nkids(struct calltree *t, uint32_t node)
{
	/* Children that no longer have samples are not shown (they sort last). */
	const uint32_t *kids = calltree_kids(t, node);
	uint32_t n = t->nodes[node].nkids;
	while (n && t->nodes[kids[n - 1]].total == 0)
		n--;
	return n;
}

void
calltree_free(struct calltree *t)
{
	free(t->nodes);
	free(t->kids);
	idindex_free(&t->index);
	free(t->memo.memo);
	free(t->memo.memo_gen);
	free(t->memo.memo_match);
	free(t->scratch);
	memset(t, 0, sizeof *t);
}

uint32_t
calltree_find(const struct calltree *t, uint64_t key)
{
	/* Paths are looked up a few times per key press or refresh: a scan
	 * is cheaper than keeping a second index current. */
	for (uint32_t i = 0; i < t->n; i++)
		if (t->nodes[i].key == key)
			return i;
	return UINT32_MAX;
}

uint32_t
calltree_shown_kids(struct calltree *t, uint32_t node, uint64_t min_samples, uint32_t *nfolded,
		    uint64_t *folded)
{
	const uint32_t *kids = calltree_kids(t, node);
	uint32_t n = calltree_nkids(t, node), k = 0;
	if (min_samples == 0)
		min_samples = 1;
	while (k < n && t->nodes[kids[k]].total >= min_samples)
		k++;
	uint64_t rest = 0;
	for (uint32_t i = k; i < n; i++)
		rest += t->nodes[kids[i]].total;
	if (folded)
		*folded = rest;
	if (nfolded)
		*nfolded = n - k;
	return k;
}

uint64_t
calltree_threshold(const struct calltree *t, double percent)
{
	if (!t->n || percent <= 0)
		return 1;
	double v = (double)t->nodes[0].total * percent / 100.0;
	uint64_t s = (uint64_t)v;
	if ((double)s < v)
		s++;
	return s ? s : 1;
}
