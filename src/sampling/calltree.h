/* The merged call tree of the live profile, derived from the aggregator's
 * stack counts when a screen (or a batch report) is drawn, under the same
 * query as the tables: mode, window/session, thread, filter. One node per
 * (function, or function and line) under its caller path; node 0 is the
 * root ("all samples"). Children are sorted heaviest first, so the nodes
 * below a threshold are always the tail of a parent's children.
 *
 * Interned stacks share their prefixes (a stack is its parent stack plus
 * one frame), so each distinct stack is resolved to its node once per
 * build through a memo indexed by stack ID (one per process: IDs are
 * per process, functions shared): building costs O(distinct
 * stacks + counted entries), not O(samples x depth). */
#ifndef TT_CALLTREE_H
#define TT_CALLTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "aggregate.h"
#include "idindex.h"

/* Depth shown by default: deeper frames (deep recursion) are cut there and
 * their samples counted in the node at the cap (`cut`). */
#define CALLTREE_DEFAULT_DEPTH 64

struct ct_node {
	uint32_t func;           /* index into aggregate.funcs (calltree_build), the caller's id
				    (calltree_add_path); UINT32_MAX for the root */
	int32_t line;            /* -1 when by function */
	uint32_t parent;         /* UINT32_MAX for the root */
	uint32_t depth;          /* root 0 */
	uint32_t kids, nkids;    /* children: calltree.kids[kids .. kids + nkids) */
	uint32_t sorted;         /* build in which kids were last sorted */
	uint64_t total;          /* samples with this path on the stack */
	uint64_t own;            /* samples ending exactly here */
	uint64_t cut;            /* samples whose stack went deeper than the cap */
	uint64_t key;            /* hash of the path from the root: survives rebuilds */
};

/* One process's stacks resolved in this shape. */
struct ct_memo {
	uint32_t *memo;          /* per stack ID: node + 1 of this build, 0 unknown */
	uint32_t *memo_gen;
	uint32_t nmemo;
	uint32_t *memo_match;    /* filter: build generation * 2 + matched */
};

struct calltree {
	struct ct_node *nodes;
	uint32_t n, cap;
	uint32_t *kids;          /* child node indices, grouped by parent */
	uint32_t kids_cap;
	uint32_t nkids_built;    /* nodes when kids was last grouped */
	uint32_t build;          /* builds so far */
	bool by_line;            /* what the shape was built for */
	char filter[128];
	uint32_t depth_cap;
	uint32_t deepest;        /* deepest stack counted (frames) */
	uint64_t cut;            /* samples cut by the depth cap, over the whole tree */
	/* building */
	struct idindex index;    /* (parent, func, line) -> node + 1 */
	struct ct_memo memo;     /* per stack ID (one intern for every process) */
	uint32_t gen;
	uint32_t *scratch;       /* stack IDs on the way up */
	uint32_t nscratch, scratch_cap;
};

/* Build (or rebuild, reusing t's memory) the tree for query q, frames cut at
 * depth_cap (0: CALLTREE_DEFAULT_DEPTH). A stack counts when the query's
 * filter matches any of its frames. The shape (nodes, keys) is kept between
 * builds of the same by_line, filter and cap, and only grows: a rebuild
 * redoes the counts, not the paths. False when memory is short. */
bool calltree_build(struct aggregate *a, const struct agg_query *q, uint32_t depth_cap,
		    struct calltree *t);
void calltree_free(struct calltree *t);

/* A tree of given paths instead (a finished profile's, for a flame graph):
 * calltree_start empties it to its root; calltree_add_path adds `weight`
 * samples ending at the path of ids (outermost first, one node per id under
 * its parent, line -1) and returns its last node; calltree_finish makes the
 * totals and children. UINT32_MAX / false when memory is short. */
bool calltree_start(struct calltree *t);
uint32_t calltree_add_path(struct calltree *t, const uint32_t *ids, uint32_t n, uint64_t weight);
bool calltree_finish(struct calltree *t);

/* The node with path key `key`, or UINT32_MAX. */
uint32_t calltree_find(const struct calltree *t, uint64_t key);

/* A node's children, heaviest first (sorted on first use after a build),
 * and how many of them have samples in this build. */
const uint32_t *calltree_kids(struct calltree *t, uint32_t node);
uint32_t calltree_nkids(struct calltree *t, uint32_t node);

/* How many of node's children reach `min_samples` (they come first); the
 * *nfolded others with samples fold into one "... N more" line whose
 * samples go to *folded. */
uint32_t calltree_shown_kids(struct calltree *t, uint32_t node, uint64_t min_samples,
			     uint32_t *nfolded, uint64_t *folded);

/* The samples a threshold in percent of the root stands for (at least 1). */
uint64_t calltree_threshold(const struct calltree *t, double percent);

#endif
