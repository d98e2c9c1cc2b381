/* The function table (the base view: each function's own and total share,
 * sorted, filtered) and the detail of one function (its callers and
 * callees), both built from the aggregate under the screen's query. The
 * selection keeps to its function as rows move between refreshes. */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseline.h"
#include "clock.h"
#include "procset.h"
#include "theme.h"
#include "ui.h"

struct table_ui {
	struct agg_table table;
	int32_t selected, top;   /* row index, first visible row */
	uint32_t selected_func;  /* keeps the selection on its function across refreshes */
	int32_t selected_line;

	/* the detail */
	uint32_t detail_func;
	int32_t detail_line;     /* its line (by-line view), or -1 */
	struct agg_links links;
	bool links_valid;
};

struct table_ui *
tableview_new(void)
{
	struct table_ui *t = calloc(1, sizeof *t);
	if (t)
		t->selected_func = UINT32_MAX;
	return t;
}

void
tableview_free(struct table_ui *t)
{
	if (!t)
		return;
	agg_table_free(&t->table);
	agg_links_free(&t->links);
	free(t);
}

void
tableview_restart(struct ui *u)
{
	struct table_ui *t = u->table;
	t->selected = t->top = 0;
	t->selected_func = UINT32_MAX;
}

void
tableview_unpin(struct ui *u)
{
	u->table->selected_func = UINT32_MAX;
}

/* The selection to row `to` (clamped), its function remembered, in view. */
static void
move_selection(struct ui *u, int32_t to)
{
	struct table_ui *t = u->table;
	int32_t n = (int32_t)t->table.nrows;
	to = list_row_in(to, t->table.nrows);
	t->selected = to;
	if (n) {
		t->selected_func = t->table.rows[to].func;
		t->selected_line = t->table.rows[to].line;
	}
	int h = views_table_height(u);
	if (t->selected < t->top)
		t->top = t->selected;
	if (t->selected >= t->top + h)
		t->top = t->selected - h + 1;
}

static void
table_rebuild(struct ui *u)
{
	struct table_ui *t = u->table;
	struct agg_query q;
	views_query(u, &q);
	if (!agg_build_table(&u->agg, &q, &t->table)) {
		ui_message(u, true, "out of memory building the table");
		t->table.nrows = 0;
	}
	/* Keep the selection on the same function when rows move. */
	if (t->selected_func != UINT32_MAX) {
		for (uint32_t i = 0; i < t->table.nrows; i++) {
			if (t->table.rows[i].func == t->selected_func &&
			    (!u->by_line || t->table.rows[i].line == t->selected_line)) {
				t->selected = (int32_t)i;
				break;
			}
		}
	}
	move_selection(u, t->selected);
}

static void
detail_rebuild(struct ui *u)
{
	struct table_ui *t = u->table;
	struct agg_query q;
	views_query(u, &q);
	agg_links_free(&t->links);
	t->links_valid = agg_build_line_links(&u->agg, &q, t->detail_func, t->detail_line, &t->links);
}

void
tableview_open_detail(struct ui *u, uint32_t func, int32_t line)
{
	struct table_ui *t = u->table;
	t->detail_func = func;
	t->detail_line = line;
	view_push(u, VIEW_DETAIL);
	views_rebuild(u);
}

/* Seconds a sample stands for, from the achieved sampling rate. In the
 * window scope: the window's length over its sampling rounds (the samples of
 * its most-sampled thread), so no thread's time exceeds the window shown. */
static double
seconds_per_sample(struct ui *u)
{
	if (u->scope == AGG_WINDOW && u->agg.window_ns) {
		uint64_t rounds = 0;
		for (uint32_t i = 0; i < u->agg.nthreads; i++)
			if (u->agg.threads[i].samples[AGG_WINDOW] > rounds)
				rounds = u->agg.threads[i].samples[AGG_WINDOW];
		if (rounds)
			return (double)u->agg.window_ns / 1e9 / (double)rounds;
	}
	struct engine_stats *st = &u->s->sampler.stats;
	double elapsed = (double)ui_stat(&st->elapsed_ns) / 1e9;
	uint64_t samples = ui_stat(&st->samples);
	/* A sample is one process's: its share of that process's life. */
	if (procset_count(&u->s->sampler.procs) > 1)
		elapsed = procset_lifetime_s(&u->s->sampler.procs, clock_now_ns());
	return samples ? elapsed / (double)samples : 0;
}

/* The table's title (query, sort, baseline) and its column heading, the
 * sorted column marked; the widths of the name columns, for the rows. */
static void
draw_table_head(struct ui *u, int y, bool delta, int *fname_w, int *file_w)
{
	bool wide = COLS >= 110, medium = COLS >= 80;
	char since[96] = "";
	if (u->baseline) {
		time_t when = (time_t)baseline_when(u->baseline);
		struct tm tm;
		localtime_r(&when, &tm);
		char hms[16];
		strftime(hms, sizeof hms, "%H:%M:%S", &tm);
		snprintf(since, sizeof since, delta ? ", \xce\x94 since %s" :
			 ", baseline of %s is of another mode/thread/process", hms);
	}
	char title[384];
	snprintf(title, sizeof title, " Functions  %s, %s, sorted by %s%s%s%s%s ",
		 u->scope == AGG_WINDOW ? "% of the last refresh" : "% of the whole session",
		 agg_mode_name(u->mode), agg_sort_name(u->sort), u->ascending ? " (ascending)" : "",
		 since, u->filter[0] ? ", filter: " : "", u->filter);
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, title, theme_attr(u->filter[0] ? ROLE_FILTER : ROLE_BORDER));
	/* Column heading; the sorted column is marked. */
	y++;
	draw_bar(y, theme_attr(ROLE_TABLE_HEADER));
	struct { const char *label; int width; enum agg_sort sort; bool show; } cols[] = {
		{"OWN%", 7, SORT_OWN, true},
		{"TOTAL%", 7, SORT_TOTAL, true},
		{"OWN", 9, SORT_OWN, medium},
		{"TOTAL", 9, SORT_TOTAL, medium},
		{"OWN#", 8, SORT_OWN, wide},
		{"TOTAL#", 8, SORT_TOTAL, wide},
	};
	int x = 0;
	for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
		if (!cols[c].show)
			continue;
		char h[32];
		bool sorted = cols[c].sort == u->sort && c < 2;
		/* right-aligned label, the sort mark in front of it */
		int pad = cols[c].width - 1 - (int)strlen(cols[c].label);
		snprintf(h, sizeof h, "%*s%s%s", pad > 0 ? pad : 0, "",
			 sorted ? (u->ascending ? "\xe2\x96\xb2" : "\xe2\x96\xbc") : " ", cols[c].label);
		x += draw_text(y, x, COLS - x, h,
			       theme_attr(sorted ? ROLE_SORTED_HEADER : ROLE_TABLE_HEADER));
		if (c == 1 && delta)
			x += draw_text(y, x, COLS - x, " \xce\x94TOTAL", theme_attr(ROLE_TABLE_HEADER));
	}
	x += 1;
	int rest = COLS - x;
	*fname_w = rest * 55 / 100;
	*file_w = rest - *fname_w - 1;
	draw_text(y, x, *fname_w, u->sort == SORT_NAME ? "FUNCTION\xe2\x96\xbc" : "FUNCTION",
		  theme_attr(u->sort == SORT_NAME ? ROLE_SORTED_HEADER : ROLE_TABLE_HEADER));
	draw_text(y, x + *fname_w + 1, *file_w, u->sort == SORT_FILE ? "FILE:LINE\xe2\x96\xbc" : "FILE:LINE",
		  theme_attr(u->sort == SORT_FILE ? ROLE_SORTED_HEADER : ROLE_TABLE_HEADER));
}

static void
draw_table(struct ui *u, int y, int height)
{
	struct table_ui *t = u->table;
	/* After the screen grew, rows scrolled away can fit again. */
	int32_t max_top = (int32_t)t->table.nrows - height;
	if (t->top > max_top)
		t->top = max_top > 0 ? max_top : 0;
	bool wide = COLS >= 110, medium = COLS >= 80;
	/* `d` marked a baseline: a delta column, when it is of this view */
	struct agg_query q;
	views_query(u, &q);
	bool delta = baseline_applies(u->baseline, &q);
	int x, fname_w, file_w;
	draw_table_head(u, y, delta, &fname_w, &file_w);
	y += 2;
	double sps = seconds_per_sample(u);
	uint64_t den = t->table.denominator;
	if (t->table.nrows == 0) {
		move(y, 0);
		clrtoeol();
		const char *why = u->filter[0]	       ? "  no function matches the filter"
				  : u->mode != AGG_WALL ? "  no samples in this mode yet (m: change mode)"
				  : u->scope == AGG_WINDOW ? "  no samples in the last refresh yet"
							   : "  no samples yet";
		draw_text(y++, 0, COLS, why, theme_attr(ROLE_DIM));
		height--;
	}
	for (int i = 0; i < height; i++, y++) {
		int32_t row = t->top + i;
		move(y, 0);
		clrtoeol();
		if (row >= (int32_t)t->table.nrows)
			continue;
		const struct agg_row *r = &t->table.rows[row];
		const struct agg_func *f = &u->agg.funcs[r->func];
		bool sel = row == t->selected;
		int base = sel ? theme_attr(ROLE_SELECTED) : theme_attr(ROLE_DEFAULT);
		if (sel)
			draw_bar(y, base);
		double own = ui_pct(r->own, den), total = ui_pct(r->total, den);
		char buf[96], t1[32], t2[32];
		x = 0;
		snprintf(buf, sizeof buf, "%6.1f ", own);
		x += draw_text(y, x, COLS - x, buf, sel ? base : draw_percent_attr(own));
		snprintf(buf, sizeof buf, "%6.1f ", total);
		x += draw_text(y, x, COLS - x, buf, sel ? base : draw_percent_attr(total));
		if (delta) {
			double was;
			if (baseline_share(u->baseline, u->by_line, r->func, r->line, &was))
				snprintf(buf, sizeof buf, "%+6.1f ", total - was);
			else
				snprintf(buf, sizeof buf, "%6s ", "new");
			x += draw_text(y, x, COLS - x, buf, base);
		}
		if (medium) {
			live_format_duration((double)r->own * sps, t1, sizeof t1);
			live_format_duration((double)r->total * sps, t2, sizeof t2);
			snprintf(buf, sizeof buf, "%8s %8s ", t1, t2);
			x += draw_text(y, x, COLS - x, buf, base);
		}
		if (wide) {
			live_format_count((double)r->own, t1, sizeof t1);
			live_format_count((double)r->total, t2, sizeof t2);
			snprintf(buf, sizeof buf, "%7s %7s ", t1, t2);
			x += draw_text(y, x, COLS - x, buf, base);
		}
		x += 1;
		draw_text(y, x, fname_w, f->qualname, sel ? base : theme_attr(ROLE_FUNCTION));
		char file[1100];
		agg_func_where(f, r->line, file, sizeof file);
		/* Long paths: keep the end, which names the module. */
		const char *shown = file;
		size_t flen = strlen(file);
		if ((int)flen > file_w && file_w > 4)
			shown = file + flen - (size_t)(file_w - 1);
		draw_text(y, x + fname_w + 1, file_w, shown, sel ? base : theme_attr(ROLE_FILE));
	}
	return;
}

static void
draw_detail(struct ui *u, int y, int height)
{
	struct table_ui *t = u->table;
	const struct agg_func *f = t->detail_func < u->agg.nfuncs ? &u->agg.funcs[t->detail_func] : NULL;
	char buf[1200];
	draw_bar(y, theme_attr(ROLE_BORDER));
	if (f && t->detail_line >= 0)
		snprintf(buf, sizeof buf, " Detail: %s line %d  (%s:%d)  Enter/Esc: back ", f->qualname,
			 t->detail_line, f->filename, t->detail_line);
	else
		snprintf(buf, sizeof buf, " Detail: %s  (%s:%d)  Enter/Esc: back ", f ? f->qualname : "?",
			 f ? f->filename : "?", f ? f->firstlineno : 0);
	draw_text(y++, 0, COLS, buf, theme_attr(ROLE_BORDER));
	int end = y + height;
	for (int i = y; i < end; i++) {
		move(i, 0);
		clrtoeol();
	}
	if (!t->links_valid || !f) {
		draw_text(y, 2, COLS - 2, "no data", theme_attr(ROLE_DIM));
		return;
	}
	int half = (height - 2) / 2;
	snprintf(buf, sizeof buf, " Callers (%llu samples with it on the stack)",
		 (unsigned long long)t->links.total);
	draw_text(y++, 0, COLS, buf, theme_attr(ROLE_TABLE_HEADER));
	for (uint32_t i = 0; i < t->links.ncallers && i < (uint32_t)half; i++, y++) {
		const struct agg_link *l = &t->links.callers[i];
		double p = ui_pct(l->weight, t->links.total);
		snprintf(buf, sizeof buf, "%6.1f%%  ", p);
		int x = draw_text(y, 2, COLS - 2, buf, draw_percent_attr(p)) + 2;
		const char *name = l->func == UINT32_MAX ? "(thread entry)" : u->agg.funcs[l->func].qualname;
		x += draw_text(y, x, COLS / 2, name, theme_attr(ROLE_FUNCTION));
		if (l->func != UINT32_MAX)
			draw_text(y, x + 2, COLS - x - 2, u->agg.funcs[l->func].filename, theme_attr(ROLE_FILE));
	}
	draw_text(y++, 0, COLS, " Callees", theme_attr(ROLE_TABLE_HEADER));
	for (uint32_t i = 0; i < t->links.ncallees && y < end; i++, y++) {
		const struct agg_link *l = &t->links.callees[i];
		double p = ui_pct(l->weight, t->links.total);
		snprintf(buf, sizeof buf, "%6.1f%%  ", p);
		int x = draw_text(y, 2, COLS - 2, buf, draw_percent_attr(p)) + 2;
		const char *name = l->func == UINT32_MAX ? "(own time: running here)"
							 : u->agg.funcs[l->func].qualname;
		x += draw_text(y, x, COLS / 2, name, theme_attr(ROLE_FUNCTION));
		if (l->func != UINT32_MAX)
			draw_text(y, x + 2, COLS - x - 2, u->agg.funcs[l->func].filename, theme_attr(ROLE_FILE));
	}
}

static void
table_status(struct ui *u, char *buf, size_t len)
{
	(void)u;
	snprintf(buf, len, " h help  q quit  s sort  m mode  l lines  w window/session  / filter  Tab thread  "
		 "[ ] process  Enter detail  v tree  f flame  e export  p pause");
}


/* Moving in the table, and Enter for the detail of the selected row. */
static enum view_key
table_key(struct ui *u, const TermKeyKey *k)
{
	struct table_ui *t = u->table;
	int32_t page = views_table_height(u);
	if (k->type == TERMKEY_TYPE_UNICODE && !(k->modifiers & TERMKEY_KEYMOD_CTRL)) {
		switch (k->code.codepoint) {
		case 'j': move_selection(u, t->selected + 1); return VIEW_KEY_USED;
		case 'k': move_selection(u, t->selected - 1); return VIEW_KEY_USED;
		case 'g': move_selection(u, 0); return VIEW_KEY_USED;
		case 'G': move_selection(u, (int32_t)t->table.nrows - 1); return VIEW_KEY_USED;
		default: return VIEW_KEY_UNUSED;
		}
	}
	if (k->type != TERMKEY_TYPE_KEYSYM)
		return VIEW_KEY_UNUSED;
	switch (k->code.sym) {
	case TERMKEY_SYM_ENTER:
		if (t->table.nrows)
			tableview_open_detail(u, t->table.rows[t->selected].func,
					      u->by_line ? t->table.rows[t->selected].line : -1);
		return VIEW_KEY_USED;
	case TERMKEY_SYM_UP: move_selection(u, t->selected - 1); return VIEW_KEY_USED;
	case TERMKEY_SYM_DOWN: move_selection(u, t->selected + 1); return VIEW_KEY_USED;
	case TERMKEY_SYM_PAGEUP: move_selection(u, t->selected - page); return VIEW_KEY_USED;
	case TERMKEY_SYM_PAGEDOWN: move_selection(u, t->selected + page); return VIEW_KEY_USED;
	/* Some terminals send Home/End as the vt220 Find/Select keys. */
	case TERMKEY_SYM_HOME:
	case TERMKEY_SYM_FIND: move_selection(u, 0); return VIEW_KEY_USED;
	case TERMKEY_SYM_END:
	case TERMKEY_SYM_SELECT: move_selection(u, (int32_t)t->table.nrows - 1); return VIEW_KEY_USED;
	default: return VIEW_KEY_UNUSED;
	}
}

/* The detail closes with Enter or Esc; the rest is shared. */
static enum view_key
detail_key(struct ui *u, const TermKeyKey *k)
{
	if (k->type == TERMKEY_TYPE_KEYSYM &&
	    (k->code.sym == TERMKEY_SYM_ENTER || k->code.sym == TERMKEY_SYM_ESCAPE)) {
		view_pop(u);
		views_rebuild(u);
		return VIEW_KEY_USED;
	}
	return VIEW_KEY_UNUSED;
}

static const char *const table_help[][2] = {
	{"Enter", "callers and callees"},
	{"↑ ↓", "move in the table"},
	{"PgUp PgDn", "a page up or down"},
	{"Home End", "first or last row"},
};

const struct view_ops tableview_ops = {
	.name = "functions",
	.base = true,
	.draw = draw_table,
	.key = table_key,
	.status = table_status,
	.rebuild = table_rebuild,
	.help = table_help,
	.nhelp = sizeof table_help / sizeof table_help[0],
};

const struct view_ops detailview_ops = {
	.name = "detail",
	.draw = draw_detail,
	.key = detail_key,
	.rebuild = detail_rebuild,
};
