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
#include "sanitize.h"

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
put_u32_column(FILE *f, const char *name, const struct u32s *a, bool last)
{
	fprintf(f, "\"%s\":[", name);
	for (uint32_t i = 0; i < a->n; i++)
		if (a->v[i] == UINT32_MAX)
			fputs(i ? ",null" : "null", f);
		else
			fprintf(f, i ? ",%u" : "%u", a->v[i]);
	fputs(last ? "]" : "],", f);
}

/* `n` copies of a constant. */
static void
put_repeat(FILE *f, const char *name, const char *value, uint32_t n)
{
	fprintf(f, "\"%s\":[", name);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, i ? ",%s" : "%s", value);
	fputs("],", f);
}

static void
put_thread_tables(FILE *f, struct gecko_build *b)
{
	uint32_t ns = b->stack_frame.n, nf = b->frame_func.n, nfn = b->func_of.n;
	fputs("\"stackTable\":{", f);
	put_u32_column(f, "frame", &b->stack_frame, false);
	put_u32_column(f, "prefix", &b->stack_prefix, false);
	fputs("\"category\":[", f);
	for (uint32_t i = 0; i < ns; i++)
		fprintf(f, i ? ",%d" : "%d", b->stack_frame.v[i] == b->pseudo_frame ? CAT_OTHER : CAT_PYTHON);
	fputs("],", f);
	put_repeat(f, "subcategory", "0", ns);
	fprintf(f, "\"length\":%u},\"frameTable\":{", ns);
	put_repeat(f, "address", "-1", nf);
	put_repeat(f, "inlineDepth", "0", nf);
	fputs("\"category\":[", f);
	for (uint32_t i = 0; i < nf; i++)
		fprintf(f, i ? ",%d" : "%d", i == b->pseudo_frame ? CAT_OTHER : CAT_PYTHON);
	fputs("],", f);
	put_repeat(f, "subcategory", "0", nf);
	/* the pseudo frame's function is the last row of the function table */
	fputs("\"func\":[", f);
	for (uint32_t i = 0; i < nf; i++)
		fprintf(f, i ? ",%u" : "%u", b->frame_func.v[i] == UINT32_MAX ? nfn : b->frame_func.v[i]);
	fputs("],", f);
	put_repeat(f, "nativeSymbol", "null", nf);
	put_repeat(f, "innerWindowID", "null", nf);
	put_repeat(f, "implementation", "null", nf);
	fputs("\"line\":[", f);
	for (uint32_t i = 0; i < nf; i++)
		if (i == b->pseudo_frame)
			fputs(i ? ",null" : "null", f);
		else
			fprintf(f, i ? ",%d" : "%d", (int32_t)b->frame_line.v[i]);
	fputs("],", f);
	put_repeat(f, "column", "null", nf);
	put_repeat(f, "optimizations", "null", nf);
	bool pseudo = b->pseudo_frame != UINT32_MAX;
	uint32_t nfuncs = nfn + pseudo;
	fprintf(f, "\"length\":%u},\"funcTable\":{\"name\":[", nf);
	for (uint32_t i = 0; i < nfn; i++)
		fprintf(f, i ? ",%u" : "%u", b->name_str[b->func_of.v[i]] - 1);
	if (pseudo)
		fputs(nfn ? ",0" : "0", f);
	fputs("],", f);
	/* Python code is the profiler's "JS"; native (C) code is not */
	fputs("\"isJS\":[", f);
	for (uint32_t i = 0; i < nfn; i++) {
		const struct interned_func *fn = intern_func_at(b->in, b->func_of.v[i]);
		fprintf(f, "%s%s", i ? "," : "", fn->kind == FUNC_NATIVE ? "false" : "true");
	}
	if (pseudo)
		fputs(nfn ? ",true" : "true", f);
	fputs("],", f);
	put_repeat(f, "relevantForJS", "false", nfuncs);
	put_repeat(f, "resource", "-1", nfuncs);
	fputs("\"fileName\":[", f);
	for (uint32_t i = 0; i < nfn; i++) {
		const struct interned_func *fn = intern_func_at(b->in, b->func_of.v[i]);
		if (fn->kind == FUNC_MADE_UP)
			fputs(i ? ",null" : "null", f);
		else
			fprintf(f, i ? ",%u" : "%u", b->file_str[b->func_of.v[i]] - 1);
	}
	if (pseudo)
		fputs(nfn ? ",null" : "null", f);
	fputs("],\"lineNumber\":[", f);
	for (uint32_t i = 0; i < nfn; i++) {
		const struct interned_func *fn = intern_func_at(b->in, b->func_of.v[i]);
		if (fn->kind == FUNC_NATIVE)
			fputs(i ? ",null" : "null", f);
		else
			fprintf(f, i ? ",%d" : "%d", fn->firstlineno);
	}
	if (pseudo)
		fputs(nfn ? ",null" : "null", f);
	fputs("],", f);
	put_repeat(f, "columnNumber", "null", nfuncs);
	fprintf(f, "\"length\":%u},", nfuncs);
	fputs("\"resourceTable\":{\"lib\":[],\"name\":[],\"host\":[],\"type\":[],\"length\":0},"
	      "\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],"
	      "\"length\":0},"
	      "\"markers\":{\"data\":[],\"name\":[],\"startTime\":[],\"endTime\":[],\"phase\":[],"
	      "\"category\":[],\"length\":0}", f);
}

/* One thread: its moments (order[first..last), in time order) as samples. */
static bool
put_thread(FILE *f, struct gecko_build *b, const struct timeline *t, uint32_t track,
	   const uint32_t *order, uint32_t first, uint32_t last, bool comma)
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
		fputs(comma ? ",\n{" : "\n{", f);
		fputs("\"name\":", f);
		json_put_string(f, tr->earlier ? "exited thread" : tr->name[0] ? tr->name : "thread");
		fprintf(f, ",\"isMainThread\":%s,\"processType\":\"default\",\"processName\":",
			tr->main ? "true" : "false");
		json_put_string(f, tr->cmdline);
		fprintf(f, ",\"processStartupTime\":0,\"processShutdownTime\":null,\"registerTime\":0,"
			"\"unregisterTime\":null,\"pausedRanges\":[],\"pid\":\"%d\",\"tid\":%llu,",
			(int)tr->pid, (unsigned long long)tr->tid);
		fputs("\"samples\":{", f);
		put_u32_column(f, "stack", &rows, false);
		fputs("\"time\":[", f);
		for (uint32_t i = first; i < last; i++)
			fprintf(f, i > first ? ",%.3f" : "%.3f",
				(double)t->moments[order[i]].time_ns / 1e6);
		fputs("],\"weight\":[", f);
		for (uint32_t i = first; i < last; i++)
			fprintf(f, i > first ? ",%u" : "%u", t->moments[order[i]].weight);
		fprintf(f, "],\"weightType\":\"samples\",\"length\":%u},", last - first);
		put_thread_tables(f, b);
		fputc('}', f);
	}
	free(rows.v);
	return ok;
}

int
gecko_write(const struct timeline *t, const struct procset *ps, const struct export_meta *meta,
	    FILE *f)
{
	struct gecko_build b = {.in = &ps->in};
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
		fprintf(f, "{\"meta\":{\"interval\":%.6f,\"startTime\":%.3f,\"processType\":0,"
			"\"product\":", interval_ms, (double)meta->start_unix_ns / 1e6);
		char product[160];
		snprintf(product, sizeof product, "tachyon-top: pid %d", (int)meta->pid);
		json_put_string(f, product);
		fputs(",\"importedFrom\":\"tachyon-top " PACKAGE_VERSION "\",\"stackwalk\":0,"
		      "\"symbolicated\":true,\"platform\":\"Linux\",\"toolkit\":\"\",\"misc\":", f);
		json_put_string(f, meta->command ? meta->command : "");
		fprintf(f, ",\"version\":%d,\"preprocessedProfileVersion\":%d,"
			"\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":"
			"[\"Other\"]},{\"name\":\"Python\",\"color\":\"yellow\",\"subcategories\":"
			"[\"Other\"]}],\"markerSchema\":[],\"extensions\":{\"id\":[],\"name\":[],"
			"\"baseURL\":[],\"length\":0}},\n\"libs\":[],\"pages\":[],\"threads\":[",
			GECKO_VERSION, PREPROCESSED_VERSION);
		bool comma = false;
		for (uint32_t k = 0; k < t->ntracks && ok; k++) {
			if (start[k] == start[k + 1])
				continue;
			ok = put_thread(f, &b, t, k, order, start[k], start[k + 1], comma);
			comma = true;
		}
	}
	if (ok) {
		fputs("],\n\"shared\":{\"stringArray\":[", f);
		for (uint32_t i = 0; i < b.nstrings; i++) {
			if (i)
				fputc(',', f);
			json_put_string(f, b.strings[i]);
		}
		fputs("],\"sources\":{\"length\":0,\"uuid\":[],\"filename\":[]}}}\n", f);
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
