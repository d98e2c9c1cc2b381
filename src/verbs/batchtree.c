#include "config.h"

#include <stdio.h>
#include <string.h>

#include "batchtree.h"
#include "calltree.h"
#include "sanitize.h"

/* Kept between refreshes: the tree's shape is reused by each build. */
static struct calltree tree;

static void
print_node(struct aggregate *agg, uint32_t node, uint32_t depth, uint64_t min, FILE *out)
{
	const struct ct_node *n = &tree.nodes[node];
	double den = tree.nodes[0].total ? (double)tree.nodes[0].total : 1;
	if (node != 0) {
		const struct agg_func *f = &agg->funcs[n->func];
		char at[600], name[1200], where[1100], file[1200];
		agg_func_at_line(f, n->line, at, sizeof at);
		sanitize_for_terminal(at, name, sizeof name);
		agg_func_where(f, n->line, where, sizeof where);
		sanitize_for_terminal(where, file, sizeof file);
		fprintf(out, "%7.2f %7.2f %9llu  %*s%s", 100.0 * (double)n->total / den,
			100.0 * (double)n->own / den, (unsigned long long)n->total, (int)depth * 2, "",
			name);
		fprintf(out, "  (%s)\n", file);
		depth++;
	}
	uint32_t nfold = 0;
	uint64_t folded = 0;
	uint32_t shown = calltree_shown_kids(&tree, node, min, &nfold, &folded);
	const uint32_t *kids = calltree_kids(&tree, node);
	for (uint32_t k = 0; k < shown; k++)
		print_node(agg, kids[k], depth, min, out);
	if (nfold)
		fprintf(out, "%7.2f %7s %9llu  %*s... %u more\n", 100.0 * (double)folded / den, "",
			(unsigned long long)folded, (int)depth * 2, "", nfold);
	if (n->cut)
		fprintf(out, "%7.2f %7s %9llu  %*s... deeper frames not shown: depth capped at %u "
			"(deepest stack %u frames)\n",
			100.0 * (double)n->cut / den, "", (unsigned long long)n->cut, (int)depth * 2, "",
			tree.depth_cap, tree.deepest);
}

void
batch_print_tree(const struct live_options *o, struct aggregate *agg, const struct agg_query *q,
		 FILE *out)
{
	if (!calltree_build(agg, q, 0, &tree)) {
		fprintf(out, "(out of memory building the call tree)\n");
		return;
	}
	fprintf(out, "%7s %7s %9s  CALL TREE (children below %g%% folded, depth capped at %u)\n",
		"TOTAL%", "OWN%", "SAMPLES", o->tree_threshold, tree.depth_cap);
	if (!tree.nodes[0].total) {
		fprintf(out, "(no samples%s)\n", o->mode != AGG_WALL ? " in this mode" : "");
		return;
	}
	print_node(agg, 0, 0, calltree_threshold(&tree, o->tree_threshold), out);
}

void
batch_tree_free(void)
{
	calltree_free(&tree);
}
