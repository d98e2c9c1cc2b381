/* The sample log: what `record` keeps of a session, in the order it saw
 * it. The labels samples need (processes, thread slots, functions, frames,
 * stacks) as they appear or change, and every sample record, are events
 * applied to a mirror: a procset of labels alone, which the profile is
 * built from and the writers read. A sink (the binary recording) is handed
 * each event as it is applied; `replay` applies the same events read back,
 * so a replayed profile is the recorded one, entry for entry.
 *
 * Why a mirror and not the sampler's procset: that one changes under the
 * consumer (slots go to new threads, entries to new processes) and keeps
 * every stack ever interned; the mirror changes only by events, between
 * batches of records, so the same events give the same profile. */
#ifndef TT_SAMPLELOG_H
#define TT_SAMPLELOG_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "procset.h"
#include "profile.h"
#include "ring.h"
#include "timeline.h"

enum samplelog_kind {
	SAMPLELOG_FUNC = 1,
	SAMPLELOG_FRAME,
	SAMPLELOG_STACK,
	SAMPLELOG_PROC,
	SAMPLELOG_THREAD,
	SAMPLELOG_SAMPLE,
};

/* One event. Ids are the mirror's: a function, frame or stack gets the
 * next id of its table when it is defined (0 is none). Strings are the
 * target's bytes, NUL-terminated. */
struct samplelog_event {
	enum samplelog_kind kind;
	union {
		struct {
			const char *qualname, *filename;
			int32_t firstlineno;
			uint8_t kind;    /* enum func_kind */
		} func;
		struct {
			uint32_t func;
			int32_t line;
		} frame;
		struct {
			uint32_t parent, frame;
		} stack;
		struct {
			uint32_t index;
			int32_t pid;
			uint64_t start_ns;
			bool sampled;
			const char *cmdline;
		} proc;
		struct {
			uint32_t slot, proc, prev_proc;
			uint64_t native_tid, born_ns, gone_ns;
			const char *name;    /* NULL: not named yet */
		} thread;
		struct sample_record sample;
	};
};

typedef void samplelog_sink_fn(void *ctx, const struct samplelog_event *ev);

struct samplelog {
	struct procset mirror;
	struct profile *prof;
	enum profile_filter filter;
	struct timeline *timeline;   /* NULL, or where the counted samples go in time */
	samplelog_sink_fn *sink;     /* NULL: none */
	void *sink_ctx;
	/* record side: the sampler's function, frame and stack ids -> the
	 * mirror's (0: not defined yet) */
	uint32_t *func_of, *frame_of, *stack_of;
	uint32_t nfunc, nframe, nstack;
	uint32_t *chain;             /* scratch: a stack's undefined ancestors */
	uint32_t chain_cap;
	uint64_t lost;               /* samples not added to the profile (memory) */
};

/* The log builds `prof` (initialised by the caller), counting samples by
 * `filter`. -1 when memory is short. */
int samplelog_init(struct samplelog *l, struct profile *prof, enum profile_filter filter);
void samplelog_free(struct samplelog *l);

/* Apply one event to the mirror (a sample: to the profile), handing it to
 * the sink first. A defined function, frame or stack's id in *id (may be
 * NULL). Fails on an event that does not fit (an id not defined, an entry
 * out of order: a damaged file) or when memory is short. */
tt_status samplelog_apply(struct samplelog *l, const struct samplelog_event *ev, uint32_t *id,
			  struct tt_error *err);

/* Record side, before each batch of records drained from the sampler:
 * bring the mirror's processes and thread slots up to `live`'s. */
tt_status samplelog_sync(struct samplelog *l, const struct procset *live, struct tt_error *err);

/* Record side: one record of `live`'s sampler, its stack defined in the
 * mirror first. */
tt_status samplelog_take(struct samplelog *l, const struct procset *live,
			 const struct sample_record *r, struct tt_error *err);

#endif
