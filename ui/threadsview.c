#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frameview.h"
#include "grow.h"
#include "waitwatch.h"
#include "sanitize.h"
#include "theme.h"
#include "threadsview.h"
#include "ui.h"
#include "walk/sample.h"
#include "order.h"

/* What a thread does now, by its last sample and the kernel: blocked in a
 * call (the kernel watcher knows), holding the GIL, on a CPU, waiting for
 * the GIL, none of these, or it has ended. */
enum thread_now { THREAD_BLOCKED, THREAD_GIL, THREAD_ON_CPU, THREAD_GIL_WAIT, THREAD_IDLE,
		  THREAD_EXITED, THREAD_NOW_COUNT };

/* A thread that ended keeps its row this long, marked exited. */
#define THREADS_SHOW_GONE_NS 2000000000ull

static const char *const now_names[THREAD_NOW_COUNT] = {"blocked", "GIL", "on CPU",
							 "waiting for GIL", "idle", "exited"};

static uint64_t
view_now(const struct ui *u)
{
	return u->finished ? u->finished_ns : clock_now_ns();
}

/* When slot i's thread ended, in ns since the slot epoch; 0 while alive. */
static uint64_t
thread_gone(const struct ui *u, uint32_t i)
{
	const struct thread_slot *ts = procset_slot(&u->s->sampler.procs, i);
	return atomic_load_explicit(&((struct thread_slot *)ts)->gone_ns, memory_order_acquire);
}

/* Seen, of the process shown (if one is), and alive or ended a moment ago:
 * a thread's samples stay in the totals until they are folded (10 s), but
 * under thread churn rows of threads long gone would crowd out the live
 * ones. */
bool
threads_shown(const struct ui *u, uint32_t i)
{
	if (!u->agg.threads[i].seen)
		return false;
	uint64_t gone = thread_gone(u, i);
	if (gone && view_now(u) - u->s->sampler.procs.epoch_ns > gone + THREADS_SHOW_GONE_NS)
		return false;
	return u->proc < 0 ||
	       procset_slot(&u->s->sampler.procs, i)->proc == (uint32_t)u->proc;
}

/* The kernel's view of the thread of slot i, or NULL (running, unknown). */
static const struct waitwatch_entry *
thread_kwait(const struct ui *u, uint32_t i)
{
	const struct thread_slot *ts = procset_slot(&u->s->sampler.procs, i);
	/* A thread no task is known to be has no kernel state: never another's. */
	return ts->tid_unknown ? NULL : waitwatch_find(u->kw, ts->native_tid);
}

static enum thread_now
thread_now(const struct ui *u, uint32_t i)
{
	if (thread_gone(u, i))
		return THREAD_EXITED;
	uint8_t st = u->agg.threads[i].last_state;
	return thread_kwait(u, i)	 ? THREAD_BLOCKED
	       : (st & TT_THREAD_GIL)	 ? THREAD_GIL
	       : (st & (TT_THREAD_RUNNABLE | TT_THREAD_ON_CPU)) ? THREAD_ON_CPU
	       : (st & TT_THREAD_GIL_WAIT) ? THREAD_GIL_WAIT
					   : THREAD_IDLE;
}

static const char *
thread_name(const struct ui *u, uint32_t i)
{
	const struct thread_slot *ts = procset_slot(&u->s->sampler.procs, i);
	return atomic_load_explicit(&((struct thread_slot *)ts)->name, memory_order_acquire);
}

/* Samples in the scope shown that were not idle; the session's break ties
 * before the first refresh window closes. */
static uint64_t
thread_busy(const struct ui *u, uint32_t i, bool session)
{
	const struct agg_thread *t = &u->agg.threads[i];
	if (session)
		return t->samples[AGG_SESSION] - t->idle[AGG_SESSION] + t->cur_samples - t->cur_idle;
	return t->samples[u->scope] - t->idle[u->scope];
}

/* Live threads of every process by what they do now; returns their sum. */
static uint32_t
threads_count_now(const struct ui *u, uint32_t counts[THREAD_NOW_COUNT])
{
	uint32_t n = 0;
	memset(counts, 0, THREAD_NOW_COUNT * sizeof *counts);
	for (uint32_t i = 0; i < u->agg.nthreads; i++) {
		if (!u->agg.threads[i].seen)
			continue;
		enum thread_now what = thread_now(u, i);
		if (what != THREAD_EXITED) {
			counts[what]++;
			n++;
		}
	}
	return n;
}

void
threads_format_now(const struct ui *u, char *buf, size_t len)
{
	uint32_t counts[THREAD_NOW_COUNT];
	int n = snprintf(buf, len, "threads %u", threads_count_now(u, counts));
	/* The states some thread is in, the GIL holder first. */
	static const enum thread_now order[] = {THREAD_GIL, THREAD_ON_CPU, THREAD_GIL_WAIT,
						THREAD_BLOCKED, THREAD_IDLE};
	const char *sep = ": ";
	for (size_t k = 0; k < sizeof order / sizeof order[0] && n > 0 && (size_t)n < len; k++) {
		if (!counts[order[k]])
			continue;
		n += snprintf(buf + n, len - (size_t)n, "%s%u %s", sep, counts[order[k]],
			      now_names[order[k]]);
		sep = ", ";
	}
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "   ");
}

/* ---------------------------------------------------------------------
 * One thread's row, shared by the panel and the view
 * ------------------------------------------------------------------- */

/* Threads of several processes: a PID column. */
static bool
pid_column(const struct ui *u)
{
	return u->proc < 0 && procset_count(&u->s->sampler.procs) > 1;
}

/* The NAME column: as wide as the longest name of a thread with samples
 * (a pool's "ThreadPoolExecutor-0_12" told from "...-0_1"), from 17 to
 * NAME_COLUMN_MAX columns, and never more than a fifth of the screen. */
#define NAME_COLUMN_MIN 17
#define NAME_COLUMN_MAX 32

static int
name_column(const struct ui *u)
{
	int w = NAME_COLUMN_MIN, most = COLS / 5 > NAME_COLUMN_MIN ? COLS / 5 : NAME_COLUMN_MIN;
	if (most > NAME_COLUMN_MAX)
		most = NAME_COLUMN_MAX;
	for (uint32_t i = 0; i < u->agg.nthreads && w < most; i++) {
		const char *name = u->agg.threads[i].seen ? thread_name(u, i) : NULL;
		char safe[256];
		if (!name)
			continue;
		sanitize_for_terminal(name, safe, sizeof safe);
		int n = draw_text_width(safe, strlen(safe)) + 1;
		if (n > w)
			w = n < most ? n : most;
	}
	return w;
}

static void
draw_heading(const struct ui *u, int y, int name_w)
{
	move(y, 0);
	clrtoeol();
	draw_bar(y, theme_attr(ROLE_TABLE_HEADER));
	int px = pid_column(u) ? 8 : 0;
	if (px)
		draw_text(y, 0, COLS, "  PID", theme_attr(ROLE_TABLE_HEADER));
	char heading[160];
	snprintf(heading, sizeof heading, "  TID        %-*s SAMPLES   GIL%%  WAIT%%   CPU%%  IDLE%%  NOW",
		 name_w, "NAME");
	draw_text(y, px, COLS - px, heading, theme_attr(ROLE_TABLE_HEADER));
}

/* Slot i's row at y: `cursor` draws it selected, `marked` puts '>' before
 * it (the thread whose functions the table shows). */
static void
draw_row(struct ui *u, int y, uint32_t i, bool cursor, bool marked, uint64_t now, int name_w)
{
	const struct agg_thread *t = &u->agg.threads[i];
	const struct thread_slot *ts = procset_slot(&u->s->sampler.procs, i);
	const char *name = thread_name(u, i);
	bool pids = pid_column(u);
	int px = pids ? 8 : 0;
	int base = cursor ? theme_attr(ROLE_SELECTED) : theme_attr(ROLE_DEFAULT);
	move(y, 0);
	clrtoeol();
	if (cursor)
		draw_bar(y, base);
	char buf[256], cnt[32];
	int sc = u->scope;
	uint64_t n = t->samples[sc];
	live_format_count((double)n, cnt, sizeof cnt);
	int x = 0;
	if (pids) {
		snprintf(buf, sizeof buf, "%c %-6d", marked ? '>' : ' ',
			 (int)procset_at(&u->s->sampler.procs, ts->proc)->pid);
		draw_text(y, 0, COLS, buf, base);
		x = px;
	}
	snprintf(buf, sizeof buf, "%c %-10llu", marked && !pids ? '>' : ' ',
		 (unsigned long long)ts->native_tid);
	x += draw_text(y, x, COLS - x, buf, base);
	x += draw_text(y, x, name_w - 1, name ? name : "?", base);
	x = px + 12 + name_w;
	snprintf(buf, sizeof buf, "%8s ", cnt);
	x += draw_text(y, x, COLS - x, buf, base);
	double g = ui_pct(t->gil[sc], n), w = ui_pct(t->gil_wait[sc], n), c = ui_pct(t->on_cpu[sc], n),
	       idle = ui_pct(t->idle[sc], n);
	snprintf(buf, sizeof buf, "%6.1f ", g);
	x += draw_text(y, x, COLS - x, buf, cursor ? base : theme_attr(ROLE_GIL));
	if (u->s->target.layout.has_tstate_gil)
		snprintf(buf, sizeof buf, "%6.1f ", w);
	else
		snprintf(buf, sizeof buf, "%6s ", "-");
	x += draw_text(y, x, COLS - x, buf, cursor ? base : theme_attr(ROLE_GIL_WAIT));
	snprintf(buf, sizeof buf, "%6.1f ", c);
	x += draw_text(y, x, COLS - x, buf, cursor ? base : theme_attr(ROLE_ON_CPU));
	snprintf(buf, sizeof buf, "%6.1f  ", idle);
	x += draw_text(y, x, COLS - x, buf, cursor ? base : theme_attr(ROLE_IDLE));
	/* Where the thread is now: its innermost function and state, and
	 * for a thread blocked in the kernel, the call and its object
	 * (cut to fit; the whole text is in the title when selected). */
	const struct waitwatch_entry *kw = thread_gone(u, i) ? NULL : thread_kwait(u, i);
	char kbuf[2 * KWAIT_OBJECT_MAX] = "";
	if (kw)
		kwait_format_short(&kw->info, waitwatch_seconds(kw, now), kbuf, sizeof kbuf);
	int32_t line = -1;
	uint32_t f = agg_innermost_python_func(&u->agg, t->last_stack, &line);
	if (f != UINT32_MAX)
		agg_func_at_line(&u->agg.funcs[f], line, buf, sizeof buf);
	else
		snprintf(buf, sizeof buf, "(no Python frames)");
	/* Blocked: the Python line takes at most half, the call the rest. */
	int py_w = COLS - x;
	if (kw && (int)strlen(buf) < py_w / 2)
		py_w = (int)strlen(buf);
	else if (kw)
		py_w /= 2;
	int used = 0;
	/* what `watch` would report of it, first: a cut line keeps it */
	uint64_t sample_now = view_now(u) - u->s->sampler.start_ns;
	enum stuck_kind stuck = thread_gone(u, i) ? STUCK_NONE
				: stuckwatch_state(&u->stuck, i, sample_now);
	if (stuck != STUCK_NONE) {
		static const char *const marks[] = {[STUCK_PLACE] = "STUCK", [STUCK_LOOP] =
						    "LOOP BLOCKED", [STUCK_SPIN] = "SPINNING"};
		char mark[64], age[32];
		live_format_duration((double)(sample_now - stuckwatch_since(&u->stuck.threads[i],
									     stuck)) / 1e9,
				     age, sizeof age);
		snprintf(mark, sizeof mark, "%s %s ", marks[stuck], age);
		used = draw_text(y, x, py_w, mark, cursor ? base : theme_attr(ROLE_WARNING));
		x += used;
		py_w -= used;
		used = 0;
	}
	if (f != UINT32_MAX) {
		enum thread_now what = thread_now(u, i);
		char state[32] = ""; /* blocked: the call says it */
		if (what != THREAD_BLOCKED)
			snprintf(state, sizeof state, " [%s]", what == THREAD_ON_CPU ? "CPU" : now_names[what]);
		used = draw_text(y, x, py_w - (int)strlen(state), buf,
				    cursor ? base : theme_attr(ROLE_FUNCTION));
		used += draw_text(y, x + used, COLS - x - used, state,
				     cursor ? base : theme_attr(ROLE_DIM));
	} else {
		used = draw_text(y, x, py_w, buf, cursor ? base : theme_attr(ROLE_DIM));
	}
	if (kw) {
		used += 2;
		draw_text(y, x + used, COLS - x - used, kbuf, cursor ? base : theme_attr(ROLE_FILE));
	}
}

/* ---------------------------------------------------------------------
 * The panel
 * ------------------------------------------------------------------- */

int
threads_panel_height(const struct ui *u)
{
	if (!u->show_threads || view_stacked(u, VIEW_THREADS))
		return 0;
	uint32_t n = 0;
	for (uint32_t i = 0; i < u->agg.nthreads; i++)
		n += threads_shown(u, i);
	int max = (LINES - 8) / 3;
	int want = (int)n + 1 + 1; /* title, heading */
	return want < max ? want : (max > 3 ? max : 3);
}

struct thread_rank {
	uint32_t slot;
	double blocked;    /* seconds, -1 when not blocked */
};

static int
cmp_blocked_longest(const void *a, const void *b)
{
	const struct thread_rank *x = a, *y = b;
	if (x->blocked != y->blocked)
		return x->blocked < y->blocked ? 1 : -1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The seen threads in panel order (slot order, or blocked longest first
 * with `b`). Returns how many; *out is malloc'ed (NULL when none). */
static uint32_t
panel_order(const struct ui *u, uint32_t **out)
{
	*out = NULL;
	struct thread_rank *r = malloc((u->agg.nthreads ? u->agg.nthreads : 1) * sizeof *r);
	uint32_t *order = malloc((u->agg.nthreads ? u->agg.nthreads : 1) * sizeof *order);
	if (!r || !order) {
		free(r);
		free(order);
		return 0;
	}
	uint64_t now = view_now(u);
	uint32_t n = 0;
	for (uint32_t i = 0; i < u->agg.nthreads; i++) {
		if (!threads_shown(u, i))
			continue;
		const struct waitwatch_entry *e = u->sort_blocked ? thread_kwait(u, i) : NULL;
		r[n].slot = i;
		r[n].blocked = e ? waitwatch_seconds(e, now) : -1;
		n++;
	}
	if (u->sort_blocked)
		order_sort(r, n, sizeof *r, cmp_blocked_longest);
	for (uint32_t k = 0; k < n; k++)
		order[k] = r[k].slot;
	free(r);
	*out = order;
	return n;
}

/* Which threads the panel shows when not all fit in `rows`: the selected
 * one, then the busiest (fewest idle samples) or, sorted blocked longest
 * first, the first ones in that order; one row is kept for the "+N more"
 * marker. Returns how many are hidden. */
static uint32_t
pick_threads(const struct ui *u, const uint32_t *order, uint32_t norder, int rows, bool *shown)
{
	for (uint32_t i = 0; i < u->agg.nthreads; i++)
		shown[i] = false;
	int room = (int)norder <= rows ? rows : rows - 1;
	if (room < 1)
		room = 1;
	uint32_t taken = 0;
	if (u->slot >= 0 && (uint32_t)u->slot < u->agg.nthreads && u->agg.threads[u->slot].seen) {
		shown[u->slot] = true;
		taken++;
	}
	while (taken < (uint32_t)room && taken < norder) {
		uint32_t best = UINT32_MAX;
		uint64_t best_busy = 0, best_all = 0;
		for (uint32_t k = 0; k < norder; k++) {
			uint32_t i = order[k];
			if (shown[i])
				continue;
			if (u->sort_blocked) {
				best = i;
				break;
			}
			uint64_t busy = thread_busy(u, i, false), busy_all = thread_busy(u, i, true);
			if (best == UINT32_MAX || busy > best_busy ||
			    (busy == best_busy && busy_all > best_all))
				best = i, best_busy = busy, best_all = busy_all;
		}
		if (best == UINT32_MAX)
			break;
		shown[best] = true;
		taken++;
	}
	return norder - taken;
}

int
threads_panel_draw(struct ui *u, int y, int height)
{
	uint64_t now = view_now(u);
	int rows = height - 2, shown = 0;
	uint32_t *order;
	uint32_t norder = panel_order(u, &order);
	bool *visible = calloc(u->agg.nthreads ? u->agg.nthreads : 1, sizeof *visible);
	uint32_t hidden = visible && order ? pick_threads(u, order, norder, rows, visible) : 0;
	char more[32] = "";
	if (hidden && rows < 2)
		snprintf(more, sizeof more, "  +%u more", hidden);
	draw_bar(y, theme_attr(ROLE_BORDER));
	/* One thread shown: the full text of what it waits for. */
	const struct waitwatch_entry *sel_kw = u->slot >= 0 ? thread_kwait(u, (uint32_t)u->slot) : NULL;
	if (sel_kw) {
		char full[2 * KWAIT_OBJECT_MAX], title[2 * KWAIT_OBJECT_MAX + 64];
		kwait_format(&sel_kw->info, waitwatch_seconds(sel_kw, now), full, sizeof full);
		snprintf(title, sizeof title, " Threads%s  %llu: %s ", more,
			 (unsigned long long)sel_kw->tid, full);
		draw_text(y, 0, COLS, title, theme_attr(ROLE_BORDER));
	} else {
		char title[160];
		snprintf(title, sizeof title, u->sort_blocked
			 ? " Threads%s  blocked longest first (b: in order)  (←/→ or Tab: one thread) "
			 : " Threads%s  (←/→ or Tab: show one thread's functions; H: all threads) ",
			 more);
		draw_text(y, 0, COLS, title, theme_attr(ROLE_BORDER));
	}
	y++;
	int name_w = name_column(u);
	draw_heading(u, y++, name_w);
	for (uint32_t k = 0; k < norder && shown < rows; k++) {
		uint32_t i = order[k];
		if (visible && !visible[i])
			continue;
		bool sel = u->slot == (int32_t)i;
		draw_row(u, y++, i, sel, sel, now, name_w);
		shown++;
	}
	if (hidden && shown < rows) {
		char line[128];
		snprintf(line, sizeof line, "  +%u more thread%s (%s shown; H: all, a page at a time)",
			 hidden, hidden == 1 ? "" : "s", u->sort_blocked ? "blocked longest" : "busiest");
		move(y, 0);
		clrtoeol();
		draw_text(y++, 0, COLS, line, theme_attr(ROLE_DIM));
	}
	free(order);
	free(visible);
	return y;
}

/* ---------------------------------------------------------------------
 * The view
 * ------------------------------------------------------------------- */

enum thread_sort { BY_BUSY, BY_BLOCKED, BY_GIL, BY_CPU, BY_TID, BY_NAME, THREAD_SORT_COUNT };
static const char *const sort_names[THREAD_SORT_COUNT] = {
	"busiest", "blocked longest", "GIL%", "CPU%", "TID", "name"};

struct threads_ui {
	enum thread_sort sort;
	bool editing;
	char filter[64], edit[64];
	int32_t selected, top;
	int32_t selected_slot;   /* keeps the cursor on its thread as rows move */
	uint32_t *rows;          /* slots, in order, after the filter */
	uint32_t nrows, cap;
	uint32_t total;          /* threads before the filter */
};

struct threads_ui *
threadsview_new(void)
{
	struct threads_ui *t = calloc(1, sizeof *t);
	if (t)
		t->selected_slot = -1;
	return t;
}

void
threadsview_free(struct threads_ui *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

void
threadsview_open(struct ui *u)
{
	if (!u->threads)
		return;
	u->threads->selected_slot = u->slot;
	view_push(u, VIEW_THREADS);
}

static void
ascii_lower(const char *in, char *out, size_t len)
{
	size_t k = 0;
	for (; in && in[k] && k + 1 < len; k++)
		out[k] = in[k] >= 'A' && in[k] <= 'Z' ? (char)(in[k] + ('a' - 'A')) : in[k];
	out[k] = '\0';
}

/* The filter: a piece of the name (any case) or of the id. */
static bool
matches(const struct ui *u, uint32_t i, const char *filter)
{
	if (!filter[0])
		return true;
	char tid[24], name[128], want[64];
	snprintf(tid, sizeof tid, "%llu",
		 (unsigned long long)procset_slot(&u->s->sampler.procs, i)->native_tid);
	if (strstr(tid, filter))
		return true;
	ascii_lower(thread_name(u, i), name, sizeof name);
	ascii_lower(filter, want, sizeof want);
	return strstr(name, want) != NULL;
}

struct sort_key {
	uint32_t slot;
	double primary;      /* larger first */
	uint64_t secondary;  /* larger first */
	uint64_t tid;
	const char *name;
};

static int
cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct sort_key *x = a, *y = b;
	enum thread_sort sorting = *(const enum thread_sort *)ctx;
	if (sorting == BY_NAME) {
		int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
		if (c)
			return c;
	} else if (sorting != BY_TID) {
		if (x->primary != y->primary)
			return x->primary < y->primary ? 1 : -1;
		if (x->secondary != y->secondary)
			return x->secondary < y->secondary ? 1 : -1;
	}
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void
build_rows(struct ui *u)
{
	struct threads_ui *t = u->threads;
	uint32_t n = u->agg.nthreads;
	struct sort_key *keys = malloc((n ? n : 1) * sizeof *keys);
	if (!keys || !grow_array((void **)&t->rows, &t->cap, n, sizeof *t->rows)) {
		free(keys);
		t->nrows = t->total = 0;
		ui_message(u, true, "out of memory listing the threads");
		return;
	}
	uint64_t now = view_now(u);
	int sc = u->scope;
	uint32_t k = 0;
	t->total = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!threads_shown(u, i))
			continue;
		t->total++;
		if (!matches(u, i, t->filter))
			continue;
		const struct agg_thread *a = &u->agg.threads[i];
		struct sort_key *s = &keys[k++];
		*s = (struct sort_key){.slot = i, .secondary = thread_busy(u, i, true),
				       .tid = procset_slot(&u->s->sampler.procs, i)->native_tid,
				       .name = thread_name(u, i)};
		const struct waitwatch_entry *kw;
		switch (t->sort) {
		case BY_BUSY: s->primary = (double)thread_busy(u, i, false); break;
		case BY_BLOCKED:
			kw = thread_kwait(u, i);
			s->primary = kw ? waitwatch_seconds(kw, now) : -1;
			break;
		case BY_GIL: s->primary = ui_pct(a->gil[sc], a->samples[sc]); break;
		case BY_CPU: s->primary = ui_pct(a->on_cpu[sc], a->samples[sc]); break;
		default: break;
		}
	}
	qsort_r(keys, k, sizeof *keys, cmp_rows, &t->sort);
	for (uint32_t j = 0; j < k; j++)
		t->rows[j] = keys[j].slot;
	t->nrows = k;
	free(keys);
	/* The cursor stays on its thread while it is listed. */
	for (uint32_t j = 0; t->selected_slot >= 0 && j < k; j++) {
		if (t->rows[j] == (uint32_t)t->selected_slot) {
			t->selected = (int32_t)j;
			break;
		}
	}
	if (t->selected >= (int32_t)k)
		t->selected = k ? (int32_t)k - 1 : 0;
	if (t->selected < 0)
		t->selected = 0;
	t->selected_slot = k ? (int32_t)t->rows[t->selected] : -1;
}

/* Rows of threads that fit under the title and the heading. */
static int
page_rows(int height)
{
	return height > 3 ? height - 2 : 1;
}

static void
threadsview_draw(struct ui *u, int y, int height)
{
	struct threads_ui *t = u->threads;
	build_rows(u);
	int rows = page_rows(height);
	list_keep_visible(&t->top, t->selected, rows, t->nrows);
	char title[256], total[32] = "";
	if (t->filter[0])
		snprintf(total, sizeof total, " matching, of %u", t->total);
	int first = t->nrows ? t->top + 1 : 0;
	int last = t->top + rows < (int32_t)t->nrows ? t->top + rows : (int32_t)t->nrows;
	snprintf(title, sizeof title, " Threads %d-%d of %u%s, sorted by %s (s)%s%s ", first, last,
		 t->nrows, total, sort_names[t->sort], t->filter[0] ? ", filter: " : "", t->filter);
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, title, theme_attr(t->filter[0] ? ROLE_FILTER : ROLE_BORDER));
	y++;
	int name_w = name_column(u);
	draw_heading(u, y++, name_w);
	uint64_t now = view_now(u);
	if (t->nrows == 0) {
		move(y, 0);
		clrtoeol();
		draw_text(y, 0, COLS, t->filter[0] ? "  no thread matches the filter"
						      : "  no threads seen yet",
			     theme_attr(ROLE_DIM));
		return;
	}
	for (int r = 0; r < rows && t->top + r < (int32_t)t->nrows; r++) {
		uint32_t i = t->rows[t->top + r];
		draw_row(u, y + r, i, t->top + r == t->selected, u->slot == (int32_t)i, now,
			 name_w);
	}
}

static void
threadsview_status(struct ui *u, char *buf, size_t len)
{
	const struct threads_ui *t = u->threads;
	if (t->editing)
		snprintf(buf, len, " thread name or id: %s_  (Enter: apply, Esc: cancel)", t->edit);
	else
		snprintf(buf, len, " ↑/↓ PgUp/PgDn Home/End: move  s/S: sort  /: filter  "
			 "Enter: this thread's functions  i: its locals  Esc or H: back  q: quit");
}

static void
move_cursor(struct threads_ui *t, int32_t to)
{
	to = list_row_in(to, t->nrows);
	t->selected = to;
	t->selected_slot = t->nrows ? (int32_t)t->rows[to] : -1;
}

static enum view_key
threadsview_key(struct ui *u, const TermKeyKey *k)
{
	struct threads_ui *t = u->threads;
	bool unicode = k->type == TERMKEY_TYPE_UNICODE && !(k->modifiers & TERMKEY_KEYMOD_CTRL);
	uint32_t c = unicode ? (uint32_t)k->code.codepoint : 0;
	if (t->editing) {
		enum ui_edit e = ui_edit_line(t->edit, sizeof t->edit, k);
		if (e == UI_EDIT_DONE) {
			memcpy(t->filter, t->edit, sizeof t->filter);
			t->top = 0;
		}
		t->editing = e == UI_EDIT_GOING;
		return VIEW_KEY_USED;
	}
	/* Keys of the other views close this one and go on to them. */
	if (c == 'T' || c == 'v' || c == 'f') {
		view_pop(u);
		return VIEW_KEY_PASSED;
	}
	build_rows(u);
	int32_t page = page_rows(views_table_height(u));
	if (unicode) {
		switch (c) {
		case 'H': view_pop(u); return VIEW_KEY_USED;
		case 's': t->sort = (enum thread_sort)((t->sort + 1) % THREAD_SORT_COUNT); break;
		case 'S':
			t->sort = (enum thread_sort)((t->sort + THREAD_SORT_COUNT - 1) % THREAD_SORT_COUNT);
			break;
		case 'i':
			if (t->nrows)
				frameview_open(u, t->rows[t->selected]);
			return VIEW_KEY_USED;
		case '/':
			t->editing = true;
			memcpy(t->edit, t->filter, sizeof t->edit);
			return VIEW_KEY_USED;
		case 'j': move_cursor(t, t->selected + 1); break;
		case 'k': move_cursor(t, t->selected - 1); break;
		case 'g': move_cursor(t, 0); break;
		case 'G': move_cursor(t, (int32_t)t->nrows - 1); break;
		default: return VIEW_KEY_UNUSED;
		}
		return VIEW_KEY_USED;
	}
	if (k->type != TERMKEY_TYPE_KEYSYM)
		return VIEW_KEY_UNUSED;
	switch (k->code.sym) {
	case TERMKEY_SYM_ESCAPE:
		if (t->filter[0])
			t->filter[0] = '\0';
		else
			view_pop(u);
		return VIEW_KEY_USED;
	case TERMKEY_SYM_ENTER:
		if (t->nrows) {
			/* The table then shows this thread's functions. */
			u->slot = (int32_t)t->rows[t->selected];
			tableview_restart(u);
			view_pop(u);
			views_rebuild(u);
		}
		return VIEW_KEY_USED;
	case TERMKEY_SYM_UP: move_cursor(t, t->selected - 1); return VIEW_KEY_USED;
	case TERMKEY_SYM_DOWN: move_cursor(t, t->selected + 1); return VIEW_KEY_USED;
	case TERMKEY_SYM_PAGEUP:
		t->top -= page;
		move_cursor(t, t->selected - page);
		return VIEW_KEY_USED;
	case TERMKEY_SYM_PAGEDOWN:
		t->top += page;
		move_cursor(t, t->selected + page);
		return VIEW_KEY_USED;
	case TERMKEY_SYM_HOME:
	case TERMKEY_SYM_FIND: move_cursor(t, 0); return VIEW_KEY_USED;
	case TERMKEY_SYM_END:
	case TERMKEY_SYM_SELECT: move_cursor(t, (int32_t)t->nrows - 1); return VIEW_KEY_USED;
	default: return VIEW_KEY_UNUSED;
	}
}

const struct view_ops threadsview_ops = {
	.name = "threads",
	.draw = threadsview_draw,
	.key = threadsview_key,
	.status = threadsview_status,
};
