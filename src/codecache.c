#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codecache.h"
#include "linetable.h"
#include "pystr.h"

void
codecache_init(struct code_cache *c)
{
	memset(c, 0, sizeof *c);
}

static void
free_entries(struct code_cache *c)
{
	for (uint32_t i = 0; i < c->count; i++) {
		free(c->entries[i].qualname);
		free(c->entries[i].filename);
		free(c->entries[i].linetable);
	}
	c->count = 0;
}

void
codecache_clear(struct code_cache *c)
{
	free_entries(c);
	if (c->slots)
		memset(c->slots, 0, c->nslots * sizeof *c->slots);
}

void
codecache_free(struct code_cache *c)
{
	free_entries(c);
	free(c->entries);
	free(c->slots);
	memset(c, 0, sizeof *c);
}

static uint32_t
hash_addr(uint64_t addr)
{
	/* Objects are 16-byte aligned; mix the rest (Fibonacci hashing). */
	return (uint32_t)(((addr >> 4) * 0x9E3779B97F4A7C15ull) >> 32);
}

static tt_status
grow_slots(struct code_cache *c, struct tt_error *err)
{
	uint32_t n = c->nslots ? c->nslots * 2 : 1024;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory growing the code cache");
	for (uint32_t i = 0; i < c->count; i++) {
		uint32_t h = hash_addr(c->entries[i].addr) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = i + 1;
	}
	free(c->slots);
	c->slots = slots;
	c->nslots = n;
	return TT_OK;
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

static tt_status
read_entry(struct code_cache *c, struct remote *r, const struct py_layout *l, uint64_t addr,
	   struct code_entry *e, struct tt_error *err)
{
	uint8_t buf[1024];
	if (l->co_read_size > sizeof buf)
		return tt_fail(err, TT_EBADMEM, 0, "code object layout too large");
	tt_status st = remote_read(r, addr, buf, l->co_read_size, err);
	if (st != TT_OK)
		return st;
	uint64_t type, qualname, filename, linetable;
	int32_t firstlineno;
	memcpy(&type, buf + l->ob_type, 8);
	memcpy(&qualname, buf + l->co_qualname, 8);
	memcpy(&filename, buf + l->co_filename, 8);
	memcpy(&linetable, buf + l->co_linetable, 8);
	memcpy(&firstlineno, buf + l->co_firstlineno, 4);
	st = check_code_type(c, r, l, type, err);
	if (st != TT_OK)
		return st;
	memset(e, 0, sizeof *e);
	e->addr = addr;
	e->firstlineno = firstlineno;
	e->bytecode_addr = addr + l->co_code_adaptive;
	e->last_line = -1;
	if ((st = pystr_read(r, l, qualname, &e->qualname, err)) != TT_OK ||
	    (st = pystr_read(r, l, filename, &e->filename, err)) != TT_OK ||
	    (st = pybytes_read(r, l, linetable, &e->linetable, &e->linetable_len, err)) != TT_OK) {
		free(e->qualname);
		free(e->filename);
		free(e->linetable);
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
	if (c->nslots) {
		for (uint32_t h = hash_addr(addr) & (c->nslots - 1);; h = (h + 1) & (c->nslots - 1)) {
			uint32_t s = c->slots[h];
			if (s == 0)
				break;
			if (c->entries[s - 1].addr == addr) {
				c->hits++;
				*id = s - 1;
				return TT_OK;
			}
		}
	}
	c->misses++;
	if (c->count >= CODECACHE_MAX_ENTRIES)
		codecache_clear(c);
	if (c->count == c->cap) {
		uint32_t ncap = c->cap ? c->cap * 2 : 256;
		struct code_entry *n = realloc(c->entries, ncap * sizeof *n);
		if (!n)
			return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory growing the code cache");
		c->entries = n;
		c->cap = ncap;
	}
	/* Keep the table at most half full. */
	if ((c->count + 1) * 2 > c->nslots) {
		tt_status st = grow_slots(c, err);
		if (st != TT_OK)
			return st;
	}
	struct code_entry *e = &c->entries[c->count];
	tt_status st = read_entry(c, r, l, addr, e, err);
	if (st != TT_OK)
		return st;
	uint32_t h = hash_addr(addr) & (c->nslots - 1);
	while (c->slots[h])
		h = (h + 1) & (c->nslots - 1);
	c->slots[h] = ++c->count;
	*id = c->count - 1;
	return TT_OK;
}

int
codecache_line(struct code_cache *c, uint32_t id, uint64_t instr_ptr)
{
	struct code_entry *e = &c->entries[id];
	if (e->last_instr_ptr == instr_ptr && instr_ptr != 0)
		return e->last_line;
	/* Code units are 2 bytes; instr_ptr points at the current instruction. */
	int64_t addrq = ((int64_t)instr_ptr - (int64_t)e->bytecode_addr) / 2;
	int line = linetable_addr2line(e->linetable, e->linetable_len, e->firstlineno, addrq);
	e->last_instr_ptr = instr_ptr;
	e->last_line = line;
	return line;
}
