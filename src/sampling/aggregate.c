#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aggregate.h"
#include "hash.h"
#include "profile.h"
#include "unwinder.h"

static uint8_t
class_of(uint8_t state)
{
	return (uint8_t)(((state & TT_THREAD_ON_CPU) ? AGG_CLS_CPU : 0) |
			 ((state & TT_THREAD_GIL) ? AGG_CLS_GIL : 0) |
			 ((state & TT_THREAD_EXCEPTION) ? AGG_CLS_EXC : 0));
}

bool
agg_mode_matches(enum agg_mode mode, uint8_t cls)
{
	switch (mode) {
	case AGG_CPU: return cls & AGG_CLS_CPU;
	case AGG_GIL: return cls & AGG_CLS_GIL;
	case AGG_EXCEPTION: return cls & AGG_CLS_EXC;
	default: return true;
	}
}

int
agg_init(struct aggregate *a, const struct procset *procs, uint64_t now_ns)
{
	memset(a, 0, sizeof *a);
	a->procs = procs;
	a->window_start_ns = now_ns;
	return 0;
}

void
agg_free(struct aggregate *a)
{
	free(a->entries);
	free(a->threads);
	free(a->exited_procs);
	free(a->seen.start);
	free(a->funcmap.of_interned);
	free(a->funcs);
	free(a->func_index);
	memset(a, 0, sizeof *a);
}

void
agg_reset(struct aggregate *a, uint64_t now_ns)
{
	const struct procset *ps = a->procs;
	/* Function identities stay valid; only counts go. */
	struct agg_codemap funcmap = a->funcmap;
	struct agg_func *funcs = a->funcs;
	uint32_t nfuncs = a->nfuncs, fcap = a->funcs_cap, *fidx = a->func_index, nfidx = a->nfunc_index;
	free(a->entries);
	free(a->threads);
	free(a->exited_procs);
	free(a->seen.start);
	memset(a, 0, sizeof *a);
	a->procs = ps;
	a->funcmap = funcmap;
	a->funcs = funcs;
	a->nfuncs = nfuncs;
	a->funcs_cap = fcap;
	a->func_index = fidx;
	a->nfunc_index = nfidx;
	a->window_start_ns = now_ns;
}

static uint32_t
entry_hash(uint16_t slot, uint16_t proc, uint8_t cls, uint32_t stack_id)
{
	return hash_mix64((((uint64_t)slot << 40) | ((uint64_t)cls << 32) | stack_id) ^
			  ((uint64_t)proc * 0x9e3779b97f4a7c15ull));
}

/* The entry for (slot, process, cls, stack) in table e of n (a power of
 * two) slots, claimed if new; the table must have room. The process is in
 * the key because stack IDs are per process: the exited bucket holds
 * entries of every process under one slot. */
static struct agg_entry *
probe(struct agg_entry *e, uint32_t n, uint16_t slot, uint16_t proc, uint8_t cls,
      uint32_t stack_id, bool *fresh)
{
	for (uint32_t h = entry_hash(slot, proc, cls, stack_id) & (n - 1);; h = (h + 1) & (n - 1)) {
		if (!e[h].used) {
			e[h].used = true;
			e[h].stack_id = stack_id;
			e[h].slot = slot;
			e[h].proc = proc;
			e[h].cls = cls;
			*fresh = true;
			return &e[h];
		}
		if (e[h].stack_id == stack_id && e[h].slot == slot && e[h].proc == proc &&
		    e[h].cls == cls) {
			*fresh = false;
			return &e[h];
		}
	}
}

/* Copy the entries into a table of n slots, those of threads marked in
 * `fold` merged under AGG_EXITED_SLOT, and those of process fold_proc (-1:
 * none) under AGG_EXITED_SLOT and AGG_EXITED_PROC. */
static bool
rehash(struct aggregate *a, uint32_t n, const uint8_t *fold, int32_t fold_proc)
{
	struct agg_entry *e = calloc(n, sizeof *e);
	if (!e)
		return false;
	uint32_t count = 0;
	for (uint32_t i = 0; i < a->nslots; i++) {
		const struct agg_entry *o = &a->entries[i];
		if (!o->used)
			continue;
		uint16_t slot = fold && o->slot < a->nthreads && fold[o->slot] ? AGG_EXITED_SLOT : o->slot;
		uint16_t proc = o->proc;
		if ((int32_t)proc == fold_proc) {
			slot = AGG_EXITED_SLOT;
			proc = AGG_EXITED_PROC;
		}
		bool fresh;
		struct agg_entry *d = probe(e, n, slot, proc, o->cls, o->stack_id, &fresh);
		count += fresh;
		d->session += o->session;
		d->window += o->window;
		d->current += o->current;
	}
	free(a->entries);
	a->entries = e;
	a->nslots = n;
	a->count = count;
	return true;
}

static bool
grow_entries(struct aggregate *a)
{
	return rehash(a, a->nslots ? a->nslots * 2 : 4096, NULL, -1);
}

static void
add_thread(struct agg_thread *to, const struct agg_thread *t)
{
	for (int k = 0; k < 2; k++) {
		to->samples[k] += t->samples[k];
		to->gil[k] += t->gil[k];
		to->gil_wait[k] += t->gil_wait[k];
		to->on_cpu[k] += t->on_cpu[k];
		to->idle[k] += t->idle[k];
		to->gc[k] += t->gc[k];
	}
	to->cur_samples += t->cur_samples;
	to->cur_gil += t->cur_gil;
	to->cur_gil_wait += t->cur_gil_wait;
	to->cur_on_cpu += t->cur_on_cpu;
	to->cur_idle += t->cur_idle;
	to->cur_gc += t->cur_gc;
	to->seen = to->seen || t->seen;
}

static struct agg_thread *exited_of(struct aggregate *a, uint32_t proc);

/* Fold gone threads into the exited bucket: those gone for AGG_FOLD_NS,
 * all gone ones when many wait (the walker will soon give their slots to
 * new threads), and slot `force` (already given to a new thread). One pass
 * over the entries, however many threads are folded. */
static void
fold_gone(struct aggregate *a, uint64_t now_rel, int32_t force)
{
	if (!a->procs || !a->nthreads)
		return;
	const struct appendlog *slots = a->procs->threads.log;
	uint32_t nslots = appendlog_count(slots), gone = 0, due = 0;
	uint8_t *fold = calloc(a->nthreads, 1);
	if (!fold)
		return;
	for (uint32_t i = 0; i < a->nthreads && i < nslots; i++) {
		struct agg_thread *t = &a->threads[i];
		if (!t->seen)
			continue;
		struct thread_slot *ts = appendlog_at(slots, i);
		uint64_t g = atomic_load_explicit(&ts->gone_ns, memory_order_acquire);
		uint64_t born = atomic_load_explicit(&ts->born_ns, memory_order_acquire);
		if ((int32_t)i == force || born != t->born_ns) {
			fold[i] = 2;
			due++;
		} else if (g) {
			gone++;
			fold[i] = now_rel - g >= AGG_FOLD_NS ? 2 : 1;
			due += fold[i] == 2;
		}
	}
	bool all_gone = gone > THREADSLOTS_KEEP_GONE / 2;
	uint32_t n = 0;
	for (uint32_t i = 0; i < a->nthreads; i++) {
		fold[i] = fold[i] == 2 || (fold[i] == 1 && all_gone);
		n += fold[i];
	}
	if (n) {
		/* Size the table for what stays, so that it shrinks too. */
		uint32_t size = 4096;
		while (size < 4 * a->count && size < a->nslots)
			size *= 2;
		if (rehash(a, size, fold, -1)) {
			for (uint32_t i = 0; i < a->nthreads; i++) {
				if (!fold[i])
					continue;
				add_thread(&a->exited, &a->threads[i]);
				struct agg_thread *pe = exited_of(a, a->threads[i].proc);
				if (pe)
					add_thread(pe, &a->threads[i]);
				memset(&a->threads[i], 0, sizeof a->threads[i]);
			}
			a->exited_threads += n;
		}
	}
	free(fold);
}

/* The exited bucket of one process (its share of a->exited), or NULL when
 * memory is short. */
static struct agg_thread *
exited_of(struct aggregate *a, uint32_t proc)
{
	if (proc >= a->nexited_procs) {
		uint32_t n = a->nexited_procs ? a->nexited_procs : 8;
		while (n <= proc)
			n *= 2;
		struct agg_thread *t = realloc(a->exited_procs, n * sizeof *t);
		if (!t)
			return NULL;
		memset(t + a->nexited_procs, 0, (n - a->nexited_procs) * sizeof *t);
		a->exited_procs = t;
		a->nexited_procs = n;
	}
	return &a->exited_procs[proc];
}

const struct agg_thread *
agg_exited_of(const struct aggregate *a, uint32_t proc)
{
	return proc < a->nexited_procs ? &a->exited_procs[proc] : NULL;
}

/* The process counted at index `proc` ended and its index went to a new
 * process: fold its threads, its exited bucket and its entries away. */
static bool
fold_proc(struct aggregate *a, uint16_t proc)
{
	uint8_t *fold = calloc(a->nthreads ? a->nthreads : 1, 1);
	if (!fold)
		return false;
	uint32_t n = 0;
	for (uint32_t i = 0; i < a->nthreads; i++)
		n += fold[i] = a->threads[i].seen && a->threads[i].proc == proc;
	uint32_t size = 4096;
	while (size < 4 * a->count && size < a->nslots)
		size *= 2;
	bool ok = rehash(a, size, fold, proc);
	if (ok) {
		for (uint32_t i = 0; i < a->nthreads; i++) {
			if (!fold[i])
				continue;
			add_thread(&a->exited, &a->threads[i]);
			memset(&a->threads[i], 0, sizeof a->threads[i]);
		}
		a->exited_threads += n;
		if (proc < a->nexited_procs)
			memset(&a->exited_procs[proc], 0, sizeof a->exited_procs[proc]);
		a->exited_procs_folded++;
	}
	free(fold);
	return ok;
}

/* Records of process index `proc` are about the process there now: fold
 * what is counted of an earlier one first. */
static void
settle_proc(struct aggregate *a, uint16_t proc)
{
	if (!a->procs || procset_seen_current(a->procs, &a->seen, proc))
		return;
	if (procset_seen_replaced(a->procs, &a->seen, proc) && !fold_proc(a, proc))
		return;
	procset_seen_set(a->procs, &a->seen, proc);
}

static struct agg_thread *
thread_at(struct aggregate *a, uint16_t slot)
{
	if (slot >= a->nthreads) {
		uint32_t n = a->nthreads ? a->nthreads : 16;
		while (n <= slot)
			n *= 2;
		struct agg_thread *t = realloc(a->threads, n * sizeof *t);
		if (!t)
			return NULL;
		memset(t + a->nthreads, 0, (n - a->nthreads) * sizeof *t);
		a->threads = t;
		a->nthreads = n;
	}
	return &a->threads[slot];
}

static void count_thread(struct agg_thread *t, const struct sample_record *rec, uint64_t w);

bool
agg_add(struct aggregate *a, const struct sample_record *rec)
{
	uint8_t cls = class_of(rec->state);
	if ((a->count + 1) * 2 > a->nslots && !grow_entries(a))
		return false;
	uint16_t slot = rec->thread_slot;
	struct agg_thread *t, *pe = NULL;
	uint64_t born = 0;
	uint16_t proc = 0;
	if (a->procs && slot < appendlog_count(a->procs->threads.log)) {
		const struct thread_slot *ts = procset_slot(a->procs, slot);
		born = atomic_load_explicit(&((struct thread_slot *)ts)->born_ns, memory_order_acquire);
		proc = (uint16_t)procset_proc_of_sample(a->procs, slot, rec->time_ns);
		settle_proc(a, proc);
		if ((a->count + 1) * 2 > a->nslots && !grow_entries(a))
			return false;
	}
	if (rec->time_ns < born) {
		/* Taken before the slot's thread was born: its previous thread's,
		 * which is gone. */
		slot = AGG_EXITED_SLOT;
		t = &a->exited;
		pe = exited_of(a, proc);
	} else {
		t = thread_at(a, slot);
		if (!t)
			return false;
		if (t->seen && t->born_ns != born) {
			/* The slot went to a new thread before we folded the old one. */
			fold_gone(a, rec->time_ns, slot);
			if ((a->count + 1) * 2 > a->nslots && !grow_entries(a))
				return false;
		}
		t->born_ns = born;
		t->proc = proc;
	}
	bool fresh;
	struct agg_entry *e = probe(a->entries, a->nslots, slot, proc, cls, rec->stack_id, &fresh);
	a->count += fresh;
	uint64_t w = rec->weight;
	e->session += w;
	e->current += w;
	a->samples[AGG_SESSION] += w;
	a->cur_samples += w;
	a->records++;
	count_thread(t, rec, w);
	if (pe)
		count_thread(pe, rec, w);
	return true;
}

static void
count_thread(struct agg_thread *t, const struct sample_record *rec, uint64_t w)
{
	t->seen = true;
	t->samples[AGG_SESSION] += w;
	t->cur_samples += w;
	if (rec->state & TT_THREAD_GIL) {
		t->gil[AGG_SESSION] += w;
		t->cur_gil += w;
	}
	if (rec->state & TT_THREAD_GIL_WAIT) {
		t->gil_wait[AGG_SESSION] += w;
		t->cur_gil_wait += w;
	}
	if (rec->state & TT_THREAD_ON_CPU) {
		t->on_cpu[AGG_SESSION] += w;
		t->cur_on_cpu += w;
	} else if (!(rec->state & TT_THREAD_CPU_UNKNOWN)) {
		t->idle[AGG_SESSION] += w;
		t->cur_idle += w;
	}
	if (rec->state & TT_THREAD_GC) {
		t->gc[AGG_SESSION] += w;
		t->cur_gc += w;
	}
	if (rec->time_ns >= t->last_time_ns) {
		t->last_stack = rec->stack_id;
		t->last_state = rec->state;
		t->last_time_ns = rec->time_ns;
	}
}

void
agg_roll_window(struct aggregate *a, uint64_t now_ns)
{
	if (a->procs) {
		fold_gone(a, now_ns - a->procs->epoch_ns, -1);
		/* processes that ended and gave their index away, sampled or not since */
		for (uint32_t i = 0, n = procset_count(a->procs); i < n && i < a->seen.n; i++)
			if (a->seen.start[i])
				settle_proc(a, (uint16_t)i);
	}
	for (uint32_t i = 0; i < a->nslots; i++) {
		struct agg_entry *e = &a->entries[i];
		if (e->used) {
			e->window = e->current;
			e->current = 0;
		}
	}
	for (uint32_t i = 0; i <= a->nthreads + a->nexited_procs; i++) {
		struct agg_thread *t = i < a->nthreads ? &a->threads[i]
				       : i == a->nthreads ? &a->exited
				       : &a->exited_procs[i - a->nthreads - 1];
		t->samples[AGG_WINDOW] = t->cur_samples;
		t->gil[AGG_WINDOW] = t->cur_gil;
		t->gil_wait[AGG_WINDOW] = t->cur_gil_wait;
		t->on_cpu[AGG_WINDOW] = t->cur_on_cpu;
		t->idle[AGG_WINDOW] = t->cur_idle;
		t->gc[AGG_WINDOW] = t->cur_gc;
		t->cur_samples = t->cur_gil = t->cur_gil_wait = t->cur_on_cpu = t->cur_idle = t->cur_gc = 0;
	}
	a->samples[AGG_WINDOW] = a->cur_samples;
	a->cur_samples = 0;
	a->window_ns = now_ns - a->window_start_ns;
	a->window_start_ns = now_ns;
}

/* ---------------------------------------------------------------------
 * Functions
 * ------------------------------------------------------------------- */

static uint32_t
str_hash(const char *a, const char *b)
{
	/* 0xff, never in UTF-8, keeps ("ab", "c") apart from ("a", "bc"). */
	uint64_t h = (hash_fnv(HASH_FNV_SEED, a) ^ 0xff) * 1099511628211ull;
	return hash_mix64(hash_fnv(h, b));
}

static uint32_t
func_of_interned(struct aggregate *a, uint32_t func_id)
{
	struct agg_codemap *cm = &a->funcmap;
	if (func_id < cm->n && cm->of_interned[func_id])
		return cm->of_interned[func_id] - 1;
	if (func_id >= cm->n) {
		uint32_t n = cm->n ? cm->n : 1024;
		while (n <= func_id)
			n *= 2;
		uint32_t *m = realloc(cm->of_interned, n * sizeof *m);
		if (!m)
			return UINT32_MAX;
		memset(m + cm->n, 0, (n - cm->n) * sizeof *m);
		cm->of_interned = m;
		cm->n = n;
	}
	const struct interned_func *c =
		intern_func_at(&a->procs->in, func_id);
	if ((a->nfuncs + 1) * 2 > a->nfunc_index) {
		uint32_t n = a->nfunc_index ? a->nfunc_index * 2 : 1024;
		uint32_t *idx = calloc(n, sizeof *idx);
		if (!idx)
			return UINT32_MAX;
		for (uint32_t i = 0; i < a->nfuncs; i++) {
			uint32_t h = str_hash(a->funcs[i].qualname, a->funcs[i].filename) & (n - 1);
			while (idx[h])
				h = (h + 1) & (n - 1);
			idx[h] = i + 1;
		}
		free(a->func_index);
		a->func_index = idx;
		a->nfunc_index = n;
	}
	uint32_t h = str_hash(c->qualname, c->filename) & (a->nfunc_index - 1);
	for (; a->func_index[h]; h = (h + 1) & (a->nfunc_index - 1)) {
		const struct agg_func *f = &a->funcs[a->func_index[h] - 1];
		if (strcmp(f->qualname, c->qualname) == 0 && strcmp(f->filename, c->filename) == 0) {
			cm->of_interned[func_id] = a->func_index[h];
			return a->func_index[h] - 1;
		}
	}
	if (a->nfuncs == a->funcs_cap) {
		uint32_t n = a->funcs_cap ? a->funcs_cap * 2 : 256;
		struct agg_func *f = realloc(a->funcs, n * sizeof *f);
		if (!f)
			return UINT32_MAX;
		a->funcs = f;
		a->funcs_cap = n;
	}
	a->funcs[a->nfuncs] = (struct agg_func){.qualname = c->qualname, .filename = c->filename,
						.firstlineno = c->firstlineno};
	a->func_index[h] = ++a->nfuncs;
	cm->of_interned[func_id] = a->nfuncs;
	return a->nfuncs - 1;
}

const struct intern *
agg_intern(const struct aggregate *a)
{
	return &a->procs->in;
}

static uint32_t
frame_func(struct aggregate *a, const struct intern *in, uint32_t frame_id, int32_t *line)
{
	const struct interned_frame *fr = intern_frame_at(in, frame_id);
	if (line)
		*line = fr->line;
	return func_of_interned(a, fr->func_id);
}

uint32_t
agg_innermost_func(struct aggregate *a, uint32_t stack_id, int32_t *line)
{
	if (stack_id == 0)
		return UINT32_MAX;
	const struct intern *in = agg_intern(a);
	return frame_func(a, in, intern_stack_at(in, stack_id)->frame, line);
}

/* ---------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------- */

static bool
entry_counts(const struct agg_query *q, const struct agg_entry *e, uint64_t *w)
{
	if (!e->used || (q->slot >= 0 && e->slot != q->slot) || !agg_mode_matches(q->mode, e->cls))
		return false;
	if (q->slot < 0 && q->proc >= 0 && e->proc != (uint32_t)q->proc)
		return false;
	*w = q->scope == AGG_SESSION ? e->session : e->window;
	return *w > 0;
}

static struct agg_row *
row_for(struct agg_table *t, uint32_t func, int32_t line)
{
	if ((t->nrows + 1) * 2 > t->nindex) {
		uint32_t n = t->nindex ? t->nindex * 2 : 1024;
		uint32_t *idx = calloc(n, sizeof *idx);
		if (!idx)
			return NULL;
		for (uint32_t i = 0; i < t->nrows; i++) {
			uint32_t h = hash_mix64(((uint64_t)t->rows[i].func << 32) | (uint32_t)t->rows[i].line) &
				     (n - 1);
			while (idx[h])
				h = (h + 1) & (n - 1);
			idx[h] = i + 1;
		}
		free(t->index);
		t->index = idx;
		t->nindex = n;
	}
	uint32_t h = hash_mix64(((uint64_t)func << 32) | (uint32_t)line) & (t->nindex - 1);
	for (; t->index[h]; h = (h + 1) & (t->nindex - 1)) {
		struct agg_row *r = &t->rows[t->index[h] - 1];
		if (r->func == func && r->line == line)
			return r;
	}
	if (t->nrows == t->cap) {
		uint32_t n = t->cap ? t->cap * 2 : 256;
		struct agg_row *rows = realloc(t->rows, n * sizeof *rows);
		if (!rows)
			return NULL;
		t->rows = rows;
		t->cap = n;
	}
	struct agg_row *r = &t->rows[t->nrows];
	*r = (struct agg_row){.func = func, .line = line};
	t->index[h] = ++t->nrows;
	return r;
}

static bool
matches_filter(const struct agg_func *f, const char *filter)
{
	if (!filter || !*filter)
		return true;
	return strcasestr(f->qualname, filter) || strcasestr(f->filename, filter);
}

bool
agg_entry_weight(const struct agg_query *q, const struct agg_entry *e, uint64_t *w)
{
	return entry_counts(q, e, w);
}

bool
agg_func_matches(const struct aggregate *a, uint32_t func, const char *filter)
{
	return func < a->nfuncs && matches_filter(&a->funcs[func], filter);
}

/* qsort has no context argument: the table being sorted, for comparators. */
static const struct aggregate *sort_agg;
static const struct agg_query *sort_q;

static int
cmp_rows(const void *pa, const void *pb)
{
	const struct agg_row *x = pa, *y = pb;
	const struct agg_func *fx = &sort_agg->funcs[x->func], *fy = &sort_agg->funcs[y->func];
	int c = 0;
	switch (sort_q->sort) {
	case SORT_OWN:
		c = x->own < y->own ? 1 : x->own > y->own ? -1 : 0;
		if (!c)
			c = x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
		break;
	case SORT_TOTAL:
		c = x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
		if (!c)
			c = x->own < y->own ? 1 : x->own > y->own ? -1 : 0;
		break;
	case SORT_NAME:
		c = strcmp(fx->qualname, fy->qualname);
		break;
	case SORT_FILE:
		c = strcmp(fx->filename, fy->filename);
		if (!c)
			c = (x->line > y->line) - (x->line < y->line);
		break;
	default:
		break;
	}
	if (!c)
		c = strcmp(fx->qualname, fy->qualname);
	if (!c)
		c = (x->line > y->line) - (x->line < y->line);
	return sort_q->ascending ? -c : c;
}

bool
agg_build_table(struct aggregate *a, const struct agg_query *q, struct agg_table *t)
{
	t->nrows = 0;
	t->denominator = 0;
	if (t->index)
		memset(t->index, 0, t->nindex * sizeof *t->index);
	for (uint32_t i = 0; i < a->nslots; i++) {
		const struct agg_entry *e = &a->entries[i];
		uint64_t w;
		if (!entry_counts(q, e, &w))
			continue;
		t->denominator += w;
		a->stamp++;
		bool innermost = true;
		const struct intern *in = agg_intern(a);
		for (uint32_t s = e->stack_id; s; s = intern_stack_at(in, s)->parent) {
			int32_t line;
			uint32_t f = frame_func(a, in, intern_stack_at(in, s)->frame, &line);
			if (f == UINT32_MAX)
				return false;
			struct agg_row *r = row_for(t, f, q->by_line ? line : -1);
			if (!r)
				return false;
			if (innermost)
				r->own += w;
			innermost = false;
			/* Recursion: a function counts once per stack in totals. */
			if (r->stamp != a->stamp) {
				r->stamp = a->stamp;
				r->total += w;
			}
		}
	}
	if (q->filter && *q->filter) {
		uint32_t k = 0;
		for (uint32_t i = 0; i < t->nrows; i++)
			if (matches_filter(&a->funcs[t->rows[i].func], q->filter))
				t->rows[k++] = t->rows[i];
		t->nrows = k;
		/* the index no longer matches the rows: rebuilt next time */
		if (t->index)
			memset(t->index, 0, t->nindex * sizeof *t->index);
	}
	sort_agg = a;
	sort_q = q;
	/* An empty table may have no rows array yet: qsort(NULL) is undefined. */
	if (t->nrows > 1)
		qsort(t->rows, t->nrows, sizeof *t->rows, cmp_rows);
	return true;
}

void
agg_table_free(struct agg_table *t)
{
	free(t->rows);
	free(t->index);
	memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------------
 * Callers and callees
 * ------------------------------------------------------------------- */

static bool
add_link(struct agg_link **v, uint32_t *n, uint32_t func, uint64_t w)
{
	for (uint32_t i = 0; i < *n; i++) {
		if ((*v)[i].func == func) {
			(*v)[i].weight += w;
			return true;
		}
	}
	struct agg_link *g = realloc(*v, (*n + 1) * sizeof *g);
	if (!g)
		return false;
	*v = g;
	g[(*n)++] = (struct agg_link){.func = func, .weight = w};
	return true;
}

static int
cmp_links(const void *pa, const void *pb)
{
	const struct agg_link *x = pa, *y = pb;
	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : (x->func > y->func) - (x->func < y->func);
}

bool
agg_build_links(struct aggregate *a, const struct agg_query *q, uint32_t func,
		struct agg_links *out)
{
	return agg_build_line_links(a, q, func, -1, out);
}

bool
agg_build_line_links(struct aggregate *a, const struct agg_query *q, uint32_t func, int32_t line,
		     struct agg_links *out)
{
	memset(out, 0, sizeof *out);
	for (uint32_t i = 0; i < a->nslots; i++) {
		const struct agg_entry *e = &a->entries[i];
		uint64_t w;
		if (!entry_counts(q, e, &w))
			continue;
		/* The innermost occurrence of func decides caller and callee. */
		uint32_t above = UINT32_MAX;
		const struct intern *in = agg_intern(a);
		for (uint32_t s = e->stack_id; s; s = intern_stack_at(in, s)->parent) {
			int32_t at = -1;
			uint32_t f = frame_func(a, in, intern_stack_at(in, s)->frame, line >= 0 ? &at : NULL);
			if (f == func && (line < 0 || at == line)) {
				uint32_t parent = intern_stack_at(in, s)->parent;
				uint32_t below = parent ? frame_func(a, in, intern_stack_at(in, parent)->frame, NULL)
							: UINT32_MAX;
				if (!add_link(&out->callees, &out->ncallees, above, w) ||
				    !add_link(&out->callers, &out->ncallers, below, w))
					return false;
				out->total += w;
				break;
			}
			above = f;
		}
	}
	if (out->ncallers > 1)
		qsort(out->callers, out->ncallers, sizeof *out->callers, cmp_links);
	if (out->ncallees > 1)
		qsort(out->callees, out->ncallees, sizeof *out->callees, cmp_links);
	return true;
}

void
agg_links_free(struct agg_links *l)
{
	free(l->callers);
	free(l->callees);
	memset(l, 0, sizeof *l);
}

bool
agg_to_profile(const struct aggregate *a, enum agg_scope scope, enum agg_mode mode,
	       struct profile *p)
{
	profile_init(p);
	for (uint32_t i = 0; i < a->nslots; i++) {
		const struct agg_entry *e = &a->entries[i];
		uint64_t w = scope == AGG_SESSION ? e->session : e->window;
		if (!e->used || !w || !agg_mode_matches(mode, e->cls))
			continue;
		if (!profile_add_proc_weight(p, e->slot, e->proc, e->stack_id, w))
			return false;
	}
	return true;
}
