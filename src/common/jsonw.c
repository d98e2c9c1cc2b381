/* Writing JSON (jsonw.h). */
#include "config.h"

#include <inttypes.h>

#include "jsonw.h"
#include "sanitize.h"

void
jsonw_init(struct jsonw *w, FILE *f)
{
	*w = (struct jsonw){.f = f};
}

void
jsonw_tight(struct jsonw *w)
{
	w->tight = true;
}

/* The separator before an item of the innermost container, and its key. */
void
jsonw_key(struct jsonw *w, const char *key)
{
	if (w->depth > 0) {
		struct jsonw_level *l = &w->level[w->depth - 1];
		if (l->any) {
			fputc(',', w->f);
			if (w->pending_break)
				fputs(w->pending_break, w->f);
			else if (!l->compact)
				fputc(' ', w->f);
		}
		w->pending_break = NULL;
		if (l->item_prefix)
			fputs(l->item_prefix, w->f);
		l->any = true;
	}
	if (key) {
		json_put_string(w->f, key);
		fputs(w->tight ? ":" : ": ", w->f);
	}
}

/* A value's start: its separator and key, unless it is inside containers
 * past the deepest (then nothing of it is written). */
static bool
start_value(struct jsonw *w, const char *key)
{
	if (w->too_deep)
		return false;
	jsonw_key(w, key);
	return true;
}

static void
open_container(struct jsonw *w, const char *key, bool is_array)
{
	if (w->too_deep || w->depth == JSONW_MAX_DEPTH) {
		/* deeper than any document here: kept well-formed */
		if (!w->too_deep)
			jsonw_null(w, key);
		w->too_deep++;
		return;
	}
	jsonw_key(w, key);
	fputc(is_array ? '[' : '{', w->f);
	w->level[w->depth++] = (struct jsonw_level){.is_array = is_array, .compact = w->tight};
}

void
jsonw_object(struct jsonw *w, const char *key)
{
	open_container(w, key, false);
}

void
jsonw_array(struct jsonw *w, const char *key)
{
	open_container(w, key, true);
}

void
jsonw_style(struct jsonw *w, bool compact, const char *item_prefix)
{
	if (w->depth == 0 || w->too_deep)
		return;
	w->level[w->depth - 1].compact = compact;
	w->level[w->depth - 1].item_prefix = item_prefix;
}

void
jsonw_end(struct jsonw *w)
{
	if (w->too_deep) {
		w->too_deep--;
		return;
	}
	if (w->depth == 0)
		return;
	w->depth--;
	fputc(w->level[w->depth].is_array ? ']' : '}', w->f);
}

void
jsonw_break(struct jsonw *w, const char *text)
{
	w->pending_break = text;
}

void
jsonw_string(struct jsonw *w, const char *key, const char *s)
{
	if (start_value(w, key))
		json_put_string(w->f, s);
}

void
jsonw_u64(struct jsonw *w, const char *key, uint64_t v)
{
	if (start_value(w, key))
		fprintf(w->f, "%" PRIu64, v);
}

void
jsonw_i64(struct jsonw *w, const char *key, int64_t v)
{
	if (start_value(w, key))
		fprintf(w->f, "%" PRId64, v);
}

void
jsonw_double(struct jsonw *w, const char *key, int decimals, double v)
{
	if (!start_value(w, key))
		return;
	/* JSON has no NaN or infinity */
	if (v != v || v - v != 0)
		fputs("null", w->f);
	else
		fprintf(w->f, "%.*f", decimals, v);
}

void
jsonw_bool(struct jsonw *w, const char *key, bool v)
{
	if (start_value(w, key))
		fputs(v ? "true" : "false", w->f);
}

void
jsonw_null(struct jsonw *w, const char *key)
{
	if (start_value(w, key))
		fputs("null", w->f);
}
