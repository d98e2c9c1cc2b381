/* The call tree view, and what it shares with the flame view: switching
 * between the views, rebuilding the tree at refresh, path-keyed selection.
 *
 * Rows are the open part of the tree, flattened after every refresh or key:
 * each open node's children at or above the threshold (heaviest first),
 * then one "... N more" row for the rest, and for a node at the depth cap a
 * row saying how many samples went deeper. */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"
#include "theme.h"
#include "ui.h"

static const double threshold_steps[] = {0, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20};
#define NTHRESHOLDS (int)(sizeof threshold_steps / sizeof threshold_steps[0])
#define DEFAULT_THRESHOLD_STEP 4   /* 1% */


/* ---------------------------------------------------------------------
 * Key sets
 * ------------------------------------------------------------------- */

/* A set of path keys is a keytab of these: a key taken out keeps its
 * record, marked out (the sets are small: what the user opened). */
struct key_in {
	uint64_t key;
	bool in;
};

static bool
keyset_has(const struct keytab *s, uint64_t k)
{
	const struct key_in *r = keytab_find(s, k);
	return r && r->in;
}

static void
keyset_add(struct keytab *s, uint64_t k)
{
	bool added;
	struct key_in *r = keytab_put(s, k, &added);
	if (r)
		r->in = true;
}

static void
keyset_remove(struct keytab *s, uint64_t k)
{
	struct key_in *r = keytab_find(s, k);
	if (r)
		r->in = false;
}

/* ---------------------------------------------------------------------
 * Paths and labels (shared with flameview.c)
 * ------------------------------------------------------------------- */

uint32_t
tv_path_of(const struct calltree *t, uint32_t node, uint64_t *path)
{
	uint32_t chain[TV_MAX_PATH], n = 0;
	for (uint32_t i = node; i != UINT32_MAX && n < TV_MAX_PATH; i = t->nodes[i].parent)
		chain[n++] = i;
	for (uint32_t k = 0; k < n; k++)
		path[k] = t->nodes[chain[n - 1 - k]].key;
	return n;
}

/* The deepest node of a path (root first) that is still in the tree with
 * samples; the root when none is. */
uint32_t
tv_resolve(struct calltree *t, const uint64_t *path, uint32_t len)
{
	if (!t->n)
		return UINT32_MAX;
	/* Walk down from the root through children: a lookup per level among
	 * few children, not a scan of the whole tree. */
	uint32_t at = 0;
	for (uint32_t d = 1; d < len; d++) {
		const uint32_t *kids = calltree_kids(t, at);
		uint32_t n = calltree_nkids(t, at), next = UINT32_MAX;
		for (uint32_t k = 0; k < n; k++)
			if (t->nodes[kids[k]].key == path[d]) {
				next = kids[k];
				break;
			}
		if (next == UINT32_MAX)
			break;
		at = next;
	}
	return at;
}

void
tv_node_label(const struct ui *u, const struct ct_node *n, char *buf, size_t len)
{
	if (n->func == UINT32_MAX) {
		snprintf(buf, len, "(all samples)");
		return;
	}
	agg_func_at_line(&u->agg.funcs[n->func], n->line, buf, len);
}

void
tv_node_where(const struct ui *u, const struct ct_node *n, char *buf, size_t len)
{
	if (n->func == UINT32_MAX) {
		buf[0] = '\0';
		return;
	}
	agg_func_where(&u->agg.funcs[n->func], n->line, buf, len);
}

double
treeviews_threshold(const struct ui *u)
{
	return u->tv ? threshold_steps[u->tv->threshold_step] : threshold_steps[DEFAULT_THRESHOLD_STEP];
}

/* ---------------------------------------------------------------------
 * Rows
 * ------------------------------------------------------------------- */

static void
push_row(struct treeviews *tv, uint32_t node, uint32_t depth, uint8_t kind, uint32_t nfold,
	 uint64_t samples)
{
	if (!grow_array((void **)&tv->rows, &tv->rows_cap, tv->nrows + 1, sizeof *tv->rows))
		return;
	tv->rows[tv->nrows++] = (struct tv_row){.node = node, .depth = depth, .kind = kind,
						.nfold = nfold, .samples = samples};
}

static bool
has_children(struct calltree *t, uint32_t node)
{
	return calltree_nkids(t, node) > 0 || t->nodes[node].cut > 0;
}

static void
flatten(struct treeviews *tv, uint32_t node, uint32_t depth, uint64_t min)
{
	struct calltree *t = &tv->tree;
	uint32_t nfold = 0;
	uint64_t folded = 0;
	bool all = keyset_has(&tv->unfolded, t->nodes[node].key);
	uint32_t shown = calltree_shown_kids(t, node, all ? 1 : min, &nfold, &folded);
	const uint32_t *kids = calltree_kids(t, node);
	for (uint32_t k = 0; k < shown; k++) {
		uint32_t c = kids[k];
		push_row(tv, c, depth, TV_NODE, 0, 0);
		if (keyset_has(&tv->expanded, t->nodes[c].key) && has_children(t, c))
			flatten(tv, c, depth + 1, min);
	}
	if (nfold)
		push_row(tv, node, depth, TV_FOLD, nfold, folded);
	if (t->nodes[node].cut)
		push_row(tv, node, depth, TV_CUT, 0, t->nodes[node].cut);
}

/* The row of the selection after the rows changed: the same path, or its
 * deepest ancestor still shown. */
static void
place_selection(struct ui *u, int height)
{
	struct treeviews *tv = u->tv;
	struct calltree *t = &tv->tree;
	tv->selected = 0;
	if (tv->sel_len) {
		uint32_t node = tv_resolve(t, tv->sel_path, tv->sel_len);
		bool exact = node != UINT32_MAX && t->nodes[node].key == tv->sel_path[tv->sel_len - 1];
		/* Try the node itself (or its fold row), then each ancestor. */
		for (uint32_t at = node; at != UINT32_MAX && at != 0; at = t->nodes[at].parent) {
			bool found = false;
			for (uint32_t r = 0; r < tv->nrows; r++) {
				const struct tv_row *row = &tv->rows[r];
				bool want_fold = exact && at == node && tv->sel_fold;
				if ((want_fold && row->kind != TV_NODE && row->node == at) ||
				    (!want_fold && row->kind == TV_NODE && row->node == at)) {
					tv->selected = (int32_t)r;
					found = true;
					break;
				}
			}
			if (found)
				break;
		}
	}
	if (tv->selected >= (int32_t)tv->nrows)
		tv->selected = tv->nrows ? (int32_t)tv->nrows - 1 : 0;
	if (height > 0)
		list_keep_visible(&tv->top, tv->selected, height, tv->nrows);
}

/* Remember the selected row by path. */
static void
remember_selection(struct treeviews *tv)
{
	if (!tv->nrows) {
		tv->sel_len = 0;
		return;
	}
	const struct tv_row *r = &tv->rows[tv->selected];
	tv->sel_len = tv_path_of(&tv->tree, r->node, tv->sel_path);
	tv->sel_fold = r->kind != TV_NODE;
}

static int
tree_height(const struct ui *u)
{
	return views_table_height(u);
}

static void
rebuild_rows(struct ui *u)
{
	struct treeviews *tv = u->tv;
	tv->nrows = 0;
	if (!tv->tree.n || !tv->tree.nodes[0].total)
		return;
	flatten(tv, 0, 0, calltree_threshold(&tv->tree, threshold_steps[tv->threshold_step]));
	place_selection(u, tree_height(u));
}

/* Open the hottest path from the root down and select its end. */
static void
open_hot_path(struct ui *u)
{
	struct treeviews *tv = u->tv;
	struct calltree *t = &tv->tree;
	uint32_t at = 0;
	while (calltree_nkids(t, at) > 0) {
		uint32_t c = calltree_kids(t, at)[0];
		at = c;
		if (calltree_nkids(t, at) > 0 || t->nodes[at].cut)
			keyset_add(&tv->expanded, t->nodes[at].key);
	}
	if (at != 0) {
		tv->sel_len = tv_path_of(t, at, tv->sel_path);
		tv->sel_fold = false;
	}
}

/* ---------------------------------------------------------------------
 * Refresh and switching views
 * ------------------------------------------------------------------- */

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void
treeviews_refresh(struct ui *u)
{
	struct treeviews *tv = u->tv;
	if (!tv)
		return;
	struct agg_query q;
	views_query(u, &q);
	double t0 = now_ms();
	tv->built = calltree_build(&u->agg, &q, 0, &tv->tree);
	if (!tv->built) {
		ui_message(u, true, "out of memory building the call tree");
		tv->nrows = 0;
		return;
	}
	if (view_base(u) == VIEW_TREE) {
		if (!tv->entered && tv->tree.nodes[0].total) {
			open_hot_path(u);
			tv->entered = true;
		}
		rebuild_rows(u);
	}
	tv->build_ms = now_ms() - t0;
}

void
treeviews_enter(struct ui *u, enum view_id v)
{
	if (!u->tv) {
		u->tv = calloc(1, sizeof *u->tv);
		if (!u->tv) {
			ui_message(u, true, "out of memory");
			return;
		}
		u->tv->threshold_step = DEFAULT_THRESHOLD_STEP;
		keytab_init(&u->tv->expanded, sizeof(struct key_in));
		keytab_init(&u->tv->unfolded, sizeof(struct key_in));
	}
	view_push(u, v);
	u->message[0] = '\0'; /* it was about the view left */
	/* Every entry opens the hot path of what is shown now (what was open
	 * stays open). */
	if (v == VIEW_TREE)
		u->tv->entered = false;
	treeviews_refresh(u);
}

void
treeviews_free(struct ui *u)
{
	struct treeviews *tv = u->tv;
	if (!tv)
		return;
	calltree_free(&tv->tree);
	keytab_free(&tv->expanded);
	keytab_free(&tv->unfolded);
	free(tv->rows);
	free(tv->boxes);
	free(tv);
	u->tv = NULL;
}

/* ---------------------------------------------------------------------
 * Drawing
 * ------------------------------------------------------------------- */

static void
draw_title(struct ui *u, int y, const char *what)
{
	struct treeviews *tv = u->tv;
	char title[512], cnt[32];
	live_format_count(tv->tree.n ? (double)tv->tree.nodes[0].total : 0, cnt, sizeof cnt);
	char cap[96] = "";
	if (tv->tree.cut)
		snprintf(cap, sizeof cap, ", depth capped at %u (deepest %u)", tv->tree.depth_cap,
			 tv->tree.deepest);
	snprintf(title, sizeof title, " %s  %s, %s, %s samples, fold < %g%%%s%s%s  [built in %.2f ms] ", what,
		 u->scope == AGG_WINDOW ? "% of the last refresh" : "% of the whole session",
		 agg_mode_name(u->mode), cnt, threshold_steps[tv->threshold_step], cap,
		 u->filter[0] ? ", filter: " : "", u->filter, tv->build_ms);
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, title, theme_attr(u->filter[0] ? ROLE_FILTER : ROLE_BORDER));
}

static const char *
empty_reason(const struct ui *u)
{
	return u->filter[0]		   ? "  no stack passes through a function matching the filter"
	       : u->mode != AGG_WALL	   ? "  no samples in this mode yet (m: change mode)"
	       : u->scope == AGG_WINDOW ? "  no samples in the last refresh yet"
					   : "  no samples yet";
}

static void
draw_tree(struct ui *u, int y, int height)
{
	struct treeviews *tv = u->tv;
	struct calltree *t = &tv->tree;
	/* height counts the rows under the title and the column heading */
	draw_title(u, y++, "Call tree");
	draw_bar(y, theme_attr(ROLE_TABLE_HEADER));
	bool wide = COLS >= 100;
	draw_text(y, 0, COLS, wide ? " TOTAL%   OWN%  SAMPLES CALL TREE" : " TOTAL%   OWN% CALL TREE",
		     theme_attr(ROLE_TABLE_HEADER));
	y++;
	if (height < 1)
		return;
	if (!tv->nrows) {
		move(y, 0);
		clrtoeol();
		draw_text(y, 0, COLS, empty_reason(u), theme_attr(ROLE_DIM));
		return;
	}
	/* The screen may have changed size since the rows were placed. */
	if (tv->selected < tv->top)
		tv->top = tv->selected;
	if (tv->selected >= tv->top + height)
		tv->top = tv->selected - height + 1;
	int32_t max_top = (int32_t)tv->nrows - height;
	if (tv->top > max_top)
		tv->top = max_top > 0 ? max_top : 0;
	uint64_t den = t->nodes[0].total;
	int fig = wide ? 24 : 15;              /* columns of figures */
	int avail = COLS - fig;
	/* Indentation: 2 columns a level, at most a third of what is left;
	 * deeper rows say their depth. */
	int max_levels = avail / 3 / 2;
	if (max_levels < 1)
		max_levels = 1;
	for (int i = 0; i < height; i++, y++) {
		int32_t r = tv->top + i;
		move(y, 0);
		clrtoeol();
		if (r >= (int32_t)tv->nrows)
			continue;
		const struct tv_row *row = &tv->rows[r];
		bool sel = r == tv->selected;
		int base = sel ? theme_attr(ROLE_SELECTED) : theme_attr(ROLE_DEFAULT);
		if (sel)
			draw_bar(y, base);
		char buf[1200], name[1100], where[1100];
		int x = 0;
		uint64_t total = row->kind == TV_NODE ? t->nodes[row->node].total : row->samples;
		uint64_t own = row->kind == TV_NODE ? t->nodes[row->node].own : 0;
		double tp = ui_pct(total, den), op = ui_pct(own, den);
		snprintf(buf, sizeof buf, "%6.1f ", tp);
		x += draw_text(y, x, COLS - x, buf, sel ? base : draw_percent_attr(tp));
		if (row->kind == TV_NODE)
			snprintf(buf, sizeof buf, "%6.1f ", op);
		else
			snprintf(buf, sizeof buf, "%6s ", "");
		x += draw_text(y, x, COLS - x, buf, sel ? base : draw_percent_attr(op));
		if (wide) {
			live_format_count((double)total, name, sizeof name);
			snprintf(buf, sizeof buf, "%8s ", name);
			x += draw_text(y, x, COLS - x, buf, base);
		}
		x = fig;
		int levels = (int)row->depth < max_levels ? (int)row->depth : max_levels;
		int guide = sel ? base : theme_attr(ROLE_TREE_GUIDE);
		for (int l = 0; l < levels; l++)
			x += draw_text(y, x, COLS - x, "\xe2\x94\x82 ", guide); /* │ */
		if ((int)row->depth > levels) {
			snprintf(buf, sizeof buf, "[%u] ", row->depth);
			x += draw_text(y, x, COLS - x, buf, guide);
		}
		if (row->kind == TV_FOLD) {
			snprintf(buf, sizeof buf, "\xe2\x80\xa6 %u more (below %g%%; Enter: show them)",
				 row->nfold, threshold_steps[tv->threshold_step]);
			draw_text(y, x, COLS - x, buf, sel ? base : theme_attr(ROLE_TREE_FOLD));
			continue;
		}
		if (row->kind == TV_CUT) {
			snprintf(buf, sizeof buf,
				 "\xe2\x80\xa6 deeper frames not shown: depth capped at %u (deepest stack %u)",
				 t->depth_cap, t->deepest);
			draw_text(y, x, COLS - x, buf, sel ? base : theme_attr(ROLE_TREE_FOLD));
			continue;
		}
		const struct ct_node *n = &t->nodes[row->node];
		const char *mark = !has_children(t, row->node)			      ? "  "
				   : keyset_has(&tv->expanded, n->key)		      ? "\xe2\x96\xbe " /* ▾ */
										      : "\xe2\x96\xb8 "; /* ▸ */
		x += draw_text(y, x, COLS - x, mark, guide);
		tv_node_label(u, n, name, sizeof name);
		tv_node_where(u, n, where, sizeof where);
		int room = COLS - x;
		int used = draw_text(y, x, room, name, sel ? base : theme_attr(ROLE_FUNCTION));
		x += used;
		if (COLS - x > 12) {
			/* Long paths: keep the end, which names the module. */
			int fw = COLS - x - 2;
			const char *shown = where;
			size_t wl = strlen(where);
			if ((int)wl > fw && fw > 4)
				shown = where + wl - (size_t)(fw - 1);
			draw_text(y, x + 2, fw, shown, sel ? base : theme_attr(ROLE_FILE));
		}
	}
}

static void
tree_status(struct ui *u, char *buf, size_t len)
{
	snprintf(buf, len, " v table  f flame  <-/-> collapse/expand  * subtree  < > fold %g%%  "
		 "Enter detail  h help",
		 treeviews_threshold(u));
}

/* ---------------------------------------------------------------------
 * Keys
 * ------------------------------------------------------------------- */

static void
expand_subtree(struct treeviews *tv, uint32_t node, uint64_t min)
{
	struct calltree *t = &tv->tree;
	if (!has_children(t, node))
		return;
	keyset_add(&tv->expanded, t->nodes[node].key);
	uint32_t n = calltree_shown_kids(t, node, keyset_has(&tv->unfolded, t->nodes[node].key) ? 1 : min,
					 NULL, NULL);
	const uint32_t *kids = calltree_kids(t, node);
	for (uint32_t k = 0; k < n; k++)
		expand_subtree(tv, kids[k], min);
}

static void
select_row(struct ui *u, int32_t r)
{
	struct treeviews *tv = u->tv;
	if (!tv->nrows)
		return;
	if (r < 0)
		r = 0;
	if (r >= (int32_t)tv->nrows)
		r = (int32_t)tv->nrows - 1;
	tv->selected = r;
	remember_selection(tv);
	int h = tree_height(u);
	if (tv->selected < tv->top)
		tv->top = tv->selected;
	if (h > 0 && tv->selected >= tv->top + h)
		tv->top = tv->selected - h + 1;
}

static bool
tree_key(struct ui *u, const TermKeyKey *k)
{
	struct treeviews *tv = u->tv;
	struct calltree *t = &tv->tree;
	const struct tv_row *row = tv->nrows ? &tv->rows[tv->selected] : NULL;
	uint64_t min = calltree_threshold(t, threshold_steps[tv->threshold_step]);
	int page = tree_height(u);
	enum { NONE, UP, DOWN, PGUP, PGDN, HOME, END, COLLAPSE, EXPAND, SUBTREE, ENTER, FINER, COARSER } act = NONE;
	if (k->type == TERMKEY_TYPE_UNICODE && !(k->modifiers & TERMKEY_KEYMOD_CTRL)) {
		switch (k->code.codepoint) {
		case 'k': act = UP; break;
		case 'j': act = DOWN; break;
		case 'g': act = HOME; break;
		case 'G': act = END; break;
		case '-': case '_': act = COLLAPSE; break;
		case '+': case '=': act = EXPAND; break;
		case '*': act = SUBTREE; break;
		case '<': case '[': act = FINER; break;
		case '>': case ']': act = COARSER; break;
		default: return false;
		}
	} else if (k->type == TERMKEY_TYPE_KEYSYM) {
		switch (k->code.sym) {
		case TERMKEY_SYM_UP: act = UP; break;
		case TERMKEY_SYM_DOWN: act = DOWN; break;
		case TERMKEY_SYM_PAGEUP: act = PGUP; break;
		case TERMKEY_SYM_PAGEDOWN: act = PGDN; break;
		case TERMKEY_SYM_HOME: case TERMKEY_SYM_FIND: act = HOME; break;
		case TERMKEY_SYM_END: case TERMKEY_SYM_SELECT: act = END; break;
		case TERMKEY_SYM_LEFT: act = COLLAPSE; break;
		case TERMKEY_SYM_RIGHT: act = EXPAND; break;
		case TERMKEY_SYM_ENTER: act = ENTER; break;
		default: return false;
		}
	} else {
		return false;
	}
	switch (act) {
	case UP: select_row(u, tv->selected - 1); break;
	case DOWN: select_row(u, tv->selected + 1); break;
	case PGUP: select_row(u, tv->selected - page); break;
	case PGDN: select_row(u, tv->selected + page); break;
	case HOME: select_row(u, 0); break;
	case END: select_row(u, (int32_t)tv->nrows - 1); break;
	case COLLAPSE:
		if (!row)
			break;
		if (row->kind == TV_NODE && keyset_has(&tv->expanded, t->nodes[row->node].key) &&
		    has_children(t, row->node)) {
			keyset_remove(&tv->expanded, t->nodes[row->node].key);
		} else {
			/* Closed or a leaf: to the parent's row. */
			uint32_t parent = row->kind == TV_NODE ? t->nodes[row->node].parent : row->node;
			if (parent != 0 && parent != UINT32_MAX) {
				tv->sel_len = tv_path_of(t, parent, tv->sel_path);
				tv->sel_fold = false;
			}
		}
		rebuild_rows(u);
		remember_selection(tv);
		break;
	case EXPAND:
		if (!row)
			break;
		if (row->kind == TV_FOLD) {
			keyset_add(&tv->unfolded, t->nodes[row->node].key);
		} else if (row->kind == TV_NODE && has_children(t, row->node)) {
			if (!keyset_has(&tv->expanded, t->nodes[row->node].key))
				keyset_add(&tv->expanded, t->nodes[row->node].key);
			else if (tv->selected + 1 < (int32_t)tv->nrows)
				select_row(u, tv->selected + 1); /* open already: to the first child */
		}
		rebuild_rows(u);
		remember_selection(tv);
		break;
	case SUBTREE:
		if (row && row->kind == TV_NODE)
			expand_subtree(tv, row->node, min);
		rebuild_rows(u);
		break;
	case ENTER:
		if (!row)
			break;
		if (row->kind == TV_FOLD) {
			keyset_add(&tv->unfolded, t->nodes[row->node].key);
			rebuild_rows(u);
			remember_selection(tv);
		} else if (row->kind == TV_NODE) {
			tableview_open_detail(u, t->nodes[row->node].func, t->nodes[row->node].line);
		}
		break;
	case FINER:
	case COARSER:
		if (act == FINER && tv->threshold_step > 0)
			tv->threshold_step--;
		if (act == COARSER && tv->threshold_step + 1 < NTHRESHOLDS)
			tv->threshold_step++;
		ui_message(u, false, "folding children below %g%% of the samples shown",
			   threshold_steps[tv->threshold_step]);
		rebuild_rows(u);
		break;
	default:
		break;
	}
	u->dirty = true;
	return true;
}

enum view_key
treeviews_leave_key(struct ui *u, const TermKeyKey *k)
{
	if (k->type == TERMKEY_TYPE_KEYSYM && k->code.sym == TERMKEY_SYM_ESCAPE && !u->filter[0]) {
		view_push(u, VIEW_TABLE);
		views_rebuild(u);
		return VIEW_KEY_USED;
	}
	return VIEW_KEY_UNUSED;
}

static enum view_key
tree_view_key(struct ui *u, const TermKeyKey *k)
{
	if (tree_key(u, k))
		return VIEW_KEY_USED;
	return treeviews_leave_key(u, k);
}

static const char *const treeview_help[][2] = {
	{"v F5", "call tree"},
};

const struct view_ops treeview_ops = {
	.name = "call tree",
	.base = true,
	.draw = draw_tree,
	.key = tree_view_key,
	.status = tree_status,
	.rebuild = treeviews_refresh,
	.help = treeview_help,
	.nhelp = sizeof treeview_help / sizeof treeview_help[0],
};
