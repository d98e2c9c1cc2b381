/* The live screen's frame: the header, engine statistics, the processes
 * and threads panels, the body of the view shown (view.h), the overlays
 * over it and the status line; the query every view is built under and
 * the rebuild of every view on the stack. Every string from the target is
 * sanitized before it reaches the terminal (draw.c draws all text). */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "baseline.h"
#include "clock.h"
#include "waitwatch.h"
#include "sanitize.h"
#include "tasksview.h"
#include "theme.h"
#include "threadsview.h"
#include "ui.h"
#include "walk/sample.h"

/* ---------------------------------------------------------------------
 * Header and statistics
 * ------------------------------------------------------------------- */

/* A label and its value on a header line from column x; the column after. */
static int
draw_pair(int y, int x, const char *label, const char *value, int value_attr)
{
	x += draw_text(y, x, COLS - x, label, theme_attr(ROLE_HEADER));
	return x + draw_text(y, x, COLS - x, value, value_attr);
}

/* Line 1: the target, its processes and what its threads do now. */
static void
draw_title_line(struct ui *u, int y, const char *up)
{
	struct session *s = u->s;
	char buf[512];
	draw_bar(y, theme_attr(ROLE_TITLE));
	snprintf(buf, sizeof buf, " tachyon-top  pid %d  Python %s  up %s   ", (int)s->pid,
		 s->target.layout.version_str, up);
	int x = draw_text(y, 0, COLS, buf, theme_attr(ROLE_TITLE));
	if (s->sampler.cfg.follow) {
		uint32_t live;
		uint64_t ended;
		procset_counts(&s->sampler.procs, &live, &ended);
		snprintf(buf, sizeof buf, "processes %u live / %llu exited   ", live,
			 (unsigned long long)ended);
		x += draw_text(y, x, COLS - x, buf, theme_attr(ROLE_TITLE));
	}
	/* What the threads do now: a pool of a thousand at a glance. */
	threads_format_now(u, buf, sizeof buf);
	x += draw_text(y, x, COLS - x, buf, theme_attr(ROLE_TITLE));
	draw_text(y, x, COLS - x, s->cmdline, theme_attr(ROLE_TITLE));
}

/* Line 2: the sampler's rate against the one asked for, what it missed
 * and why, its errors, samples and CPU. */
static void
draw_rate_line(struct ui *u, int y)
{
	struct session *s = u->s;
	struct engine_stats *st = &s->sampler.stats;
	char buf[256], rate_s[32], req_s[32], cnt[32];
	double elapsed = (double)ui_stat(&st->elapsed_ns) / 1e9;
	struct session_rate sr;
	session_rate_now(s, clock_now_ns(), &sr);
	double cpu = elapsed > 0 ? 100.0 * (double)ui_stat(&st->busy_ns) / (double)ui_stat(&st->elapsed_ns) : 0;
	live_format_count(sr.per_s, rate_s, sizeof rate_s);
	if (s->rate_hz > 0)
		live_format_count(s->rate_hz, req_s, sizeof req_s);
	else
		snprintf(req_s, sizeof req_s, "max");
	if (s->sampler.cfg.follow)
		strcat(req_s, "/proc");
	live_format_count((double)ui_stat(&st->samples), cnt, sizeof cnt);
	move(y, 0);
	clrtoeol();
	snprintf(buf, sizeof buf, "%s/s of %s", rate_s, req_s);
	int x = draw_pair(y, 0, " Rate ", buf, theme_attr(ROLE_HEADER_VALUE));
	snprintf(buf, sizeof buf, "%.1f%%", sr.missed_pct);
	x = draw_pair(y, x, "  missed ", buf,
		      theme_attr(sr.missed_pct >= 10 ? ROLE_WARNING : ROLE_HEADER_VALUE));
	if (sr.missed_pct >= 10) {
		/* Why: a busy machine, or more work per pass than the rate allows. */
		uint32_t live;
		uint64_t ended;
		procset_counts(&s->sampler.procs, &live, &ended);
		char why[SAMPLER_REASON_MAX];
		sampler_missed_reason(st, s->rate_hz, live, why, sizeof why);
		if (why[0]) {
			snprintf(buf, sizeof buf, " (%s)", why);
			x += draw_text(y, x, COLS - x, buf, theme_attr(ROLE_WARNING));
		}
	}
	snprintf(buf, sizeof buf, "%.2f%%", sr.errors_pct);
	x = draw_pair(y, x, "  errors ", buf,
		      theme_attr(sr.errors_pct >= 1 ? ROLE_WARNING : ROLE_HEADER_VALUE));
	x = draw_pair(y, x, "  samples ", cnt, theme_attr(ROLE_HEADER_VALUE));
	snprintf(buf, sizeof buf, "%.0f%%", cpu);
	x = draw_pair(y, x, "  sampler CPU ", buf, theme_attr(ROLE_HEADER_VALUE));
	if (s->sampler.cfg.native) {
		/* --native: thread samples with native frames, and of those the
		 * ones whose native and Python frames did not pair up; those left
		 * out, their perf sample taken in another Python frame */
		struct native_shares ns;
		sampler_native_shares(&s->sampler, &ns);
		snprintf(buf, sizeof buf, "%.0f%% (unmerged %.1f%%, moved %.0f%%)%s", ns.native_pct,
			 ns.unmerged_pct, ns.moved_pct,
			 ns.refusal ? ", none of threads on a CPU: perf_event_open refused" : "");
		draw_pair(y, x, "  native ", buf,
			  theme_attr(ns.unmerged_pct >= 10 || ns.refusal ? ROLE_WARNING
								  : ROLE_HEADER_VALUE));
	}
}

/* What the table is about: "process P", "all threads" or one thread. */
static void
format_showing_whom(const struct ui *u, char *out, size_t len)
{
	const struct procset *ps = &u->s->sampler.procs;
	if (u->slot < 0 && u->proc >= 0) {
		snprintf(out, len, "process %d", (int)procset_at(ps, (uint32_t)u->proc)->pid);
	} else if (u->slot < 0) {
		snprintf(out, len, "all threads");
	} else {
		const struct thread_slot *ts = procset_slot(ps, (uint32_t)u->slot);
		char *name = atomic_load_explicit(&((struct thread_slot *)ts)->name, memory_order_acquire);
		snprintf(out, len, "thread %llu %s", (unsigned long long)ts->native_tid,
			 name ? name : "");
	}
}

/* Line 3: what the table shows, and the GIL, CPU and GC shares of the
 * threads it covers. */
static void
draw_showing_line(struct ui *u, int y, const char *up)
{
	struct session *s = u->s;
	uint64_t all = 0, gil = 0, wait = 0, oncpu = 0, gc = 0;
	int sc = u->scope;
	for (uint32_t i = 0; i <= u->agg.nthreads; i++) {
		/* ...and, when all threads are shown, those that exited */
		if (i == u->agg.nthreads && u->slot >= 0)
			break;
		const struct agg_thread *t = i < u->agg.nthreads ? &u->agg.threads[i] : &u->agg.exited;
		all += t->samples[sc];
		gil += t->gil[sc];
		wait += t->gil_wait[sc];
		oncpu += t->on_cpu[sc];
		gc += t->gc[sc];
	}
	char buf[256], scope[48], whom[96];
	if (u->scope == AGG_WINDOW) {
		/* The window actually closed, which can run past --delay when
		 * the loop wakes late: its figures are over this length. */
		uint64_t w = u->agg.window_ns ? u->agg.window_ns : u->delay_ns;
		snprintf(scope, sizeof scope, "last %.2fs", (double)w / 1e9);
	} else {
		snprintf(scope, sizeof scope, "session %s", up);
	}
	format_showing_whom(u, whom, sizeof whom);
	move(y, 0);
	clrtoeol();
	snprintf(buf, sizeof buf, "%s mode, %s, %s, by %s%s", agg_mode_name(u->mode), scope, whom,
		 u->by_line ? "line" : "function", s->sampler.cfg.async_aware ? ", async" : "");
	int x = draw_pair(y, 0, " Showing ", buf, theme_attr(ROLE_HEADER_VALUE));
	snprintf(buf, sizeof buf, "%.0f%%", ui_pct(gil, all));
	x = draw_pair(y, x, "   GIL ", buf, theme_attr(ROLE_GIL));
	if (s->target.layout.has_tstate_gil) {
		snprintf(buf, sizeof buf, "%.0f%%", ui_pct(wait, all));
		x = draw_pair(y, x, " wait ", buf, theme_attr(ROLE_GIL_WAIT));
	}
	snprintf(buf, sizeof buf, "%.0f%%", ui_pct(oncpu, all));
	x = draw_pair(y, x, " on CPU ", buf, theme_attr(ROLE_ON_CPU));
	snprintf(buf, sizeof buf, "%.1f%%", ui_pct(gc, all));
	draw_pair(y, x, " GC ", buf, theme_attr(ROLE_HEADER_VALUE));
}

static int
draw_header(struct ui *u, int y)
{
	char up[32];
	uint64_t now = u->finished ? u->finished_ns : clock_now_ns();
	live_format_duration((double)(now - u->start_ns) / 1e9, up, sizeof up);
	draw_title_line(u, y++, up);
	draw_rate_line(u, y++);
	draw_showing_line(u, y++, up);
	return y;
}

static int
draw_stats(struct ui *u, int y)
{
	struct engine_stats *st = &u->s->sampler.stats;
	uint64_t samples = ui_stat(&st->samples);
	uint64_t fh = ui_stat(&st->full_hits), ph = ui_stat(&st->partial_hits), fm = ui_stat(&st->misses);
	uint64_t ch = ui_stat(&st->code_hits), cm = ui_stat(&st->code_misses);
	uint64_t ba = ui_stat(&st->batch_attempts), bs = ui_stat(&st->batch_successes);
	char line[512], bytes[32], stacks[32];
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, " Engine ", theme_attr(ROLE_BORDER));
	y++;
	move(y, 0);
	clrtoeol();
	char code[48];
	if (ch == 0 && cm <= ui_stat(&st->codes)) /* only first sightings: nothing to hit */
		snprintf(code, sizeof code, "no lookups");
	else
		snprintf(code, sizeof code, "%.2f%% hits", ui_pct(ch, ch + cm));
	snprintf(line, sizeof line,
		 " frame cache %.1f%% full, %.1f%% partial, %.1f%% miss   code cache %s   "
		 "batched reads %.1f%% complete",
		 ui_pct(fh, fh + ph + fm), ui_pct(ph, fh + ph + fm), ui_pct(fm, fh + ph + fm), code,
		 ui_pct(bs, ba));
	draw_text(y++, 0, COLS, line, theme_attr(ROLE_DEFAULT));
	move(y, 0);
	clrtoeol();
	live_format_count(samples ? (double)ui_stat(&st->remote_bytes) / (double)samples : 0, bytes,
			  sizeof bytes);
	live_format_count((double)ui_stat(&st->stacks), stacks, sizeof stacks);
	struct ring *r = &u->s->sampler.ring;
	snprintf(line, sizeof line,
		 " reads/sample %.3f   bytes/sample %s   /proc reads/sample %.3f   ring %u/%u (high %u), "
		 "%llu drops   stacks %s",
		 samples ? (double)ui_stat(&st->remote_reads) / (double)samples : 0, bytes,
		 samples ? (double)ui_stat(&st->proc_reads) / (double)samples : 0, ring_fill(r),
		 ring_capacity(r), atomic_load(&r->high_water), (unsigned long long)ring_dropped(r),
		 stacks);
	draw_text(y++, 0, COLS, line,
		  theme_attr(ring_dropped(r) ? ROLE_WARNING : ROLE_DEFAULT));
	/* Threads that left are folded into one bucket, so memory follows
	 * the threads alive: how many, and how much of the session they hold. */
	move(y, 0);
	clrtoeol();
	char seen[32], gone[32], folded[32];
	live_format_count((double)ui_stat(&st->threads), seen, sizeof seen);
	live_format_count((double)ui_stat(&st->threads_gone), gone, sizeof gone);
	live_format_count((double)u->agg.exited_threads, folded, sizeof folded);
	snprintf(line, sizeof line,
		 " threads seen %s, exited %s   exited threads bucket %s threads, %.1f%% of session "
		 "samples   thread slots %llu",
		 seen, gone, folded,
		 ui_pct(u->agg.exited.samples[AGG_SESSION], u->agg.samples[AGG_SESSION]),
		 (unsigned long long)ui_stat(&st->thread_slots));
	draw_text(y++, 0, COLS, line, theme_attr(ROLE_DEFAULT));
	return y;
}

/* ---------------------------------------------------------------------
 * What every view is built from
 * ------------------------------------------------------------------- */

int
views_table_height(const struct ui *u)
{
	int fixed = 3 + 1 + 1; /* header, table heading, status */
	if (u->show_stats)
		fixed += 4;
	fixed += threads_panel_height(u);
	fixed += procs_panel_height(u);
	fixed += 1; /* table title */
	int h = LINES - fixed;
	return h > 1 ? h : 1;
}

void
views_query(const struct ui *u, struct agg_query *q)
{
	*q = (struct agg_query){.mode = u->mode, .scope = u->scope, .by_line = u->by_line,
				.slot = u->slot, .proc = u->proc, .filter = u->filter, .sort = u->sort,
				.ascending = u->ascending};
}

void
views_rebuild(struct ui *u)
{
	/* The table first: it is shown again whenever what is over it closes. */
	tableview_ops.rebuild(u);
	for (int i = 0; i < u->nstack; i++) {
		const struct view_ops *v = view_ops(u->stack[i]);
		if (u->stack[i] != VIEW_TABLE && v->rebuild)
			v->rebuild(u);
	}
}

/* ---------------------------------------------------------------------
 * Status line, whole screen
 * ------------------------------------------------------------------- */

static void
draw_status(struct ui *u)
{
	int y = LINES - 1;
	draw_bar(y, theme_attr(ROLE_STATUS));
	if (u->editing_filter) {
		char buf[200];
		snprintf(buf, sizeof buf, " Filter: %s_   (Enter: apply, Esc: cancel)", u->edit);
		draw_text(y, 0, COLS, buf, theme_attr(ROLE_FILTER));
		return;
	}
	int x = 0;
	if (u->finished)
		x += draw_text(y, x, COLS - x, u->finished_text, theme_attr(ROLE_ERROR)) + 1;
	if (u->paused)
		x += draw_text(y, x, COLS - x, "[PAUSED] ", theme_attr(ROLE_WARNING));
	if (u->message[0]) {
		/* A long message (full paths) takes up to 3 lines, the status
		 * line last, rather than losing its end. */
		int attr = theme_attr(u->message_is_error ? ROLE_ERROR : ROLE_STATUS);
		char safe[4096];
		sanitize_for_terminal(u->message, safe, sizeof safe);
		const char *piece[3];
		int len[3], n = 0, width = COLS - x - 1;
		for (const char *p = safe; *p && n < 3; n++) {
			const char *next;
			piece[n] = p;
			if (n < 2) {
				len[n] = draw_wrap_piece(p, width, &next);
			} else {
				len[n] = (int)strlen(p);
				next = p + len[n];
			}
			p = next;
			width = COLS - 1;
		}
		for (int i = 0; i < n; i++) {
			char line[4096];
			int row = y - (n - 1) + i;
			snprintf(line, sizeof line, "%.*s", len[i], piece[i]);
			if (row != y)
				draw_bar(row, theme_attr(ROLE_STATUS));
			draw_text(row, i ? 0 : x, i ? COLS : COLS - x, line, attr);
		}
		return;
	}
	const struct view_ops *v = view_ops(view_body(u));
	char buf[1400];
	if (v->status)
		v->status(u, buf, sizeof buf);
	else
		tableview_ops.status(u, buf, sizeof buf);
	draw_text(y, x, COLS - x, buf, theme_attr(ROLE_STATUS));
}

void
views_draw(struct ui *u)
{
	getmaxyx(stdscr, u->rows, u->cols);
	erase();
	if (COLS < UI_MIN_COLS || LINES < UI_MIN_ROWS) {
		/* The longest wording that fits: the numbers are what matters. */
		char need[24], have[24], forms[5][96];
		snprintf(need, sizeof need, "%dx%d", UI_MIN_COLS, UI_MIN_ROWS);
		snprintf(have, sizeof have, "%dx%d", COLS, LINES);
		snprintf(forms[0], sizeof forms[0], "Terminal too small: need %s, have %s", need, have);
		snprintf(forms[1], sizeof forms[1], "Too small: need %s, have %s", need, have);
		snprintf(forms[2], sizeof forms[2], "need %s, have %s", need, have);
		snprintf(forms[3], sizeof forms[3], "need %s", need);
		snprintf(forms[4], sizeof forms[4], "%s", need);
		const char *buf = forms[4];
		for (int i = 0; i < 5; i++) {
			if ((int)strlen(forms[i]) <= COLS) {
				buf = forms[i];
				break;
			}
		}
		int len = (int)strlen(buf);
		draw_text(LINES / 2, len < COLS ? (COLS - len) / 2 : 0, COLS, buf, theme_attr(ROLE_WARNING));
		if (LINES > 2)
			draw_text(LINES / 2 + 1, 0, COLS, "q: quit", theme_attr(ROLE_DIM));
		refresh();
		return;
	}
	int y = draw_header(u, 0);
	if (u->show_stats)
		y = draw_stats(u, y);
	int ph = procs_panel_height(u);
	if (ph)
		y = procs_draw(u, y, ph);
	int th = threads_panel_height(u);
	if (th)
		y = threads_panel_draw(u, y, th);
	int h = views_table_height(u);
	/* The view on top, or the one under the overlays; then the overlays. */
	enum view_id body = view_body(u);
	view_ops(body)->draw(u, y, h);
	draw_status(u);
	bool over = false;
	for (int i = 0; i < u->nstack; i++) {
		if (over)
			view_ops(u->stack[i])->draw(u, y, h);
		over = over || u->stack[i] == body;
	}
	refresh();
}
