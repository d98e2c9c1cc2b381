#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "grow.h"
#include "hash.h"
#include "stucktime.h"
#include "taskwatch.h"
#include "waits/tcpdiag.h"
#include "workers.h"

/* While asyncio is absent, look for it again this often. */
#define PROBE_INTERVAL_NS 1000000000ull

/* A process whose tasks are read: its own target copy, reader and code
 * cache, and what the last read found. */
struct watched {
	struct target target;
	pid_t pid;
	uint32_t proc_index;
	uint64_t proc_start_ns;
	bool attached;             /* target and reader ready; else `error` says why */
	char error[384];
	bool seen;                 /* still in the procset (this pass) */
	struct code_cache codes;
	struct task_reader reader;
	struct greenlet_reader greenlets;
	struct tt_tasks read;      /* the last read, tasks then greenlets (buffers kept) */
	uint32_t *code_func;       /* code ID -> function in the watcher's funcs, 0: not yet */
	uint32_t code_func_cap;
	struct stuck_time stuck;   /* since when each task of the last read is where it is */
	uint64_t reads;
};

/* ---- snapshot building ---- */

void
task_snapshot_free(struct task_snapshot *s)
{
	if (!s)
		return;
	tt_tasks_free(&s->tasks);
	free(s->frame_func);
	free(s->task_proc);
	free(s->procs);
	free(s->stuck_ns);
	free(s->stuck_before);
	free(s->groups);
	free(s->members);
	free(s);
}

/* The watcher's function for one of wd's code IDs: by content, so that two
 * processes' copies of a function are one. */
static uint32_t
func_of_code(struct taskwatch *w, struct watched *wd, uint32_t code)
{
	if (code == UINT32_MAX ||
	    !grow_array((void **)&wd->code_func, &wd->code_func_cap, code + 1, sizeof *wd->code_func))
		return w->unknown_func;
	if (!wd->code_func[code]) {
		const struct code_entry *e = codecache_get(&wd->codes, code);
		uint32_t id = intern_func(&w->funcs, e->qualname, e->filename, e->firstlineno, FUNC_PYTHON);
		if (!id)
			return w->unknown_func;
		wd->code_func[code] = id;
	}
	return wd->code_func[code];
}

/* Add wd's last read to the snapshot as process p. */
static bool
add_process(struct taskwatch *w, struct watched *wd, struct task_snapshot *s, uint64_t now)
{
	uint32_t base = s->tasks.n, fbase = s->tasks.nframes;
	if (!tt_tasks_append(&s->tasks, &wd->read))
		return false;
	uint32_t n = s->tasks.n, nf = s->tasks.nframes, p = s->nprocs - 1, cap;
	if (!resize_array((void **)&s->stuck_ns, &cap, n + 1, sizeof *s->stuck_ns) ||
	    !resize_array((void **)&s->stuck_before, &cap, n + 1, sizeof *s->stuck_before) ||
	    !resize_array((void **)&s->task_proc, &cap, n + 1, sizeof *s->task_proc) ||
	    !resize_array((void **)&s->frame_func, &cap, nf + 1, sizeof *s->frame_func) ||
	    !stuck_time_update(&wd->stuck, &wd->read, now, s->stuck_ns + base,
			       s->stuck_before + base))
		return false;
	for (uint32_t i = base; i < n; i++)
		s->task_proc[i] = p;
	for (uint32_t f = fbase; f < nf; f++)
		s->frame_func[f] = func_of_code(w, wd, s->tasks.frames[f].code_id);
	return true;
}

/* Code of the standard library or an installed package, as opposed to the
 * application's own. */
static bool
is_library_file(const char *path)
{
	return strstr(path, "/lib/python3") || strstr(path, "-packages/") ||
	       strncmp(path, "<frozen", 7) == 0;
}

/* A suspension point: the innermost frame and the first application frame
 * awaiting it ("Queue.get <- worker (app.py:33)"); the direct caller when the
 * whole chain is library code. */
static void
group_key(const struct task_snapshot *s, const struct tt_task *t, struct task_group *g)
{
	g->func0 = g->func1 = 0;
	g->line0 = g->line1 = -1;
	if (t->nframes == 0)
		return;
	const struct tt_frame *f = s->tasks.frames + t->first_frame;
	const uint32_t *func = s->frame_func + t->first_frame;
	g->func0 = func[0];
	g->line0 = f[0].line;
	if (t->nframes == 1)
		return;
	uint32_t caller = 1;
	for (uint32_t i = 1; i < t->nframes; i++) {
		const char *file = intern_func_at(s->funcs, func[i])->filename;
		if (!is_library_file(file ? file : "")) {
			caller = i;
			break;
		}
	}
	g->func1 = func[caller];
	g->line1 = f[caller].line;
}

static bool
same_point(const struct task_group *a, const struct task_group *b)
{
	return a->func0 == b->func0 && a->func1 == b->func1 && a->line0 == b->line0 &&
	       a->line1 == b->line1;
}

static int
cmp_stuck(const void *a, const void *b, void *ctx)
{
	const struct task_snapshot *s = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t x = s->stuck_ns[i], y = s->stuck_ns[j];
	if (x != y)
		return x < y ? 1 : -1;
	return (int)s->stuck_before[j] - (int)s->stuck_before[i];
}

static uint32_t
point_hash(const struct task_group *key)
{
	return hash_mix64(((uint64_t)key->func0 << 32 | key->func1) ^
			  ((uint64_t)(uint32_t)key->line0 << 32 | (uint32_t)key->line1) *
				  0x9E3779B97F4A7C15ull);
}

static uint32_t
group_hash_at(const void *ctx, uint32_t id)
{
	const struct task_snapshot *s = ctx;
	return point_hash(&s->groups[id - 1]);
}

/* Group tasks by suspension point (an index of the groups by key). */
static bool
build_groups(struct task_snapshot *s)
{
	uint32_t n = s->tasks.n;
	struct idindex ix = {0};
	uint32_t *group_of = malloc((n + 1) * sizeof *group_of);
	s->groups = calloc(n + 1, sizeof *s->groups);
	s->members = malloc((n + 1) * sizeof *s->members);
	if (!group_of || !s->groups || !s->members) {
		free(group_of);
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct task_group key = {0};
		group_key(s, &s->tasks.tasks[i], &key);
		if (!idindex_reserve(&ix, 1, s->ngroups + 1, 64, group_hash_at, s)) {
			free(group_of);
			idindex_free(&ix);
			return false;
		}
		uint32_t k = idindex_start(&ix, point_hash(&key));
		while (ix.slots[k] && !same_point(&s->groups[ix.slots[k] - 1], &key))
			k = idindex_next(&ix, k);
		if (!ix.slots[k]) {
			s->groups[s->ngroups++] = key;
			ix.slots[k] = s->ngroups;
		}
		group_of[i] = ix.slots[k] - 1;
		s->groups[group_of[i]].count++;
	}
	idindex_free(&ix);
	uint32_t at = 0;
	for (uint32_t g = 0; g < s->ngroups; g++) {
		s->groups[g].first = at;
		at += s->groups[g].count;
		s->groups[g].count = 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct task_group *g = &s->groups[group_of[i]];
		s->members[g->first + g->count++] = i;
	}
	for (uint32_t g = 0; g < s->ngroups; g++)
		qsort_r(s->members + s->groups[g].first, s->groups[g].count, sizeof *s->members,
			cmp_stuck, s);
	free(group_of);
	return true;
}

/* ---- the processes read ---- */

static void
watched_free(struct watched *wd)
{
	if (!wd)
		return;
	if (wd->attached) {
		task_reader_free(&wd->reader);
		greenlet_reader_free(&wd->greenlets);
		codecache_free(&wd->codes);
	}
	tt_tasks_free(&wd->read);
	free(wd->code_func);
	stuck_time_free(&wd->stuck);
	free(wd);
}

/* Ready a reader over wd->target (already set). */
static tt_status
watched_open(struct watched *wd, struct tt_error *err)
{
	if (codecache_init(&wd->codes) != 0)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the task code cache");
	tt_status st = task_reader_init(&wd->reader, &wd->target, &wd->codes, PROBE_INTERVAL_NS, err);
	if (st != TT_OK) {
		codecache_free(&wd->codes);
		return st;
	}
	st = greenlet_reader_init(&wd->greenlets, &wd->target, &wd->codes, PROBE_INTERVAL_NS,
				  GREENLETS_SCAN_BUDGET, err);
	if (st != TT_OK) {
		task_reader_free(&wd->reader);
		codecache_free(&wd->codes);
		return st;
	}
	wd->attached = true;
	return TT_OK;
}

/* A process to read, not attached yet; added to w's list, NULL when memory
 * is short. */
static struct watched *
add_watched(struct taskwatch *w, pid_t pid)
{
	struct watched *wd = calloc(1, sizeof *wd);
	if (!wd || !grow_array((void **)&w->watched, &w->watched_cap, w->nwatched + 1,
			       sizeof *w->watched)) {
		free(wd);
		return NULL;
	}
	stuck_time_init(&wd->stuck);
	wd->pid = pid;
	w->watched[w->nwatched++] = wd;
	return wd;
}

static struct watched *
find_watched(const struct taskwatch *w, uint32_t index, uint64_t start_ns)
{
	for (uint32_t i = 0; i < w->nwatched; i++)
		if (w->watched[i]->proc_index == index && w->watched[i]->proc_start_ns == start_ns)
			return w->watched[i];
	return NULL;
}

/* Follow the procset: a reader for each live Python process new to us, and
 * none any more for a process that ended or whose entry went to another. */
static void
sync_with_procset(struct taskwatch *w)
{
	const struct procset *ps = w->follow;
	for (uint32_t i = 0; i < w->nwatched; i++)
		w->watched[i]->seen = false;
	uint32_t n = procset_count(ps);
	for (uint32_t i = 0; i < n; i++) {
		const struct proc_info *p = procset_at(ps, i);
		if (!p || !p->target || procset_state(p) != PROC_LIVE)
			continue;
		struct watched *wd = find_watched(w, i, p->start_ns);
		if (wd) {
			wd->seen = true;
			continue;
		}
		wd = add_watched(w, p->pid);
		if (!wd)
			return;   /* not pruning: the processes after this one were not looked at */
		wd->proc_index = i;
		wd->proc_start_ns = p->start_ns;
		wd->seen = true;
		/* Our own view of its memory: the sampler's target is the
		 * sampler's to use (its counters move). */
		struct tt_error err = {0};
		if (target_attach_like(&wd->target, p->pid, p->target, &err) != TT_OK ||
		    watched_open(wd, &err) != TT_OK)
			snprintf(wd->error, sizeof wd->error, "%s", err.msg);
	}
	uint32_t kept = 0;
	for (uint32_t i = 0; i < w->nwatched; i++) {
		if (w->watched[i]->seen)
			w->watched[kept++] = w->watched[i];
		else
			watched_free(w->watched[i]);
	}
	w->nwatched = kept;
}

/* ---- the thread ---- */

static uint64_t
read_period(uint64_t interval_ns, uint64_t read_ns)
{
	uint64_t period = read_ns * TASKWATCH_SHARE;
	if (period < interval_ns)
		period = interval_ns;
	return period < TASKWATCH_MAX_INTERVAL_NS ? period : TASKWATCH_MAX_INTERVAL_NS;
}

static void
publish(struct taskwatch *w, struct task_snapshot *s, const char *error)
{
	pthread_mutex_lock(&w->worker.lock);
	if (s) {
		task_snapshot_free(w->latest);
		w->latest = s;
	}
	snprintf(w->error, sizeof w->error, "%s", error);
	pthread_mutex_unlock(&w->worker.lock);
}

#define PEERS_MAX 4096   /* TCP connections of a process looked at */

/* A process with a task (its own, not its thread's) waiting past
 * peers_after_ns: who owes whom an answer on its TCP connections. */
static void
read_peers(struct taskwatch *w, const struct task_snapshot *s, struct task_proc *p)
{
	uint64_t after = atomic_load_explicit(&w->peers_after_ns, memory_order_relaxed);
	bool waits = false;
	for (uint32_t i = p->first_task; after && !waits && i < p->first_task + p->ntasks; i++) {
		const struct tt_task *t = &s->tasks.tasks[i];
		waits = s->stuck_ns[i] >= after && !t->running &&
			!(t->kind == TASK_GREENLET && (t->hub || t->main_greenlet));
	}
	if (!waits)
		return;
	if (!w->peers && !(w->peers = malloc(PEERS_MAX * sizeof *w->peers)))
		return;
	size_t n = tcpdiag_read(p->pid, w->peers, PEERS_MAX);
	p->peers_read = true;
	for (size_t i = 0; i < n; i++) {
		uint32_t ms;
		p->serving |= w->peers[i].listening || w->peers[i].accepted;
		if (tcpdiag_owed(&w->peers[i], &ms) != TCP_OWED_NOTHING &&
		    (!p->owes || ms > p->owed_ms)) {
			p->owes = true;
			p->owed_ms = ms;
		}
	}
}

/* Read one process into the snapshot as its next process. */
static bool
read_one(struct taskwatch *w, struct watched *wd, struct task_snapshot *s)
{
	struct task_proc *p = &s->procs[s->nprocs++];
	*p = (struct task_proc){.pid = wd->pid, .proc_index = wd->proc_index,
				.proc_start_ns = wd->proc_start_ns, .state = TASKS_NO_ASYNCIO,
				.first_task = s->tasks.n};
	if (!wd->attached) {
		snprintf(p->error, sizeof p->error, "%s", wd->error);
		return true;
	}
	struct tt_error err = {0};
	if (task_reader_read(&wd->reader, &wd->read, &err) != TT_OK ||
	    greenlet_reader_read(&wd->greenlets, &wd->read, &err) != TT_OK) {
		snprintf(p->error, sizeof p->error, "%s", err.msg);
		return true;
	}
	wd->reads++;
	/* Greenlets read make the process's tasks readable, whatever asyncio's state. */
	p->state = wd->greenlets.state == GREENLETS_READ ? TASKS_READ : wd->read.state;
	if (wd->greenlets.state == GREENLETS_UNKNOWN)
		snprintf(p->greenlets_note, sizeof p->greenlets_note, "%s", wd->greenlets.why);
	p->lost = wd->read.lost;
	p->ts_running_task = wd->reader.found ? wd->reader.ts_running_task : 0;
	if (!add_process(w, wd, s, clock_now_ns()))
		return false;
	p->ntasks = s->tasks.n - p->first_task;
	read_peers(w, s, p);
	return true;
}

/* One pass over every process watched: the snapshot, or NULL with `why`. */
static struct task_snapshot *
read_all(struct taskwatch *w, uint64_t start, char *why, size_t len)
{
	if (w->follow)
		sync_with_procset(w);
	struct task_snapshot *s = calloc(1, sizeof *s);
	if (s)
		s->procs = calloc(w->nwatched + 1, sizeof *s->procs);
	if (!s || !s->procs) {
		task_snapshot_free(s);
		snprintf(why, len, "%s", "out of memory reading tasks");
		return NULL;
	}
	s->funcs = &w->funcs;
	s->tasks.state = TASKS_UNSUPPORTED;
	bool any_async = false, any_read = false;
	for (uint32_t i = 0; i < w->nwatched; i++) {
		if (!read_one(w, w->watched[i], s)) {
			task_snapshot_free(s);
			snprintf(why, len, "%s", "out of memory grouping tasks");
			return NULL;
		}
		const struct task_proc *p = &s->procs[s->nprocs - 1];
		any_async |= !p->error[0] && p->state != TASKS_UNSUPPORTED;
		any_read |= !p->error[0] && p->state == TASKS_READ;
		/* One process alone: its failure is the snapshot's. */
		if (!w->follow && p->error[0]) {
			snprintf(why, len, "%s", p->error);
			task_snapshot_free(s);
			return NULL;
		}
	}
	s->tasks.state = any_read ? TASKS_READ : any_async ? TASKS_NO_ASYNCIO : TASKS_UNSUPPORTED;
	uint64_t now = clock_now_ns();
	s->taken_ns = now;
	s->read_ms = (double)(now - start) / 1e6;
	s->reads = ++w->reads;
	s->next_in_ns = read_period(w->interval_ns, now - start);
	if (!build_groups(s)) {
		task_snapshot_free(s);
		snprintf(why, len, "%s", "out of memory grouping tasks");
		return NULL;
	}
	why[0] = '\0';
	return s;
}

static void *
taskwatch_main(void *arg)
{
	struct taskwatch *w = arg;
	while (!atomic_load(&w->worker.stop)) {
		uint64_t start = clock_now_ns();
		char why[512];
		struct task_snapshot *s = read_all(w, start, why, sizeof why);
		publish(w, s, why);
		if (!s && !w->follow && !remote_pid_alive(w->watched[0]->pid))
			break;
		/* Sleep out the interval, waking early to stop. */
		uint64_t until = start + read_period(w->interval_ns, clock_now_ns() - start);
		pthread_mutex_lock(&w->worker.lock);
		worker_sleep_until(&w->worker, until);
		pthread_mutex_unlock(&w->worker.lock);
	}
	return NULL;
}

static void
free_watchers(struct taskwatch *w)
{
	for (uint32_t i = 0; i < w->nwatched; i++)
		watched_free(w->watched[i]);
	free(w->watched);
	w->watched = NULL;
	free(w->peers);
	w->peers = NULL;
	w->nwatched = w->watched_cap = 0;
	intern_free(&w->funcs);
}

static tt_status
start_thread(struct taskwatch *w, struct tt_error *err)
{
	int rc = worker_run(&w->worker, "tt-tasks", taskwatch_main, w);
	if (rc != 0) {
		free_watchers(w);
		return tt_fail(err, TT_ENOMEM, rc, "cannot start the task reader thread");
	}
	return TT_OK;
}

static tt_status
init_common(struct taskwatch *w, uint64_t interval_ns, struct tt_error *err)
{
	memset(w, 0, sizeof *w);
	w->interval_ns = interval_ns;
	if (intern_init(&w->funcs) != 0)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the task functions");
	w->unknown_func = intern_func(&w->funcs, "?", "?", 0, FUNC_MADE_UP);
	if (!w->unknown_func) {
		intern_free(&w->funcs);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the task functions");
	}
	return TT_OK;
}

tt_status
taskwatch_start(struct taskwatch *w, const struct target *t, uint64_t interval_ns,
		struct tt_error *err)
{
	tt_status st = init_common(w, interval_ns, err);
	if (st != TT_OK)
		return st;
	struct watched *wd = add_watched(w, t->pid);
	if (!wd) {
		free_watchers(w);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the task reader");
	}
	wd->target = *t;
	/* The copy reads through its own remote (the backend points at it). */
	if (wd->target.mem.backend.ctx == &t->mem)
		wd->target.mem.backend.ctx = &wd->target.mem;
	st = watched_open(wd, err);
	if (st != TT_OK) {
		free_watchers(w);
		return st;
	}
	return start_thread(w, err);
}

tt_status
taskwatch_start_tree(struct taskwatch *w, const struct procset *ps, uint64_t interval_ns,
		     struct tt_error *err)
{
	tt_status st = init_common(w, interval_ns, err);
	if (st != TT_OK)
		return st;
	w->follow = ps;
	return start_thread(w, err);
}

struct task_snapshot *
taskwatch_take(struct taskwatch *w)
{
	if (!w->worker.started)
		return NULL;
	pthread_mutex_lock(&w->worker.lock);
	struct task_snapshot *s = w->latest;
	w->latest = NULL;
	pthread_mutex_unlock(&w->worker.lock);
	return s;
}

void
taskwatch_error(struct taskwatch *w, char *buf, size_t len)
{
	if (!w->worker.started) {
		snprintf(buf, len, "%s", "");
		return;
	}
	pthread_mutex_lock(&w->worker.lock);
	snprintf(buf, len, "%s", w->error);
	pthread_mutex_unlock(&w->worker.lock);
}

void
taskwatch_stop(struct taskwatch *w)
{
	if (!w->worker.started)
		return;
	worker_stop(&w->worker);
	task_snapshot_free(w->latest);
	w->latest = NULL;
	free_watchers(w);
}
