/* Text, bars and colours on the live screen (draw.h). */
#include "config.h"

#include <curses.h>
#include <string.h>
#include <wchar.h>

#include "draw.h"
#include "sanitize.h"
#include "theme.h"

int
draw_text(int y, int x, int width, const char *text, int attr)
{
	if (width <= 0)
		return 0;
	char safe[4096];
	sanitize_for_terminal(text, safe, sizeof safe);
	const unsigned char *p = (const unsigned char *)safe;
	size_t len = strlen(safe), i = 0;
	int used = 0;
	int total = draw_text_width(safe, len);
	int limit = total > width ? width - 1 : width; /* room for the ellipsis */
	attr_t old_attr;
	short old_pair;
	attr_get(&old_attr, &old_pair, NULL);
	attrset(attr);
	move(y, x);
	while (i < len) {
		unsigned cp;
		size_t n = utf8_decode(p + i, len - i, &cp);
		if (n == 0)
			n = 1, cp = '?';
		int w = wcwidth((wchar_t)cp);
		if (w < 0)
			w = 0;
		if (used + w > limit)
			break;
		addnstr((const char *)p + i, (int)n);
		used += w;
		i += n;
	}
	if (total > width && width > 0) {
		addstr("\xe2\x80\xa6"); /* … */
		used++;
	}
	attr_set(old_attr, old_pair, NULL);
	return used;
}

void
draw_bar(int y, int attr)
{
	attrset(attr);
	move(y, 0);
	for (int i = 0; i < COLS; i++)
		addch(' ');
	attrset(theme_attr(ROLE_DEFAULT));
}

int
draw_percent_attr(double pct)
{
	return theme_attr(pct >= 20 ? ROLE_PERCENT_HOT : pct >= 5 ? ROLE_PERCENT_WARM : ROLE_PERCENT_COLD);
}

int
draw_text_width(const char *text, size_t n)
{
	int w = 0;
	for (size_t k = 0; k < n;) {
		unsigned cp;
		size_t m = utf8_decode((const unsigned char *)text + k, n - k, &cp);
		if (m == 0)
			m = 1, cp = '?';
		int cw = wcwidth((wchar_t)cp);
		w += cw > 0 ? cw : 0;
		k += m;
	}
	return w;
}

int
draw_wrap_piece(const char *text, int width, const char **next)
{
	size_t len = strlen(text);
	if (draw_text_width(text, len) <= width) {
		*next = text + len;
		return (int)len;
	}
	size_t cut = 0;
	for (size_t k = 1; k < len && draw_text_width(text, k) <= width; k++)
		if (text[k] == ' ')
			cut = k;
	if (cut == 0) /* one word longer than the line: cut it */
		for (cut = 1; cut < len && draw_text_width(text, cut + 1) <= width; cut++)
			;
	const char *rest = text + cut;
	while (*rest == ' ')
		rest++;
	*next = rest;
	return (int)cut;
}

int32_t
list_row_in(int32_t row, uint32_t nrows)
{
	if (row >= (int32_t)nrows)
		row = (int32_t)nrows - 1;
	return row < 0 ? 0 : row;
}

void
list_keep_visible(int32_t *top, int32_t selected, int height, uint32_t nrows)
{
	if (selected < *top)
		*top = selected;
	if (selected >= *top + height)
		*top = selected - height + 1;
	int32_t max_top = (int32_t)nrows - height;
	if (*top > max_top)
		*top = max_top > 0 ? max_top : 0;
	if (*top < 0)
		*top = 0;
}
