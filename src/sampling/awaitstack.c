#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "awaitstack.h"
#include "grow.h"
#include "hash.h"
#include "keytab.h"
#include "taskwatch.h"

/* How often the sampler looks for a newer task read (a mutex, not a read). */
#define TAKE_EVERY_NS 10000000ull
#define NONE UINT32_MAX

/* A thread's last rewrite: reused while its stack, task and the task read
 * are the same (an idle thread's cached stack costs nothing twice). */
struct slot_memo {
	uint64_t task;
	uint32_t stack_in, stack_out, base, gen;
};

struct name_entry {
	char *name;
	uint32_t frame_id;
};

/* A task born since the last task read, read once on its own. */
struct young_entry {
	uint64_t task;
	uint32_t base;            /* its marker over its awaiters' chain */
};

/* Young tasks remembered until the next task read. */
#define YOUNG_MAX 4096

struct awaitstack {
	struct taskwatch watch;
	struct target *target;         /* the sampler's: read on the sampler thread */
	struct task_reader one;        /* young tasks, with the walker's code IDs */
	bool one_ready;
	struct tt_tasks one_tasks;
	struct keytab young;           /* struct young_entry by task, at most YOUNG_MAX */
	struct task_snapshot *snap;
	uint32_t gen;                  /* snapshots installed */
	uint64_t last_take_ns;
	bool running_read;             /* the walker reads each thread's running task */
	bool running_refused;          /* ... and cannot (offset out of reach) */
	/* this snapshot: its tasks' index by task address; each task's stack
	 * down to its own marker frame (0: not built yet, NONE: could not be) */
	struct idindex index;
	uint32_t *top;
	/* the watcher's functions -> the walker's, + 1 (0: not yet) */
	uint32_t *funcs;
	uint32_t funcs_cap;
	struct name_entry *names;      /* marker frames by (folded) task name */
	uint32_t names_cap, nnames;
	struct idindex name_index;
	uint32_t other_frame;          /* the marker shared past AWAITSTACK_MAX_NAMES */
	uint32_t new_stack;            /* `task (new)` alone */
	struct slot_memo *memo;
	uint32_t memo_cap;
	struct walk_thread *out;
	uint32_t out_cap;
	uint32_t *bases;               /* by thread of the last apply (awaitstack_bases) */
	uint32_t bases_cap, nbases;
};

tt_status
awaitstack_new(struct target *t, uint64_t task_interval_ns, struct awaitstack **out,
	       struct tt_error *err)
{
	if (!t->layout.has_async)
		return tt_fail(err, TT_ENOTPY, 0,
			       "--async needs Python 3.14 or newer (process %d runs %s)", (int)t->pid,
			       t->layout.version_str);
	struct awaitstack *a = calloc(1, sizeof *a);
	if (!a)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for --async");
	a->target = t;
	keytab_init(&a->young, sizeof(struct young_entry));
	tt_status st = taskwatch_start(&a->watch, t, task_interval_ns, err);
	if (st != TT_OK) {
		free(a);
		return st;
	}
	*out = a;
	return TT_OK;
}

void
awaitstack_free(struct awaitstack *a)
{
	if (!a)
		return;
	taskwatch_stop(&a->watch);
	task_snapshot_free(a->snap);
	if (a->one_ready)
		task_reader_free(&a->one);
	tt_tasks_free(&a->one_tasks);
	keytab_free(&a->young);
	for (uint32_t i = 0; i < a->nnames; i++)
		free(a->names[i].name);
	free(a->names);
	idindex_free(&a->name_index);
	idindex_free(&a->index);
	free(a->top);
	free(a->funcs);
	free(a->memo);
	free(a->out);
	free(a->bases);
	free(a);
}

const uint32_t *
awaitstack_bases(const struct awaitstack *a)
{
	return a->nbases ? a->bases : NULL;
}

/* ---- one task read ---- */

static uint32_t
task_hash_at(const void *ctx, uint32_t id)
{
	const struct task_snapshot *s = ctx;
	return hash_mix64(s->tasks.tasks[id - 1].id);
}

/* Where task address `id` is in an index over snapshot s: the slot holding
 * it, or the empty slot where it would go. */
static uint32_t
task_slot(const struct idindex *ix, const struct task_snapshot *s, uint64_t id)
{
	uint32_t k = idindex_start(ix, hash_mix64(id));
	while (ix->slots[k] && s->tasks.tasks[ix->slots[k] - 1].id != id)
		k = idindex_next(ix, k);
	return k;
}

static void
install(struct awaitstack *a, struct task_snapshot *s)
{
	uint32_t n = s->tasks.n;
	struct idindex index = {0};
	uint32_t *top = calloc(n + 1, sizeof *top);
	bool ok = top != NULL;
	for (uint32_t i = 0; i < n && ok; i++) {
		ok = idindex_reserve(&index, 1, i + 1, 64, task_hash_at, s);
		if (!ok)
			break;
		/* A task listed twice in one read keeps its first listing. */
		uint32_t k = task_slot(&index, s, s->tasks.tasks[i].id);
		if (!index.slots[k])
			index.slots[k] = i + 1;
	}
	if (!ok) {
		/* Keep the older read: stale names beat none. */
		idindex_free(&index);
		free(top);
		task_snapshot_free(s);
		return;
	}
	task_snapshot_free(a->snap);
	idindex_free(&a->index);
	free(a->top);
	a->snap = s;
	a->index = index;
	a->top = top;
	a->gen++;
	/* Young tasks' stacks name the awaiters' chains of the older read. */
	keytab_clear(&a->young);
}

static uint32_t
find_task(const struct awaitstack *a, uint64_t id)
{
	if (!a->index.nslots)
		return NONE;
	uint32_t v = a->index.slots[task_slot(&a->index, a->snap, id)];
	return v ? v - 1 : NONE;
}

/* The first of a task's awaiters that is a task we read. */
static uint32_t
first_awaiter(const struct awaitstack *a, uint32_t idx)
{
	const struct tt_tasks *ts = &a->snap->tasks;
	const struct tt_task *t = &ts->tasks[idx];
	for (uint32_t k = 0; k < t->nawaiters; k++) {
		uint32_t j = find_task(a, ts->awaiters[t->first_awaiter + k]);
		if (j != NONE)
			return j;
	}
	return NONE;
}

/* ---- frames in the walker's terms ---- */

/* The walker's function for one of the watcher's (both kept by content:
 * the watcher's and the walker's code objects need not meet). */
static uint32_t
walker_func(struct awaitstack *a, struct stackwalk *w, uint32_t watcher_func)
{
	if (watcher_func == UINT32_MAX ||
	    !grow_array((void **)&a->funcs, &a->funcs_cap, watcher_func + 1, sizeof *a->funcs))
		return NONE;
	if (a->funcs[watcher_func] == 0) {
		const struct interned_func *f = intern_func_at(a->snap->funcs, watcher_func);
		uint32_t id = intern_func(stackwalk_intern_rw(w), f->qualname, f->filename,
					  f->firstlineno, FUNC_PYTHON);
		if (!id)
			return NONE;
		a->funcs[watcher_func] = id + 1;
	}
	return a->funcs[watcher_func] - 1;
}

static uint32_t
made_up_frame(struct stackwalk *w, const char *label)
{
	char qualname[TASKS_NAME_MAX * 4 + 16];
	snprintf(qualname, sizeof qualname, "task %s", label);
	uint32_t func = intern_func(stackwalk_intern_rw(w), qualname, AWAITSTACK_FILE, 0, FUNC_MADE_UP);
	return func ? intern_frame(stackwalk_intern_rw(w), func, 0) : 0;
}

/* asyncio's numbered default names (Task-123) fold into one, so that the
 * requests that went the same way add up instead of each being a tower. */
static const char *
fold_name(const char *name)
{
	if (strncmp(name, "Task-", 5) != 0 || !name[5])
		return name;
	for (const char *p = name + 5; *p; p++)
		if (*p < '0' || *p > '9')
			return name;
	return "Task-*";
}

static uint32_t
name_hash_at(const void *ctx, uint32_t id)
{
	const struct awaitstack *a = ctx;
	return hash_mix64(hash_fnv(HASH_FNV_SEED, a->names[id - 1].name));
}

/* The marker frame for a task's name. */
static uint32_t
marker_frame(struct awaitstack *a, struct stackwalk *w, const char *raw)
{
	const char *name = fold_name(raw);
	if (a->nnames) {
		uint32_t k = idindex_start(&a->name_index, hash_mix64(hash_fnv(HASH_FNV_SEED, name)));
		for (; a->name_index.slots[k]; k = idindex_next(&a->name_index, k)) {
			const struct name_entry *e = &a->names[a->name_index.slots[k] - 1];
			if (strcmp(e->name, name) == 0)
				return e->frame_id;
		}
	}
	if (a->nnames >= AWAITSTACK_MAX_NAMES) {
		if (!a->other_frame)
			a->other_frame = made_up_frame(w, "(one of many names)");
		return a->other_frame;
	}
	if (!grow_array((void **)&a->names, &a->names_cap, a->nnames + 1, sizeof *a->names) ||
	    !idindex_reserve(&a->name_index, 1, a->nnames + 1, 64, name_hash_at, a))
		return 0;
	uint32_t frame = made_up_frame(w, name);
	char *copy = frame ? strdup(name) : NULL;
	if (!copy)
		return 0;
	a->names[a->nnames++] = (struct name_entry){.name = copy, .frame_id = frame};
	uint32_t k = idindex_start(&a->name_index, hash_mix64(hash_fnv(HASH_FNV_SEED, name)));
	while (a->name_index.slots[k])
		k = idindex_next(&a->name_index, k);
	a->name_index.slots[k] = a->nnames;
	return frame;
}

/* `stack` with a suspended task's coroutines on top, outermost first. */
static bool
push_chain(struct awaitstack *a, struct stackwalk *w, uint32_t *stack, uint32_t idx)
{
	const struct tt_tasks *ts = &a->snap->tasks;
	const struct tt_task *t = &ts->tasks[idx];
	struct intern *in = stackwalk_intern_rw(w);
	for (uint32_t k = t->nframes; k-- > 0;) {
		const struct tt_frame *f = &ts->frames[t->first_frame + k];
		uint32_t func = walker_func(a, w, a->snap->frame_func[t->first_frame + k]);
		uint32_t frame = func == NONE ? 0 : intern_frame(in, func, f->line);
		uint32_t s = frame ? intern_stack(in, *stack, frame) : 0;
		if (!s)
			return false;
		*stack = s;
	}
	return true;
}

/* The stack that ends with task idx's marker: its awaiters' coroutines and
 * markers down to the root task. Built once per task read, from the
 * nearest ancestor already built. */
static uint32_t
task_top(struct awaitstack *a, struct stackwalk *w, uint32_t idx)
{
	uint32_t path[AWAITSTACK_MAX_LEVELS];
	uint32_t n = 0, cur = idx;
	while (cur != NONE && a->top[cur] == 0) {
		for (uint32_t k = 0; k < n; k++)
			if (path[k] == cur)
				goto root;   /* an await cycle: cut it here */
		if (n == AWAITSTACK_MAX_LEVELS)
			goto root;   /* deeper than we follow */
		path[n++] = cur;
		cur = first_awaiter(a, cur);
	}
	if (0) {
root:
		cur = NONE;
	}
	uint32_t below = 0;
	if (cur != NONE && a->top[cur] != NONE) {
		below = a->top[cur];
		if (!push_chain(a, w, &below, cur))
			below = 0;
	}
	struct intern *in = stackwalk_intern_rw(w);
	for (uint32_t k = n; k-- > 0;) {
		uint32_t x = path[k];
		uint32_t marker = marker_frame(a, w, tt_task_name(&a->snap->tasks, &a->snap->tasks.tasks[x]));
		uint32_t s = marker ? intern_stack(in, below, marker) : 0;
		a->top[x] = s ? s : NONE;
		if (!s)
			break;
		below = s;
		if (k > 0 && !push_chain(a, w, &below, x))
			break;
	}
	return a->top[idx] == NONE ? 0 : a->top[idx];
}

static uint32_t
new_task_stack(struct awaitstack *a, struct stackwalk *w)
{
	if (!a->new_stack) {
		uint32_t f = made_up_frame(w, "(new)");
		a->new_stack = f ? intern_stack(stackwalk_intern_rw(w), 0, f) : 0;
	}
	return a->new_stack;
}

/* The base of a task the last read did not see (a request handled in a few
 * milliseconds never is): its name and awaiters read once, here, with its
 * awaiters' chains from the read. Remembered until the next read. */
static uint32_t
young_task_base(struct awaitstack *a, struct stackwalk *w, uint64_t task)
{
	const struct young_entry *known = keytab_find(&a->young, task);
	if (known)
		return known->base;
	if (a->young.count >= YOUNG_MAX)
		keytab_clear(&a->young);
	struct tt_error err;
	if (!a->one_ready)
		a->one_ready = task_reader_init(&a->one, a->target, stackwalk_codes_rw(w), 0, &err) ==
			       TT_OK;
	uint32_t base = 0;
	if (a->one_ready && task_reader_read_task(&a->one, task, &a->one_tasks, &err) == TT_OK) {
		const struct tt_tasks *ts = &a->one_tasks;
		const struct tt_task *t = &ts->tasks[0];
		uint32_t below = 0;
		for (uint32_t i = 0; i < t->nawaiters; i++) {
			uint32_t j = find_task(a, ts->awaiters[t->first_awaiter + i]);
			if (j == NONE)
				continue;
			uint32_t top = task_top(a, w, j);
			if (top && push_chain(a, w, &top, j))
				below = top;
			break;
		}
		uint32_t marker = marker_frame(a, w, tt_task_name(ts, t));
		base = marker ? intern_stack(stackwalk_intern_rw(w), below, marker) : 0;
	}
	if (!base)
		base = new_task_stack(a, w);
	bool added;
	struct young_entry *e = keytab_put(&a->young, task, &added);
	if (e)
		e->base = base;
	return base;
}

const struct walk_thread *
awaitstack_apply(struct awaitstack *a, struct stackwalk *w, const struct walk_thread *threads,
		 uint32_t n, uint64_t now_ns)
{
	if (now_ns - a->last_take_ns >= TAKE_EVERY_NS) {
		a->last_take_ns = now_ns;
		struct task_snapshot *s = taskwatch_take(&a->watch);
		if (s)
			install(a, s);
	}
	a->nbases = 0;
	if (!grow_array((void **)&a->bases, &a->bases_cap, n, sizeof *a->bases))
		return threads;
	memset(a->bases, 0, (size_t)n * sizeof *a->bases);
	a->nbases = n;
	if (!a->snap)
		return threads;
	if (!a->running_read && !a->running_refused && a->snap->nprocs &&
	    a->snap->procs[0].ts_running_task) {
		a->running_read = stackwalk_read_running_task(w, a->snap->procs[0].ts_running_task);
		a->running_refused = !a->running_read;
	}
	if (!a->running_read || !grow_array((void **)&a->out, &a->out_cap, n, sizeof *a->out))
		return threads;
	memcpy(a->out, threads, n * sizeof *threads);
	for (uint32_t i = 0; i < n; i++) {
		const struct walk_thread *t = &threads[i];
		if (!t->running_task || t->stack_id == 0)
			continue;
		if (!grow_array((void **)&a->memo, &a->memo_cap, t->slot + 1, sizeof *a->memo))
			continue;
		struct slot_memo *m = &a->memo[t->slot];
		if (m->task == t->running_task && m->stack_in == t->stack_id && m->gen == a->gen) {
			a->out[i].stack_id = m->stack_out;
			a->bases[i] = m->base;
			continue;
		}
		uint32_t idx = find_task(a, t->running_task);
		uint32_t base = idx != NONE ? task_top(a, w, idx)
					    : young_task_base(a, w, t->running_task);
		uint32_t out = base ? stackwalk_restack(w, i, base) : 0;
		if (out) {
			a->out[i].stack_id = out;
			a->bases[i] = base;
		}
		*m = (struct slot_memo){.task = t->running_task, .stack_in = t->stack_id,
					.stack_out = a->out[i].stack_id, .base = a->bases[i],
					.gen = a->gen};
	}
	return a->out;
}
