#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "python/codecache.h"
#include "python/linetable.h"
#include "python/pystr.h"

int
codecache_init(struct code_cache *c)
{
	memset(c, 0, sizeof *c);
	c->entries = appendlog_new(sizeof(struct code_entry), CODECACHE_MAX_ENTRIES);
	return c->entries ? 0 : -1;
}

void
codecache_free(struct code_cache *c)
{
	if (c->entries) {
		uint32_t n = appendlog_count(c->entries);
		for (uint32_t i = 0; i < n; i++) {
			struct code_entry *e = appendlog_at(c->entries, i);
			free(e->qualname);
			free(e->filename);
			free(e->linetable);
		}
		appendlog_free(c->entries);
	}
	idindex_free(&c->index);
	memset(c, 0, sizeof *c);
}

void
codecache_seal(struct code_cache *c)
{
	uint64_t hits = c->hits, misses = c->misses, rechecks = c->rechecks,
		 replaced = c->replaced;
	codecache_free(c);
	c->hits = hits;
	c->misses = misses;
	c->rechecks = rechecks;
	c->replaced = replaced;
}

void
codecache_invalidate(struct code_cache *c)
{
	c->epoch++;
}

static uint32_t
hash_addr(uint64_t addr)
{
	/* Objects are 16-byte aligned; mix the rest (Fibonacci hashing). */
	return (uint32_t)(((addr >> 4) * 0x9E3779B97F4A7C15ull) >> 32);
}

/* An entry's hash in the index: by its address; one replaced by a newer
 * entry for the same address keeps its slot under a hash of its own
 * (its address cleared, it matches no lookup). */
static uint32_t
entry_hash(const void *ctx, uint32_t id)
{
	const struct code_entry *e = codecache_get((struct code_cache *)ctx, id - 1);
	return e->addr ? hash_addr(e->addr) : id * 0x9E3779B9u;
}

/* The first code object we accept teaches us PyCode_Type's address; after
 * that, an object whose type differs is not a code object (torn frame). */
static tt_status
check_code_type(struct code_cache *c, struct remote *r, const struct py_layout *l,
		uint64_t type, struct tt_error *err)
{
	if (type == 0)
		return tt_fail(err, TT_EBADMEM, 0, "object without a type where code was expected");
	if (c->code_type)
		return type == c->code_type
			       ? TT_OK
			       : tt_fail(err, TT_EBADMEM, 0, "frame's executable is not a code object");
	uint64_t name_ptr;
	tt_status st = remote_read_u64(r, type + l->tp_name, &name_ptr, err);
	if (st != TT_OK)
		return st;
	char name[8] = {0};
	st = remote_read(r, name_ptr, name, 5, err);
	if (st != TT_OK)
		return st;
	if (memcmp(name, "code", 5) != 0)
		return tt_fail(err, TT_EBADMEM, 0, "frame's executable is not a code object");
	c->code_type = type;
	return TT_OK;
}

/* The fields of a code object header that identify it. */
struct code_header {
	uint64_t type, qualname, filename, linetable;
	int32_t firstlineno, firsttraceable;
};

static tt_status
read_header(struct remote *r, const struct py_layout *l, uint64_t addr, struct code_header *h,
	    struct tt_error *err)
{
	uint8_t buf[1024];
	if (l->co_read_size > sizeof buf)
		return tt_fail(err, TT_EBADMEM, 0, "code object layout too large");
	tt_status st = remote_read(r, addr, buf, l->co_read_size, err);
	if (st != TT_OK)
		return st;
	memcpy(&h->type, buf + l->ob_type, 8);
	memcpy(&h->qualname, buf + l->co_qualname, 8);
	memcpy(&h->filename, buf + l->co_filename, 8);
	memcpy(&h->linetable, buf + l->co_linetable, 8);
	memcpy(&h->firstlineno, buf + l->co_firstlineno, 4);
	memcpy(&h->firsttraceable, buf + l->co_firsttraceable, 4);
	return TT_OK;
}

static bool
header_matches(const struct code_entry *e, const struct code_header *h)
{
	return e->qualname_ptr == h->qualname && e->filename_ptr == h->filename &&
	       e->linetable_ptr == h->linetable && e->firstlineno == h->firstlineno;
}

static tt_status
read_entry(struct code_cache *c, struct remote *r, const struct py_layout *l, uint64_t addr,
	   const struct code_header *h, struct code_entry *e, struct tt_error *err)
{
	tt_status st = check_code_type(c, r, l, h->type, err);
	if (st != TT_OK)
		return st;
	uint64_t qualname = h->qualname, filename = h->filename, linetable = h->linetable;
	e->addr = addr;
	e->firstlineno = h->firstlineno;
	e->qualname_ptr = qualname;
	e->filename_ptr = filename;
	e->linetable_ptr = linetable;
	e->epoch = c->epoch;
	e->bytecode_addr = addr + l->co_code_adaptive;
	/* A RESUME further in than a megabyte of code is not one: never
	 * hide a frame on a misread. */
	e->traceable_addr = h->firsttraceable >= 0 && h->firsttraceable < (1 << 19)
				    ? e->bytecode_addr + 2 * (uint64_t)h->firsttraceable
				    : 0;
	e->last_line = -1;
	if ((st = pystr_read(r, l, qualname, &e->qualname, err)) != TT_OK ||
	    (st = pystr_read(r, l, filename, &e->filename, err)) != TT_OK ||
	    (st = pybytes_read(r, l, linetable, &e->linetable, &e->linetable_len, err)) != TT_OK) {
		free(e->qualname);
		free(e->filename);
		free(e->linetable);
		e->qualname = e->filename = NULL;
		e->linetable = NULL;
		return st;
	}
	return TT_OK;
}

tt_status
codecache_lookup(struct code_cache *c, struct remote *r, const struct py_layout *l,
		 uint64_t addr, uint32_t *id, struct tt_error *err)
{
	if (addr == 0 || (addr & 7))
		return tt_fail(err, TT_EBADMEM, 0, "misaligned code object pointer 0x%llx",
			       (unsigned long long)addr);
	uint32_t *slot = NULL;
	if (c->index.nslots) {
		uint32_t i = idindex_start(&c->index, hash_addr(addr));
		for (; c->index.slots[i]; i = idindex_next(&c->index, i)) {
			if (codecache_get(c, c->index.slots[i] - 1)->addr == addr) {
				slot = &c->index.slots[i];
				break;
			}
		}
	}
	struct code_header h;
	tt_status st;
	if (slot) {
		struct code_entry *e = appendlog_at(c->entries, *slot - 1);
		if (e->epoch == c->epoch) {
			c->hits++;
			*id = *slot - 1;
			return TT_OK;
		}
		/* Possibly freed and reused since we read it: compare. */
		c->rechecks++;
		if ((st = read_header(r, l, addr, &h, err)) != TT_OK)
			return st;
		if (header_matches(e, &h)) {
			e->epoch = c->epoch;
			*id = *slot - 1;
			return TT_OK;
		}
		c->replaced++;
	} else {
		c->misses++;
		if ((st = read_header(r, l, addr, &h, err)) != TT_OK)
			return st;
	}
	/* Room in the index before the entry is added (it stays at most half full). */
	uint32_t count = appendlog_count(c->entries);
	if (!slot && !idindex_reserve(&c->index, 1, count + 1, 1024, entry_hash, c))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory growing the code cache");
	struct code_entry *e = appendlog_reserve(c->entries);
	if (!e)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "more than %u distinct code objects",
			       CODECACHE_MAX_ENTRIES);
	if ((st = read_entry(c, r, l, addr, &h, e, err)) != TT_OK)
		return st; /* the reserved slot stays unpublished and is reused */
	*id = appendlog_publish(c->entries);
	if (slot) {
		/* the older entry of this address is replaced: it matches no more */
		((struct code_entry *)appendlog_at(c->entries, *slot - 1))->addr = 0;
		*slot = *id + 1;
	} else {
		uint32_t i = idindex_start(&c->index, hash_addr(addr));
		while (c->index.slots[i])
			i = idindex_next(&c->index, i);
		c->index.slots[i] = *id + 1;
	}
	return TT_OK;
}

int
codecache_line(struct code_cache *c, uint32_t id, uint64_t instr_ptr)
{
	struct code_entry *e = appendlog_at(c->entries, id);
	if (e->last_instr_ptr == instr_ptr && instr_ptr != 0)
		return e->last_line;
	/* Code units are 2 bytes; instr_ptr points at the current instruction. */
	int64_t addrq = (int64_t)(instr_ptr - e->bytecode_addr) / 2; /* wraps, never overflows */
	int line = linetable_addr2line(e->linetable, e->linetable_len, e->firstlineno, addrq);
	e->last_instr_ptr = instr_ptr;
	e->last_line = line;
	return line;
}
