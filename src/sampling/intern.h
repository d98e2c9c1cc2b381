/* Interning: a frame is (code ID, line) -> frame ID, a stack is (parent
 * stack ID, frame ID) -> stack ID, hash-consed, so a sample is a few
 * integers and memory grows with distinct stacks, not with samples.
 * The sampler thread interns; any thread may resolve IDs it has seen. */
#ifndef TT_INTERN_H
#define TT_INTERN_H

#include <stdint.h>

#include "appendlog.h"

struct interned_frame {
	uint32_t code_id;
	int32_t line;
};

/* Stack 0 is the empty stack; a stack's innermost frame is `frame` and the
 * rest of it (towards the root) is `parent`. */
struct interned_stack {
	uint32_t parent;
	uint32_t frame;
	uint32_t depth;
};

struct intern_table {
	uint32_t *slots;       /* id, 0 = empty (ids start at 1 for frames and stacks) */
	uint32_t nslots;       /* power of two */
};

struct intern {
	struct appendlog *frames;
	struct appendlog *stacks;
	struct intern_table frame_index, stack_index;
};

/* Most distinct stacks / frames kept; past that interning fails (returns 0). */
#define INTERN_MAX_STACKS (1u << 23)
#define INTERN_MAX_FRAMES (1u << 22)

int intern_init(struct intern *in);
void intern_free(struct intern *in);
/* Nothing more will be interned (its process ended): free the lookup
 * indexes; IDs still resolve. */
void intern_seal(struct intern *in);

/* Sampler thread: the ID of a frame / stack, created if new; 0 when a limit
 * is hit or memory is short. */
uint32_t intern_frame(struct intern *in, uint32_t code_id, int32_t line);
uint32_t intern_stack(struct intern *in, uint32_t parent, uint32_t frame);

/* Any thread, for IDs it received from the sampler. */
static inline const struct interned_frame *
intern_frame_at(const struct intern *in, uint32_t id)
{
	return appendlog_at(in->frames, id);
}

static inline const struct interned_stack *
intern_stack_at(const struct intern *in, uint32_t id)
{
	return appendlog_at(in->stacks, id);
}

#endif
