/* The live screen's leaf drawing module: text, bars, colours and list
 * scrolling, for every view. It calls nothing of the views and knows no
 * view's state; only the UI thread calls it. */
#ifndef TT_DRAW_H
#define TT_DRAW_H

#include <stddef.h>
#include <stdint.h>

/* UTF-8 text at (y, x) in at most `width` columns, sanitized, cut with an
 * ellipsis when longer. Returns the columns used. */
int draw_text(int y, int x, int width, const char *text, int attr);
/* A whole line of spaces in an attribute. */
void draw_bar(int y, int attr);
/* The theme's colour for a percentage: hot, warm or cold. */
int draw_percent_attr(double pct);
/* Display columns of the first `n` bytes of UTF-8 text. */
int draw_text_width(const char *text, size_t n);
/* The next piece of `text` that fits in `width` columns, cut at a space:
 * returns its byte length and sets *next to where the rest starts. */
int draw_wrap_piece(const char *text, int width, const char **next);

/* `row` moved into a list of `nrows` (0 when it is empty). */
int32_t list_row_in(int32_t row, uint32_t nrows);
/* The first row shown of a list of `nrows` in `height` rows, moved as
 * little as keeps `selected` in view and the last page full. */
void list_keep_visible(int32_t *top, int32_t selected, int height, uint32_t nrows);

#endif
