/* The call tree builder, on stacks fed through the aggregator's API: a
 * known call structure (shares, order, own, recursion cut at the cap, path
 * keys stable across rebuilds, the query's thread, mode, scope and filter,
 * threshold folding), and the cost of building a tree of 50,000 distinct
 * stacks (printed as a figure; `--bench` prints only that).
 *
 * The stacks are interned by hand into a stand-in for the sampler's walker
 * (the aggregator only asks it for the intern tables and the code cache). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregate.h"
#include "calltree.h"
#include "intern.h"
#include "procset.h"
#include "walk/stackwalk.h"
#include "tap.h"
#include "walk/sample.h"

struct stackwalk {
	struct appendlog *slots;
};

const struct appendlog *stackwalk_slots(const struct stackwalk *w) { return w->slots; }
uint64_t stackwalk_epoch(const struct stackwalk *w) { (void)w; return 0; }

static struct stackwalk W;
/* The aggregator reads a process set: one process, walked by W. Built by
 * hand (procset_init would pull in the real walker). */
static struct procset PS;

static int
one_process(void)
{
	PS.threads.log = W.slots;
	static struct proc_info P;
	PS.procs = appendlog_new(sizeof(_Atomic(struct proc_info *)), 4);
	if (!PS.procs)
		return -1;
	_Atomic(struct proc_info *) *ref = appendlog_reserve(PS.procs);
	P.walk = &W;
	atomic_init(ref, &P);
	appendlog_publish(PS.procs);
	return 0;
}

static uint32_t
code(const char *name, const char *file, int line)
{
	return intern_func(&PS.in, name, file, line, FUNC_PYTHON);
}

/* A stack from its outermost frame in, each frame a function (line = 10 *
 * depth so "by line" splits nothing here). */
static uint32_t
stack_of(const uint32_t *codes, int n)
{
	uint32_t s = 0;
	for (int i = 0; i < n; i++)
		s = intern_stack(&PS.in, s, intern_frame(&PS.in, codes[i], 10));
	return s;
}

static void
add(struct aggregate *a, uint32_t stack, uint16_t slot, uint8_t state, unsigned n)
{
	struct sample_record r = {.stack_id = stack, .thread_slot = slot, .state = state, .weight = 1};
	for (unsigned i = 0; i < n; i++)
		agg_add(a, &r);
}

static uint32_t
child_named(struct aggregate *a, struct calltree *t, uint32_t node, const char *name)
{
	if (node == UINT32_MAX)
		return node;
	const uint32_t *kids = calltree_kids(t, node);
	for (uint32_t k = 0; k < calltree_nkids(t, node); k++) {
		uint32_t c = kids[k];
		if (strcmp(a->funcs[t->nodes[c].func].qualname, name) == 0)
			return c;
	}
	return UINT32_MAX;
}

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
test_structure(void)
{
	uint32_t m = code("main", "app.py", 1), a_ = code("a", "app.py", 5), b = code("b", "app.py", 9),
		 c = code("c", "app.py", 13), d = code("d", "app.py", 17), r = code("recurse", "deep.py", 3);
	struct aggregate agg;
	agg_init(&agg, &PS, 0);
	uint32_t abc[] = {m, a_, b, c}, ad[] = {m, a_, d}, ab[] = {m, a_, b};
	add(&agg, stack_of(abc, 4), 0, TT_THREAD_ON_CPU | TT_THREAD_GIL, 70);
	add(&agg, stack_of(ab, 3), 0, TT_THREAD_ON_CPU | TT_THREAD_GIL, 5);
	add(&agg, stack_of(ad, 3), 0, 0, 25);
	uint32_t deep[201];
	deep[0] = m;
	for (int i = 1; i <= 200; i++)
		deep[i] = r;
	add(&agg, stack_of(deep, 201), 1, TT_THREAD_ON_CPU, 10);
	agg_roll_window(&agg, 1);

	struct agg_query q = {.mode = AGG_WALL, .scope = AGG_WINDOW, .slot = -1};
	struct calltree t = {0};
	tap_ok(calltree_build(&agg, &q, 0, &t), "builds");
	tap_ok(t.nodes[0].total == 110, "root holds every sample (%llu)",
	       (unsigned long long)t.nodes[0].total);
	uint32_t nm = child_named(&agg, &t, 0, "main");
	uint32_t na = nm == UINT32_MAX ? nm : child_named(&agg, &t, nm, "a");
	tap_ok(na != UINT32_MAX && t.nodes[na].total == 100, "main -> a holds 100");
	uint32_t nb = na == UINT32_MAX ? na : child_named(&agg, &t, na, "b");
	uint32_t nd = na == UINT32_MAX ? na : child_named(&agg, &t, na, "d");
	tap_ok(nb != UINT32_MAX && nd != UINT32_MAX && t.nodes[nb].total == 75 &&
	       t.nodes[nb].own == 5 && t.nodes[nd].total == 25 && t.nodes[nd].own == 25,
	       "a -> b 75 (own 5), a -> d 25 (own 25)");
	tap_ok(na != UINT32_MAX && calltree_kids(&t, na)[0] == nb, "heaviest child first");
	tap_ok(calltree_kids(&t, nm)[0] == na, "main's children: a first");

	/* Recursion: 200 frames of recurse under main, cut at the cap. */
	uint32_t nr = child_named(&agg, &t, nm, "recurse");
	uint32_t depth = 0, at = nr;
	while (at != UINT32_MAX && calltree_kids(&t, at) && calltree_nkids(&t, at)) {
		at = calltree_kids(&t, at)[0];
		depth++;
	}
	tap_ok(at != UINT32_MAX && t.nodes[at].depth == CALLTREE_DEFAULT_DEPTH &&
	       t.nodes[at].cut == 10 && t.cut == 10 && t.deepest == 201,
	       "recursion cut at depth %u (node at %u, cut %llu, deepest %u)", CALLTREE_DEFAULT_DEPTH,
	       at == UINT32_MAX ? 0 : t.nodes[at].depth, at == UINT32_MAX ? 0ull : (unsigned long long)t.nodes[at].cut,
	       t.deepest);
	tap_ok(t.n < 80, "the deep stack costs at most the cap in nodes (%u nodes)", t.n);

	/* Keys survive a rebuild with more samples. */
	uint64_t kb = t.nodes[nb].key;
	add(&agg, stack_of(ad, 3), 0, 0, 100);
	agg_roll_window(&agg, 2);
	q.scope = AGG_SESSION;
	calltree_build(&agg, &q, 0, &t);
	uint32_t nb2 = calltree_find(&t, kb);
	tap_ok(nb2 != UINT32_MAX && t.nodes[nb2].total == 75 &&
	       strcmp(agg.funcs[t.nodes[nb2].func].qualname, "b") == 0,
	       "a path's key finds the same node after a rebuild");
	nm = child_named(&agg, &t, 0, "main");
	na = child_named(&agg, &t, nm, "a");
	nd = child_named(&agg, &t, na, "d");
	tap_ok(calltree_kids(&t, na)[0] == nd, "order follows the new counts (d 125 > b 75)");

	/* Window scope: only the last window's samples. */
	q.scope = AGG_WINDOW;
	calltree_build(&agg, &q, 0, &t);
	tap_ok(t.nodes[0].total == 100, "window scope: the last window only (%llu)",
	       (unsigned long long)t.nodes[0].total);
	nm = child_named(&agg, &t, 0, "main");
	na = child_named(&agg, &t, nm, "a");
	tap_ok(na != UINT32_MAX && calltree_nkids(&t, na) == 1 && calltree_kids(&t, na)[0] == nd &&
	       t.nodes[nd].total == 100,
	       "a child without samples in the window is not shown (b), its sibling is (d)");
	tap_ok(calltree_nkids(&t, 0) == 1 && t.nodes[calltree_kids(&t, 0)[0]].total == 100,
	       "the root shows main only");

	/* Thread, mode, filter. */
	q.scope = AGG_SESSION;
	q.slot = 1;
	calltree_build(&agg, &q, 0, &t);
	tap_ok(t.nodes[0].total == 10, "thread 1 alone: its 10 samples");
	q.slot = -1;
	q.mode = AGG_GIL;
	calltree_build(&agg, &q, 0, &t);
	tap_ok(t.nodes[0].total == 75, "gil mode: 75 samples");
	q.mode = AGG_WALL;
	q.filter = "D";
	calltree_build(&agg, &q, 0, &t);
	/* d's 125 and recurse's 10 (its file, deep.py, has a d) */
	tap_ok(t.nodes[0].total == 135, "filter 'D' keeps stacks through a match in name or file (%llu)",
	       (unsigned long long)t.nodes[0].total);
	q.filter = "deep.py";
	calltree_build(&agg, &q, 0, &t);
	tap_ok(t.nodes[0].total == 10, "filter on a file name");
	q.filter = NULL;

	/* Threshold: 10% of 210 is 21 samples: a (200) stays, recurse (10) folds. */
	calltree_build(&agg, &q, 0, &t);
	nm = child_named(&agg, &t, 0, "main");
	uint64_t folded = 0;
	uint32_t nfolded = 0;
	uint64_t th = calltree_threshold(&t, 10);
	uint32_t shown = calltree_shown_kids(&t, nm, th, &nfolded, &folded);
	tap_ok(th == 21 && shown == 1 && folded == 10 && nfolded == 1,
	       "threshold 10%%: %llu samples, main shows 1 child, 10 samples fold (%u, %llu)",
	       (unsigned long long)th, shown, (unsigned long long)folded);

	/* By line: same shape here (one line per frame). */
	q.by_line = true;
	calltree_build(&agg, &q, 0, &t);
	tap_ok(t.nodes[0].total == 210 && t.nodes[child_named(&agg, &t, 0, "main")].line == 10,
	       "by line: nodes carry their line");

	/* A smaller cap. */
	q.by_line = false;
	calltree_build(&agg, &q, 5, &t);
	tap_ok(t.depth_cap == 5 && t.cut == 10, "a cap of 5 cuts the deep stack only");

	/* A tree of given paths (the flame graph's), in the same struct, after
	 * a query's tree built with the parameters of the one after it. */
	calltree_build(&agg, &q, 0, &t);
	uint32_t p1[] = {7, 8, 9}, p2[] = {7, 8}, p3[] = {7, 6};
	tap_ok(calltree_start(&t), "a tree of paths starts from the root");
	uint32_t leaf = calltree_add_path(&t, p1, 3, 4);
	uint32_t mid = calltree_add_path(&t, p2, 2, 1);
	uint32_t other = calltree_add_path(&t, p3, 2, 6);
	tap_ok(calltree_add_path(&t, p1, 3, 2) == leaf, "the same path ends in the same node");
	tap_ok(calltree_finish(&t), "finished");
	uint32_t top = calltree_kids(&t, 0)[0];
	tap_ok(t.n == 5 && t.nodes[0].total == 13 && calltree_nkids(&t, 0) == 1 &&
	       t.nodes[top].func == 7 && t.nodes[top].total == 13 && t.nodes[top].own == 0,
	       "root and 7: every sample, none of their own (%u nodes, %llu)", t.n,
	       (unsigned long long)t.nodes[0].total);
	tap_ok(t.nodes[mid].total == 7 && t.nodes[mid].own == 1 && t.nodes[leaf].own == 6 &&
	       t.nodes[leaf].parent == mid && t.nodes[leaf].depth == 3 && t.nodes[other].total == 6 &&
	       calltree_kids(&t, top)[0] == mid && t.deepest == 3,
	       "totals bottom-up, own where paths end, heaviest child first");
	/* and a query's tree again in it: the shape starts over */
	tap_ok(calltree_build(&agg, &q, 0, &t) && t.nodes[0].total == 210 &&
	       child_named(&agg, &t, 0, "main") != UINT32_MAX, "a query's tree again after paths");
	calltree_free(&t);
	agg_free(&agg);
}

/* 50,000 distinct stacks, counted across 8 threads and both GIL states:
 * the cost of one refresh's build. Two shapes:
 *  - "server": a framework prefix of 12 to 30 frames (one of 8) under which
 *    application code walks a fixed call graph (each function calls 4
 *    others) 2 to 14 frames deep: stacks share prefixes as real ones do;
 *  - "random": every frame drawn at random, 4 to 40 deep: almost no sharing,
 *    the worst case (about 19 nodes per stack). */
static double
bench_shape(bool server, bool quiet, uint32_t *nodes_out)
{
	static uint32_t funcs[400], callees[400][4], prefix[8][30];
	static int prefix_len[8];
	static bool made;
	char name[48];
	if (!made) {
		for (int i = 0; i < 400; i++) {
			snprintf(name, sizeof name, "mod%d.func%d", i % 17, i);
			funcs[i] = code(name, i % 2 ? "/srv/app/handlers.py" : "/usr/lib/python3/dist.py", i);
		}
		srand(14);
		for (int i = 0; i < 400; i++)
			for (int k = 0; k < 4; k++)
				callees[i][k] = funcs[100 + rand() % 300];
		for (int p = 0; p < 8; p++) {
			prefix_len[p] = 12 + rand() % 19;
			for (int k = 0; k < prefix_len[p]; k++)
				prefix[p][k] = funcs[rand() % 100];
		}
		made = true;
	}
	struct aggregate agg;
	agg_init(&agg, &PS, 0);
	uint32_t distinct = 0, path[48];
	uint8_t *seen = calloc(INTERN_MAX_STACKS / 8, 1);
	while (seen && distinct < 50000) {
		int n;
		if (server) {
			int p = rand() % 8;
			memcpy(path, prefix[p], (size_t)prefix_len[p] * sizeof *path);
			n = prefix_len[p];
			uint32_t f = 100 + (uint32_t)rand() % 300;
			int app = 2 + rand() % 13;
			for (int k = 0; k < app; k++) {
				path[n++] = funcs[f];
				uint32_t next = callees[f][rand() % 4];
				f = 0;
				while (funcs[f] != next)
					f++;
			}
		} else {
			n = 4 + rand() % 37;
			for (int k = 0; k < n; k++)
				path[k] = funcs[(uint32_t)rand() % 400];
		}
		uint32_t s = stack_of(path, n);
		if (!(seen[s / 8] & (1u << (s % 8)))) {
			seen[s / 8] |= (uint8_t)(1u << (s % 8));
			distinct++;
		}
		add(&agg, s, (uint16_t)(rand() % 8), rand() % 2 ? TT_THREAD_GIL | TT_THREAD_ON_CPU : 0,
		    1 + (unsigned)(rand() % 5));
	}
	free(seen);
	agg_roll_window(&agg, 1);
	struct agg_query q = {.mode = AGG_WALL, .scope = AGG_SESSION, .slot = -1};
	struct calltree t = {0};
	double t0 = now_ms();
	calltree_build(&agg, &q, 0, &t); /* the first build makes the shape */
	double first = now_ms() - t0;
	double best = 1e9, sum = 0;
	const int runs = 10;
	for (int i = 0; i < runs; i++) {
		double s0 = now_ms();
		calltree_build(&agg, &q, 0, &t);
		double dt = now_ms() - s0;
		sum += dt;
		if (dt < best)
			best = dt;
	}
	q.filter = "func1";
	t0 = now_ms();
	calltree_build(&agg, &q, 0, &t);
	double filtered = now_ms() - t0;
	q.filter = NULL;
	calltree_build(&agg, &q, 0, &t);
	*nodes_out = t.n;
	printf("%s%s: call tree of %u distinct stacks (%u counted entries, %u nodes): refresh %.2f ms "
	       "best, %.2f ms mean of %d; first build %.2f ms; first build with a new filter %.2f ms\n",
	       quiet ? "" : "# ", server ? "server" : "random", distinct, agg.count, t.n, best, sum / runs,
	       runs, first, filtered);
	calltree_free(&t);
	agg_free(&agg);
	return best;
}

static void
bench(bool quiet)
{
	uint32_t n1, n2;
	bench_shape(true, quiet, &n1);
	bench_shape(false, quiet, &n2);
	if (!quiet)
		tap_ok(n1 > 50000 && n2 > 50000, "50,000-stack trees built (%u and %u nodes)", n1, n2);
}

/* Native frames: in the tree as frames of their own; where a thread is
 * (the threads and processes panels) is its innermost Python function. */
static void
test_native(void)
{
	uint32_t m = code("serve", "srv.py", 1), h = code("hash_it", "srv.py", 7);
	uint32_t pb = intern_func(&PS.in, "PKCS5_PBKDF2_HMAC", "libcrypto.so.3", 0, FUNC_NATIVE);
	uint32_t sha = intern_func(&PS.in, "SHA256_Final", "libcrypto.so.3", 0, FUNC_NATIVE);
	struct aggregate agg;
	agg_init(&agg, &PS, 0);
	uint32_t path[] = {m, h, pb, sha};
	uint32_t s = stack_of(path, 4);
	add(&agg, s, 0, TT_THREAD_ON_CPU, 3);
	int32_t line = -1;
	uint32_t f = agg_innermost_func(&agg, s, &line);
	tap_ok(f != UINT32_MAX && strcmp(agg.funcs[f].qualname, "SHA256_Final") == 0 &&
	       agg.funcs[f].kind == FUNC_NATIVE, "the innermost frame is the native one");
	f = agg_innermost_python_func(&agg, s, &line);
	tap_ok(f != UINT32_MAX && strcmp(agg.funcs[f].qualname, "hash_it") == 0,
	       "where the thread is: its innermost Python function, native frames passed over");
	char where[64], at[64];
	agg_func_where(&agg.funcs[agg_innermost_func(&agg, s, &line)], 10, where, sizeof where);
	agg_func_at_line(&agg.funcs[agg_innermost_func(&agg, s, &line)], 10, at, sizeof at);
	tap_ok(strcmp(where, "libcrypto.so.3") == 0 && strcmp(at, "SHA256_Final") == 0,
	       "a native function's place is its library, no line (%s, %s)", where, at);
	agg_func_where(&agg.funcs[agg_innermost_python_func(&agg, s, &line)], 7, where, sizeof where);
	tap_ok(strcmp(where, "srv.py:7") == 0, "a Python function's is file:line (%s)", where);
	agg_free(&agg);
}

int
main(int argc, char **argv)
{
	bool only_bench = argc > 1 && strcmp(argv[1], "--bench") == 0;
	W.slots = appendlog_new(sizeof(struct thread_slot), 1024); /* no thread ever goes */
	if (!W.slots || intern_init(&PS.in) != 0 || one_process() != 0)
		return 99;
	if (only_bench) {
		bench(true);
		return 0;
	}
	test_structure();
	test_native();
	bench(false);
	return tap_done();
}
