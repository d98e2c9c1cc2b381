#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "dumptasks.h"
#include "jsonw.h"
#include "sanitize.h"
#include "stucktime.h"

/* Tree levels drawn before the rest is summarised. */
#define TREE_MAX_DEPTH 128
#define READ_ATTEMPTS 5
#define WATCH_PERIOD_NS 250000000ull   /* --watch: reads as often as the tasks view's */

static tt_status
read_once(struct task_reader *r, struct greenlet_reader *g, struct tt_tasks *ts,
	  struct tt_error *err)
{
	tt_status st = TT_OK;
	for (int i = 0; i < READ_ATTEMPTS; i++) {
		st = task_reader_read(r, ts, err);
		if (st == TT_OK && g)
			st = greenlet_reader_read(g, ts, err);
		if (st != TT_OK || (ts->lost == 0 && !ts->incomplete))
			return st;
		struct timespec pause = {0, 2000000L};
		nanosleep(&pause, NULL);
	}
	return st;
}

void
dump_unmoved_free(struct dump_unmoved *u)
{
	free(u->stuck_ns);
	free(u->before);
	u->stuck_ns = NULL;
	u->before = NULL;
}

tt_status
dumptasks_read(struct task_reader *r, struct greenlet_reader *g, struct tt_tasks *ts,
	       struct dump_unmoved *u, struct tt_error *err)
{
	if (!u || u->watch_s <= 0)
		return read_once(r, g, ts, err);
	struct stuck_time st;
	stuck_time_init(&st);
	uint64_t start = clock_now_ns(), end = start + (uint64_t)(u->watch_s * 1e9);
	tt_status status = TT_OK;
	for (;;) {
		uint64_t at = clock_now_ns();
		if ((status = read_once(r, g, ts, err)) != TT_OK)
			break;
		dump_unmoved_free(u);
		u->stuck_ns = malloc((ts->n + 1) * sizeof *u->stuck_ns);
		u->before = malloc(ts->n + 1);
		if (!u->stuck_ns || !u->before ||
		    !stuck_time_update(&st, ts, at, u->stuck_ns, u->before)) {
			status = tt_fail(err, TT_ENOMEM, 0, "out of memory watching tasks");
			break;
		}
		uint64_t now = clock_now_ns();
		if (now >= end)
			break;
		uint64_t next = at + WATCH_PERIOD_NS < end ? at + WATCH_PERIOD_NS : end;
		if (next > now) {
			struct timespec pause = {(time_t)((next - now) / 1000000000ull),
						 (long)((next - now) % 1000000000ull)};
			nanosleep(&pause, NULL);
		}
	}
	stuck_time_free(&st);
	return status;
}

/* ---- the await graph: edges from an awaiting task to the tasks it awaits ---- */

struct graph {
	uint32_t *by_id;        /* task indexes sorted by id */
	uint32_t *child_start;  /* CSR: children of i are child[child_start[i] .. [i+1]) */
	uint32_t *child;
	bool *has_parent;
	uint8_t *mark;          /* 0 unseen, 1 on the current path, 2 drawn */
	const struct dump_unmoved *unmoved;   /* NULL: not watched */
};

static int
cmp_by_id(const void *a, const void *b, void *ctx)
{
	const struct tt_tasks *ts = ctx;
	uint64_t x = ts->tasks[*(const uint32_t *)a].id;
	uint64_t y = ts->tasks[*(const uint32_t *)b].id;
	return x < y ? -1 : x > y;
}

static int64_t
find_task(const struct tt_tasks *ts, const struct graph *g, uint64_t id)
{
	uint32_t lo = 0, hi = ts->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t v = ts->tasks[g->by_id[mid]].id;
		if (v == id)
			return g->by_id[mid];
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static bool
graph_build(const struct tt_tasks *ts, struct graph *g)
{
	memset(g, 0, sizeof *g);
	uint32_t n = ts->n;
	g->by_id = malloc((n + 1) * sizeof *g->by_id);
	g->child_start = calloc(n + 2, sizeof *g->child_start);
	g->child = malloc((ts->nawaiters + 1) * sizeof *g->child);
	g->has_parent = calloc(n + 1, sizeof *g->has_parent);
	g->mark = calloc(n + 1, 1);
	if (!g->by_id || !g->child_start || !g->child || !g->has_parent || !g->mark)
		return false;
	for (uint32_t i = 0; i < n; i++)
		g->by_id[i] = i;
	qsort_r(g->by_id, n, sizeof *g->by_id, cmp_by_id, (void *)ts);
	/* count, then place: the parent of an edge is the awaiter */
	for (uint32_t i = 0; i < n; i++) {
		const struct tt_task *t = &ts->tasks[i];
		for (uint32_t a = 0; a < t->nawaiters; a++) {
			int64_t p = find_task(ts, g, ts->awaiters[t->first_awaiter + a]);
			if (p >= 0 && (uint32_t)p != i) {
				g->child_start[p + 1]++;
				g->has_parent[i] = true;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++)
		g->child_start[i + 1] += g->child_start[i];
	uint32_t *fill = calloc(n + 1, sizeof *fill);
	if (!fill)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		const struct tt_task *t = &ts->tasks[i];
		for (uint32_t a = 0; a < t->nawaiters; a++) {
			int64_t p = find_task(ts, g, ts->awaiters[t->first_awaiter + a]);
			if (p >= 0 && (uint32_t)p != i)
				g->child[g->child_start[p] + fill[p]++] = i;
		}
	}
	free(fill);
	return true;
}

static void
graph_free(struct graph *g)
{
	free(g->by_id);
	free(g->child_start);
	free(g->child);
	free(g->has_parent);
	free(g->mark);
}

/* ---- text ---- */

static void
print_task_line(FILE *f, const struct tt_tasks *ts, const struct tt_task *t)
{
	char safe[2048];
	sanitize_for_terminal(tt_task_name(ts, t), safe, sizeof safe);
	fprintf(f, "%s [0x%llx]", safe, (unsigned long long)t->id);
}

static void
print_frames(FILE *f, const struct tt_tasks *ts, const struct code_cache *codes,
	     const struct tt_task *t, const char *prefix)
{
	char q[2048], file[4096];
	for (uint32_t i = 0; i < t->nframes; i++) {
		const struct tt_frame *fr = &ts->frames[t->first_frame + i];
		const struct code_entry *c = codecache_get(codes, fr->code_id);
		sanitize_for_terminal(c->qualname, q, sizeof q);
		sanitize_for_terminal(c->filename, file, sizeof file);
		fprintf(f, "%s%s (%s:%d)\n", prefix, q, file, fr->line);
	}
	if (t->chain_cut)
		fprintf(f, "%s... (coroutine chain longer than %d)\n", prefix, TASKS_MAX_CHAIN);
}

static void
print_subtree(FILE *f, const struct tt_tasks *ts, const struct code_cache *codes,
	      struct graph *g, uint32_t i, char *prefix, size_t plen, bool last, int depth)
{
	const struct tt_task *t = &ts->tasks[i];
	fprintf(f, "%s%s", prefix, depth == 0 ? "" : last ? "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 "
							: "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ");
	print_task_line(f, ts, t);
	if (g->mark[i] == 1) {
		fprintf(f, " (awaits itself: cycle)\n");
		return;
	}
	if (g->mark[i] == 2) {
		fprintf(f, " (shown above)\n");
		return;
	}
	if (t->kind == TASK_GREENLET) {
		fprintf(f, "%s", t->hub ? " hub," : "");
		/* its greenlets run on its thread: said once, at the tree's root */
		if (t->main_greenlet && t->thread)
			fprintf(f, " main greenlet of thread %llu,", (unsigned long long)t->thread);
		else if (t->main_greenlet)
			fprintf(f, " main greenlet,");
		fprintf(f, "%s", t->running ? " running (its stack is its thread's)" : " suspended");
	}
	else
		fprintf(f, " thread %llu, %s", (unsigned long long)t->thread,
			t->running ? "running" : "suspended");
	if (g->unmoved && !t->running)
		fprintf(f, ", unmoved %s%.1f s", g->unmoved->before[i] ? "\xe2\x89\xa5 " : "",
			(double)g->unmoved->stuck_ns[i] / 1e9);
	fputc('\n', f);
	g->mark[i] = 1;
	/* extend the prefix for what hangs below this task */
	size_t nlen = plen;
	if (depth > 0) {
		const char *ext = last ? "    " : "\xe2\x94\x82   ";
		size_t el = strlen(ext);
		if (plen + el < 4 * TREE_MAX_DEPTH * 3) {
			memcpy(prefix + plen, ext, el + 1);
			nlen = plen + el;
		}
	}
	uint32_t nchild = g->child_start[i + 1] - g->child_start[i];
	char fprefix[4 * TREE_MAX_DEPTH * 3 + 16];
	snprintf(fprefix, sizeof fprefix, "%s%s  ", prefix, nchild ? "\xe2\x94\x82" : " ");
	print_frames(f, ts, codes, t, fprefix);
	if (depth + 1 >= TREE_MAX_DEPTH && nchild) {
		fprintf(f, "%s\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 ... (%u awaited tasks, tree deeper than %d)\n",
			prefix, nchild, TREE_MAX_DEPTH);
	} else {
		for (uint32_t k = 0; k < nchild; k++)
			print_subtree(f, ts, codes, g, g->child[g->child_start[i] + k], prefix, nlen,
				      k + 1 == nchild, depth + 1);
	}
	prefix[plen] = '\0';
	g->mark[i] = 2;
}

/* The tasks of one kind, roots first; then whatever only a cycle reaches.
 * g: the graph of every task (NULL: memory ran short building it). */
static void
print_forest(FILE *f, const struct tt_tasks *ts, const struct code_cache *codes, uint8_t kind,
	     struct graph *g)
{
	if (!g) {
		fprintf(f, "(out of memory drawing the task tree)\n");
		return;
	}
	char prefix[4 * TREE_MAX_DEPTH * 3 + 16] = "";
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < ts->n; i++) {
			if (ts->tasks[i].kind != kind || g->mark[i] || (pass == 0 && g->has_parent[i]))
				continue;
			fputc('\n', f);
			if (pass == 1)
				fprintf(f, "(in an await cycle)\n");
			print_subtree(f, ts, codes, g, i, prefix, 0, true, 0);
		}
	}
}

static void
print_asyncio(FILE *f, const struct tt_tasks *ts, const struct code_cache *codes,
	      struct graph *g, uint32_t nasync, uint32_t lost)
{
	if (ts->state == TASKS_UNSUPPORTED) {
		fprintf(f, "\nasyncio tasks: not available (reading tasks needs Python 3.14 or newer)\n");
		return;
	}
	if (ts->state == TASKS_NO_ASYNCIO) {
		fprintf(f, "\nasyncio tasks: none (asyncio is not imported)\n");
		return;
	}
	fprintf(f, "\nasyncio tasks: %u", nasync);
	if (lost)
		fprintf(f, " (%u more changed while read)", lost);
	if (ts->truncated)
		fprintf(f, " (more than %d: the rest left out)", TASKS_MAX);
	if (ts->incomplete)
		fprintf(f, " (a task list changed while read: some may be missing)");
	fprintf(f, "\n");
	if (nasync)
		print_forest(f, ts, codes, TASK_ASYNCIO, g);
}

void
dumptasks_text(FILE *f, const struct tt_tasks *ts, const struct code_cache *codes,
	       const struct greenlet_reader *g, const struct dump_unmoved *u)
{
	uint32_t nasync = ts->n - ts->ngreenlets, lost = ts->lost - ts->greenlets_lost;
	/* One graph of every task and greenlet (they never link across kinds). */
	struct graph graph, *tree = NULL;
	if (ts->n && graph_build(ts, &graph)) {
		graph.unmoved = u && u->watch_s > 0 && u->stuck_ns ? u : NULL;
		tree = &graph;
	}
	/* Where greenlets are read, no asyncio task is not worth a line. */
	bool quiet = g && g->state == GREENLETS_READ &&
		     (ts->state != TASKS_READ || (nasync == 0 && lost == 0));
	if (!quiet)
		print_asyncio(f, ts, codes, tree, nasync, lost);
	if (g && g->state == GREENLETS_UNKNOWN) {
		char safe[sizeof g->why];
		sanitize_for_terminal(g->why, safe, sizeof safe);
		fprintf(f, "\n%s\n", safe);
	} else if (g && g->state == GREENLETS_READ) {
		char v[64];
		sanitize_for_terminal(g->version, v, sizeof v);
		fprintf(f, "\ngreenlets: %u (greenlet %s)", ts->ngreenlets, v);
		if (ts->greenlets_lost)
			fprintf(f, " (%u more changed while read)", ts->greenlets_lost);
		fprintf(f, "\n");
		if (ts->ngreenlets)
			print_forest(f, ts, codes, TASK_GREENLET, tree);
	}
	if (ts->n)
		graph_free(&graph);
}

/* ---- JSON ---- */

void
dumptasks_json(struct jsonw *w, const struct tt_tasks *ts, const struct code_cache *codes,
	       const struct greenlet_reader *g, const struct dump_unmoved *u)
{
	jsonw_array(w, "tasks");
	jsonw_style(w, true, "\n  ");
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct tt_task *t = &ts->tasks[i];
		jsonw_object(w, NULL);
		jsonw_u64(w, "id", t->id);
		jsonw_string(w, "name", tt_task_name(ts, t));
		if (t->kind == TASK_GREENLET) {
			jsonw_string(w, "kind", "greenlet");
			jsonw_bool(w, "hub", t->hub);
			jsonw_bool(w, "main", t->main_greenlet);
			jsonw_u64(w, "parent", t->nawaiters ? ts->awaiters[t->first_awaiter] : 0);
			jsonw_u64(w, "thread", t->thread);
		} else {
			jsonw_string(w, "kind", "asyncio");
			jsonw_u64(w, "thread", t->thread);
			jsonw_i64(w, "interpreter", t->interp_id);
		}
		jsonw_bool(w, "running", t->running);
		if (u && u->watch_s > 0 && u->stuck_ns && !t->running) {
			jsonw_double(w, "unmoved_s", 3, (double)u->stuck_ns[i] / 1e9);
			jsonw_bool(w, "unmoved_at_least", u->before[i]);
		}
		jsonw_array(w, "frames");
		for (uint32_t k = 0; k < t->nframes; k++) {
			const struct tt_frame *fr = &ts->frames[t->first_frame + k];
			const struct code_entry *c = codecache_get(codes, fr->code_id);
			jsonw_object(w, NULL);
			jsonw_string(w, "func", c->qualname);
			jsonw_string(w, "file", c->filename);
			jsonw_i64(w, "line", fr->line);
			jsonw_end(w);
		}
		jsonw_end(w);
		if (t->kind == TASK_ASYNCIO) {
			jsonw_array(w, "awaited_by");
			for (uint32_t k = 0; k < t->nawaiters; k++)
				jsonw_u64(w, NULL, ts->awaiters[t->first_awaiter + k]);
			jsonw_end(w);
		}
		jsonw_end(w);
	}
	jsonw_end(w);
	if (ts->state == TASKS_UNSUPPORTED)
		jsonw_string(w, "tasks_note", "reading asyncio tasks needs Python 3.14 or newer");
	if (ts->lost || ts->incomplete)
		jsonw_u64(w, "tasks_lost", ts->lost);
	if (g && g->state != GREENLETS_NONE) {
		jsonw_object(w, "greenlets");
		jsonw_string(w, "version", g->version);
		if (g->state == GREENLETS_UNKNOWN) {
			jsonw_string(w, "note", g->why);
		} else {
			jsonw_u64(w, "count", ts->ngreenlets);
			jsonw_u64(w, "lost", ts->greenlets_lost);
		}
		jsonw_end(w);
	}
}
