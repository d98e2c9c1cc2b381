/* Code objects read from the target, decoded once and kept by address.
 * An entry's index is its code ID. Entries are never freed or moved while
 * the cache lives: interned frames and the UI refer to them by ID from any
 * thread. When the target may have freed code objects (its generation
 * counter moved, or time passed on 3.13, which has none), the cache is
 * invalidated: each entry is re-checked against the target on its next use
 * and a changed object gets a new entry. */
#ifndef TT_CODECACHE_H
#define TT_CODECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "appendlog.h"
#include "idindex.h"
#include "error.h"
#include "python/pylayout.h"
#include "mem/remote.h"

struct code_entry {
	uint64_t addr;
	char *qualname;            /* UTF-8 as in the target; sanitize before display */
	char *filename;
	uint8_t *linetable;
	size_t linetable_len;
	int firstlineno;
	uint64_t bytecode_addr;    /* addr + co_code_adaptive */
	uint64_t traceable_addr;   /* its first RESUME (bytecode + _co_firsttraceable
				      code units); 0 for a made-up entry */
	/* What identifies the object when we re-check it. */
	uint64_t qualname_ptr, filename_ptr, linetable_ptr;
	uint32_t epoch;            /* cache epoch it was last checked in */
	uint32_t func_id;          /* its interned function (the walker's), 0 before */
	/* last lookup, since a frame usually sits on the same instruction */
	uint64_t last_instr_ptr;
	int last_line;
};

struct code_cache {
	struct appendlog *entries;
	struct idindex index;     /* entry index + 1 by address (the newest entry of each) */
	uint32_t epoch;
	uint64_t code_type;       /* address of PyCode_Type once verified, else 0 */
	uint64_t hits, misses, rechecks, replaced;
};

/* Distinct code objects kept. */
#define CODECACHE_MAX_ENTRIES (1u << 20)

int codecache_init(struct code_cache *c);
void codecache_free(struct code_cache *c);
/* Nothing more will be looked up (its process ended) and nobody resolves
 * its code IDs (names are interned by content): free every entry and the
 * index, keep the counters (the session's figures add them up). */
void codecache_seal(struct code_cache *c);

/* The target may have freed code objects: re-check entries on next use. */
void codecache_invalidate(struct code_cache *c);

/* Find or read the code object at addr; *id receives its code ID. */
tt_status codecache_lookup(struct code_cache *c, struct remote *r, const struct py_layout *l,
			   uint64_t addr, uint32_t *id, struct tt_error *err);

/* Current line of a frame of code `id` whose instr_ptr is given. */
int codecache_line(struct code_cache *c, uint32_t id, uint64_t instr_ptr);

static inline const struct code_entry *
codecache_get(const struct code_cache *c, uint32_t id)
{
	return appendlog_at(c->entries, id);
}

/* Is a frame of code `id` (not owned by a generator) at instr_ptr still
 * incomplete: before its first RESUME? CPython leaves such frames out of
 * f_back and tracebacks (_PyFrame_IsIncomplete). The one that lasts is the
 * shim 3.13+ push under a specialised call of a class's __init__ (its code,
 * named "__init__", starts with the instruction that checks __init__'s
 * result, before its RESUME). Generator frames are always complete. */
static inline bool
codecache_frame_incomplete(const struct code_cache *c, uint32_t id, uint64_t instr_ptr)
{
	return instr_ptr < codecache_get(c, id)->traceable_addr;
}

#endif
