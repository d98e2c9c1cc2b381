/* One thread's native and Python frames in their true order.
 *
 * Each C call of the evaluator (_PyEval_EvalFrameDefault) on the native
 * stack runs a run of Python frames: from the innermost up to the one
 * marked entry (tt_frame.entry). The k-th evaluator call from the top
 * runs the k-th run, so the evaluator's native frame is replaced by its
 * Python frames. When the counts disagree (a torn read, a build whose
 * evaluator has another name, no symbols), nothing is invented: the
 * native frames come first, then the Python frames, unmerged. */
#ifndef TT_MIXEDSTACK_H
#define TT_MIXEDSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "native/unwind.h"

struct mixed_frame {
	bool python;      /* a Python frame, else a native one */
	uint32_t index;   /* into the Python or the native frames */
};

struct mixed_stack {
	size_t count;          /* entries written */
	size_t evaluators;     /* evaluator calls among the native frames */
	size_t runs;           /* runs of Python frames */
	bool merged;
	size_t after_native;   /* the first entry past every native frame */
};

/* Is f a frame of the evaluator? (its hot and .cold parts alike) */
bool mixed_is_evaluator(const struct native_frame *f);

/* Order nn native frames (innermost first, evaluator[k] when frame k is an
 * evaluator call; complete when the walk reached the thread's first frame)
 * and np Python frames (entry[k] when frame k is the first its evaluator
 * call runs) into out, which has room for nn + np entries. A walk that
 * ended early merges the calls it has with the innermost runs; the rest of
 * the Python frames follow. */
void mixed_stack_build(const bool *evaluator, size_t nn, bool complete, const bool *entry,
		       size_t np, struct mixed_frame *out, struct mixed_stack *ms);

#endif
