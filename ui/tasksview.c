#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "grow.h"
#include "procmaps.h"
#include "taskwatch.h"
#include "tasksview.h"
#include "theme.h"
#include "ui.h"

/* Reads of every task per second: a few, on their own thread. */
#define TASKS_INTERVAL_NS 250000000ull
/* Rows drawn for one opened group, and levels of awaiters under a task. */
#define MAX_TASK_ROWS 500
#define MAX_AWAITER_DEPTH 16

enum row_kind { ROW_GROUP, ROW_TASK, ROW_FRAME, ROW_AWAITER, ROW_MORE };

struct trow {
	enum row_kind kind;
	uint32_t a;           /* group index, or task index */
	uint32_t b;           /* frame index within the task; depth for awaiters */
};

struct tasks_ui {
	bool shown;
	char start_error[512];
	struct task_snapshot *snap;
	uint32_t *by_id;       /* snapshot task indexes sorted by id */
	uint32_t *order;       /* groups in display order */
	bool by_count;         /* sort by task count; else by stuck time */
	int32_t selected, top;
	/* what is open, by identity so it survives refreshes */
	bool group_open;
	struct task_group open_group;
	uint64_t open_task;
	struct trow *rows;
	uint32_t nrows, cap;
};

struct tasks_ui *
tasksview_new(void)
{
	return calloc(1, sizeof(struct tasks_ui));
}

void
tasksview_free(struct tasks_ui *t)
{
	if (!t)
		return;
	task_snapshot_free(t->snap);
	free(t->by_id);
	free(t->order);
	free(t->rows);
	free(t);
}

bool
tasksview_shown(const struct ui *u)
{
	return u->tasks && u->tasks->shown;
}

/* ---- rows ---- */

/* How the groups are ordered: longest stuck, or most tasks, first. */
struct group_order {
	const struct task_snapshot *snap;
	bool by_count;
};

static int
cmp_groups(const void *a, const void *b, void *ctx)
{
	const struct group_order *o = ctx;
	const struct task_group *x = &o->snap->groups[*(const uint32_t *)a];
	const struct task_group *y = &o->snap->groups[*(const uint32_t *)b];
	uint64_t kx = o->by_count ? x->count : x->stuck_ns, ky = o->by_count ? y->count : y->stuck_ns;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	uint64_t sx = o->by_count ? x->stuck_ns : x->count, sy = o->by_count ? y->stuck_ns : y->count;
	return sx < sy ? 1 : sx > sy ? -1 : 0;
}

static int
cmp_ids(const void *a, const void *b, void *ctx)
{
	const struct task_snapshot *snap = ctx;
	uint64_t x = snap->tasks.tasks[*(const uint32_t *)a].id;
	uint64_t y = snap->tasks.tasks[*(const uint32_t *)b].id;
	return x < y ? -1 : x > y;
}

static int64_t
task_by_id(const struct tasks_ui *t, uint64_t id)
{
	uint32_t lo = 0, hi = t->snap->tasks.n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t v = t->snap->tasks.tasks[t->by_id[mid]].id;
		if (v == id)
			return t->by_id[mid];
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void
add_row(struct tasks_ui *t, enum row_kind kind, uint32_t a, uint32_t b)
{
	if (!grow_array((void **)&t->rows, &t->cap, t->nrows + 1, sizeof *t->rows))
		return;
	t->rows[t->nrows++] = (struct trow){kind, a, b};
}

static bool
same_group(const struct task_group *a, const struct task_group *b)
{
	return a->frame0 == b->frame0 && a->frame1 == b->frame1 && a->line0 == b->line0 &&
	       a->line1 == b->line1;
}

/* A task's chain, then who awaits it, and who awaits them, up to the root. */
static void
add_task_detail(struct tasks_ui *t, uint32_t ti, uint32_t depth)
{
	const struct tt_tasks *ts = &t->snap->tasks;
	const struct tt_task *task = &ts->tasks[ti];
	for (uint32_t f = 0; f < task->nframes; f++)
		add_row(t, ROW_FRAME, ti, f | depth << 16);
	if (depth >= MAX_AWAITER_DEPTH)
		return;
	for (uint32_t a = 0; a < task->nawaiters && a < 8; a++) {
		int64_t w = task_by_id(t, ts->awaiters[task->first_awaiter + a]);
		if (w < 0 || (uint32_t)w == ti)
			continue;
		add_row(t, ROW_AWAITER, (uint32_t)w, depth + 1);
		add_task_detail(t, (uint32_t)w, depth + 1);
	}
}

static void
build_rows(struct tasks_ui *t)
{
	t->nrows = 0;
	if (!t->snap)
		return;
	const struct task_snapshot *s = t->snap;
	for (uint32_t k = 0; k < s->ngroups; k++) {
		uint32_t g = t->order[k];
		add_row(t, ROW_GROUP, g, 0);
		if (!t->group_open || !same_group(&s->groups[g], &t->open_group))
			continue;
		const struct task_group *grp = &s->groups[g];
		for (uint32_t m = 0; m < grp->count; m++) {
			if (m >= MAX_TASK_ROWS) {
				add_row(t, ROW_MORE, g, grp->count - m);
				break;
			}
			uint32_t ti = s->members[grp->first + m];
			add_row(t, ROW_TASK, ti, 0);
			if (s->tasks.tasks[ti].id == t->open_task)
				add_task_detail(t, ti, 0);
		}
	}
}

static void
take_snapshot(struct tasks_ui *t, struct task_snapshot *s)
{
	/* Remember what the selection points at, to find it again. */
	enum row_kind kind = ROW_GROUP;
	struct task_group key = {0};
	uint64_t task_id = 0;
	bool have = false;
	if (t->snap && t->selected >= 0 && (uint32_t)t->selected < t->nrows) {
		const struct trow *r = &t->rows[t->selected];
		kind = r->kind;
		if (kind == ROW_GROUP) {
			key = t->snap->groups[r->a];
			have = true;
		} else if (kind == ROW_TASK) {
			task_id = t->snap->tasks.tasks[r->a].id;
			have = true;
		}
	}
	task_snapshot_free(t->snap);
	free(t->by_id);
	free(t->order);
	t->snap = s;
	t->by_id = malloc((s->tasks.n + 1) * sizeof *t->by_id);
	t->order = malloc((s->ngroups + 1) * sizeof *t->order);
	if (!t->by_id || !t->order) {
		task_snapshot_free(t->snap);
		t->snap = NULL;
		t->nrows = 0;
		return;
	}
	for (uint32_t i = 0; i < s->tasks.n; i++)
		t->by_id[i] = i;
	for (uint32_t g = 0; g < s->ngroups; g++)
		t->order[g] = g;
	struct group_order order = {s, t->by_count};
	qsort_r(t->by_id, s->tasks.n, sizeof *t->by_id, cmp_ids, (void *)s);
	qsort_r(t->order, s->ngroups, sizeof *t->order, cmp_groups, &order);
	build_rows(t);
	if (have) {
		for (uint32_t i = 0; i < t->nrows; i++) {
			const struct trow *r = &t->rows[i];
			if ((kind == ROW_GROUP && r->kind == ROW_GROUP &&
			     same_group(&s->groups[r->a], &key)) ||
			    (kind == ROW_TASK && r->kind == ROW_TASK &&
			     s->tasks.tasks[r->a].id == task_id)) {
				t->selected = (int32_t)i;
				break;
			}
		}
	}
	if (t->selected >= (int32_t)t->nrows)
		t->selected = t->nrows ? (int32_t)t->nrows - 1 : 0;
}

void
tasksview_poll(struct ui *u)
{
	struct tasks_ui *t = u->tasks;
	if (!t || !u->s->watching_tasks)
		return;
	struct task_snapshot *s = taskwatch_take(&u->s->tasks);
	if (!s)
		return;
	if (u->paused) {
		task_snapshot_free(s);
		return;
	}
	take_snapshot(t, s);
	if (t->shown)
		u->dirty = true;
}

/* ---- drawing ---- */

/* "33 s"; "≥ 33 s" when the wait began before tachyon-top first looked. */
static void
format_age(uint64_t ns, bool at_least, char *buf, size_t len)
{
	double s = (double)ns / 1e9;
	const char *ge = at_least ? "\xe2\x89\xa5 " : "";
	if (s < 1)
		snprintf(buf, len, "%s", "-");
	else if (s < 120)
		snprintf(buf, len, "%s%.0f s", ge, s);
	else if (s < 7200)
		snprintf(buf, len, "%s%.0f min", ge, s / 60);
	else
		snprintf(buf, len, "%s%.1f h", ge, s / 3600);
}

static const char *
code_name(const struct task_snapshot *s, uint32_t code)
{
	return codecache_get(s->codes, code)->qualname;
}

static void
frame_text(const struct task_snapshot *s, uint32_t code, int line, char *buf, size_t len)
{
	const struct code_entry *c = codecache_get(s->codes, code);
	snprintf(buf, len, "%s (%s:%d)", c->qualname, procmaps_basename(c->filename), line);
}

/* "Queue.get ← worker (app.py:33)": where the tasks wait, and in what. */
static void
group_label(const struct task_snapshot *s, const struct task_group *g, char *buf, size_t len)
{
	if (g->frame0 == UINT32_MAX) {
		snprintf(buf, len, "%s", "(no coroutine frame: done or not started)");
		return;
	}
	if (g->frame1 == UINT32_MAX) {
		frame_text(s, g->frame0, g->line0, buf, len);
		return;
	}
	char caller[1024];
	frame_text(s, g->frame1, g->line1, caller, sizeof caller);
	snprintf(buf, len, "%s \xe2\x86\x90 %s", code_name(s, g->frame0), caller);
}

static void
group_names(const struct task_snapshot *s, const struct task_group *g, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (uint32_t m = 0; m < g->count && at + 8 < len; m++) {
		const struct tt_task *t = &s->tasks.tasks[s->members[g->first + m]];
		int n = snprintf(buf + at, len - at, "%s%s", m ? ", " : "", tt_task_name(&s->tasks, t));
		if (n < 0 || (size_t)n >= len - at) {
			buf[at] = '\0';
			break;
		}
		at += (size_t)n;
		if (m >= 12 && m + 1 < g->count) {
			snprintf(buf + at, len - at, ", \xe2\x80\xa6");
			break;
		}
	}
}

static void
draw_row(const struct tasks_ui *t, const struct trow *r, int y, bool selected)
{
	const struct task_snapshot *s = t->snap;
	char text[2048], age[32];
	int attr = theme_attr(selected ? ROLE_SELECTED : ROLE_DEFAULT);
	if (selected)
		ui_bar(y, attr);
	switch (r->kind) {
	case ROW_GROUP: {
		const struct task_group *g = &s->groups[r->a];
		bool open = t->group_open && same_group(g, &t->open_group);
		format_age(g->stuck_ns, g->stuck_before, age, sizeof age);
		char head[96];
		snprintf(head, sizeof head, "%s%7u %5u %8s  ", open ? "\xe2\x96\xbe" : "\xe2\x96\xb8",
			 g->count, g->running, age);
		int x = ui_draw_text(y, 0, COLS, head, attr);
		char label[1200];
		group_label(s, g, label, sizeof label);
		int lw = (COLS - x) * 60 / 100;
		int used = ui_draw_text(y, x, lw, label, selected ? attr : theme_attr(ROLE_FUNCTION));
		x += (used < lw ? used : lw) + 2;
		group_names(s, g, text, sizeof text);
		ui_draw_text(y, x, COLS - x, text, selected ? attr : theme_attr(ROLE_DIM));
		break;
	}
	case ROW_TASK: {
		const struct tt_task *task = &s->tasks.tasks[r->a];
		format_age(s->stuck_ns[r->a], s->stuck_before[r->a], age, sizeof age);
		snprintf(text, sizeof text, "    %s %s [0x%llx] thread %llu, %s, unchanged %s",
			 task->id == t->open_task ? "\xe2\x96\xbe" : "\xe2\x96\xb8",
			 tt_task_name(&s->tasks, task), (unsigned long long)task->id,
			 (unsigned long long)task->thread, task->running ? "running" : "suspended", age);
		ui_draw_text(y, 0, COLS, text, attr);
		break;
	}
	case ROW_FRAME: {
		const struct tt_task *task = &s->tasks.tasks[r->a];
		uint32_t f = r->b & 0xffff, depth = r->b >> 16;
		const struct tt_frame *fr = &s->tasks.frames[task->first_frame + f];
		const struct code_entry *c = codecache_get(s->codes, fr->code_id);
		snprintf(text, sizeof text, "%*s%s (%s:%d)", (int)(8 + 4 * depth), "", c->qualname,
			 c->filename, fr->line);
		ui_draw_text(y, 0, COLS, text, selected ? attr : theme_attr(ROLE_FILE));
		break;
	}
	case ROW_AWAITER: {
		const struct tt_task *task = &s->tasks.tasks[r->a];
		snprintf(text, sizeof text, "%*s\xe2\x86\x91 awaited by %s [0x%llx]", (int)(4 + 4 * r->b),
			 "", tt_task_name(&s->tasks, task), (unsigned long long)task->id);
		ui_draw_text(y, 0, COLS, text, selected ? attr : theme_attr(ROLE_HEADER));
		break;
	}
	case ROW_MORE:
		snprintf(text, sizeof text, "    ... %u more tasks here", r->b);
		ui_draw_text(y, 0, COLS, text, theme_attr(ROLE_DIM));
		break;
	}
}

void
tasksview_draw(struct ui *u, int y, int h)
{
	struct tasks_ui *t = u->tasks;
	const struct task_snapshot *s = t->snap;
	char title[400], err[512] = "";
	if (u->s->watching_tasks)
		taskwatch_error(&u->s->tasks, err, sizeof err);
	if (t->start_error[0])
		snprintf(err, sizeof err, "%s", t->start_error);
	if (!s) {
		snprintf(title, sizeof title, " asyncio tasks  (reading\xe2\x80\xa6) ");
	} else if (s->tasks.state == TASKS_UNSUPPORTED) {
		snprintf(title, sizeof title, " asyncio tasks ");
	} else {
		/* Many tasks stretch the interval (taskwatch.h): say how often. */
		char every[48];
		if (s->next_in_ns <= TASKS_INTERVAL_NS)
			snprintf(every, sizeof every, ", 4 times a second");
		else
			snprintf(every, sizeof every, ", every %.1f s", (double)s->next_in_ns / 1e9);
		snprintf(title, sizeof title,
			 " asyncio tasks  %u tasks at %u points, sorted by %s (s)  read %.1f ms%s%s ",
			 s->tasks.n, s->ngroups, t->by_count ? "count" : "stuck time", s->read_ms,
			 every, s->tasks.lost ? "  (some changed while read)" : "");
	}
	ui_bar(y, theme_attr(ROLE_BORDER));
	ui_draw_text(y, 0, COLS, title, theme_attr(ROLE_BORDER));
	y++;
	ui_bar(y, theme_attr(ROLE_TABLE_HEADER));
	ui_draw_text(y, 0, COLS, t->by_count ? "   TASKS\xe2\x96\xbc  RUN    STUCK  SUSPENDED AT"
					   : "   TASKS   RUN   STUCK\xe2\x96\xbc  SUSPENDED AT",
		   theme_attr(ROLE_TABLE_HEADER));
	y++;
	const char *empty = NULL;
	if (err[0])
		empty = err;
	else if (!s)
		empty = "  reading tasks\xe2\x80\xa6";
	else if (s->tasks.state == TASKS_UNSUPPORTED)
		empty = "  asyncio tasks can be read from Python 3.14 or newer only";
	else if (s->tasks.state == TASKS_NO_ASYNCIO)
		empty = "  asyncio is not imported (yet): looking again every second";
	else if (s->tasks.n == 0)
		empty = "  no asyncio tasks right now";
	if (empty && (!s || t->nrows == 0)) {
		ui_draw_text(y, 0, COLS, empty, theme_attr(err[0] ? ROLE_ERROR : ROLE_DIM));
		return;
	}
	if (t->selected < t->top)
		t->top = t->selected;
	if (t->selected >= t->top + h)
		t->top = t->selected - h + 1;
	int32_t max_top = (int32_t)t->nrows - h;
	if (t->top > max_top)
		t->top = max_top > 0 ? max_top : 0;
	for (int i = 0; i < h; i++) {
		int32_t row = t->top + i;
		if (row >= (int32_t)t->nrows)
			break;
		draw_row(t, &t->rows[row], y + i, row == t->selected);
	}
}

/* ---- keys ---- */

static void
select_row(struct tasks_ui *t, int32_t to)
{
	t->selected = ui_row_in(to, t->nrows);
}

static void
toggle_open(struct tasks_ui *t)
{
	if (!t->snap || t->selected < 0 || (uint32_t)t->selected >= t->nrows)
		return;
	struct trow r = t->rows[t->selected];
	if (r.kind == ROW_GROUP) {
		const struct task_group *g = &t->snap->groups[r.a];
		if (t->group_open && same_group(g, &t->open_group)) {
			t->group_open = false;
		} else {
			t->group_open = true;
			t->open_group = *g;
			t->open_task = 0;
		}
	} else if (r.kind == ROW_TASK) {
		uint64_t id = t->snap->tasks.tasks[r.a].id;
		t->open_task = t->open_task == id ? 0 : id;
	} else {
		return;
	}
	build_rows(t);
	select_row(t, t->selected);
}

static void
start_watching(struct ui *u)
{
	struct tasks_ui *t = u->tasks;
	if (u->s->watching_tasks || t->start_error[0])
		return;
	struct tt_error err = {0};
	if (session_watch_tasks(u->s, TASKS_INTERVAL_NS, &err) != TT_OK)
		snprintf(t->start_error, sizeof t->start_error, "  cannot read tasks: %s", err.msg);
}

void
tasksview_attach(struct ui *u)
{
	/* Watching from the start, a task's stuck time counts from attach,
	 * not from when the view was first opened. */
	if (u->s->target.layout.has_async)
		start_watching(u);
}

static void
open_view(struct ui *u)
{
	u->tasks->shown = true;
	start_watching(u);
}

void
tasksview_status(const struct ui *u, char *buf, size_t len)
{
	(void)u;
	snprintf(buf, len, " ↑/↓ PgUp/PgDn Home/End: move  Enter: open/close  s: sort by tasks/stuck  "
		 "Esc or T: back  h help  q quit");
}

bool
tasksview_key(struct ui *u, const TermKeyKey *k)
{
	struct tasks_ui *t = u->tasks;
	if (!t)
		return false;
	bool ctrl = k->modifiers & TERMKEY_KEYMOD_CTRL;
	if (k->type == TERMKEY_TYPE_UNICODE && !ctrl && k->code.codepoint == 'T') {
		if (t->shown)
			t->shown = false;
		else
			open_view(u);
		u->dirty = true;
		return true;
	}
	if (!t->shown)
		return false;
	int32_t page = views_table_height(u);
	if (k->type == TERMKEY_TYPE_UNICODE && !ctrl) {
		switch (k->code.codepoint) {
		case 's': case 'S':
			t->by_count = !t->by_count;
			if (t->snap) {
				struct group_order order = {t->snap, t->by_count};
				qsort_r(t->order, t->snap->ngroups, sizeof *t->order, cmp_groups,
					&order);
				build_rows(t);
			}
			break;
		case 'j': select_row(t, t->selected + 1); break;
		case 'k': select_row(t, t->selected - 1); break;
		case 'g': select_row(t, 0); break;
		case 'G': select_row(t, (int32_t)t->nrows - 1); break;
		default: return false;   /* q, h, p and the rest as everywhere */
		}
		u->dirty = true;
		return true;
	}
	if (k->type == TERMKEY_TYPE_KEYSYM) {
		switch (k->code.sym) {
		case TERMKEY_SYM_ENTER: toggle_open(t); break;
		case TERMKEY_SYM_ESCAPE:
			if (t->open_task)
				t->open_task = 0;
			else if (t->group_open)
				t->group_open = false;
			else
				t->shown = false;
			build_rows(t);
			select_row(t, t->selected);
			break;
		case TERMKEY_SYM_UP: select_row(t, t->selected - 1); break;
		case TERMKEY_SYM_DOWN: select_row(t, t->selected + 1); break;
		case TERMKEY_SYM_PAGEUP: select_row(t, t->selected - page); break;
		case TERMKEY_SYM_PAGEDOWN: select_row(t, t->selected + page); break;
		case TERMKEY_SYM_HOME:
		case TERMKEY_SYM_FIND: select_row(t, 0); break;
		case TERMKEY_SYM_END:
		case TERMKEY_SYM_SELECT: select_row(t, (int32_t)t->nrows - 1); break;
		default: return false;
		}
		u->dirty = true;
		return true;
	}
	return false;
}
