/* The flame view: an icicle graph of the call tree in terminal cells, the
 * zoomed-into frame (at first every sample) on the top row across the
 * whole width, each frame's callees under it, as wide as their share of
 * its samples. What is left under a frame is its own time. A frame
 * narrower than a cell is not drawn; labels are cut to their frame. */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "theme.h"
#include "ui.h"


static void
push_box(struct treeviews *tv, uint32_t node, int x0, int x1, int level)
{
	if (!grow_array((void **)&tv->boxes, &tv->boxes_cap, tv->nboxes + 1, sizeof *tv->boxes))
		return;
	tv->boxes[tv->nboxes++] = (struct fv_box){.node = node, .x0 = x0, .x1 = x1, .level = level};
}

/* Columns come from each frame's offset in samples from the left edge, not
 * from its parent's rounded columns, so rounding never adds up down the
 * levels: every edge is within a cell of where it belongs. */
static void
lay(struct treeviews *tv, uint32_t node, uint64_t off, uint64_t whole, int width, int level)
{
	struct calltree *t = &tv->tree;
	uint64_t total = t->nodes[node].total;
	int x0 = (int)((uint64_t)width * off / whole);
	int x1 = (int)((uint64_t)width * (off + total) / whole);
	if (x1 <= x0)
		return;
	push_box(tv, node, x0, x1, level);
	const uint32_t *kids = calltree_kids(t, node);
	uint32_t n = calltree_nkids(t, node);
	uint64_t cum = off;
	for (uint32_t k = 0; k < n; k++) {
		lay(tv, kids[k], cum, whole, width, level + 1);
		cum += t->nodes[kids[k]].total;
	}
}

static uint32_t
zoom_node(struct treeviews *tv)
{
	if (!tv->tree.n)
		return UINT32_MAX;
	return tv->zoom_len ? tv_resolve(&tv->tree, tv->zoom_path, tv->zoom_len) : 0;
}

/* Lay the frames out for the current width; returns the selected box, or
 * -1. A selection that is gone or too narrow moves to its deepest ancestor
 * still drawn. */
static int32_t
layout(struct ui *u)
{
	struct treeviews *tv = u->tv;
	struct calltree *t = &tv->tree;
	tv->nboxes = 0;
	uint32_t zoom = zoom_node(tv);
	if (zoom == UINT32_MAX || !t->nodes[zoom].total)
		return -1;
	/* The zoom may have moved up (its path gone): remember where it is. */
	tv->zoom_len = tv_path_of(t, zoom, tv->zoom_path);
	lay(tv, zoom, 0, t->nodes[zoom].total, COLS, 0);
	if (!tv->fsel_len) {
		/* First look: the widest callee of the top frame. */
		uint32_t first = calltree_nkids(t, zoom) ? calltree_kids(t, zoom)[0] : zoom;
		tv->fsel_len = tv_path_of(t, first, tv->fsel_path);
	}
	uint32_t want = tv_resolve(t, tv->fsel_path, tv->fsel_len);
	for (uint32_t at = want; at != UINT32_MAX; at = t->nodes[at].parent) {
		for (uint32_t b = 0; b < tv->nboxes; b++)
			if (tv->boxes[b].node == at)
				return (int32_t)b;
		if (at == zoom)
			break;
	}
	return 0; /* the zoomed-into frame */
}

static int
frame_attr(double share, bool selected)
{
	if (selected)
		return theme_attr(ROLE_FLAME_SELECTED);
	return theme_attr(share >= 20 ? ROLE_FLAME_HOT : share >= 5 ? ROLE_FLAME_WARM : ROLE_FLAME_COLD);
}

static void
flameview_draw(struct ui *u, int y, int height)
{
	struct treeviews *tv = u->tv;
	struct calltree *t = &tv->tree;
	/* The title and heading rows of the table are the flame's title and
	 * its first row: height + 1 rows in all. */
	int rows = height + 1;
	int32_t sel = layout(u);
	uint32_t zoom = zoom_node(tv);
	char title[1400], cnt[32], name[1100];
	live_format_count(t->n ? (double)t->nodes[0].total : 0, cnt, sizeof cnt);
	if (zoom != UINT32_MAX && zoom != 0) {
		tv_node_label(u, &t->nodes[zoom], name, sizeof name);
		snprintf(title, sizeof title, " Flame graph  zoomed into %s (Esc: out)  %s, %s, %s samples ",
			 name, u->scope == AGG_WINDOW ? "last refresh" : "whole session", agg_mode_name(u->mode),
			 cnt);
	} else {
		snprintf(title, sizeof title,
			 " Flame graph  %s, %s, %s samples%s%s%s  \xe2\x86\x91\xe2\x86\x93 caller/callee  "
			 "\xe2\x86\x90\xe2\x86\x92 siblings  Enter zoom ",
			 u->scope == AGG_WINDOW ? "% of the last refresh" : "% of the whole session",
			 agg_mode_name(u->mode), cnt, t->cut ? ", deep stacks cut" : "",
			 u->filter[0] ? ", filter: " : "", u->filter);
	}
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, title, theme_attr(u->filter[0] ? ROLE_FILTER : ROLE_BORDER));
	y++;
	rows--;
	for (int i = 0; i < rows; i++) {
		move(y + i, 0);
		clrtoeol();
	}
	if (sel < 0 || rows < 1) {
		const char *why = u->filter[0]		? "  no stack passes through a function matching the filter"
				  : u->mode != AGG_WALL	? "  no samples in this mode yet (m: change mode)"
				  : u->scope == AGG_WINDOW ? "  no samples in the last refresh yet"
							   : "  no samples yet";
		if (rows >= 1)
			draw_text(y, 0, COLS, why, theme_attr(ROLE_DIM));
		return;
	}
	/* Deep selections scroll the levels; the top frame stays findable
	 * through the title. */
	int sl = tv->boxes[sel].level;
	if (sl < tv->first_level)
		tv->first_level = sl;
	if (sl >= tv->first_level + rows)
		tv->first_level = sl - rows + 1;
	if (tv->first_level < 0)
		tv->first_level = 0;
	tv->levels = rows;
	uint64_t den = t->nodes[zoom].total;
	for (uint32_t b = 0; b < tv->nboxes; b++) {
		const struct fv_box *bx = &tv->boxes[b];
		int row = bx->level - tv->first_level;
		if (row < 0 || row >= rows)
			continue;
		const struct ct_node *n = &t->nodes[bx->node];
		int w = bx->x1 - bx->x0;
		double share = den ? 100.0 * (double)n->total / (double)den : 0;
		int attr = frame_attr(share, (int32_t)b == sel);
		/* The last cell of a frame wider than two is a gap, so frames
		 * side by side in one colour stay apart. */
		int fill = w > 2 ? w - 1 : w;
		attrset(attr);
		move(y + row, bx->x0);
		for (int c = 0; c < fill; c++)
			addch(' ');
		attrset(theme_attr(ROLE_DEFAULT));
		if (fill >= 3) {
			tv_node_label(u, n, name, sizeof name);
			draw_text(y + row, bx->x0, fill, name, attr);
		}
	}
}

/* The box for a move from the selected one, or -1. */
static int32_t
neighbour(const struct treeviews *tv, int32_t sel, int dlevel, int dx)
{
	const struct fv_box *s = &tv->boxes[sel];
	int32_t best = -1;
	for (uint32_t b = 0; b < tv->nboxes; b++) {
		const struct fv_box *c = &tv->boxes[b];
		if (dlevel > 0) {
			/* a callee: the leftmost (heaviest) under the selection */
			if (c->level == s->level + 1 && c->x0 >= s->x0 && c->x1 <= s->x1 &&
			    (best < 0 || c->x0 < tv->boxes[best].x0))
				best = (int32_t)b;
		} else if (dx < 0) {
			if (c->level == s->level && c->x1 <= s->x0 &&
			    (best < 0 || c->x0 > tv->boxes[best].x0))
				best = (int32_t)b;
		} else if (dx > 0) {
			if (c->level == s->level && c->x0 >= s->x1 &&
			    (best < 0 || c->x0 < tv->boxes[best].x0))
				best = (int32_t)b;
		}
	}
	return best;
}

static bool
flame_key(struct ui *u, const TermKeyKey *k)
{
	struct treeviews *tv = u->tv;
	struct calltree *t = &tv->tree;
	int32_t sel = layout(u);
	enum { NONE, UP, DOWN, LEFT, RIGHT, ZOOM, OUT, TOP } act = NONE;
	if (k->type == TERMKEY_TYPE_KEYSYM) {
		switch (k->code.sym) {
		case TERMKEY_SYM_UP: act = UP; break;
		case TERMKEY_SYM_DOWN: act = DOWN; break;
		case TERMKEY_SYM_LEFT: act = LEFT; break;
		case TERMKEY_SYM_RIGHT: act = RIGHT; break;
		case TERMKEY_SYM_ENTER: act = ZOOM; break;
		case TERMKEY_SYM_ESCAPE: act = OUT; break;
		case TERMKEY_SYM_HOME: case TERMKEY_SYM_FIND: act = TOP; break;
		default: return false;
		}
	} else if (k->type == TERMKEY_TYPE_UNICODE && !(k->modifiers & TERMKEY_KEYMOD_CTRL)) {
		switch (k->code.codepoint) {
		case 'k': act = UP; break;
		case 'j': act = DOWN; break;
		case 'g': act = TOP; break;
		default: return false;
		}
	} else {
		return false;
	}
	if (act == OUT) {
		/* One level out per Esc; with nothing to zoom out of, Esc goes on
		 * to its other uses (clear the filter, leave the view). */
		if (tv->zoom_len <= 1)
			return false;
		tv->zoom_len--;
		u->dirty = true;
		return true;
	}
	u->dirty = true;
	if (sel < 0)
		return true;
	int32_t to = -1;
	uint32_t node = tv->boxes[sel].node;
	switch (act) {
	case UP:
		if (tv->boxes[sel].level > 0)
			tv->fsel_len = tv_path_of(t, t->nodes[node].parent, tv->fsel_path);
		return true;
	case DOWN: to = neighbour(tv, sel, 1, 0); break;
	case LEFT: to = neighbour(tv, sel, 0, -1); break;
	case RIGHT: to = neighbour(tv, sel, 0, 1); break;
	case TOP: to = 0; break;
	case ZOOM:
		tv->zoom_len = tv_path_of(t, node, tv->zoom_path);
		tv->first_level = 0;
		/* keep the selection: the zoomed frame, now on top */
		return true;
	default:
		return true;
	}
	if (to >= 0)
		tv->fsel_len = tv_path_of(t, tv->boxes[to].node, tv->fsel_path);
	return true;
}

static void
flameview_status(struct ui *u, char *buf, size_t len)
{
	struct treeviews *tv = u->tv;
	struct calltree *t = &tv->tree;
	int32_t sel = layout(u);
	if (sel < 0) {
		snprintf(buf, len, " f table  v call tree  h help");
		return;
	}
	const struct ct_node *n = &t->nodes[tv->boxes[sel].node];
	uint32_t zoom = zoom_node(tv);
	char name[1100], where[1100], cnt[32];
	tv_node_label(u, n, name, sizeof name);
	tv_node_where(u, n, where, sizeof where);
	live_format_count((double)n->total, cnt, sizeof cnt);
	double all = t->nodes[0].total ? 100.0 * (double)n->total / (double)t->nodes[0].total : 0;
	char zoomed[64] = "";
	if (zoom != 0 && zoom != UINT32_MAX && t->nodes[zoom].total)
		snprintf(zoomed, sizeof zoomed, " (%.1f%% of the zoom)",
			 100.0 * (double)n->total / (double)t->nodes[zoom].total);
	/* Figures first, so they stay on a narrow screen; then file:line,
	 * whose end (the module and line) is kept when it has to be cut. */
	int used = snprintf(buf, len, " %s  %s samples  %.1f%%%s", name, cnt, all, zoomed);
	if (used < 0 || (size_t)used >= len)
		return;
	if (where[0]) {
		int room = COLS - used - 4;
		size_t wl = strlen(where);
		const char *shown = where;
		if (room > 8 && (int)wl > room)
			shown = where + wl - (size_t)(room - 1);
		snprintf(buf + used, len - (size_t)used, "  (%s%s)", shown == where ? "" : "\xe2\x80\xa6", shown);
	} else {
		snprintf(buf + used, len - (size_t)used, "   Enter zoom  Esc out  f table");
	}
}

static enum view_key
flameview_key(struct ui *u, const TermKeyKey *k)
{
	if (flame_key(u, k))
		return VIEW_KEY_USED;
	return treeviews_leave_key(u, k);
}

static const char *const flameview_help[][2] = {
	{"f", "flame graph"},
};

const struct view_ops flameview_ops = {
	.name = "flame graph",
	.base = true,
	.draw = flameview_draw,
	.key = flameview_key,
	.status = flameview_status,
	.rebuild = treeviews_refresh,
	.help = flameview_help,
	.nhelp = sizeof flameview_help / sizeof flameview_help[0],
};
