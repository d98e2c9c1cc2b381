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
	free(in->func_index.slots);
	free(in->frame_index.slots);
	free(in->stack_index.slots);
	memset(in, 0, sizeof *in);
}

typedef uint64_t (*key_of_fn)(const struct intern *in, uint32_t id);

static uint64_t
func_key(const struct intern *in, uint32_t id)
{
	return intern_func_at(in, id)->hash;
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

/* Keep tables at most half full. */
static int
ensure_room(const struct intern *in, struct intern_table *t, uint32_t count, key_of_fn key_of)
{
	if ((uint64_t)(count + 1) * 2 <= t->nslots)
		return 0;
	uint32_t n = t->nslots ? t->nslots * 2 : 256;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	for (uint32_t id = 1; id < count; id++) {
		uint32_t h = hash_mix64(key_of(in, id)) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = id;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

uint32_t
intern_func(struct intern *in, const char *qualname, const char *filename, int firstlineno,
	    bool made_up)
{
	qualname = qualname ? qualname : "";
	filename = filename ? filename : "";
	uint64_t key = hash_fnv(hash_fnv(HASH_FNV_SEED, qualname), filename) ^
		       ((uint64_t)(uint32_t)firstlineno << 1) ^ made_up;
	uint32_t count = appendlog_count(in->funcs);
	if (ensure_room(in, &in->func_index, count, func_key) != 0)
		return 0;
	struct intern_table *t = &in->func_index;
	uint32_t h = hash_mix64(key) & (t->nslots - 1);
	for (; t->slots[h]; h = (h + 1) & (t->nslots - 1)) {
		const struct interned_func *f = intern_func_at(in, t->slots[h]);
		if (f->hash == key && f->firstlineno == firstlineno && f->made_up == made_up &&
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
	f->made_up = made_up;
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
	if (ensure_room(in, &in->frame_index, count, frame_key) != 0)
		return 0;
	struct intern_table *t = &in->frame_index;
	uint32_t h = hash_mix64(key) & (t->nslots - 1);
	for (; t->slots[h]; h = (h + 1) & (t->nslots - 1))
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
	if (frame == 0 || ensure_room(in, &in->stack_index, count, stack_key) != 0)
		return 0;
	struct intern_table *t = &in->stack_index;
	uint32_t h = hash_mix64(key) & (t->nslots - 1);
	for (; t->slots[h]; h = (h + 1) & (t->nslots - 1))
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
