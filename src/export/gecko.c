/* The Firefox Profiler's processed profile format (the JSON it saves and
 * opens; preprocessedProfileVersion 57, which it upgrades on load, as it
 * does CPython's own profiler's files): one thread track per thread of each
 * process, its samples with their times and weights, and per thread the
 * stack, frame and function tables it needs; strings in one shared array.
 * Written from the timeline (timeline.h), not the profile: the profiler
 * shows when, not only how much. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gecko.h"
#include "grow.h"
#include "jsonw.h"

#define PREPROCESSED_VERSION 57
#define GECKO_VERSION 32

/* Category 0 "Other" (no Python frames), 1 "Python". */
enum { CAT_OTHER, CAT_PYTHON };

/* A mirror id's place in the current thread's table: valid when mark is
 * the thread's number + 1. */
struct local {
	uint32_t mark, index;
};

struct u32s {
	uint32_t *v;
	uint32_t n, cap;
};

static bool
push(struct u32s *a, uint32_t x)
{
	if (!grow_array((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v))
		return false;
	a->v[a->n++] = x;
	return true;
}

struct gecko_build {
	const struct intern *in;
	/* shared strings: index 0 is "<no Python frames>"; a function's name
	 * and file get theirs when first used (+1: 0 = none yet) */
	const char **strings;
	uint32_t nstrings, strings_cap;
	uint32_t *name_str, *file_str;
	/* per thread: the mirror's stack, frame and function ids given rows */
	struct local *stack_at, *frame_at, *func_at;
	uint32_t mark;
	struct u32s stack_frame, stack_prefix, frame_func, frame_line, func_of;
	uint32_t pseudo_frame;       /* "<no Python frames>"'s frame row, UINT32_MAX: none */
};

static uint32_t
add_string(struct gecko_build *b, const char *s)
{
	if (!grow_array((void **)&b->strings, &b->strings_cap, b->nstrings + 1, sizeof *b->strings))
		return UINT32_MAX;
	b->strings[b->nstrings] = s ? s : "";
	return b->nstrings++;
}

static bool
func_row(struct gecko_build *b, uint32_t func, uint32_t *row)
{
	struct local *l = &b->func_at[func];
	if (l->mark == b->mark) {
		*row = l->index;
		return true;
	}
	if (!b->name_str[func]) {
		const struct interned_func *fn = intern_func_at(b->in, func);
		uint32_t n = add_string(b, fn->qualname), f = add_string(b, fn->filename);
		if (n == UINT32_MAX || f == UINT32_MAX)
			return false;
		b->name_str[func] = n + 1;
		b->file_str[func] = f + 1;
	}
	*l = (struct local){b->mark, b->func_of.n};
	*row = l->index;
	return push(&b->func_of, func);
}

static bool
frame_row(struct gecko_build *b, uint32_t frame, uint32_t *row)
{
	struct local *l = &b->frame_at[frame];
	if (l->mark == b->mark) {
		*row = l->index;
		return true;
	}
	const struct interned_frame *fr = intern_frame_at(b->in, frame);
	uint32_t func;
	if (!func_row(b, fr->func_id, &func))
		return false;
	*l = (struct local){b->mark, b->frame_func.n};
	*row = l->index;
	return push(&b->frame_func, func) && push(&b->frame_line, (uint32_t)fr->line);
}

/* The row of mirror stack s in this thread's stack table (its prefixes
 * first); stack 0 is one "<no Python frames>" frame. */
static bool
stack_row(struct gecko_build *b, uint32_t s, uint32_t *row)
{
	struct local *l = &b->stack_at[s];
	if (l->mark == b->mark) {
		*row = l->index;
		return true;
	}
	uint32_t frame, prefix = UINT32_MAX;
	if (!s) {
		if (b->pseudo_frame == UINT32_MAX) {
			b->pseudo_frame = b->frame_func.n;
			if (!push(&b->frame_func, UINT32_MAX) || !push(&b->frame_line, 0))
				return false;
		}
		frame = b->pseudo_frame;
	} else {
		const struct interned_stack *st = intern_stack_at(b->in, s);
		if ((st->parent && !stack_row(b, st->parent, &prefix)) || !frame_row(b, st->frame, &frame))
			return false;
	}
	*l = (struct local){b->mark, b->stack_frame.n};
	*row = l->index;
	return push(&b->stack_frame, frame) && push(&b->stack_prefix, prefix);
}

static void
put_u32_column(struct jsonw *w, const char *name, const struct u32s *a)
{
	jsonw_array(w, name);
	for (uint32_t i = 0; i < a->n; i++)
		if (a->v[i] == UINT32_MAX)
			jsonw_null(w, NULL);
		else
			jsonw_u64(w, NULL, a->v[i]);
	jsonw_end(w);
}

/* `n` copies of a constant (a JSON literal). */
static void
put_repeat(struct jsonw *w, const char *name, const char *value, uint32_t n)
{
	jsonw_array(w, name);
	for (uint32_t i = 0; i < n; i++) {
		jsonw_key(w, NULL);
		fputs(value, w->f);
	}
	jsonw_end(w);
}

/* Tables the profiler wants that tachyon-top has nothing for: empty. */
static void
put_empty_table(struct jsonw *w, const char *name, const char *const *columns)
{
	jsonw_object(w, name);
	for (const char *const *c = columns; *c; c++) {
		jsonw_array(w, *c);
		jsonw_end(w);
	}
	jsonw_u64(w, "length", 0);
	jsonw_end(w);
}

static void
put_thread_tables(struct jsonw *w, struct gecko_build *b)
{
	uint32_t ns = b->stack_frame.n, nf = b->frame_func.n, nfn = b->func_of.n;
	jsonw_object(w, "stackTable");
	put_u32_column(w, "frame", &b->stack_frame);
	put_u32_column(w, "prefix", &b->stack_prefix);
	jsonw_array(w, "category");
	for (uint32_t i = 0; i < ns; i++)
		jsonw_i64(w, NULL, b->stack_frame.v[i] == b->pseudo_frame ? CAT_OTHER : CAT_PYTHON);
	jsonw_end(w);
	put_repeat(w, "subcategory", "0", ns);
	jsonw_u64(w, "length", ns);
	jsonw_end(w);
	jsonw_object(w, "frameTable");
	put_repeat(w, "address", "-1", nf);
	put_repeat(w, "inlineDepth", "0", nf);
	jsonw_array(w, "category");
	for (uint32_t i = 0; i < nf; i++)
		jsonw_i64(w, NULL, i == b->pseudo_frame ? CAT_OTHER : CAT_PYTHON);
	jsonw_end(w);
	put_repeat(w, "subcategory", "0", nf);
	/* the pseudo frame's function is the last row of the function table */
	jsonw_array(w, "func");
	for (uint32_t i = 0; i < nf; i++)
		jsonw_u64(w, NULL, b->frame_func.v[i] == UINT32_MAX ? nfn : b->frame_func.v[i]);
	jsonw_end(w);
	put_repeat(w, "nativeSymbol", "null", nf);
	put_repeat(w, "innerWindowID", "null", nf);
	put_repeat(w, "implementation", "null", nf);
	jsonw_array(w, "line");
	for (uint32_t i = 0; i < nf; i++)
		if (i == b->pseudo_frame)
			jsonw_null(w, NULL);
		else
			jsonw_i64(w, NULL, (int32_t)b->frame_line.v[i]);
	jsonw_end(w);
	put_repeat(w, "column", "null", nf);
	put_repeat(w, "optimizations", "null", nf);
	jsonw_u64(w, "length", nf);
	jsonw_end(w);
	bool pseudo = b->pseudo_frame != UINT32_MAX;
	uint32_t nfuncs = nfn + pseudo;
	jsonw_object(w, "funcTable");
	jsonw_array(w, "name");
	for (uint32_t i = 0; i < nfn; i++)
		jsonw_u64(w, NULL, b->name_str[b->func_of.v[i]] - 1);
	if (pseudo)
		jsonw_u64(w, NULL, 0);
	jsonw_end(w);
	/* Python code is the profiler's "JS"; native (C) code is not */
	jsonw_array(w, "isJS");
	for (uint32_t i = 0; i < nfn; i++)
		jsonw_bool(w, NULL, intern_func_at(b->in, b->func_of.v[i])->kind != FUNC_NATIVE);
	if (pseudo)
		jsonw_bool(w, NULL, true);
	jsonw_end(w);
	put_repeat(w, "relevantForJS", "false", nfuncs);
	put_repeat(w, "resource", "-1", nfuncs);
	jsonw_array(w, "fileName");
	for (uint32_t i = 0; i < nfn; i++) {
		if (intern_func_at(b->in, b->func_of.v[i])->kind == FUNC_MADE_UP)
			jsonw_null(w, NULL);
		else
			jsonw_u64(w, NULL, b->file_str[b->func_of.v[i]] - 1);
	}
	if (pseudo)
		jsonw_null(w, NULL);
	jsonw_end(w);
	jsonw_array(w, "lineNumber");
	for (uint32_t i = 0; i < nfn; i++) {
		const struct interned_func *fn = intern_func_at(b->in, b->func_of.v[i]);
		if (fn->kind == FUNC_NATIVE)
			jsonw_null(w, NULL);
		else
			jsonw_i64(w, NULL, fn->firstlineno);
	}
	if (pseudo)
		jsonw_null(w, NULL);
	jsonw_end(w);
	put_repeat(w, "columnNumber", "null", nfuncs);
	jsonw_u64(w, "length", nfuncs);
	jsonw_end(w);
	static const char *const resources[] = {"lib", "name", "host", "type", NULL};
	static const char *const symbols[] = {"libIndex", "address", "name", "functionSize", NULL};
	static const char *const markers[] = {"data", "name", "startTime", "endTime", "phase",
					      "category", NULL};
	put_empty_table(w, "resourceTable", resources);
	put_empty_table(w, "nativeSymbols", symbols);
	put_empty_table(w, "markers", markers);
}

/* One thread: its moments (order[first..last), in time order) as samples. */
static bool
put_thread(struct jsonw *w, struct gecko_build *b, const struct timeline *t, uint32_t track,
	   const uint32_t *order, uint32_t first, uint32_t last)
{
	const struct timeline_track *tr = &t->tracks[track];
	b->mark = track + 1;
	b->stack_frame.n = b->stack_prefix.n = b->frame_func.n = b->frame_line.n = b->func_of.n = 0;
	b->pseudo_frame = UINT32_MAX;
	struct u32s rows = {0};
	bool ok = true;
	for (uint32_t i = first; i < last && ok; i++) {
		uint32_t row;
		ok = stack_row(b, t->moments[order[i]].stack, &row) && push(&rows, row);
	}
	if (ok) {
		jsonw_object(w, NULL);
		jsonw_string(w, "name", tr->earlier ? "exited thread" : tr->name[0] ? tr->name : "thread");
		jsonw_bool(w, "isMainThread", tr->main);
		jsonw_string(w, "processType", "default");
		jsonw_string(w, "processName", tr->cmdline);
		jsonw_u64(w, "processStartupTime", 0);
		jsonw_null(w, "processShutdownTime");
		jsonw_u64(w, "registerTime", 0);
		jsonw_null(w, "unregisterTime");
		jsonw_array(w, "pausedRanges");
		jsonw_end(w);
		char pid[16];
		snprintf(pid, sizeof pid, "%d", (int)tr->pid);
		jsonw_string(w, "pid", pid);
		jsonw_u64(w, "tid", tr->tid);
		jsonw_object(w, "samples");
		put_u32_column(w, "stack", &rows);
		jsonw_array(w, "time");
		for (uint32_t i = first; i < last; i++)
			jsonw_double(w, NULL, 3, (double)t->moments[order[i]].time_ns / 1e6);
		jsonw_end(w);
		jsonw_array(w, "weight");
		for (uint32_t i = first; i < last; i++)
			jsonw_u64(w, NULL, t->moments[order[i]].weight);
		jsonw_end(w);
		jsonw_string(w, "weightType", "samples");
		jsonw_u64(w, "length", last - first);
		jsonw_end(w);
		put_thread_tables(w, b);
		jsonw_end(w);
	}
	free(rows.v);
	return ok;
}

int
gecko_write(const struct timeline *t, const struct procset *ps, const struct export_meta *meta,
	    FILE *f)
{
	struct gecko_build b = {.in = &ps->in};
	struct jsonw w;
	jsonw_init(&w, f);
	jsonw_tight(&w);
	uint32_t nstacks = appendlog_count(ps->in.stacks), nframes = appendlog_count(ps->in.frames);
	uint32_t nfuncs = appendlog_count(ps->in.funcs);
	b.stack_at = calloc(nstacks, sizeof *b.stack_at);
	b.frame_at = calloc(nframes, sizeof *b.frame_at);
	b.func_at = calloc(nfuncs, sizeof *b.func_at);
	b.name_str = calloc(nfuncs, sizeof *b.name_str);
	b.file_str = calloc(nfuncs, sizeof *b.file_str);
	/* the moments by thread, each thread's in time order (a counting sort) */
	uint32_t *start = calloc((size_t)t->ntracks + 1, sizeof *start);
	uint32_t *order = malloc(((size_t)t->count + 1) * sizeof *order);
	bool ok = b.stack_at && b.frame_at && b.func_at && b.name_str && b.file_str && start && order &&
		  add_string(&b, "<no Python frames>") == 0;
	if (ok) {
		for (uint32_t i = 0; i < t->count; i++)
			start[t->moments[i].track + 1]++;
		for (uint32_t k = 0; k < t->ntracks; k++)
			start[k + 1] += start[k];
		uint32_t *fill = malloc(((size_t)t->ntracks + 1) * sizeof *fill);
		ok = fill != NULL;
		if (ok) {
			memcpy(fill, start, ((size_t)t->ntracks + 1) * sizeof *fill);
			for (uint32_t i = 0; i < t->count; i++)
				order[fill[t->moments[i].track]++] = i;
			free(fill);
		}
	}
	if (ok) {
		double interval_ms = (double)meta->period_ns / 1e6;
		jsonw_object(&w, NULL);
		jsonw_object(&w, "meta");
		jsonw_double(&w, "interval", 6, interval_ms);
		jsonw_double(&w, "startTime", 3, (double)meta->start_unix_ns / 1e6);
		jsonw_u64(&w, "processType", 0);
		char product[160];
		snprintf(product, sizeof product, "tachyon-top: pid %d", (int)meta->pid);
		jsonw_string(&w, "product", product);
		jsonw_string(&w, "importedFrom", "tachyon-top " PACKAGE_VERSION);
		jsonw_u64(&w, "stackwalk", 0);
		jsonw_bool(&w, "symbolicated", true);
		jsonw_string(&w, "platform", "Linux");
		jsonw_string(&w, "toolkit", "");
		jsonw_string(&w, "misc", meta->command ? meta->command : "");
		jsonw_i64(&w, "version", GECKO_VERSION);
		jsonw_i64(&w, "preprocessedProfileVersion", PREPROCESSED_VERSION);
		jsonw_array(&w, "categories");
		static const char *const categories[][2] = {{"Other", "grey"}, {"Python", "yellow"}};
		for (size_t i = 0; i < 2; i++) {
			jsonw_object(&w, NULL);
			jsonw_string(&w, "name", categories[i][0]);
			jsonw_string(&w, "color", categories[i][1]);
			jsonw_array(&w, "subcategories");
			jsonw_string(&w, NULL, "Other");
			jsonw_end(&w);
			jsonw_end(&w);
		}
		jsonw_end(&w);
		jsonw_array(&w, "markerSchema");
		jsonw_end(&w);
		static const char *const extensions[] = {"id", "name", "baseURL", NULL};
		put_empty_table(&w, "extensions", extensions);
		jsonw_end(&w);
		jsonw_break(&w, "\n");
		jsonw_array(&w, "libs");
		jsonw_end(&w);
		jsonw_array(&w, "pages");
		jsonw_end(&w);
		jsonw_array(&w, "threads");
		jsonw_style(&w, true, "\n");
		for (uint32_t k = 0; k < t->ntracks && ok; k++)
			if (start[k] != start[k + 1])
				ok = put_thread(&w, &b, t, k, order, start[k], start[k + 1]);
	}
	if (ok) {
		jsonw_end(&w);
		jsonw_break(&w, "\n");
		jsonw_object(&w, "shared");
		jsonw_array(&w, "stringArray");
		for (uint32_t i = 0; i < b.nstrings; i++)
			jsonw_string(&w, NULL, b.strings[i]);
		jsonw_end(&w);
		jsonw_object(&w, "sources");
		jsonw_u64(&w, "length", 0);
		jsonw_array(&w, "uuid");
		jsonw_end(&w);
		jsonw_array(&w, "filename");
		jsonw_end(&w);
		jsonw_end(&w);
		jsonw_end(&w);
		jsonw_end(&w);
		fputc('\n', f);
	}
	free(b.stack_at);
	free(b.frame_at);
	free(b.func_at);
	free(b.name_str);
	free(b.file_str);
	free(b.strings);
	free(b.stack_frame.v);
	free(b.stack_prefix.v);
	free(b.frame_func.v);
	free(b.frame_line.v);
	free(b.func_of.v);
	free(start);
	free(order);
	return ok && !ferror(f) ? 0 : -1;
}
