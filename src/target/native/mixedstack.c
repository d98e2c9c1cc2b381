/* Native and Python frames in one order (mixedstack.h). */
#include "config.h"

#include <string.h>

#include "native/mixedstack.h"

bool
mixed_is_evaluator(const struct native_frame *f)
{
	static const char name[] = "_PyEval_EvalFrameDefault";
	size_t len = sizeof name - 1;
	return strncmp(f->symbol, name, len) == 0 && (f->symbol[len] == '\0' || f->symbol[len] == '.');
}

/* Runs of Python frames: each ends at an entry frame, the last at the
 * outermost frame. */
static size_t
count_runs(const bool *entry, size_t np)
{
	size_t runs = 0;
	for (size_t i = 0; i < np; i++)
		if (entry[i] || i + 1 == np)
			runs++;
	return runs;
}

void
mixed_stack_build(const bool *evaluator, size_t nn, bool complete, const bool *entry,
		  size_t np, struct mixed_frame *out, struct mixed_stack *ms)
{
	memset(ms, 0, sizeof *ms);
	for (size_t i = 0; i < nn; i++)
		ms->evaluators += evaluator[i];
	ms->runs = count_runs(entry, np);
	ms->merged = ms->evaluators > 0 &&
		     (complete ? ms->evaluators == ms->runs : ms->evaluators <= ms->runs);
	size_t k = 0, p = 0;
	for (size_t i = 0; i < nn; i++) {
		if (ms->merged && evaluator[i]) {
			/* this call's run: up to its entry frame (or the last) */
			while (p < np) {
				bool last = entry[p] || p + 1 == np;
				out[k++] = (struct mixed_frame){.python = true, .index = (uint32_t)p++};
				if (last)
					break;
			}
			continue;
		}
		out[k++] = (struct mixed_frame){.python = false, .index = (uint32_t)i};
	}
	ms->after_native = k;
	while (p < np)
		out[k++] = (struct mixed_frame){.python = true, .index = (uint32_t)p++};
	ms->count = k;
}
