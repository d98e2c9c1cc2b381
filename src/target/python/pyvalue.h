/* Python values read from a target and rendered the way repr() renders the
 * built-in types, within limits: a frame's locals (dump --locals).
 *
 * None, bool, int (any size up to Python's own 4,300-digit limit), float
 * (the shortest text that reads back the same), str and bytes (with
 * repr's quotes and escapes), bytearray, tuple, list, dict, set,
 * frozenset: containers up to `items` items and `depth` levels, then "...
 * (N items)"; any other object as <Type object at 0x...>. Every read is
 * counted against `bytes` per value, so a 1 GB string or a list of ten
 * million costs what a small one does. What is read is the target's:
 * sanitize it before it reaches a terminal. */
#ifndef TT_PYVALUE_H
#define TT_PYVALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "keytab.h"
#include "python/pylayout.h"
#include "mem/remote.h"

struct pyvalue_limits {
	unsigned items;      /* items shown per container */
	unsigned depth;      /* containers shown inside containers */
	size_t chars;        /* characters of text per value, about */
	size_t bytes;        /* bytes read from the target per value */
	size_t frame_bytes;  /* ... and per frame's locals (pylocals_read starts one) */
};

#define PYVALUE_LIMITS_DEFAULT \
	{.items = 8, .depth = 2, .chars = 200, .bytes = 65536, .frame_bytes = 1u << 20}
/* Longest rendering: the limit on characters and room to close it. */
#define PYVALUE_TEXT_MAX 1024

struct pyvalue {
	struct remote *mem;
	const struct py_layout *l;
	struct pyvalue_limits lim;
	struct keytab types;     /* what each type object seen is (struct type_info) */
	size_t budget;           /* bytes still to read for this value */
	size_t frame_left;       /* ... and for the frame's locals */
};

void pyvalue_init(struct pyvalue *v, struct remote *mem, const struct py_layout *l,
		  const struct pyvalue_limits *lim);
void pyvalue_free(struct pyvalue *v);

/* The object at addr: its repr into text (UTF-8, at most PYVALUE_TEXT_MAX
 * bytes with the NUL), its type's name into type. false when the object
 * itself cannot be read (text then says why, in angle brackets). */
bool pyvalue_repr(struct pyvalue *v, uint64_t addr, char *text, char *type, size_t type_len);

enum pylocal_kind { PYLOCAL_ARG, PYLOCAL_LOCAL, PYLOCAL_CELL, PYLOCAL_FREE };

struct pylocal {
	char name[128];
	enum pylocal_kind kind;
	unsigned slot;           /* its index in the frame's localsplus */
	uint64_t addr;           /* the object in the slot when read, 0: unbound */
	/* its value: repr and type as pyvalue_repr; a cell's content for cell
	 * and free variables; "<unbound>"; "<changing>" unless the frame's slot
	 * still held the same object when read again after */
	char type[96];
	char repr[PYVALUE_TEXT_MAX];
};

/* Most locals read per frame. */
#define PYLOCALS_MAX 512

/* The locals of the frame at frame_addr running the code at code_addr, in
 * order (arguments first, as the code lists them; hidden ones left out),
 * with their values, up to max: the count, or -1 with err when they cannot
 * be read or the frame returned meanwhile (a running thread's: its memory
 * another frame's now). */
int pylocals_read(struct pyvalue *v, uint64_t frame_addr, uint64_t code_addr,
		  struct pylocal *out, size_t max, struct tt_error *err);

/* What objects hold, for readers of the target's own state (the names of
 * its threads): reads outside any value's budget; 0, NULL or false when
 * the object cannot be read or is not what was asked for. */

/* A str object's text as UTF-8 (free it). */
char *pyvalue_str(struct pyvalue *v, uint64_t addr);
/* An int object's value, when it is one from 0 to 2^64 - 1. */
bool pyvalue_u64(struct pyvalue *v, uint64_t addr, uint64_t *out);
/* The value of str key `key` among the first `max` entries of the dict at
 * dict. */
uint64_t pyvalue_dict_get(struct pyvalue *v, uint64_t dict, const char *key, unsigned max);
/* fn(ctx, key, value) for each of the first `max` entries of the dict at
 * dict, until it returns false; false when the dict cannot be read. */
typedef bool pyvalue_entry_fn(void *ctx, uint64_t key, uint64_t value);
bool pyvalue_dict_each(struct pyvalue *v, uint64_t dict, unsigned max, pyvalue_entry_fn *fn,
		       void *ctx);
/* The first `max` entries of the dict at dict, their keys and values
 * gathered (out's arrays grow; free them with pyvalue_items_free); false
 * when the dict cannot be read or memory is short. */
struct pyvalue_items {
	uint64_t *keys, *values;
	uint32_t n, cap, vcap;
};
bool pyvalue_dict_items(struct pyvalue *v, uint64_t dict, unsigned max,
			struct pyvalue_items *out);
void pyvalue_items_free(struct pyvalue_items *items);
/* Attribute `name` of an instance of a class (its own, in its dict or
 * its values, wherever this version keeps them), or 0. */
uint64_t pyvalue_attr(struct pyvalue *v, uint64_t obj, const char *name);

/* The same for many objects at once (each thread's name of a pool of
 * thousands): a few backend calls for all, where one by one takes tens
 * per object. out[i] (and ok[i]) for addrs[i]; strs to be freed. */
void pyvalue_u64_many(struct pyvalue *v, const uint64_t *addrs, size_t n, uint64_t *out,
		      bool *ok);
void pyvalue_str_many(struct pyvalue *v, const uint64_t *addrs, size_t n, char **out);
void pyvalue_attr_many(struct pyvalue *v, const uint64_t *objs, size_t n, const char *name,
		       uint64_t *out);

#endif
