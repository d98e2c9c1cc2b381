/* Writing JSON: objects, arrays, escaped strings and numbers, with the
 * commas and keys kept right by the writer rather than by each caller.
 *
 * Every value function takes the member's key inside an object and NULL
 * inside an array or at the top. Members are separated by ", " (a compact
 * container: ","); jsonw_break makes the next separator a line break of
 * the caller's choosing, and a container may put a fixed text before each
 * of its items, so a document keeps the line shape its readers (and diffs)
 * expect. Strings go through json_put_string: nothing from the target
 * reaches the file unescaped. Errors show on the FILE (ferror). */
#ifndef TT_JSONW_H
#define TT_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 16

struct jsonw {
	FILE *f;
	uint32_t depth;
	uint32_t too_deep;          /* containers opened past the deepest, written as null */
	struct jsonw_level {
		bool is_array;
		bool any;               /* an item was written */
		bool compact;           /* items separated by "," alone */
		const char *item_prefix;  /* before every item, or NULL */
	} level[JSONW_MAX_DEPTH];
	const char *pending_break;  /* the next separator's text after its comma */
	bool tight;                 /* jsonw_tight */
};

void jsonw_init(struct jsonw *w, FILE *f);
/* From now on "key":value and items separated by "," alone, as documents
 * meant for programs rather than eyes are written (gecko). */
void jsonw_tight(struct jsonw *w);

/* Open a container as the value of key (NULL: an array item or the top). */
void jsonw_object(struct jsonw *w, const char *key);
void jsonw_array(struct jsonw *w, const char *key);
/* The container just opened: items separated by "," alone; prefix (or
 * NULL) written before each item, the first too. */
void jsonw_style(struct jsonw *w, bool compact, const char *item_prefix);
/* Close the innermost container. */
void jsonw_end(struct jsonw *w);

/* After the next item's comma, `text` (a line break and its indent)
 * instead of the space. */
void jsonw_break(struct jsonw *w, const char *text);

void jsonw_string(struct jsonw *w, const char *key, const char *s);
void jsonw_u64(struct jsonw *w, const char *key, uint64_t v);
void jsonw_i64(struct jsonw *w, const char *key, int64_t v);
/* A number with this many decimals (NaN and infinities: null). */
void jsonw_double(struct jsonw *w, const char *key, int decimals, double v);
void jsonw_bool(struct jsonw *w, const char *key, bool v);
void jsonw_null(struct jsonw *w, const char *key);
/* A value the caller writes itself to w->f right after (a preformatted
 * number, an embedded document): the separator and key only. */
void jsonw_key(struct jsonw *w, const char *key);

#endif
