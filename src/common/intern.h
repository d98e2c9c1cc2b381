/* Interning: a function is (qualified name, file, first line), a frame is
 * (function ID, line) -> frame ID, a stack is (parent stack ID, frame ID)
 * -> stack ID, hash-consed, so a sample is a few integers and memory grows
 * with distinct stacks, not with samples. Functions are kept by content,
 * not by the target's code object: the processes of a tree share one
 * intern, and what a process interned outlives it (its code objects and
 * addresses do not matter once it has exited).
 * The sampler thread interns; any thread may resolve IDs it has seen. */
#ifndef TT_INTERN_H
#define TT_INTERN_H

#include <stdbool.h>
#include <stdint.h>

#include "appendlog.h"
#include "idindex.h"

/* What a function is: a code object's, a marker made up by tachyon-top (an
 * asyncio task's), or native code (qualname the symbol or "0xADDR",
 * filename the library's base name, lines 0). Recordings keep the value. */
enum func_kind {
	FUNC_PYTHON = 0,
	FUNC_MADE_UP = 1,
	FUNC_NATIVE = 2,
};

struct interned_func {
	char *qualname;          /* UTF-8 as in the target; sanitize before display */
	char *filename;
	int firstlineno;
	uint8_t kind;            /* enum func_kind */
	uint64_t hash;           /* of the above */
};

struct interned_frame {
	uint32_t func_id;
	int32_t line;
};

/* Stack 0 is the empty stack; a stack's innermost frame is `frame` and the
 * rest of it (towards the root) is `parent`. */
struct interned_stack {
	uint32_t parent;
	uint32_t frame;
	uint32_t depth;
};

struct intern {
	struct appendlog *funcs;
	struct appendlog *frames;
	struct appendlog *stacks;
	struct idindex func_index, frame_index, stack_index;   /* content -> ID */
};

/* Most distinct stacks / frames kept; past that interning fails (returns 0). */
#define INTERN_MAX_STACKS (1u << 23)
#define INTERN_MAX_FRAMES (1u << 22)
#define INTERN_MAX_FUNCS (1u << 21)

int intern_init(struct intern *in);
void intern_free(struct intern *in);

/* Sampler thread: the ID of a function / frame / stack, created if new
 * (a function's strings are copied); 0 when a limit is hit or memory is
 * short. */
uint32_t intern_func(struct intern *in, const char *qualname, const char *filename,
		     int firstlineno, enum func_kind kind);
uint32_t intern_frame(struct intern *in, uint32_t func_id, int32_t line);
uint32_t intern_stack(struct intern *in, uint32_t parent, uint32_t frame);

/* Any thread, for IDs it received from the sampler. */
static inline const struct interned_func *
intern_func_at(const struct intern *in, uint32_t id)
{
	return appendlog_at(in->funcs, id);
}

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
