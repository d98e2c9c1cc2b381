#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "intern.h"

int
intern_init(struct intern *in)
{
	memset(in, 0, sizeof *in);
	in->funcs = appendlog_new(sizeof(struct interned_func), INTERN_MAX_FUNCS);
	in->frames = appendlog_new(sizeof(struct interned_frame), INTERN_MAX_FRAMES);
	in->stacks = appendlog_new(sizeof(struct interned_stack), INTERN_MAX_STACKS);
	if (!in->funcs || !in->frames || !in->stacks) {
		intern_free(in);
		return -1;
	}
	/* ID 0 is reserved in each: "no function", "no frame", the empty stack. */
	struct interned_func *f = appendlog_reserve(in->funcs);
	f->qualname = f->filename = NULL;
	appendlog_publish(in->funcs);
	appendlog_reserve(in->frames);
	appendlog_publish(in->frames);
	appendlog_reserve(in->stacks);
	appendlog_publish(in->stacks);
	return 0;
}

void
intern_free(struct intern *in)
{
	if (in->funcs) {
		uint32_t n = appendlog_count(in->funcs);
		for (uint32_t i = 1; i < n; i++) {
			struct interned_func *f = appendlog_at(in->funcs, i);
			free(f->qualname);
			free(f->filename);
		}
	}
	appendlog_free(in->funcs);
	appendlog_free(in->frames);
	appendlog_free(in->stacks);
	idindex_free(&in->func_index);
	idindex_free(&in->frame_index);
	idindex_free(&in->stack_index);
	memset(in, 0, sizeof *in);
}

static uint32_t
func_hash(const void *in, uint32_t id)
{
	return hash_mix64(intern_func_at(in, id)->hash);
}

static uint64_t
frame_key(const struct intern *in, uint32_t id)
{
	const struct interned_frame *f = intern_frame_at(in, id);
	return ((uint64_t)f->func_id << 32) | (uint32_t)f->line;
}

static uint64_t
stack_key(const struct intern *in, uint32_t id)
{
	const struct interned_stack *s = intern_stack_at(in, id);
	return ((uint64_t)s->parent << 32) | s->frame;
}

static uint32_t
frame_hash(const void *in, uint32_t id)
{
	return hash_mix64(frame_key(in, id));
}

static uint32_t
stack_hash(const void *in, uint32_t id)
{
	return hash_mix64(stack_key(in, id));
}

/* Room for one more ID in an index of a log holding count (ID 0 is no
 * one's). */
static bool
room_for_one(const struct intern *in, struct idindex *ix, uint32_t count, idindex_hash_fn *hash)
{
	return idindex_reserve(ix, 1, count, 256, hash, in);
}

uint32_t
intern_func(struct intern *in, const char *qualname, const char *filename, int firstlineno,
	    enum func_kind kind)
{
	qualname = qualname ? qualname : "";
	filename = filename ? filename : "";
	uint64_t key = hash_fnv(hash_fnv(HASH_FNV_SEED, qualname), filename) ^
		       ((uint64_t)(uint32_t)firstlineno << 2) ^ (uint64_t)kind;
	uint32_t count = appendlog_count(in->funcs);
	if (!room_for_one(in, &in->func_index, count, func_hash))
		return 0;
	struct idindex *t = &in->func_index;
	uint32_t h = idindex_start(t, hash_mix64(key));
	for (; t->slots[h]; h = idindex_next(t, h)) {
		const struct interned_func *f = intern_func_at(in, t->slots[h]);
		if (f->hash == key && f->firstlineno == firstlineno && f->kind == (uint8_t)kind &&
		    strcmp(f->qualname, qualname) == 0 && strcmp(f->filename, filename) == 0)
			return t->slots[h];
	}
	char *q = strdup(qualname), *fn = strdup(filename);
	struct interned_func *f = q && fn ? appendlog_reserve(in->funcs) : NULL;
	if (!f) {
		free(q);
		free(fn);
		return 0;
	}
	f->qualname = q;
	f->filename = fn;
	f->firstlineno = firstlineno;
	f->kind = (uint8_t)kind;
	f->hash = key;
	uint32_t id = appendlog_publish(in->funcs);
	t->slots[h] = id;
	return id;
}

uint32_t
intern_frame(struct intern *in, uint32_t func_id, int32_t line)
{
	uint64_t key = ((uint64_t)func_id << 32) | (uint32_t)line;
	uint32_t count = appendlog_count(in->frames);
	/* a frame of "no function" would reach the exports without a name */
	if (func_id == 0 || !room_for_one(in, &in->frame_index, count, frame_hash))
		return 0;
	struct idindex *t = &in->frame_index;
	uint32_t h = idindex_start(t, hash_mix64(key));
	for (; t->slots[h]; h = idindex_next(t, h))
		if (frame_key(in, t->slots[h]) == key)
			return t->slots[h];
	struct interned_frame *f = appendlog_reserve(in->frames);
	if (!f)
		return 0;
	f->func_id = func_id;
	f->line = line;
	uint32_t id = appendlog_publish(in->frames);
	t->slots[h] = id;
	return id;
}

uint32_t
intern_stack(struct intern *in, uint32_t parent, uint32_t frame)
{
	uint64_t key = ((uint64_t)parent << 32) | frame;
	uint32_t count = appendlog_count(in->stacks);
	if (frame == 0 || !room_for_one(in, &in->stack_index, count, stack_hash))
		return 0;
	struct idindex *t = &in->stack_index;
	uint32_t h = idindex_start(t, hash_mix64(key));
	for (; t->slots[h]; h = idindex_next(t, h))
		if (stack_key(in, t->slots[h]) == key)
			return t->slots[h];
	struct interned_stack *s = appendlog_reserve(in->stacks);
	if (!s)
		return 0;
	s->parent = parent;
	s->frame = frame;
	s->depth = parent ? intern_stack_at(in, parent)->depth + 1 : 1;
	uint32_t id = appendlog_publish(in->stacks);
	t->slots[h] = id;
	return id;
}
