/* A table of fixed-size records found by a 64-bit key: the records dense
 * in one array, in the order they were added, and an idindex over them.
 * Each record starts with its key (a uint64_t). The shape of the task
 * watcher's fingerprints, the async stacks' young tasks and the diff
 * baseline's call paths: one implementation for them all. */
#ifndef TT_KEYTAB_H
#define TT_KEYTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idindex.h"

struct keytab {
	char *recs;
	uint32_t count, cap;
	size_t size;               /* bytes per record, key first */
	struct idindex index;      /* ids: position + 1 */
};

void keytab_init(struct keytab *t, size_t rec_size);
void keytab_free(struct keytab *t);
/* Forget every record (the memory stays for the next ones). */
void keytab_clear(struct keytab *t);

/* The record with this key, or NULL. */
void *keytab_find(const struct keytab *t, uint64_t key);
/* The record with this key; a new one (zeroed but for its key) when there
 * was none, *added then true. NULL when memory is short. Pointers into the
 * table are good until the next keytab_put. */
void *keytab_put(struct keytab *t, uint64_t key, bool *added);

static inline void *
keytab_at(const struct keytab *t, uint32_t i)
{
	return t->recs + (size_t)i * t->size;
}

#endif
