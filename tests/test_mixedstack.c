/* Unit tests for mixedstack: native and Python frames in one order, and
 * the cases real targets rarely show (counts that disagree, a walk that
 * ended early, no symbols). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "native/mixedstack.h"
#include "tap.h"

struct pyf {
	int code_id;
	bool entry;
};

static struct native_frame
nat(const char *symbol)
{
	struct native_frame f;
	memset(&f, 0, sizeof f);
	snprintf(f.symbol, sizeof f.symbol, "%s", symbol);
	snprintf(f.library, sizeof f.library, "python3.15");
	return f;
}

/* The order as letters: native frames by their symbol's first letter,
 * Python frames by their index as a digit. */
static void
order_text(const struct native_frame *nf, const struct mixed_frame *m, const struct mixed_stack *ms,
	   char *out)
{
	size_t k;
	for (k = 0; k < ms->count; k++)
		out[k] = m[k].python ? (char)('0' + m[k].index)
				     : (nf[m[k].index].symbol[0] ? nf[m[k].index].symbol[0] : '?');
	out[k] = '\0';
}

static struct {
	bool evaluator[16], entry[16];
} marks;

/* the evaluator marks of nn native frames and the entry marks of np Python
 * frames given as their code ids' entry flags */
static void
build(const struct native_frame *nf, size_t nn, bool complete, const struct pyf *py, size_t np,
      struct mixed_frame *out, struct mixed_stack *ms)
{
	for (size_t k = 0; k < nn; k++)
		marks.evaluator[k] = mixed_is_evaluator(&nf[k]);
	for (size_t k = 0; k < np; k++)
		marks.entry[k] = py[k].entry;
	mixed_stack_build(marks.evaluator, nn, complete, marks.entry, np, out, ms);
}

int
main(void)
{
	/* sleep <- eval(run 0: frames 0,1) <- sorted <- eval(run 1: frame 2) <- start */
	struct native_frame nf[] = {
		nat("sleep"), nat("_PyEval_EvalFrameDefault"), nat("list_sort"),
		nat("_PyEval_EvalFrameDefault.cold"), nat("start_thread"),
	};
	struct pyf py[] = {{.code_id = 1}, {.code_id = 2, .entry = true}, {.code_id = 3, .entry = true}};
	struct mixed_frame m[16];
	struct mixed_stack ms;
	char text[32];

	tap_ok(mixed_is_evaluator(&nf[1]) && mixed_is_evaluator(&nf[3]) &&
	       !mixed_is_evaluator(&nf[0]), "the evaluator's hot and .cold parts are evaluator calls");
	struct native_frame other = nat("_PyEval_EvalFrameDefaultX");
	tap_ok(!mixed_is_evaluator(&other), "a longer name is not the evaluator");

	build(nf, 5, true, py, 3, m, &ms);
	order_text(nf, m, &ms, text);
	tap_ok(ms.merged && strcmp(text, "s01l2s") == 0 && ms.after_native == 6,
	       "two calls, two runs: each call replaced by its run (%s)", text);

	/* the outermost run not marked entry (a chain without a shim at its end) */
	struct pyf py2[] = {{.code_id = 1, .entry = true}, {.code_id = 2}};
	build(nf, 5, true, py2, 2, m, &ms);
	order_text(nf, m, &ms, text);
	tap_ok(ms.merged && strcmp(text, "s0l1s") == 0, "the last run ends at the outermost frame (%s)",
	       text);

	/* three runs, two calls, the walk complete: a torn read, not merged */
	struct pyf py3[] = {{.code_id = 1, .entry = true}, {.code_id = 2, .entry = true},
				 {.code_id = 3, .entry = true}};
	build(nf, 5, true, py3, 3, m, &ms);
	order_text(nf, m, &ms, text);
	tap_ok(!ms.merged && ms.evaluators == 2 && ms.runs == 3 && strcmp(text, "s_l_s012") == 0 &&
	       ms.after_native == 5 && m[5].python && m[5].index == 0,
	       "counts that disagree: native frames first, then every Python frame (%s)", text);

	/* the walk ended after the first call: it takes the first run, the
	 * rest follow the native frames */
	build(nf, 3, false, py3, 3, m, &ms);
	order_text(nf, m, &ms, text);
	tap_ok(ms.merged && strcmp(text, "s0l12") == 0 && ms.after_native == 3,
	       "a walk that ended early merges the calls it has (%s)", text);

	/* no symbols: nothing to pair */
	struct native_frame bare[] = {nat(""), nat(""), nat("")};
	build(bare, 3, true, py, 3, m, &ms);
	order_text(bare, m, &ms, text);
	tap_ok(!ms.merged && strcmp(text, "???012") == 0, "no evaluator named: not merged (%s)", text);

	/* no native frames at all (a running thread): the Python frames */
	build(nf, 0, false, py, 3, m, &ms);
	order_text(nf, m, &ms, text);
	tap_ok(!ms.merged && strcmp(text, "012") == 0 && ms.after_native == 0,
	       "no native frames: the Python ones alone (%s)", text);
	return tap_done();
}
