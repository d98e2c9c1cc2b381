#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "grow.h"
#include "mem/procmaps.h"
#include "taskwatch.h"
#include "tasksview.h"
#include "stucktasks.h"
#include "theme.h"
#include "ui.h"

/* Reads of every task per second: a few, on their own thread. */
/* Rows drawn for one opened group, and levels of awaiters under a task. */
#define MAX_TASK_ROWS 500
#define MAX_AWAITER_DEPTH 16

enum row_kind { ROW_GROUP, ROW_PROC, ROW_TASK, ROW_FRAME, ROW_AWAITER, ROW_MORE };

struct trow {
	enum row_kind kind;
	uint32_t a;           /* group index, or task index */
	uint32_t b;           /* process (ROW_PROC); frame index within the task; depth for
				 awaiters */
};

/* A group as shown: its tasks in the processes the view shows. */
struct shown_group {
	uint32_t count, running, nprocs;
	uint64_t stuck_ns;
	bool stuck_before;
};

/* A task by identity across snapshots: its process and its address. */
struct task_key {
	pid_t pid;
	uint64_t id;
};

struct tasks_ui {
	struct task_snapshot *snap;
	uint32_t *by_id;       /* snapshot task indexes sorted by process, then id */
	uint32_t *order;       /* shown groups in display order */
	uint32_t norder;
	struct shown_group *shown_groups;   /* per snapshot group */
	uint32_t *proc_mark;   /* per snapshot process: the last group that counted it */
	int32_t filter;        /* the process filter (ui's proc) they were counted for */
	uint64_t filter_start_ns;
	bool by_count;         /* sort by task count; else by stuck time */
	int32_t selected, top;
	/* what is open, by identity so it survives refreshes */
	bool group_open;
	struct task_group open_group;
	uint32_t open_index;   /* the open group's index in this snapshot (rows built) */
	pid_t open_pid;        /* a process opened under the open group, or 0 */
	struct task_key open_task;
	struct trow *rows;
	uint32_t nrows, cap;
	/* what `watch` would report: the judge, and per task of the snapshot */
	struct stucktasks judge;
	bool judging;
	bool *stuck;
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
	free(t->shown_groups);
	free(t->proc_mark);
	free(t->rows);
	free(t->stuck);
	if (t->judging)
		stucktasks_free(&t->judge);
	free(t);
}

void
tasksview_open(struct ui *u)
{
	if (u->tasks)
		view_push(u, VIEW_TASKS);
}

/* ---- rows ---- */

/* How the groups are ordered: longest stuck, or most tasks, first. Stuck
 * times compare in whole seconds, as shown, and ties go by the point, so
 * that rows do not swap places between reads over nanoseconds. */
struct group_order {
	const struct shown_group *groups;
	const struct task_group *points;
	bool by_count;
};

static int
cmp_u64_desc(uint64_t x, uint64_t y)
{
	return x < y ? 1 : x > y ? -1 : 0;
}

static int
cmp_groups(const void *a, const void *b, void *ctx)
{
	const struct group_order *o = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct shown_group *x = &o->groups[i], *y = &o->groups[j];
	int by_stuck = cmp_u64_desc(x->stuck_ns / 1000000000u, y->stuck_ns / 1000000000u);
	int by_count = cmp_u64_desc(x->count, y->count);
	int c = o->by_count ? (by_count ? by_count : by_stuck) : (by_stuck ? by_stuck : by_count);
	if (c)
		return c;
	const struct task_group *p = &o->points[i], *q = &o->points[j];
	uint64_t kp = (uint64_t)p->func0 << 32 | p->func1, kq = (uint64_t)q->func0 << 32 | q->func1;
	if (kp != kq)
		return kp < kq ? -1 : 1;
	kp = (uint64_t)(uint32_t)p->line0 << 32 | (uint32_t)p->line1;
	kq = (uint64_t)(uint32_t)q->line0 << 32 | (uint32_t)q->line1;
	return kp < kq ? -1 : kp > kq;
}

static int
cmp_ids(const void *a, const void *b, void *ctx)
{
	const struct task_snapshot *snap = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (snap->task_proc[i] != snap->task_proc[j])
		return snap->task_proc[i] < snap->task_proc[j] ? -1 : 1;
	uint64_t x = snap->tasks.tasks[i].id, y = snap->tasks.tasks[j].id;
	return x < y ? -1 : x > y;
}

/* Task `id` of snapshot process `proc` (forked workers may hold tasks at
 * the same addresses), or -1. */
static int64_t
task_by_id(const struct tasks_ui *t, uint32_t proc, uint64_t id)
{
	const struct task_snapshot *s = t->snap;
	uint32_t lo = 0, hi = s->tasks.n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint32_t ti = t->by_id[mid];
		uint32_t p = s->task_proc[ti];
		uint64_t v = s->tasks.tasks[ti].id;
		if (p == proc && v == id)
			return ti;
		if (p < proc || (p == proc && v < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static struct task_key
key_of(const struct task_snapshot *s, uint32_t ti)
{
	return (struct task_key){s->procs[s->task_proc[ti]].pid, s->tasks.tasks[ti].id};
}

static bool
same_task(struct task_key a, struct task_key b)
{
	return a.id == b.id && a.pid == b.pid;
}

/* Is snapshot process p one the view shows (all, or the one selected)? */
static bool
proc_shown(const struct tasks_ui *t, uint32_t p)
{
	const struct task_proc *tp = &t->snap->procs[p];
	return t->filter < 0 ||
	       (tp->proc_index == (uint32_t)t->filter && tp->proc_start_ns == t->filter_start_ns);
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
	return a->func0 == b->func0 && a->func1 == b->func1 && a->line0 == b->line0 &&
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
		int64_t w = task_by_id(t, t->snap->task_proc[ti], ts->awaiters[task->first_awaiter + a]);
		if (w < 0 || (uint32_t)w == ti)
			continue;
		add_row(t, ROW_AWAITER, (uint32_t)w, depth + 1);
		add_task_detail(t, (uint32_t)w, depth + 1);
	}
}

/* The open group's tasks of one process (every shown one: p = UINT32_MAX). */
static void
add_task_rows(struct tasks_ui *t, uint32_t g, uint32_t p)
{
	const struct task_snapshot *s = t->snap;
	const struct task_group *grp = &s->groups[g];
	uint32_t rows = 0;
	for (uint32_t m = 0; m < grp->count; m++) {
		uint32_t ti = s->members[grp->first + m];
		uint32_t tp = s->task_proc[ti];
		if (p == UINT32_MAX ? !proc_shown(t, tp) : tp != p)
			continue;
		if (rows++ >= MAX_TASK_ROWS) {
			add_row(t, ROW_MORE, g, 0);
			t->rows[t->nrows - 1].b++;
			for (m++; m < grp->count; m++) {
				uint32_t tj = s->members[grp->first + m];
				uint32_t pj = s->task_proc[tj];
				if (p == UINT32_MAX ? proc_shown(t, pj) : pj == p)
					t->rows[t->nrows - 1].b++;
			}
			break;
		}
		add_row(t, ROW_TASK, ti, 0);
		if (same_task(key_of(s, ti), t->open_task))
			add_task_detail(t, ti, 0);
	}
}

/* An open group spread over processes lists them, longest stuck first
 * (the members' order), each opening to its tasks. */
static void
add_proc_rows(struct tasks_ui *t, uint32_t g)
{
	const struct task_snapshot *s = t->snap;
	const struct task_group *grp = &s->groups[g];
	for (uint32_t p = 0; p < s->nprocs; p++)
		t->proc_mark[p] = UINT32_MAX;
	for (uint32_t m = 0; m < grp->count; m++) {
		uint32_t tp = s->task_proc[s->members[grp->first + m]];
		if (!proc_shown(t, tp) || t->proc_mark[tp] == g)
			continue;
		t->proc_mark[tp] = g;
		add_row(t, ROW_PROC, g, tp);
		if (s->procs[tp].pid == t->open_pid)
			add_task_rows(t, g, tp);
	}
}

static void
build_rows(struct tasks_ui *t)
{
	t->nrows = 0;
	if (!t->snap)
		return;
	const struct task_snapshot *s = t->snap;
	for (uint32_t k = 0; k < t->norder; k++) {
		uint32_t g = t->order[k];
		add_row(t, ROW_GROUP, g, 0);
		if (!t->group_open || !same_group(&s->groups[g], &t->open_group))
			continue;
		t->open_index = g;
		if (t->shown_groups[g].nprocs > 1)
			add_proc_rows(t, g);
		else
			add_task_rows(t, g, UINT32_MAX);
	}
}

/* Count each group over the processes shown, and order those with tasks
 * there. */
static void
count_groups(struct tasks_ui *t)
{
	const struct task_snapshot *s = t->snap;
	t->norder = 0;
	for (uint32_t p = 0; p < s->nprocs; p++)
		t->proc_mark[p] = UINT32_MAX;
	for (uint32_t g = 0; g < s->ngroups; g++) {
		const struct task_group *grp = &s->groups[g];
		struct shown_group *v = &t->shown_groups[g];
		*v = (struct shown_group){0};
		/* members are longest stuck first: the first shown sets the stuck time */
		for (uint32_t m = 0; m < grp->count; m++) {
			uint32_t ti = s->members[grp->first + m];
			if (!proc_shown(t, s->task_proc[ti]))
				continue;
			if (!v->count) {
				v->stuck_ns = s->stuck_ns[ti];
				v->stuck_before = s->stuck_before[ti];
			}
			v->count++;
			v->running += s->tasks.tasks[ti].running;
			if (t->proc_mark[s->task_proc[ti]] != g) {
				t->proc_mark[s->task_proc[ti]] = g;
				v->nprocs++;
			}
		}
		if (v->count)
			t->order[t->norder++] = g;
	}
	struct group_order order = {t->shown_groups, t->snap->groups, t->by_count};
	qsort_r(t->order, t->norder, sizeof *t->order, cmp_groups, &order);
}

/* The process selection as the ui has it now: its index (-1: all) and
 * the start of the process at that index. */
static int32_t
ui_filter(const struct ui *u, uint64_t *start_ns)
{
	*start_ns = 0;
	if (u->proc >= 0 && (uint32_t)u->proc < procset_count(&u->s->sampler.procs)) {
		const struct proc_info *p = procset_at(&u->s->sampler.procs, (uint32_t)u->proc);
		*start_ns = p ? p->start_ns : 0;
	}
	return u->proc;
}

static void
read_filter(struct tasks_ui *t, const struct ui *u)
{
	t->filter = ui_filter(u, &t->filter_start_ns);
}

/* What the selection points at, to find it again in new rows. */
struct selection {
	enum row_kind kind;
	struct task_group group;
	pid_t pid;
	struct task_key task;
	bool have;
};

static struct selection
remember_selection(const struct tasks_ui *t)
{
	struct selection sel = {0};
	if (!t->snap || t->selected < 0 || (uint32_t)t->selected >= t->nrows)
		return sel;
	const struct trow *r = &t->rows[t->selected];
	sel.kind = r->kind;
	if (r->kind == ROW_GROUP) {
		sel.group = t->snap->groups[r->a];
		sel.have = true;
	} else if (r->kind == ROW_PROC) {
		sel.group = t->snap->groups[r->a];
		sel.pid = t->snap->procs[r->b].pid;
		sel.have = true;
	} else if (r->kind == ROW_TASK) {
		sel.task = key_of(t->snap, r->a);
		sel.have = true;
	}
	return sel;
}

static void
restore_selection(struct tasks_ui *t, const struct selection *sel)
{
	const struct task_snapshot *s = t->snap;
	for (uint32_t i = 0; sel->have && i < t->nrows; i++) {
		const struct trow *r = &t->rows[i];
		if (r->kind != sel->kind)
			continue;
		if ((r->kind == ROW_GROUP && same_group(&s->groups[r->a], &sel->group)) ||
		    (r->kind == ROW_PROC && same_group(&s->groups[r->a], &sel->group) &&
		     s->procs[r->b].pid == sel->pid) ||
		    (r->kind == ROW_TASK && same_task(key_of(s, r->a), sel->task))) {
			t->selected = (int32_t)i;
			break;
		}
	}
	if (t->selected >= (int32_t)t->nrows)
		t->selected = t->nrows ? (int32_t)t->nrows - 1 : 0;
}

/* Rows again after the snapshot or the process filter changed. */
static void
rebuild(struct tasks_ui *t, const struct selection *sel)
{
	count_groups(t);
	build_rows(t);
	restore_selection(t, sel);
}

/* Which tasks `watch` would report stuck, by its rules and --stuck. */
static void
judge(struct tasks_ui *t, const struct ui *u, const struct task_snapshot *s)
{
	if (!t->judging) {
		stucktasks_init(&t->judge, (uint64_t)(u->opt->stuck_s * 1e9));
		t->judging = true;
	}
	free(t->stuck);
	t->stuck = calloc(s->tasks.n + 1, sizeof *t->stuck);
	stucktasks_learn(&t->judge, s);
	for (uint32_t i = 0; t->stuck && i < s->tasks.n; i++)
		t->stuck[i] = stucktasks_stuck(&t->judge, s, i);
}

/* Is any task of group g stuck (as watch would report it)? */
static bool
group_stuck(const struct tasks_ui *t, const struct task_group *g)
{
	for (uint32_t m = 0; t->stuck && m < g->count; m++)
		if (t->stuck[t->snap->members[g->first + m]])
			return true;
	return false;
}

static void
take_snapshot(struct tasks_ui *t, const struct ui *u, struct task_snapshot *s)
{
	struct selection sel = remember_selection(t);
	task_snapshot_free(t->snap);
	free(t->by_id);
	free(t->order);
	free(t->shown_groups);
	free(t->proc_mark);
	t->snap = s;
	t->by_id = malloc((s->tasks.n + 1) * sizeof *t->by_id);
	t->order = malloc((s->ngroups + 1) * sizeof *t->order);
	t->shown_groups = malloc((s->ngroups + 1) * sizeof *t->shown_groups);
	t->proc_mark = malloc((s->nprocs + 1) * sizeof *t->proc_mark);
	if (!t->by_id || !t->order || !t->shown_groups || !t->proc_mark) {
		task_snapshot_free(t->snap);
		t->snap = NULL;
		t->nrows = t->norder = 0;
		return;
	}
	for (uint32_t i = 0; i < s->tasks.n; i++)
		t->by_id[i] = i;
	qsort_r(t->by_id, s->tasks.n, sizeof *t->by_id, cmp_ids, (void *)s);
	judge(t, u, s);
	read_filter(t, u);
	rebuild(t, &sel);
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
	take_snapshot(t, u, s);
	if (view_top(u) == VIEW_TASKS)
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
func_name(const struct task_snapshot *s, uint32_t func)
{
	const char *q = intern_func_at(s->funcs, func)->qualname;
	return q ? q : "?";
}

static const char *
func_file(const struct task_snapshot *s, uint32_t func)
{
	const char *f = intern_func_at(s->funcs, func)->filename;
	return f ? f : "?";
}

static void
frame_text(const struct task_snapshot *s, uint32_t func, int line, char *buf, size_t len)
{
	snprintf(buf, len, "%s (%s:%d)", func_name(s, func), procmaps_basename(func_file(s, func)),
		 line);
}

/* "Queue.get ← worker (app.py:33)": where the tasks wait, and in what. */
static void
group_label(const struct task_snapshot *s, const struct task_group *g, char *buf, size_t len)
{
	if (!g->func0) {
		bool greenlet = g->count && s->tasks.tasks[s->members[g->first]].kind == TASK_GREENLET;
		snprintf(buf, len, "%s", greenlet ? "(running: its stack is its thread's)"
						  : "(no coroutine frame: done or not started)");
		return;
	}
	if (!g->func1) {
		frame_text(s, g->func0, g->line0, buf, len);
		return;
	}
	char caller[1024];
	frame_text(s, g->func1, g->line1, caller, sizeof caller);
	snprintf(buf, len, "%s \xe2\x86\x90 %s", func_name(s, g->func0), caller);
}

/* "8 greenlets (Greenlet)": greenlets have no names of their own, only
 * their class's. */
static bool
greenlet_names(const struct tasks_ui *tu, const struct task_group *g, char *buf, size_t len)
{
	const struct task_snapshot *s = tu->snap;
	uint32_t n = 0;
	const char *kinds[3] = {0};
	for (uint32_t m = 0; m < g->count; m++) {
		uint32_t ti = s->members[g->first + m];
		const struct tt_task *t = &s->tasks.tasks[ti];
		if (t->kind != TASK_GREENLET)
			return false;
		if (!proc_shown(tu, s->task_proc[ti]))
			continue;
		n++;
		const char *name = tt_task_name(&s->tasks, t);
		for (int k = 0; k < 3; k++) {
			if (!kinds[k])
				kinds[k] = name;
			if (strcmp(kinds[k], name) == 0)
				break;
		}
	}
	snprintf(buf, len, "%u greenlet%s (%s%s%s%s%s)", n, n == 1 ? "" : "s", kinds[0] ? kinds[0] : "",
		 kinds[1] ? ", " : "", kinds[1] ? kinds[1] : "", kinds[2] ? ", " : "",
		 kinds[2] ? kinds[2] : "");
	return true;
}

static void
group_names(const struct tasks_ui *tu, const struct task_group *g, char *buf, size_t len)
{
	const struct task_snapshot *s = tu->snap;
	size_t at = 0;
	buf[0] = '\0';
	if (greenlet_names(tu, g, buf, len))
		return;
	for (uint32_t m = 0, named = 0; m < g->count && at + 8 < len; m++) {
		uint32_t ti = s->members[g->first + m];
		if (!proc_shown(tu, s->task_proc[ti]))
			continue;
		const struct tt_task *t = &s->tasks.tasks[ti];
		int n = snprintf(buf + at, len - at, "%s%s", named ? ", " : "",
				 tt_task_name(&s->tasks, t));
		if (n < 0 || (size_t)n >= len - at) {
			buf[at] = '\0';
			break;
		}
		at += (size_t)n;
		if (++named > 12 && m + 1 < g->count) {
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
	/* rows under a process row go one step further in */
	int deep = t->group_open && t->open_index < s->ngroups &&
			   t->shown_groups[t->open_index].nprocs > 1 ? 4 : 0;
	if (selected)
		draw_bar(y, attr);
	switch (r->kind) {
	case ROW_GROUP: {
		const struct task_group *g = &s->groups[r->a];
		const struct shown_group *v = &t->shown_groups[r->a];
		bool open = t->group_open && same_group(g, &t->open_group);
		format_age(v->stuck_ns, v->stuck_before, age, sizeof age);
		char head[96], procs[16] = "";
		if (s->nprocs > 1)
			snprintf(procs, sizeof procs, " %5u", v->nprocs);
		snprintf(head, sizeof head, "%s%7u%s %5u %8s  ",
			 open ? "\xe2\x96\xbe" : "\xe2\x96\xb8", v->count, procs, v->running, age);
		int x = draw_text(y, 0, COLS, head, attr);
		if (group_stuck(t, g))
			x += draw_text(y, x, COLS - x, "STUCK ", selected ? attr
									 : theme_attr(ROLE_WARNING));
		char label[1200];
		group_label(s, g, label, sizeof label);
		int lw = (COLS - x) * 60 / 100;
		int used = draw_text(y, x, lw, label, selected ? attr : theme_attr(ROLE_FUNCTION));
		x += (used < lw ? used : lw) + 2;
		group_names(t, g, text, sizeof text);
		draw_text(y, x, COLS - x, text, selected ? attr : theme_attr(ROLE_DIM));
		break;
	}
	case ROW_PROC: {
		const struct task_group *g = &s->groups[r->a];
		const struct task_proc *p = &s->procs[r->b];
		uint32_t n = 0;
		uint64_t stuck = 0;
		bool before = false;
		for (uint32_t m = 0; m < g->count; m++) {
			uint32_t ti = s->members[g->first + m];
			if (s->task_proc[ti] != r->b)
				continue;
			if (!n++) {
				stuck = s->stuck_ns[ti];
				before = s->stuck_before[ti];
			}
		}
		format_age(stuck, before, age, sizeof age);
		snprintf(text, sizeof text, "    %s process %d: %u task%s here, longest unchanged %s",
			 p->pid == t->open_pid ? "\xe2\x96\xbe" : "\xe2\x96\xb8", (int)p->pid, n,
			 n == 1 ? "" : "s", age);
		draw_text(y, 0, COLS, text, selected ? attr : theme_attr(ROLE_HEADER));
		break;
	}
	case ROW_TASK: {
		const struct tt_task *task = &s->tasks.tasks[r->a];
		const struct task_proc *p = &s->procs[s->task_proc[r->a]];
		format_age(s->stuck_ns[r->a], s->stuck_before[r->a], age, sizeof age);
		char where[48] = "";
		if (s->nprocs > 1)
			snprintf(where, sizeof where, "process %d, ", (int)p->pid);
		/* under a process row, one step further in */
		char what[64];
		if (task->kind == TASK_GREENLET && task->thread)
			snprintf(what, sizeof what, "greenlet%s%s, thread %llu", task->hub ? ", hub" : "",
				 task->main_greenlet ? ", main" : "", (unsigned long long)task->thread);
		else if (task->kind == TASK_GREENLET)
			snprintf(what, sizeof what, "greenlet%s%s", task->hub ? ", hub" : "",
				 task->main_greenlet ? ", main" : "");
		else
			snprintf(what, sizeof what, "thread %llu", (unsigned long long)task->thread);
		snprintf(text, sizeof text, "%*s%s %s [0x%llx] %s%s, %s, unchanged %s",
			 4 + deep, "", same_task(key_of(s, r->a), t->open_task) ? "\xe2\x96\xbe" : "\xe2\x96\xb8",
			 tt_task_name(&s->tasks, task), (unsigned long long)task->id, where, what,
			 task->running ? "running" : "suspended", age);
		int used = draw_text(y, 0, COLS, text, attr);
		if (t->stuck && t->stuck[r->a])
			draw_text(y, used, COLS - used, "  STUCK", selected ? attr
								 : theme_attr(ROLE_WARNING));
		break;
	}
	case ROW_FRAME: {
		const struct tt_task *task = &s->tasks.tasks[r->a];
		uint32_t f = r->b & 0xffff, depth = r->b >> 16;
		const struct tt_frame *fr = &s->tasks.frames[task->first_frame + f];
		uint32_t func = s->frame_func[task->first_frame + f];
		snprintf(text, sizeof text, "%*s%s (%s:%d)", (int)(8 + deep + 4 * depth), "",
			 func_name(s, func), func_file(s, func), fr->line);
		draw_text(y, 0, COLS, text, selected ? attr : theme_attr(ROLE_FILE));
		break;
	}
	case ROW_AWAITER: {
		const struct tt_task *task = &s->tasks.tasks[r->a];
		snprintf(text, sizeof text, "%*s\xe2\x86\x91 %s %s [0x%llx]",
			 (int)(4 + deep + 4 * r->b), "",
			 task->kind == TASK_GREENLET ? "parent" : "awaited by",
			 tt_task_name(&s->tasks, task), (unsigned long long)task->id);
		draw_text(y, 0, COLS, text, selected ? attr : theme_attr(ROLE_HEADER));
		break;
	}
	case ROW_MORE:
		snprintf(text, sizeof text, "%*s... %u more tasks here", 4 + deep, "", r->b);
		draw_text(y, 0, COLS, text, theme_attr(ROLE_DIM));
		break;
	}
}

static void
tasksview_draw(struct ui *u, int y, int h)
{
	struct tasks_ui *t = u->tasks;
	const struct task_snapshot *s = t->snap;
	char title[400], err[512] = "";
	if (u->s->watching_tasks)
		taskwatch_error(&u->s->tasks, err, sizeof err);
	else
		snprintf(err, sizeof err, "  cannot read tasks: %s",
			 u->s->tasks_error[0] ? u->s->tasks_error : "not started");
	/* The process selection ([ / ]) may have moved since the rows were made. */
	uint64_t start_ns;
	if (s && (ui_filter(u, &start_ns) != t->filter || start_ns != t->filter_start_ns)) {
		struct selection sel = remember_selection(t);
		read_filter(t, u);
		rebuild(t, &sel);
	}
	uint32_t shown = 0;
	for (uint32_t k = 0; s && k < t->norder; k++)
		shown += t->shown_groups[t->order[k]].count;
	if (!s) {
		snprintf(title, sizeof title, " asyncio tasks  (reading\xe2\x80\xa6) ");
	} else if (s->tasks.state == TASKS_UNSUPPORTED) {
		snprintf(title, sizeof title, " asyncio tasks  (not readable in this Python) ");
	} else {
		/* Many tasks stretch the interval (taskwatch.h): say how often. */
		char every[48], where[96] = "";
		if (s->next_in_ns <= TASKWATCH_INTERVAL_NS)
			snprintf(every, sizeof every, ", 4 times a second");
		else
			snprintf(every, sizeof every, ", every %.1f s", (double)s->next_in_ns / 1e9);
		if (t->filter >= 0)
			snprintf(where, sizeof where, " of process %d",
				 (int)procset_at(&u->s->sampler.procs, (uint32_t)t->filter)->pid);
		if (t->filter < 0 && s->nprocs > 1) {
			uint32_t holding = 0;
			for (uint32_t p = 0; p < s->nprocs; p++)
				holding += s->procs[p].ntasks > 0;
			snprintf(where, sizeof where, " in %u process%s", holding,
				 holding == 1 ? "" : "es");
		}
		snprintf(title, sizeof title,
			 " %s  %u %s%s at %u points, sorted by %s (s)  read %.1f ms%s%s ",
			 s->tasks.ngreenlets ? "asyncio tasks and greenlets" : "asyncio tasks", shown,
			 s->tasks.ngreenlets == s->tasks.n ? "greenlets" : "tasks", where, t->norder, t->by_count ? "count" : "stuck time", s->read_ms,
			 every, s->tasks.lost ? "  (some changed while read)" : "");
	}
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, title, theme_attr(ROLE_BORDER));
	y++;
	draw_bar(y, theme_attr(ROLE_TABLE_HEADER));
	const char *procs = s && s->nprocs > 1 ? " PROCS" : "";
	char columns[128];
	/* the sort mark before the sorted label, as in the function table,
	 * so that every label ends over its column */
	snprintf(columns, sizeof columns, t->by_count ? "  \xe2\x96\xbcTASKS%s   RUN    STUCK  SUSPENDED AT"
						     : "   TASKS%s   RUN   STUCK\xe2\x96\xbc  SUSPENDED AT",
		 procs);
	draw_text(y, 0, COLS, columns, theme_attr(ROLE_TABLE_HEADER));
	y++;
	/* A greenlet this build cannot read: said, whatever else is there. */
	const char *note = NULL;
	for (uint32_t p = 0; s && p < s->nprocs && !note; p++)
		if (s->procs[p].greenlets_note[0] && proc_shown(t, p))
			note = s->procs[p].greenlets_note;
	if (note && h > 1) {
		char line[512];
		snprintf(line, sizeof line, "  %s", note);
		draw_text(y++, 0, COLS, line, theme_attr(ROLE_ERROR));
		h--;
	}
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
	else if (t->norder == 0)
		empty = "  no asyncio tasks in this process right now";
	if (empty && (!s || t->nrows == 0)) {
		draw_text(y, 0, COLS, empty, theme_attr(err[0] ? ROLE_ERROR : ROLE_DIM));
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
	t->selected = list_row_in(to, t->nrows);
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
			t->open_pid = 0;
			t->open_task = (struct task_key){0};
		}
	} else if (r.kind == ROW_PROC) {
		pid_t pid = t->snap->procs[r.b].pid;
		t->open_pid = t->open_pid == pid ? 0 : pid;
		t->open_task = (struct task_key){0};
	} else if (r.kind == ROW_TASK) {
		struct task_key k = key_of(t->snap, r.a);
		t->open_task = same_task(t->open_task, k) ? (struct task_key){0} : k;
	} else {
		return;
	}
	build_rows(t);
	select_row(t, t->selected);
}

static void
tasksview_status(struct ui *u, char *buf, size_t len)
{
	(void)u;
	snprintf(buf, len, " ↑/↓ PgUp/PgDn Home/End: move  Enter: open/close  s: sort by tasks/stuck  "
		 "[ ]: one process  Esc or T: back  h help  q quit");
}

static enum view_key
tasksview_key(struct ui *u, const TermKeyKey *k)
{
	struct tasks_ui *t = u->tasks;
	bool ctrl = k->modifiers & TERMKEY_KEYMOD_CTRL;
	if (k->type == TERMKEY_TYPE_UNICODE && !ctrl && k->code.codepoint == 'T') {
		view_pop(u);
		return VIEW_KEY_USED;
	}
	int32_t page = views_table_height(u);
	if (k->type == TERMKEY_TYPE_UNICODE && !ctrl) {
		switch (k->code.codepoint) {
		case 's': case 'S':
			t->by_count = !t->by_count;
			if (t->snap) {
				struct group_order order = {t->shown_groups, t->snap->groups, t->by_count};
				qsort_r(t->order, t->norder, sizeof *t->order, cmp_groups, &order);
				build_rows(t);
			}
			break;
		case 'j': select_row(t, t->selected + 1); break;
		case 'k': select_row(t, t->selected - 1); break;
		case 'g': select_row(t, 0); break;
		case 'G': select_row(t, (int32_t)t->nrows - 1); break;
		/* the call tree and flame graph wait until this view is closed */
		case 'v': case 'f': return VIEW_KEY_USED;
		default: return VIEW_KEY_UNUSED;   /* q, h, p and the rest as everywhere */
		}
		u->dirty = true;
		return VIEW_KEY_USED;
	}
	if (k->type == TERMKEY_TYPE_KEYSYM) {
		switch (k->code.sym) {
		case TERMKEY_SYM_ENTER: toggle_open(t); break;
		case TERMKEY_SYM_ESCAPE:
			if (t->open_task.id)
				t->open_task = (struct task_key){0};
			else if (t->open_pid)
				t->open_pid = 0;
			else if (t->group_open)
				t->group_open = false;
			else
				view_pop(u);
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
		default: return VIEW_KEY_UNUSED;
		}
		u->dirty = true;
		return VIEW_KEY_USED;
	}
	/* F5, the call tree's other key, waits as v and f do */
	if (k->type == TERMKEY_TYPE_FUNCTION && k->code.number == 5)
		return VIEW_KEY_USED;
	return VIEW_KEY_UNUSED;
}

static const char *const tasksview_help[][2] = {
	{"T", "asyncio tasks, greenlets"},
};

const struct view_ops tasksview_ops = {
	.name = "asyncio tasks and greenlets",
	.draw = tasksview_draw,
	.key = tasksview_key,
	.status = tasksview_status,
	.help = tasksview_help,
	.nhelp = sizeof tasksview_help / sizeof tasksview_help[0],
};
