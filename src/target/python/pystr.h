/* Python str and bytes objects read from a target, decoded to UTF-8. */
#ifndef TT_PYSTR_H
#define TT_PYSTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "python/pylayout.h"
#include "mem/remote.h"

/* Longest string we decode in full; longer ones are cut and marked "...". */
#define PYSTR_MAX_CHARS 4096
/* A length beyond this is not a name or a path but garbage. */
#define PYSTR_SANE_CHARS (1u << 24)
/* Longest bytes object (a code object's line table) we read. */
#define PYBYTES_MAX (1u << 22)

/* What a PyUnicodeObject header says about its characters. */
struct pystr_shape {
	unsigned kind;          /* bytes per character: 1, 2 or 4 */
	bool ascii;
	uint64_t length;        /* characters */
	uint64_t data_offset;   /* from the object's address */
};

/* Interpret the header bytes of a str object (hdr holds at least
 * l->str_compact_size bytes or l->str_ascii_size for compact ASCII). */
tt_status pystr_parse_header(const struct py_layout *l, const uint8_t *hdr, size_t hdrlen,
			     struct pystr_shape *shape, struct tt_error *err);
/* The same for a value of any length up to max_length characters (a
 * variable may hold a gigabyte; a name may not). */
tt_status pystr_parse_header_upto(const struct py_layout *l, const uint8_t *hdr, size_t hdrlen,
				  uint64_t max_length, struct pystr_shape *shape,
				  struct tt_error *err);

/* Transcode `length` characters of `kind` bytes each to NUL-terminated UTF-8.
 * out must hold length * 4 + 1 bytes. U+0000 is written as C0 80 so the
 * result stays a C string (sanitize.h reads it back). Lone surrogates become U+FFFD; code
 * points above U+10FFFF and non-ASCII bytes in an ASCII string are errors. */
tt_status pystr_to_utf8(unsigned kind, bool ascii, const uint8_t *data, uint64_t length,
			char *out, size_t *outlen, struct tt_error *err);

/* Read a str object at addr and return malloc'd UTF-8 in *out. */
tt_status pystr_read(struct remote *r, const struct py_layout *l, uint64_t addr, char **out,
		     struct tt_error *err);

/* The same from bytes already read: buf holds the object's first `have`
 * bytes. TT_EFAULT when its characters go on past them (pystr_read it). */
tt_status pystr_from_bytes(const struct py_layout *l, const uint8_t *buf, size_t have,
			   char **out, struct tt_error *err);

/* Read a bytes object at addr: malloc'd data in *out, length in *len. */
tt_status pybytes_read(struct remote *r, const struct py_layout *l, uint64_t addr,
		       uint8_t **out, size_t *len, struct tt_error *err);

#endif
