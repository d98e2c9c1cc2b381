/* `--batch --tree`: the call tree as indented text, children below a
 * threshold folded into one "... N more" line, for scripts and ssh. */
#ifndef TT_BATCHTREE_H
#define TT_BATCHTREE_H

#include <stdio.h>

#include "aggregate.h"
#include "live.h"

/* Print the tree for query q (the same query the table would use). */
void batch_print_tree(const struct live_options *o, struct aggregate *agg,
		      const struct agg_query *q, FILE *out);
/* Free what the printed trees kept between refreshes. */
void batch_tree_free(void);

#endif
