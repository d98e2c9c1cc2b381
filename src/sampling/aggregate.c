#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aggregate.h"
#include "grow.h"
#include "hash.h"
#include "profile.h"
#include "walk/sample.h"
#include "order.h"

static uint8_t
class_of(uint8_t state)
{
	return (uint8_t)(((state & TT_THREAD_ON_CPU) ? AGG_CLS_CPU : 0) |
			 ((state & TT_THREAD_GIL) ? AGG_CLS_GIL : 0) |
			 ((state & TT_THREAD_EXCEPTION) ? AGG_CLS_EXC : 0));
}

static const char *const mode_names[AGG_MODE_COUNT] = {"wall", "cpu", "gil", "exception"};
static const char *const sort_names[SORT_COUNT] = {"own", "total", "name", "file"};

/* The index of name among n names, or -1. */
static int
name_index(const char *const *names, int n, const char *name)
{
	for (int k = 0; k < n; k++)
		if (strcmp(name, names[k]) == 0)
			return k;
	return -1;
}

const char *
agg_mode_name(enum agg_mode mode)
{
	return (unsigned)mode < AGG_MODE_COUNT ? mode_names[mode] : "?";
}

bool
agg_mode_parse(const char *name, enum agg_mode *mode)
{
	int k = name_index(mode_names, AGG_MODE_COUNT, name);
	if (k >= 0)
		*mode = (enum agg_mode)k;
	return k >= 0;
}

const char *
agg_sort_name(enum agg_sort sort)
{
	return (unsigned)sort < SORT_COUNT ? sort_names[sort] : "?";
}

bool
agg_sort_parse(const char *name, enum agg_sort *sort)
{
	int k = name_index(sort_names, SORT_COUNT, name);
	if (k >= 0)
		*sort = (enum agg_sort)k;
	return k >= 0;
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
	idindex_free(&a->entry_index);
	free(a->threads);
	free(a->exited_procs);
	occupants_free(&a->procs_at);
	occupants_free(&a->slots_at);
	free(a->funcmap.of_interned);
	free(a->funcs);
	idindex_free(&a->func_index);
	memset(a, 0, sizeof *a);
}

void
agg_reset(struct aggregate *a, uint64_t now_ns)
{
	const struct procset *ps = a->procs;
	/* Function identities stay valid; only counts go. */
	struct agg_codemap funcmap = a->funcmap;
	struct agg_func *funcs = a->funcs;
	uint32_t nfuncs = a->nfuncs, fcap = a->funcs_cap;
	struct idindex fidx = a->func_index;
	free(a->entries);
	idindex_free(&a->entry_index);
	free(a->threads);
	free(a->exited_procs);
	occupants_free(&a->procs_at);
	occupants_free(&a->slots_at);
	memset(a, 0, sizeof *a);
	a->procs = ps;
	a->funcmap = funcmap;
	a->funcs = funcs;
	a->nfuncs = nfuncs;
	a->funcs_cap = fcap;
	a->func_index = fidx;
	a->window_start_ns = now_ns;
	/* Samples still in the ring were taken before the reset. */
	if (ps && now_ns > ps->epoch_ns)
		a->reset_at_ns = now_ns - ps->epoch_ns;
}

static uint32_t
entry_hash(const struct agg_entry *k)
{
	return hash_mix64((((uint64_t)k->slot << 40) | ((uint64_t)k->cls << 32) | k->stack_id) ^
			  (((uint64_t)k->proc << 32 | (uint64_t)k->tgen << 16 | k->pgen) *
			   0x9e3779b97f4a7c15ull));
}

static bool
same_key(const struct agg_entry *x, const struct agg_entry *y)
{
	return x->stack_id == y->stack_id && x->slot == y->slot && x->proc == y->proc &&
	       x->cls == y->cls && x->tgen == y->tgen && x->pgen == y->pgen;
}

/* Hash of the entry at id (position + 1), for the index to take it again. */
static uint32_t
entry_hash_at(const void *ctx, uint32_t id)
{
	const struct aggregate *a = ctx;
	return entry_hash(&a->entries[id - 1]);
}

/* The entry for key k (slot, process, generations, cls, stack), appended
 * if new; room for one more must have been made (make_room).
 * The process is in the key because a query may show one process (stack
 * IDs are shared by every process, intern.h): the exited-threads bucket
 * holds entries of every process under one slot. */
static struct agg_entry *
entry_for(struct aggregate *a, const struct agg_entry *k)
{
	struct idindex *ix = &a->entry_index;
	uint32_t h = idindex_start(ix, entry_hash(k));
	for (; ix->slots[h]; h = idindex_next(ix, h)) {
		struct agg_entry *e = &a->entries[ix->slots[h] - 1];
		if (same_key(e, k))
			return e;
	}
	struct agg_entry *e = &a->entries[a->count];
	*e = *k;
	e->session = 0;
	e->window = e->current = 0;
	ix->slots[h] = ++a->count;
	return e;
}

/* Whom an entry's counts are about now: the key it has once folded. */
static struct agg_entry
entry_owner(const struct aggregate *a, const struct agg_entry *e)
{
	struct agg_entry k = *e;
	occupants_owner(&a->procs_at, &a->slots_at, &k.slot, &k.proc, &k.tgen, &k.pgen);
	return k;
}

static uint32_t
add_sat32(uint32_t x, uint32_t y)
{
	return x > UINT32_MAX - y ? UINT32_MAX : x + y;
}

/* Fold every entry of a thread or process that left under its owner now,
 * in this one pass however many left, compacting the entries in place (an
 * entry is only ever written at or before the one being read: no second
 * table), then give back what the smaller count leaves unused. */
static bool
sweep(struct aggregate *a)
{
	if (!a->procs_at.retired && !a->slots_at.retired)
		return true;
	uint32_t n = a->count;
	/* room for them all (there is, unless memory was short at the last fit) */
	if (n && !idindex_reserve(&a->entry_index, 1, n, HASH_TABLE_STEP, entry_hash_at, a))
		return false;
	a->count = 0;
	idindex_clear(&a->entry_index);
	for (uint32_t i = 0; i < n; i++) {
		struct agg_entry o = a->entries[i];
		struct agg_entry k = entry_owner(a, &o);
		struct agg_entry *d = entry_for(a, &k);
		d->session += o.session;
		d->window = add_sat32(d->window, o.window);
		d->current = add_sat32(d->current, o.current);
	}
	a->procs_at.retired = a->slots_at.retired = 0;
	if (hash_dense_oversized(a->count, a->cap))
		resize_array((void **)&a->entries, &a->cap, hash_dense_size(a->count),
			     sizeof *a->entries);
	return idindex_fit(&a->entry_index, 1, a->count + 1, HASH_TABLE_STEP, entry_hash_at, a);
}

/* Room for one more entry. What left is folded at least every
 * OCCUPANTS_SWEEP_EVERY retirements, and before the entries grow. */
static bool
make_room(struct aggregate *a)
{
	uint32_t retired = a->procs_at.retired + a->slots_at.retired;
	if (retired >= OCCUPANTS_SWEEP_EVERY && !sweep(a))
		return false;
	if (a->count == a->cap) {
		if (retired && !sweep(a))
			return false;
		if (a->count == a->cap &&
		    !resize_array((void **)&a->entries, &a->cap, hash_dense_size(a->count + 1),
				  sizeof *a->entries))
			return false;
	}
	return idindex_reserve(&a->entry_index, 1, a->count + 1, HASH_TABLE_STEP, entry_hash_at, a);
}

size_t
agg_entries_bytes(const struct aggregate *a)
{
	return (size_t)a->cap * sizeof *a->entries +
	       (size_t)a->entry_index.nslots * sizeof *a->entry_index.slots;
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

/* Fold the thread counted at slot i into the exited bucket (and its
 * process's share of it). Its entries become the exited bucket's at once
 * (entry_owner); the next sweep merges them. */
static void
fold_thread(struct aggregate *a, uint32_t i)
{
	struct agg_thread *t = &a->threads[i];
	if (!t->seen)
		return;
	add_thread(&a->exited, t);
	struct agg_thread *pe = exited_of(a, t->proc);
	if (pe)
		add_thread(pe, t);
	memset(t, 0, sizeof *t);
	occupants_retire(&a->slots_at, i);
	a->exited_threads++;
}

/* Fold gone threads into the exited bucket: those gone for AGG_FOLD_NS,
 * all gone ones when many wait (the walker will soon give their slots to
 * new threads), and those whose slot went to a new thread unsampled. */
static void
fold_gone(struct aggregate *a, uint64_t now_rel)
{
	if (!a->procs || !a->nthreads)
		return;
	const struct appendlog *slots = a->procs->threads.log;
	uint32_t nslots = appendlog_count(slots), gone = 0;
	for (uint32_t i = 0; i < a->nthreads && i < nslots; i++) {
		struct agg_thread *t = &a->threads[i];
		if (!t->seen)
			continue;
		struct thread_slot *ts = appendlog_at(slots, i);
		uint64_t g = atomic_load_explicit(&ts->gone_ns, memory_order_acquire);
		uint64_t born = atomic_load_explicit(&ts->born_ns, memory_order_acquire);
		if (born != t->born_ns || (g && now_rel - g >= AGG_FOLD_NS))
			fold_thread(a, i);
		else if (g)
			gone++;
	}
	if (gone > THREADSLOTS_KEEP_GONE / 2) {
		for (uint32_t i = 0; i < a->nthreads && i < nslots; i++) {
			struct thread_slot *ts = appendlog_at(slots, i);
			if (a->threads[i].seen && atomic_load_explicit(&ts->gone_ns, memory_order_acquire))
				fold_thread(a, i);
		}
	}
}

/* The exited bucket of one process (its share of a->exited), or NULL when
 * memory is short. */
static struct agg_thread *
exited_of(struct aggregate *a, uint32_t proc)
{
	if (!grow_array((void **)&a->exited_procs, &a->nexited_procs, proc + 1,
			sizeof *a->exited_procs))
		return NULL;
	return &a->exited_procs[proc];
}

const struct agg_thread *
agg_exited_of(const struct aggregate *a, uint32_t proc)
{
	return proc < a->nexited_procs ? &a->exited_procs[proc] : NULL;
}

/* The process counted at index `proc` ended and its index went to a new
 * process: fold its threads and its exited bucket away (its entries are
 * the exited processes' from now on, by generation). */
static void
fold_proc(struct aggregate *a, uint32_t proc)
{
	for (uint32_t i = 0; i < a->nthreads; i++)
		if (a->threads[i].seen && a->threads[i].proc == proc)
			fold_thread(a, i);
	if (proc < a->nexited_procs)
		memset(&a->exited_procs[proc], 0, sizeof a->exited_procs[proc]);
	a->exited_procs_folded++;
}

/* The generation to count process index `proc` under: that of the process
 * there now, what was counted of an earlier one folded first. false when
 * memory is short. */
static bool
enter_proc(struct aggregate *a, uint32_t proc, uint16_t *pgen)
{
	*pgen = 0;
	if (!a->procs || proc >= procset_count(a->procs))
		return true;
	bool left;
	if (!occupants_enter(&a->procs_at, proc, procset_at(a->procs, proc)->start_ns, pgen, &left))
		return false;
	if (left)
		fold_proc(a, proc);
	return true;
}

static struct agg_thread *
thread_at(struct aggregate *a, uint16_t slot)
{
	if (!grow_array((void **)&a->threads, &a->nthreads, (uint32_t)slot + 1, sizeof *a->threads))
		return NULL;
	return &a->threads[slot];
}

static void count_thread(struct agg_thread *t, const struct sample_record *rec, uint64_t w);

void
agg_take(void *ctx, const struct sample_record *rec, size_t n)
{
	for (size_t i = 0; i < n; i++)
		agg_add(ctx, &rec[i]);
}

bool
agg_add(struct aggregate *a, const struct sample_record *rec)
{
	if (rec->time_ns < a->reset_at_ns)
		return true;
	if (!make_room(a))
		return false;
	struct agg_entry k = {.stack_id = rec->stack_id, .slot = rec->thread_slot,
			      .cls = class_of(rec->state)};
	struct agg_thread *t, *pe = NULL;
	uint64_t born = 0;
	if (a->procs && k.slot < appendlog_count(a->procs->threads.log)) {
		const struct thread_slot *ts = procset_slot(a->procs, k.slot);
		born = atomic_load_explicit(&((struct thread_slot *)ts)->born_ns, memory_order_acquire);
		uint32_t proc = procset_proc_of_sample(a->procs, k.slot, rec->time_ns);
		if (!enter_proc(a, proc, &k.pgen))
			return false;
		k.proc = (uint16_t)proc;
	}
	if (rec->time_ns < born) {
		/* Taken before the slot's thread was born: its previous thread's,
		 * which is gone. */
		k.slot = AGG_EXITED_SLOT;
		t = &a->exited;
		pe = exited_of(a, k.proc);
	} else {
		t = thread_at(a, k.slot);
		bool left;
		if (!t || !occupants_enter(&a->slots_at, k.slot, born, &k.tgen, &left))
			return false;
		/* The slot went to a new thread before we folded the old one. */
		if (left)
			fold_thread(a, k.slot);
		t->born_ns = born;
		t->proc = k.proc;
	}
	struct agg_entry *e = entry_for(a, &k);
	uint64_t w = rec->weight;
	e->session += w;
	e->current = add_sat32(e->current, (uint32_t)w);
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
		fold_gone(a, now_ns - a->procs->epoch_ns);
		/* processes that ended and gave their index away, sampled or not since */
		for (uint32_t i = 0, n = procset_count(a->procs); i < n && i < a->procs_at.n; i++) {
			uint16_t pgen;
			if (a->procs_at.at[i].known)
				enter_proc(a, i, &pgen);
		}
		sweep(a);
	}
	for (uint32_t i = 0; i < a->count; i++) {
		a->entries[i].window = a->entries[i].current;
		a->entries[i].current = 0;
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
func_hash(const void *ctx, uint32_t id)
{
	const struct agg_func *f = &((const struct aggregate *)ctx)->funcs[id - 1];
	return str_hash(f->qualname, f->filename);
}

static uint32_t
func_of_interned(struct aggregate *a, uint32_t func_id)
{
	struct agg_codemap *cm = &a->funcmap;
	if (func_id < cm->n && cm->of_interned[func_id])
		return cm->of_interned[func_id] - 1;
	if (!grow_array((void **)&cm->of_interned, &cm->n, func_id + 1, sizeof *cm->of_interned))
		return UINT32_MAX;
	const struct interned_func *c =
		intern_func_at(&a->procs->in, func_id);
	struct idindex *ix = &a->func_index;
	if (!idindex_reserve(ix, 1, a->nfuncs + 1, 1024, func_hash, a))
		return UINT32_MAX;
	uint32_t h = idindex_start(ix, str_hash(c->qualname, c->filename));
	for (; ix->slots[h]; h = idindex_next(ix, h)) {
		const struct agg_func *f = &a->funcs[ix->slots[h] - 1];
		if (strcmp(f->qualname, c->qualname) == 0 && strcmp(f->filename, c->filename) == 0) {
			cm->of_interned[func_id] = ix->slots[h];
			return ix->slots[h] - 1;
		}
	}
	if (!grow_array((void **)&a->funcs, &a->funcs_cap, a->nfuncs + 1, sizeof *a->funcs))
		return UINT32_MAX;
	a->funcs[a->nfuncs] = (struct agg_func){.qualname = c->qualname, .filename = c->filename,
						.firstlineno = c->firstlineno, .kind = c->kind};
	ix->slots[h] = ++a->nfuncs;
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

uint32_t
agg_innermost_python_func(struct aggregate *a, uint32_t stack_id, int32_t *line)
{
	const struct intern *in = agg_intern(a);
	for (; stack_id != 0; stack_id = intern_stack_at(in, stack_id)->parent) {
		uint32_t f = frame_func(a, in, intern_stack_at(in, stack_id)->frame, line);
		if (f == UINT32_MAX || a->funcs[f].kind != FUNC_NATIVE)
			return f;
	}
	return UINT32_MAX;
}

/* ---------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------- */

static bool
entry_counts(const struct aggregate *a, const struct agg_query *q, const struct agg_entry *e,
	     uint64_t *w)
{
	if (!agg_mode_matches(q->mode, e->cls))
		return false;
	*w = q->scope == AGG_SESSION ? e->session : e->window;
	if (!*w)
		return false;
	if (q->slot < 0 && q->proc < 0)
		return true;
	struct agg_entry k = entry_owner(a, e);
	if (q->slot >= 0)
		return k.slot == q->slot;
	return k.proc == (uint32_t)q->proc;
}

static uint32_t
row_key_hash(uint32_t func, int32_t line)
{
	return hash_mix64(((uint64_t)func << 32) | (uint32_t)line);
}

static uint32_t
row_hash(const void *ctx, uint32_t id)
{
	const struct agg_row *r = &((const struct agg_table *)ctx)->rows[id - 1];
	return row_key_hash(r->func, r->line);
}

static struct agg_row *
row_for(struct agg_table *t, uint32_t func, int32_t line)
{
	struct idindex *ix = &t->index;
	if (!idindex_reserve(ix, 1, t->nrows + 1, 1024, row_hash, t))
		return NULL;
	uint32_t h = idindex_start(ix, row_key_hash(func, line));
	for (; ix->slots[h]; h = idindex_next(ix, h)) {
		struct agg_row *r = &t->rows[ix->slots[h] - 1];
		if (r->func == func && r->line == line)
			return r;
	}
	if (!grow_array((void **)&t->rows, &t->cap, t->nrows + 1, sizeof *t->rows))
		return NULL;
	struct agg_row *r = &t->rows[t->nrows];
	*r = (struct agg_row){.func = func, .line = line};
	ix->slots[h] = ++t->nrows;
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
agg_entry_weight(const struct aggregate *a, const struct agg_query *q,
		 const struct agg_entry *e, uint64_t *w)
{
	return entry_counts(a, q, e, w);
}

void
agg_func_where(const struct agg_func *f, int32_t line, char *buf, size_t len)
{
	if (f->kind == FUNC_NATIVE)
		snprintf(buf, len, "%s", f->filename);
	else
		snprintf(buf, len, "%s:%d", f->filename, line >= 0 ? line : f->firstlineno);
}

void
agg_func_at_line(const struct agg_func *f, int32_t line, char *buf, size_t len)
{
	if (f->kind == FUNC_NATIVE || line < 0)
		snprintf(buf, len, "%s", f->qualname);
	else
		snprintf(buf, len, "%s:%d", f->qualname, line);
}

bool
agg_func_matches(const struct aggregate *a, uint32_t func, const char *filter)
{
	return func < a->nfuncs && matches_filter(&a->funcs[func], filter);
}

/* What a table's rows are sorted by. */
struct row_order {
	const struct aggregate *a;
	const struct agg_query *q;
};

static int
cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct row_order *o = ctx;
	const struct agg_row *x = pa, *y = pb;
	const struct agg_func *fx = &o->a->funcs[x->func], *fy = &o->a->funcs[y->func];
	int c = 0;
	switch (o->q->sort) {
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
	return o->q->ascending ? -c : c;
}

bool
agg_build_table(struct aggregate *a, const struct agg_query *q, struct agg_table *t)
{
	t->nrows = 0;
	t->denominator = 0;
	idindex_clear(&t->index);
	for (uint32_t i = 0; i < a->count; i++) {
		const struct agg_entry *e = &a->entries[i];
		uint64_t w;
		if (!entry_counts(a, q, e, &w))
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
		idindex_clear(&t->index);
	}
	struct row_order order = {a, q};
	/* An empty table may have no rows array yet: qsort(NULL) is undefined. */
	if (t->nrows > 1)
		qsort_r(t->rows, t->nrows, sizeof *t->rows, cmp_rows, &order);
	return true;
}

void
agg_table_free(struct agg_table *t)
{
	free(t->rows);
	idindex_free(&t->index);
	memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------------
 * Callers and callees
 * ------------------------------------------------------------------- */

static bool
add_link(struct agg_link **v, uint32_t *n, uint32_t *cap, uint32_t func, uint64_t w)
{
	for (uint32_t i = 0; i < *n; i++) {
		if ((*v)[i].func == func) {
			(*v)[i].weight += w;
			return true;
		}
	}
	if (!grow_array((void **)v, cap, *n + 1, sizeof **v))
		return false;
	(*v)[(*n)++] = (struct agg_link){.func = func, .weight = w};
	return true;
}

static int
cmp_links(const void *pa, const void *pb)
{
	const struct agg_link *x = pa, *y = pb;
	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : (x->func > y->func) - (x->func < y->func);
}

bool
agg_build_line_links(struct aggregate *a, const struct agg_query *q, uint32_t func, int32_t line,
		     struct agg_links *out)
{
	memset(out, 0, sizeof *out);
	for (uint32_t i = 0; i < a->count; i++) {
		const struct agg_entry *e = &a->entries[i];
		uint64_t w;
		if (!entry_counts(a, q, e, &w))
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
				if (!add_link(&out->callees, &out->ncallees, &out->callees_cap, above, w) ||
				    !add_link(&out->callers, &out->ncallers, &out->callers_cap, below, w))
					return false;
				out->total += w;
				break;
			}
			above = f;
		}
	}
	if (out->ncallers > 1)
		order_sort(out->callers, out->ncallers, sizeof *out->callers, cmp_links);
	if (out->ncallees > 1)
		order_sort(out->callees, out->ncallees, sizeof *out->callees, cmp_links);
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
	for (uint32_t i = 0; i < a->count; i++) {
		const struct agg_entry *e = &a->entries[i];
		uint64_t w = scope == AGG_SESSION ? e->session : e->window;
		if (!w || !agg_mode_matches(mode, e->cls))
			continue;
		struct agg_entry k = entry_owner(a, e);
		if (!profile_add_proc_weight(p, k.slot, k.proc, k.stack_id, w))
			return false;
	}
	return true;
}
