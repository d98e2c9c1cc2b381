/* Python's pstats format: what `pstats.Stats(FILE)`, snakeviz and IDEs load.
 * The file is one marshal'ed dict, as cProfile's dump_stats writes it:
 *
 *	{(file, firstlineno, name): (cc, nc, tt, ct, {caller: (nc, cc, tt, ct)})}
 *
 * From samples: a function's call counts are the samples with it on the
 * stack (recursion counted once), tt its own samples and ct those samples
 * times the time one sample stands for; a caller's entry counts the samples
 * in which that caller called it. Samples without Python frames are one
 * pseudo function, as cProfile shows built-ins ("~", 0, "<...>"). */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "idindex.h"
#include "pstats.h"
#include "sanitize.h"
#include "order.h"

/* Per interned function (index 0: "no Python frames"). */
struct fn_stats {
	uint64_t own, total;
	uint32_t seen_in;        /* entry + 1 that last counted it: once per stack */
};

/* A (callee, caller) pair and the samples in which the caller called it. */
struct edge {
	uint32_t callee, caller;
	uint64_t calls, own;     /* own: samples where the callee was innermost */
	uint32_t seen_in;
};

struct pstats_build {
	const struct intern *in;
	struct fn_stats *fns;
	uint32_t nfns;
	struct edge *edges;
	uint32_t nedges, edges_cap;
	struct idindex index;    /* (callee, caller) -> edge index + 1 */
};

static uint32_t
pair_hash(uint32_t callee, uint32_t caller)
{
	return (uint32_t)hash_mix64(((uint64_t)callee << 32) | caller);
}

static uint32_t
edge_hash(const void *ctx, uint32_t id)
{
	const struct edge *e = &((const struct edge *)ctx)[id - 1];
	return pair_hash(e->callee, e->caller);
}

static struct edge *
edge_of(struct pstats_build *b, uint32_t callee, uint32_t caller)
{
	if (!idindex_reserve(&b->index, 1, b->nedges + 1, 256, edge_hash, b->edges))
		return NULL;
	uint32_t i = idindex_start(&b->index, pair_hash(callee, caller));
	for (; b->index.slots[i]; i = idindex_next(&b->index, i)) {
		struct edge *e = &b->edges[b->index.slots[i] - 1];
		if (e->callee == callee && e->caller == caller)
			return e;
	}
	if (!grow_array((void **)&b->edges, &b->edges_cap, b->nedges + 1, sizeof *b->edges))
		return NULL;
	b->edges[b->nedges] = (struct edge){.callee = callee, .caller = caller};
	b->index.slots[i] = ++b->nedges;
	return &b->edges[b->nedges - 1];
}

static uint32_t
func_of_frame(const struct intern *in, uint32_t frame)
{
	return intern_frame_at(in, frame)->func_id;
}

/* One profile entry (entry number k): its stack's functions, innermost
 * first, counted once each, and each caller-callee pair once. */
static bool
count_entry(struct pstats_build *b, uint32_t k, uint32_t stack_id, uint64_t w)
{
	const struct intern *in = b->in;
	if (stack_id == 0) {
		b->fns[0].own += w;
		b->fns[0].total += w;
		return true;
	}
	uint32_t callee = 0, depth = 0;
	for (uint32_t s = stack_id; s; s = intern_stack_at(in, s)->parent, depth++) {
		uint32_t fn = func_of_frame(in, intern_stack_at(in, s)->frame);
		struct fn_stats *f = &b->fns[fn];
		if (depth == 0)
			f->own += w;
		if (f->seen_in != k + 1) {
			f->seen_in = k + 1;
			f->total += w;
		}
		if (depth > 0) {
			struct edge *e = edge_of(b, callee, fn);
			if (!e)
				return false;
			if (e->seen_in != k + 1) {
				e->seen_in = k + 1;
				e->calls += w;
			}
			/* the innermost frame's own time, under its direct caller */
			if (depth == 1)
				e->own += w;
		}
		callee = fn;
	}
	return true;
}

/* ---- marshal, as Python's marshal module reads it ---- */

static void
put_le(FILE *f, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		fputc((int)((v >> (8 * i)) & 0xff), f);
}

static void
m_int(FILE *f, uint64_t v)
{
	if (v <= INT32_MAX) {
		fputc('i', f);
		put_le(f, v, 4);
		return;
	}
	/* TYPE_LONG: 15-bit digits, least significant first */
	uint32_t n = 0;
	for (uint64_t x = v; x; x >>= 15)
		n++;
	fputc('l', f);
	put_le(f, n, 4);
	for (uint64_t x = v; x; x >>= 15)
		put_le(f, x & 0x7fff, 2);
}

static void
m_float(FILE *f, double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	fputc('g', f);
	put_le(f, bits, 8);
}

/* A str, terminal-safe: pstats prints names as they are, and a target's
 * escape sequences must not reach the reader's terminal. What
 * sanitize_for_terminal leaves is valid UTF-8 (it escapes invalid bytes
 * and NULs), as Python's marshal requires. */
static void
m_str(FILE *f, const char *raw)
{
	char s[4096];
	size_t len = sanitize_for_terminal(raw, s, sizeof s);
	fputc('u', f);
	put_le(f, len, 4);
	fwrite(s, 1, len, f);
}

static void
m_tuple(FILE *f, uint32_t n)
{
	fputc('(', f);
	put_le(f, n, 4);
}

/* A key for what is not a Python function, as cProfile keys built-ins. */
static void
m_pseudo_key(FILE *f, const char *name)
{
	m_tuple(f, 3);
	m_str(f, "~");
	m_int(f, 0);
	m_str(f, name);
}

/* (file, firstlineno, name) of function fn. */
static void
m_func_key(FILE *f, const struct intern *in, uint32_t fn)
{
	if (fn == 0) {
		m_pseudo_key(f, "<no Python frames>");
		return;
	}
	m_tuple(f, 3);
	const struct interned_func *c = intern_func_at(in, fn);
	m_str(f, c->filename ? c->filename : "");
	m_int(f, c->firstlineno > 0 ? (uint64_t)c->firstlineno : 0);
	m_str(f, c->qualname ? c->qualname : "");
}

/* Calls (primitive and all: samples count both), own and cumulative time. */
static void
m_figures(FILE *f, uint64_t calls, uint64_t own, double period_s)
{
	m_int(f, calls);
	m_int(f, calls);
	m_float(f, (double)own * period_s);
	m_float(f, (double)calls * period_s);
}

static int
cmp_by_callee(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	return (x->callee > y->callee) - (x->callee < y->callee);
}

static void
put_stats(FILE *f, struct pstats_build *b, double period_s)
{
	/* edges grouped by callee: each function's callers follow its figures */
	order_sort(b->edges, b->nedges, sizeof *b->edges, cmp_by_callee);
	fputc('{', f);
	uint32_t e = 0;
	bool any = false;
	for (uint32_t fn = 0; fn < b->nfns; fn++) {
		const struct fn_stats *s = &b->fns[fn];
		while (e < b->nedges && b->edges[e].callee < fn)
			e++;
		if (!s->total)
			continue;
		any = true;
		m_func_key(f, b->in, fn);
		m_tuple(f, 5);
		m_figures(f, s->total, s->own, period_s);
		fputc('{', f);
		for (; e < b->nedges && b->edges[e].callee == fn; e++) {
			const struct edge *x = &b->edges[e];
			m_func_key(f, b->in, x->caller);
			m_tuple(f, 4);
			m_figures(f, x->calls, x->own, period_s);
		}
		fputc('0', f);
	}
	if (!any) {
		/* pstats refuses an empty dict: a run without samples says so */
		m_pseudo_key(f, "<no samples>");
		m_tuple(f, 5);
		m_figures(f, 0, 0, period_s);
		fputc('{', f);
		fputc('0', f);
	}
	fputc('0', f);
}

int
pstats_write(const struct profile *p, const struct procset *ps, const struct export_meta *meta,
	     FILE *f)
{
	struct pstats_build b = {.in = &ps->in, .nfns = appendlog_count(ps->in.funcs) + 1};
	b.fns = calloc(b.nfns, sizeof *b.fns);
	struct profile_entry *v = profile_sorted_entries(p);
	int rc = b.fns && v ? 0 : -1;
	for (uint32_t k = 0; rc == 0 && k < p->count; k++)
		if (!count_entry(&b, k, v[k].stack_id, v[k].weight))
			rc = -1;
	if (rc == 0)
		put_stats(f, &b, meta->period_ns ? (double)meta->period_ns / 1e9 : 0.001);
	free(v);
	free(b.fns);
	free(b.edges);
	idindex_free(&b.index);
	return rc == 0 && !ferror(f) ? 0 : -1;
}
