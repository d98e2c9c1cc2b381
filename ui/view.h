/* The live screen's views and the stack they are shown in.
 *
 * A view is a file with one table of operations: draw its body between
 * the header (and panels) and the status line, take a key, write its
 * status line, name its keys for the help. The bottom of the stack is one
 * of the base views (functions, call tree, flame graph), which replace one
 * another; other views are pushed over it and popped to return to what was
 * under them. A key goes to the view on top; what it leaves goes to the
 * keys every view shares (keys.c). Adding a view: its file with its
 * operations and its state, an id below with its entry in viewstack.c,
 * and the key that opens it (keys.c, or the view it is opened from). */
#ifndef TT_VIEW_H
#define TT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <termkey.h>

struct ui;

enum view_id {
	VIEW_TABLE,    /* top functions (tableview.c) */
	VIEW_DETAIL,   /* a function's callers and callees (tableview.c) */
	VIEW_TREE,     /* the call tree (treeview.c) */
	VIEW_FLAME,    /* the flame graph (flameview.c) */
	VIEW_THREADS,  /* every thread (threadsview.c) */
	VIEW_TASKS,    /* asyncio tasks (tasksview.c) */
	VIEW_FRAMES,   /* one thread's frames and locals (frameview.c) */
	VIEW_HELP,     /* the keys (helpview.c) */
	VIEW_COUNT
};

enum view_key {
	VIEW_KEY_UNUSED,   /* not this view's: the shared keys have it */
	VIEW_KEY_USED,
	VIEW_KEY_PASSED,   /* the view closed itself; the key goes on to the one under it */
};

struct view_ops {
	const char *name;
	bool base;         /* sits at the bottom of the stack (replaces, is not pushed) */
	bool overlay;      /* drawn over the view under it, which keeps its status line */
	void (*draw)(struct ui *u, int y, int height);
	enum view_key (*key)(struct ui *u, const TermKeyKey *k);
	/* The status line's text; NULL: the function table's. */
	void (*status)(struct ui *u, char *buf, size_t len);
	/* After what is shown changed (mode, scope, thread, filter, a refresh):
	 * rebuild what the view shows from the aggregate; NULL: nothing kept. */
	void (*rebuild)(struct ui *u);
	/* Its keys in the help: key names and what they do. */
	const char *const (*help)[2];
	size_t nhelp;
};

extern const struct view_ops tableview_ops, detailview_ops, treeview_ops, flameview_ops,
	threadsview_ops, tasksview_ops, frameview_ops, helpview_ops;

#define VIEW_STACK_MAX 8

const struct view_ops *view_ops(enum view_id id);
enum view_id view_top(const struct ui *u);
/* The base view (bottom of the stack). */
enum view_id view_base(const struct ui *u);
/* Is the view on the stack (shown, or under another)? */
bool view_stacked(const struct ui *u, enum view_id id);
/* The top view that draws a body: the top, or what an overlay covers. */
enum view_id view_body(const struct ui *u);
/* Open a view over the others (a base view replaces the whole stack).
 * A view is opened only once its state exists (its open function, or
 * treeviews_enter, makes it first): its operations need not check. */
void view_push(struct ui *u, enum view_id id);
/* Close the top view (never the base). */
void view_pop(struct ui *u);

#endif
