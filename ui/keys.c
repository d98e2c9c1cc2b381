/* Keys of the live screen, in the spirit of top and htop. */
#include "config.h"

#include <string.h>
#include <time.h>

#include "baseline.h"
#include "clock.h"
#include "export.h"
#include "frameview.h"
#include "tasksview.h"
#include "threadsview.h"
#include "ui.h"

static const double refresh_steps[] = {0.1, 0.2, 0.5, 1, 2, 5, 10};
#define NSTEPS (sizeof refresh_steps / sizeof refresh_steps[0])

static void
change_refresh(struct ui *u, int dir)
{
	double cur = (double)u->delay_ns / 1e9;
	size_t i = 0;
	while (i + 1 < NSTEPS && refresh_steps[i] < cur - 1e-9)
		i++;
	if (dir > 0 && i + 1 < NSTEPS && refresh_steps[i] <= cur + 1e-9)
		i++;
	else if (dir < 0 && i > 0)
		i--;
	u->delay_ns = (uint64_t)(refresh_steps[i] * 1e9);
	u->next_roll_ns = clock_now_ns() + u->delay_ns;
	ui_message(u, false, "refresh every %.1f s", refresh_steps[i]);
}

/* Next or previous thread to show; -1 is "all threads". */
static void
cycle_thread(struct ui *u, int dir)
{
	int32_t n = (int32_t)u->agg.nthreads;
	int32_t s = u->slot;
	for (int32_t step = 0; step <= n; step++) {
		s += dir;
		if (s >= n)
			s = -1;
		if (s < -1)
			s = n - 1;
		if (s == -1 || threads_shown(u, (uint32_t)s))
			break;
	}
	u->slot = s;
	tableview_restart(u);
}

enum ui_edit
ui_edit_line(char *text, size_t size, const TermKeyKey *k)
{
	size_t len = strlen(text);
	if (k->type == TERMKEY_TYPE_KEYSYM) {
		switch (k->code.sym) {
		case TERMKEY_SYM_ENTER: return UI_EDIT_DONE;
		case TERMKEY_SYM_ESCAPE: return UI_EDIT_CANCEL;
		case TERMKEY_SYM_BACKSPACE:
		case TERMKEY_SYM_DEL:
			/* remove one UTF-8 character */
			while (len > 0 && ((unsigned char)text[len - 1] & 0xc0) == 0x80)
				len--;
			if (len > 0)
				len--;
			text[len] = '\0';
			break;
		default:
			break;
		}
	} else if (k->type == TERMKEY_TYPE_UNICODE && !(k->modifiers & TERMKEY_KEYMOD_CTRL)) {
		size_t add = strlen(k->utf8);
		if (len + add < size)
			memcpy(text + len, k->utf8, add + 1);
	} else if (k->type == TERMKEY_TYPE_UNICODE && k->code.codepoint == 'u') {
		text[0] = '\0'; /* Ctrl-U */
	}
	return UI_EDIT_GOING;
}

static void
edit_filter(struct ui *u, const TermKeyKey *k)
{
	switch (ui_edit_line(u->edit, sizeof u->edit, k)) {
	case UI_EDIT_DONE:
		memcpy(u->filter, u->edit, sizeof u->filter);
		u->editing_filter = false;
		tableview_restart(u);
		break;
	case UI_EDIT_CANCEL:
		u->editing_filter = false;
		break;
	case UI_EDIT_GOING:
		break;
	}
	u->dirty = true;
}

/* The key after `e`: a format's letter, a for all of them; anything else cancels. */
static void
choose_export(struct ui *u, const TermKeyKey *k)
{
	u->choosing_export = false;
	u->message[0] = '\0';
	if (k->type != TERMKEY_TYPE_UNICODE || (k->modifiers & TERMKEY_KEYMOD_CTRL))
		return;
	switch (k->code.codepoint) {
	case 'f': case 'F': ui_export(u, EXPORT_FLAMEGRAPH); break;
	case 'p': case 'P': ui_export(u, EXPORT_PPROF); break;
	case 's': case 'S': ui_export(u, EXPORT_SPEEDSCOPE); break;
	case 'c': case 'C': ui_export(u, EXPORT_COLLAPSED); break;
	case 't': case 'T': ui_export(u, EXPORT_PSTATS); break;
	case 'h': case 'H': ui_export(u, EXPORT_HEATMAP); break;
	case 'a': case 'A': ui_export(u, -1); break;
	default: break;
	}
}

/* `d`: mark each function's share now (the table then shows how it moves
 * from there), or forget the mark. */
static void
mark_baseline(struct ui *u)
{
	if (u->baseline) {
		baseline_free(u->baseline);
		u->baseline = NULL;
		ui_message(u, false, "baseline cleared");
		return;
	}
	struct agg_query q;
	views_query(u, &q);
	u->baseline = baseline_take(&u->agg, &q, (uint64_t)time(NULL));
	if (!u->baseline)
		ui_message(u, true, "out of memory marking a baseline");
	else
		ui_message(u, false, "baseline marked: \xce\x94TOTAL shows each function's change "
			   "since now (d: clear)");
}

/* v, F5 and f: the call tree or flame graph in the function table's
 * place, or the table again from the one shown. True when the table must
 * be built again. */
static bool
switch_base(struct ui *u, enum view_id v)
{
	if (view_base(u) != v) {
		treeviews_enter(u, v);
		return false;
	}
	view_push(u, VIEW_TABLE);
	return true;
}

/* The shared keys in the help (helpview.c), before each view's own. */
const char *const keys_help[][2] = {
	{"q", "quit"},
	{"h ?", "this help"},
	{"p", "pause (sampling goes on)"},  /* one line at 80 columns */
	{"r", "reset all counts"},
	{"m M", "mode: wall, cpu, gil, exception"},
	{"s S F6", "sort column"},
	{"a", "reverse the sort"},
	{"l", "by line / by function"},
	{"w", "refresh / whole session"},
	{"/", "filter"},
	{"Esc", "clear filter, leave detail"},
	{"t H i", "threads; all; one's locals"},
	{"c", "engine statistics"},
	{"Tab ← →", "one thread / all threads"},
	{"+ -", "refresh faster or slower"},
	{"e", "export profile to files"},
	{"d", "baseline: ΔTOTAL from now"},
	{"b", "blocked longest first"},
	{"o [ ]", "process panel; one / all"},
};
const size_t keys_nhelp = sizeof keys_help / sizeof keys_help[0];

/* A letter on the table: true when the table must be built again. */
static bool
letter_key(struct ui *u, uint32_t cp)
{
	switch (cp) {
	case 'q': case 'Q': u->quit = true; return false;
	case 'h': case '?': view_push(u, VIEW_HELP); return false;
	case 'p': case 'P':
		u->paused = !u->paused;
		ui_message(u, false, u->paused ? "display paused, sampling goes on (p: resume)"
					       : "display resumed");
		return true;
	case 'r': case 'R':
		if (u->finished) {
			ui_message(u, true, "the process has ended: nothing new would come");
			return false;
		}
		agg_reset(&u->agg, clock_now_ns());
		tableview_restart(u);
		ui_message(u, false, "counts reset");
		return true;
	case '/':
		u->editing_filter = true;
		memcpy(u->edit, u->filter, sizeof u->edit);
		return false;
	case 's': u->sort = (enum agg_sort)((u->sort + 1) % SORT_COUNT); return true;
	case 'S': u->sort = (enum agg_sort)((u->sort + SORT_COUNT - 1) % SORT_COUNT); return true;
	case 'a': case 'A': u->ascending = !u->ascending; return true;
	case 'l': case 'L':
		u->by_line = !u->by_line;
		tableview_unpin(u);
		return true;
	case 't': u->show_threads = !u->show_threads; return true;
	case 'T': tasksview_open(u); return false;
	case 'H': threadsview_open(u); return false;
	case 'i': case 'I':
		if (u->slot >= 0)
			frameview_open(u, (uint32_t)u->slot);
		else
			ui_message(u, false, "i inspects one thread: Tab to it first, or H and i "
					     "on its row");
		return false;
	case 'v': return switch_base(u, VIEW_TREE);
	case 'f': return switch_base(u, VIEW_FLAME);
	case 'b': case 'B':
		u->sort_blocked = !u->sort_blocked;
		ui_message(u, false, u->sort_blocked ? "threads: blocked longest first (b: back)"
						     : "threads: in order of appearance");
		return true;
	case 'o': case 'O': u->show_procs = !u->show_procs; return true;
	case ']': procs_cycle(u, 1); return true;
	case '[': procs_cycle(u, -1); return true;
	case 'c': case 'C': u->show_stats = !u->show_stats; return true;
	case 'm': u->mode = (enum agg_mode)((u->mode + 1) % AGG_MODE_COUNT); return true;
	case 'M': u->mode = (enum agg_mode)((u->mode + AGG_MODE_COUNT - 1) % AGG_MODE_COUNT); return true;
	case 'w': case 'W':
		u->scope = u->scope == AGG_WINDOW ? AGG_SESSION : AGG_WINDOW;
		return true;
	case 'e': case 'E': ui_export_prompt(u); return false;
	case 'd': case 'D': mark_baseline(u); return true;
	case '+': case '=': change_refresh(u, -1); return false;
	case '-': case '_': change_refresh(u, +1); return false;
	default: return false;
	}
}

/* A named key every view shares: Esc (clear the filter), Tab, Left, Right. */
static bool
named_key(struct ui *u, TermKeySym sym, bool shift)
{
	switch (sym) {
	case TERMKEY_SYM_ESCAPE:
		if (!u->filter[0])
			return false;
		u->filter[0] = '\0';
		return true;
	case TERMKEY_SYM_TAB: cycle_thread(u, shift ? -1 : 1); return true;
	case TERMKEY_SYM_RIGHT: cycle_thread(u, 1); return true;
	case TERMKEY_SYM_LEFT: cycle_thread(u, -1); return true;
	default: return false;
	}
}

static bool
function_key(struct ui *u, int n)
{
	switch (n) {
	case 1: view_push(u, VIEW_HELP); return false;
	case 5: return switch_base(u, VIEW_TREE);
	case 6: u->sort = (enum agg_sort)((u->sort + 1) % SORT_COUNT); return true;
	case 10: u->quit = true; return false;
	default: return false;
	}
}

void
keys_handle(struct ui *u, TermKey *tk, const TermKeyKey *k)
{
	(void)tk;
	u->dirty = true;
	if (u->editing_filter) {
		edit_filter(u, k);
		views_rebuild(u);
		return;
	}
	if (u->choosing_export) {
		choose_export(u, k);
		return;
	}
	/* The view on top first; what it leaves is shared by every view. */
	for (;;) {
		const struct view_ops *v = view_ops(view_top(u));
		enum view_key r = v->key ? v->key(u, k) : VIEW_KEY_UNUSED;
		if (r == VIEW_KEY_USED)
			return;
		if (r == VIEW_KEY_UNUSED)
			break;
	}
	bool refresh = false;
	if (k->type == TERMKEY_TYPE_UNICODE) {
		/* Ctrl-C quits; Ctrl-L and the rest just repaint (dirty). */
		if (k->modifiers & TERMKEY_KEYMOD_CTRL) {
			if (k->code.codepoint == 'c')
				u->quit = true;
			return;
		}
		refresh = letter_key(u, (uint32_t)k->code.codepoint);
	} else if (k->type == TERMKEY_TYPE_KEYSYM) {
		refresh = named_key(u, k->code.sym, k->modifiers & TERMKEY_KEYMOD_SHIFT);
	} else if (k->type == TERMKEY_TYPE_FUNCTION) {
		refresh = function_key(u, k->code.number);
	}
	if (refresh)
		views_rebuild(u);
}
