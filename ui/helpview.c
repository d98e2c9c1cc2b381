/* The help: the keys every view shares, then each view's own, laid out
 * for the width at hand in one or two columns, wrapped at spaces, never
 * cut; drawn as a box over the view under it, closed by any key. */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "theme.h"
#include "ui.h"

/* Paragraphs after the keys. */
static const char *const help_notes[] = {

	"OWN: samples where the function itself runs. TOTAL: samples where it is anywhere on "
	"the stack, recursion counted once. Percentages are of the samples shown: the last "
	"refresh (w: whole session), thread, mode.",
};

#define HELP_MAX_LINES 160
#define HELP_KEY_W 11
#define HELP_MAX_KEYS 64

/* One laid-out line of the help: up to two pieces (one per column), each a
 * key name and/or `len` bytes of text starting `indent` columns in. */
struct help_piece {
	const char *key, *text;
	int len, indent, width;
};
struct help_line {
	struct help_piece col[2];
};

/* Wrap `text` into lines from out[n] on, in column c; returns the next n. */
static int
help_wrap(struct help_line *out, int n, int c, const char *text, int indent, int width)
{
	while (*text && n < HELP_MAX_LINES) {
		const char *next;
		struct help_piece *pc = &out[n++].col[c];
		pc->len = draw_wrap_piece(text, width - indent, &next);
		pc->text = text;
		pc->indent = indent;
		pc->width = width;
		text = next;
	}
	return n;
}

/* The shared keys, then each view's in the order of their ids. */
static int
gather_keys(const char *const **out)
{
	int n = 0;
	for (size_t i = 0; i < keys_nhelp && n < HELP_MAX_KEYS; i++)
		out[n++] = keys_help[i];
	for (int v = 0; v < VIEW_COUNT; v++) {
		const struct view_ops *ops = view_ops((enum view_id)v);
		for (size_t i = 0; i < ops->nhelp && n < HELP_MAX_KEYS; i++)
			out[n++] = ops->help[i];
	}
	return n;
}

/* Lay the help out for an inner width; returns the number of lines and the
 * column width used. */
static int
help_layout(int width, struct help_line *out, int *colw_out)
{
	int n = 0;
	int ncol = width >= 2 * (HELP_KEY_W + 26) + 2 ? 2 : 1;
	int colw = ncol == 2 ? (width - 2) / 2 : width;
	bool key_above = colw - HELP_KEY_W < 12; /* too narrow for a key field */
	const char *const *help_keys[HELP_MAX_KEYS];
	int nkeys = gather_keys(help_keys);
	int per_col = (nkeys + ncol - 1) / ncol;
	memset(out, 0, sizeof *out * HELP_MAX_LINES);
	n = help_wrap(out, n, 0, "tachyon-top keys", 0, width) + 1;
	for (int r = 0; r < per_col && n < HELP_MAX_LINES; r++) {
		int end = n;
		for (int c = 0; c < ncol; c++) {
			int k = r + c * per_col, line = n;
			if (k >= nkeys)
				continue;
			out[line].col[c].key = help_keys[k][0];
			if (key_above)
				line++;
			line = help_wrap(out, line, c, help_keys[k][1], key_above ? 2 : HELP_KEY_W, colw);
			if (line > end)
				end = line;
		}
		n = end;
	}
	for (size_t i = 0; i < sizeof help_notes / sizeof help_notes[0]; i++)
		n = help_wrap(out, n + 1, 0, help_notes[i], 0, width);
	n = help_wrap(out, n + 1, 0, "press any key to close", 0, width);
	*colw_out = colw;
	return n < HELP_MAX_LINES ? n : HELP_MAX_LINES;
}

static void
draw_help(struct ui *u, int y, int height)
{
	(void)u, (void)y, (void)height; /* a box in the middle of the screen */
	static struct help_line lines[HELP_MAX_LINES];
	int w = COLS - 2 < 100 ? COLS - 2 : 100, inner = w - 2, colw;
	int n = help_layout(inner, lines, &colw);
	int h = n + 2 < LINES ? n + 2 : LINES;
	bool cut = n + 2 > h;
	int y0 = (LINES - h) / 2, x0 = (COLS - w) / 2;
	int attr = theme_attr(ROLE_HELP);
	for (int i = 0; i < h; i++) {
		attrset(attr);
		move(y0 + i, x0);
		for (int k = 0; k < w; k++)
			addch(' ');
		int li = i - 1;
		if (i == 0 || i == h - 1 || li >= n)
			continue;
		if (cut && i == h - 2) {
			draw_text(y0 + i, x0 + 1, inner, "(more below: make the terminal taller)", attr);
			continue;
		}
		for (int c = 0; c < 2; c++) {
			const struct help_piece *pc = &lines[li].col[c];
			int x = x0 + 1 + c * (colw + 2);
			if (pc->key)
				draw_text(y0 + i, x, HELP_KEY_W - 1, pc->key, attr | A_BOLD);
			if (pc->text) {
				char piece[512];
				snprintf(piece, sizeof piece, "%.*s", pc->len, pc->text);
				draw_text(y0 + i, x + pc->indent, pc->width - pc->indent, piece, attr);
			}
		}
	}
	attrset(A_NORMAL);
}

/* Any key closes the help; q goes on, and quits. */
static enum view_key
help_key(struct ui *u, const TermKeyKey *k)
{
	view_pop(u);
	if (k->type == TERMKEY_TYPE_UNICODE && (k->code.codepoint == 'q' || k->code.codepoint == 'Q'))
		return VIEW_KEY_PASSED;
	return VIEW_KEY_USED;
}

const struct view_ops helpview_ops = {
	.name = "help",
	.overlay = true,
	.draw = draw_help,
	.key = help_key,
};
