/* State shared by the live screen's loop (tui.c), drawing (views.c) and
 * key handling (keys.c). Only the UI thread touches any of it. */
#ifndef TT_UI_H
#define TT_UI_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termkey.h>

#include "aggregate.h"
#include "draw.h"
#include "waitwatch.h"
#include "liveopts.h"
#include "session.h"
#include "stuckwatch.h"
#include "treeviews.h"
#include "view.h"

#define UI_MIN_COLS 60
#define UI_MIN_ROWS 12

struct ui {
	const struct live_options *opt;
	struct session *s;
	struct aggregate agg;
	/* what is shown */
	enum agg_mode mode;
	enum agg_scope scope;
	enum agg_sort sort;
	bool ascending;
	bool by_line;
	int32_t slot;                 /* thread filter, -1 = all threads */
	int32_t proc;                 /* process filter, -1 = all processes */
	bool show_procs;              /* processes panel (when there are several) */
	uint64_t *procs_reported;     /* per index, the start_ns of the process whose
					 failure was told on the status line */
	uint32_t procs_reported_n;
	bool show_threads, show_stats, paused;
	char filter[128];             /* applied filter */
	bool editing_filter;
	char edit[128];               /* filter being typed */

	/* timing */
	uint64_t start_ns, delay_ns, next_roll_ns;

	/* after the target is gone */
	bool finished;
	uint64_t finished_ns;         /* the clock stops here */
	char finished_text[480];

	bool choosing_export;         /* `e` asked which format */
	struct baseline *baseline;    /* `d`: shares at a mark, for the table's delta, or NULL */

	/* one-line messages (export results, errors) */
	char message[PATH_MAX * 2 + 1200];
	uint64_t message_until_ns;
	bool message_is_error;

	/* the kernel's view of the threads (owned; NULL until the first) */
	struct waitwatch_snapshot *kw;
	bool sort_blocked;            /* threads panel: blocked longest first */
	struct stuckwatch stuck;      /* which threads `watch` would report (threads panel) */
	/* each view's own state, in its own file */
	struct table_ui *table;       /* the function table and the detail (tableview.c) */
	struct tasks_ui *tasks;       /* the asyncio tasks view (tasksview.c) */
	struct threads_ui *threads;   /* the threads view (threadsview.c) */
	struct frames_ui *frames;     /* the frame inspector (frameview.c) */
	/* call tree and flame views (treeview.c, flameview.c) */
	struct treeviews *tv;

	/* the views shown, the base view first, the one on top last (view.h) */
	enum view_id stack[VIEW_STACK_MAX];
	int nstack;

	bool quit;
	bool dirty;                   /* redraw needed */
	int rows, cols;
};

/* part as a percentage of whole (0 when whole is 0). */
static inline double
ui_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* An engine counter, read while the sampler adds to it. */
static inline uint64_t
ui_stat(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* views.c */
void views_draw(struct ui *u);
/* After what is shown changed: rebuild the table and every view on the
 * stack for the current query (each keeps its selection). */
void views_rebuild(struct ui *u);
/* tableview.c: the function table and the detail. */
struct table_ui *tableview_new(void);
void tableview_free(struct table_ui *t);
/* What is shown changed (thread, process, filter, reset): the selection
 * goes back to the first row. */
void tableview_restart(struct ui *u);
/* The rows changed meaning (by line / by function): the selection stays
 * on its row rather than following a function. */
void tableview_unpin(struct ui *u);
/* Enter on a function (the table, the call tree): its callers and callees. */
void tableview_open_detail(struct ui *u, uint32_t func, int32_t line);
/* Rows of the function table visible with the current layout. */
int views_table_height(const struct ui *u);

/* The query every view derives its figures from: the one place what is
 * shown is restricted (mode, scope, thread, filter, ...). */
void views_query(const struct ui *u, struct agg_query *q);
/* procs.c: the processes panel. */
int procs_panel_height(const struct ui *u);
int procs_draw(struct ui *u, int y, int height);
/* Next or previous process to show alone; -1 is every process. */
void procs_cycle(struct ui *u, int dir);
/* Tell once on the status line about a child that could not be read. */
void procs_note_changes(struct ui *u);

/* keys.c: one key press; updates state and sets u->dirty / u->quit. */
void keys_handle(struct ui *u, TermKey *tk, const TermKeyKey *key);
/* The keys every view shares, for the help. */
extern const char *const keys_help[][2];
extern const size_t keys_nhelp;
/* A key for a one-line text being typed (a filter): Enter ends it, Esc
 * cancels, Backspace takes one UTF-8 character, Ctrl-U clears, a character
 * is added if it fits in `size`. */
enum ui_edit { UI_EDIT_GOING, UI_EDIT_DONE, UI_EDIT_CANCEL };
enum ui_edit ui_edit_line(char *text, size_t size, const TermKeyKey *k);

/* tui.c: actions needing the loop. */
/* `e`: ask for a format; then write the session's profile in it (format
 * < 0: in every format). */
void ui_export_prompt(struct ui *u);
void ui_export(struct ui *u, int format);
void ui_message(struct ui *u, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
