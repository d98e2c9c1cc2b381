#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "keytab.h"

void
keytab_init(struct keytab *t, size_t rec_size)
{
	memset(t, 0, sizeof *t);
	t->size = rec_size;
}

void
keytab_free(struct keytab *t)
{
	free(t->recs);
	idindex_free(&t->index);
	keytab_init(t, t->size);
}

void
keytab_clear(struct keytab *t)
{
	t->count = 0;
	idindex_clear(&t->index);
}

static uint64_t
key_at(const struct keytab *t, uint32_t id)
{
	uint64_t key;
	memcpy(&key, t->recs + (size_t)(id - 1) * t->size, sizeof key);
	return key;
}

static uint32_t
hash_at(const void *ctx, uint32_t id)
{
	return hash_mix64(key_at(ctx, id));
}

/* The slot holding key, or the empty slot where it would go. */
static uint32_t
slot_of(const struct keytab *t, uint64_t key)
{
	uint32_t k = idindex_start(&t->index, hash_mix64(key));
	while (t->index.slots[k] && key_at(t, t->index.slots[k]) != key)
		k = idindex_next(&t->index, k);
	return k;
}

void *
keytab_find(const struct keytab *t, uint64_t key)
{
	if (!t->count)
		return NULL;
	uint32_t id = t->index.slots[slot_of(t, key)];
	return id ? keytab_at(t, id - 1) : NULL;
}

void *
keytab_put(struct keytab *t, uint64_t key, bool *added)
{
	*added = false;
	if (!idindex_reserve(&t->index, 1, t->count + 1, 64, hash_at, t))
		return NULL;
	uint32_t k = slot_of(t, key);
	if (t->index.slots[k])
		return keytab_at(t, t->index.slots[k] - 1);
	if (!grow_array((void **)&t->recs, &t->cap, t->count + 1, t->size))
		return NULL;
	char *r = t->recs + (size_t)t->count * t->size;
	memset(r, 0, t->size);
	memcpy(r, &key, sizeof key);
	t->index.slots[k] = ++t->count;
	*added = true;
	return r;
}
