/* The call tree view (treeview.c) and the flame view (flameview.c): two
 * views of the merged call tree, built from the aggregator's counts under
 * the same query as the function table (src/sampling/calltree.c). What is
 * selected, expanded or zoomed into is kept by path key, so it survives
 * refreshes in which rows come, go and move. */
#ifndef TT_TREEVIEWS_H
#define TT_TREEVIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termkey.h>

#include "calltree.h"
#include "keytab.h"
#include "view.h"

struct ui;

enum tv_row_kind { TV_NODE, TV_FOLD, TV_CUT };

struct tv_row {
	uint32_t node;           /* the node, or the parent of the folded / cut rows */
	uint32_t depth;          /* indentation level */
	uint8_t kind;
	uint32_t nfold;          /* TV_FOLD: children folded */
	uint64_t samples;        /* TV_FOLD: their samples; TV_CUT: samples cut */
};

/* A frame's place in the flame view after layout. */
struct fv_box {
	uint32_t node;
	int x0, x1;              /* columns [x0, x1) */
	int level;               /* 0 = the zoomed-into node */
};

#define TV_MAX_PATH (CALLTREE_DEFAULT_DEPTH + 2)

struct treeviews {
	struct calltree tree;
	bool built;
	double build_ms;         /* the last build's cost, shown in the title */
	int threshold_step;      /* index into the threshold steps */

	/* call tree view */
	struct keytab expanded;  /* path keys of the nodes shown open (treeview.c) */
	struct keytab unfolded;  /* of the parents whose small children are all shown */
	uint64_t sel_path[TV_MAX_PATH]; /* the selected row's node and its ancestors' keys, root first */
	uint32_t sel_len;
	bool sel_fold;           /* the selected row is the parent's fold / cut row */
	struct tv_row *rows;
	uint32_t nrows, rows_cap;
	int32_t selected, top;
	bool entered;            /* the hot path was opened once */

	/* flame view */
	uint64_t fsel_path[TV_MAX_PATH];
	uint32_t fsel_len;
	uint64_t zoom_path[TV_MAX_PATH];
	uint32_t zoom_len;
	struct fv_box *boxes;
	uint32_t nboxes, boxes_cap;
	int levels;              /* rows the layout had room for */
	int first_level;         /* level shown on the first row (deep selections scroll) */
};

/* treeview.c: switching views, the shared refresh, the call tree view. */
/* Show the call tree (VIEW_TREE) or the flame graph (VIEW_FLAME). */
void treeviews_enter(struct ui *u, enum view_id v);
/* Rebuild the tree for the current query; keep selections by path. */
void treeviews_refresh(struct ui *u);
void treeviews_free(struct ui *u);
/* Fold threshold in percent of the samples shown. */
double treeviews_threshold(const struct ui *u);

/* Shared between the two views' files. */
uint32_t tv_resolve(struct calltree *t, const uint64_t *path, uint32_t len);
uint32_t tv_path_of(const struct calltree *t, uint32_t node, uint64_t *path);
void tv_node_label(const struct ui *u, const struct ct_node *n, char *buf, size_t len);
void tv_node_where(const struct ui *u, const struct ct_node *n, char *buf, size_t len);

/* Esc with no filter to clear leaves either view for the function table. */
enum view_key treeviews_leave_key(struct ui *u, const TermKeyKey *k);

#endif
