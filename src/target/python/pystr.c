#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "python/pystr.h"

/* Bytes read speculatively past the header so short strings (most names)
 * arrive in one remote read. */
#define PYSTR_SPECULATIVE 128

tt_status
pystr_parse_header(const struct py_layout *l, const uint8_t *hdr, size_t hdrlen,
		   struct pystr_shape *shape, struct tt_error *err)
{
	return pystr_parse_header_upto(l, hdr, hdrlen, PYSTR_SANE_CHARS, shape, err);
}

tt_status
pystr_parse_header_upto(const struct py_layout *l, const uint8_t *hdr, size_t hdrlen,
			uint64_t max_length, struct pystr_shape *shape, struct tt_error *err)
{
	if (hdrlen < l->str_ascii_size || l->str_state + 4 > hdrlen || l->str_length + 8 > hdrlen)
		return tt_fail(err, TT_EBADMEM, 0, "short str header");
	uint32_t state;
	int64_t length;
	memcpy(&state, hdr + l->str_state, 4);
	memcpy(&length, hdr + l->str_length, 8);
	/* state bits (GIL builds): interned:2, kind:3, compact:1, ascii:1 */
	unsigned kind = (state >> 2) & 7;
	bool compact = (state >> 5) & 1;
	bool ascii = (state >> 6) & 1;
	if (kind != 1 && kind != 2 && kind != 4)
		return tt_fail(err, TT_EBADMEM, 0, "str object with invalid kind %u", kind);
	if (ascii && kind != 1)
		return tt_fail(err, TT_EBADMEM, 0, "ASCII str object with kind %u", kind);
	if (!compact)
		/* Legacy (non-compact) strings come only from deprecated C APIs
		 * and never name code objects or files. */
		return tt_fail(err, TT_EBADMEM, 0, "non-compact str object");
	if (length < 0 || (uint64_t)length > max_length)
		return tt_fail(err, TT_EBADMEM, 0, "str object with implausible length %lld",
			       (long long)length);
	shape->kind = kind;
	shape->ascii = ascii;
	shape->length = (uint64_t)length;
	shape->data_offset = ascii ? l->str_ascii_size : l->str_compact_size;
	return TT_OK;
}

static size_t
put_utf8(char *out, uint32_t cp)
{
	if (cp == 0) {
		/* Keep NUL inside C strings as C0 80 ("modified UTF-8"); the
		 * printers turn it back into an escaped U+0000. */
		out[0] = (char)0xc0;
		out[1] = (char)0x80;
		return 2;
	}
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

tt_status
pystr_to_utf8(unsigned kind, bool ascii, const uint8_t *data, uint64_t length, char *out,
	      size_t *outlen, struct tt_error *err)
{
	size_t o = 0;
	for (uint64_t i = 0; i < length; i++) {
		uint32_t cp;
		switch (kind) {
		case 1:
			cp = data[i];
			if (ascii && cp >= 0x80)
				return tt_fail(err, TT_EBADMEM, 0, "non-ASCII byte in ASCII str");
			break;
		case 2: {
			uint16_t u;
			memcpy(&u, data + i * 2, 2);
			cp = u;
			break;
		}
		case 4:
			memcpy(&cp, data + i * 4, 4);
			if (cp > 0x10ffff)
				return tt_fail(err, TT_EBADMEM, 0, "str with invalid code point 0x%x", cp);
			break;
		default:
			return tt_fail(err, TT_EBADMEM, 0, "str object with invalid kind %u", kind);
		}
		if (cp >= 0xd800 && cp <= 0xdfff)
			cp = 0xfffd; /* lone surrogate (e.g. surrogateescape'd path bytes) */
		o += put_utf8(out + o, cp);
	}
	out[o] = '\0';
	*outlen = o;
	return TT_OK;
}

/* UTF-8 of the str of this shape whose first nchars characters are at
 * data, "..." after them when cut. */
static tt_status
shape_to_utf8(const struct pystr_shape *shape, const uint8_t *data, uint64_t nchars, bool cut,
	      char **out, struct tt_error *err)
{
	char *utf8 = malloc((size_t)nchars * 4 + 4);
	if (!utf8)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading a str");
	size_t len;
	tt_status st = pystr_to_utf8(shape->kind, shape->ascii, data, nchars, utf8, &len, err);
	if (st != TT_OK) {
		free(utf8);
		return st;
	}
	if (cut)
		memcpy(utf8 + len, "...", 4);
	*out = utf8;
	return TT_OK;
}

tt_status
pystr_read(struct remote *r, const struct py_layout *l, uint64_t addr, char **out,
	   struct tt_error *err)
{
	*out = NULL;
	if (addr == 0)
		return tt_fail(err, TT_EBADMEM, 0, "NULL str pointer");
	/* One read covers the header and, for short strings, the data. */
	uint8_t buf[256 + PYSTR_SPECULATIVE];
	size_t want = l->str_compact_size + PYSTR_SPECULATIVE;
	struct remote_seg seg = {.addr = addr, .buf = buf, .len = want};
	size_t nc;
	tt_status st = remote_readv(r, &seg, 1, &nc, err);
	if (st != TT_OK)
		return st;
	size_t have = want;
	if (nc != 1) {
		/* The speculative tail crossed into unmapped memory. Re-read just
		 * the part every str has: a short compact-ASCII object can end
		 * before compact_size. Non-ASCII data is read separately below. */
		have = l->str_ascii_size;
		st = remote_read(r, addr, buf, have, err);
		if (st != TT_OK)
			return st;
	}
	struct pystr_shape shape;
	st = pystr_parse_header(l, buf, have, &shape, err);
	if (st != TT_OK)
		return st;
	uint64_t nchars = shape.length;
	bool cut = nchars > PYSTR_MAX_CHARS;
	if (cut)
		nchars = PYSTR_MAX_CHARS;
	size_t nbytes = (size_t)nchars * shape.kind;
	if (shape.data_offset + nbytes <= have)
		return shape_to_utf8(&shape, buf + shape.data_offset, nchars, cut, out, err);
	uint8_t *heap = malloc(nbytes ? nbytes : 1);
	if (!heap)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading a str");
	st = remote_read(r, addr + shape.data_offset, heap, nbytes, err);
	if (st == TT_OK)
		st = shape_to_utf8(&shape, heap, nchars, cut, out, err);
	free(heap);
	return st;
}

tt_status
pystr_from_bytes(const struct py_layout *l, const uint8_t *buf, size_t have, char **out,
		 struct tt_error *err)
{
	*out = NULL;
	struct pystr_shape shape;
	tt_status st = pystr_parse_header(l, buf, have, &shape, err);
	if (st != TT_OK)
		return st;
	uint64_t nchars = shape.length;
	bool cut = nchars > PYSTR_MAX_CHARS;
	if (cut)
		nchars = PYSTR_MAX_CHARS;
	if (shape.data_offset + nchars * shape.kind > have)
		return tt_fail(err, TT_EFAULT, 0, "the str goes on past the bytes read");
	return shape_to_utf8(&shape, buf + shape.data_offset, nchars, cut, out, err);
}

tt_status
pybytes_read(struct remote *r, const struct py_layout *l, uint64_t addr, uint8_t **out,
	     size_t *len, struct tt_error *err)
{
	*out = NULL;
	*len = 0;
	if (addr == 0)
		return tt_fail(err, TT_EBADMEM, 0, "NULL bytes pointer");
	int64_t size;
	tt_status st = remote_read(r, addr + l->bytes_size, &size, 8, err);
	if (st != TT_OK)
		return st;
	if (size < 0 || (uint64_t)size > PYBYTES_MAX)
		return tt_fail(err, TT_EBADMEM, 0, "bytes object with implausible size %lld",
			       (long long)size);
	uint8_t *data = malloc((size_t)size + 1);
	if (!data)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading bytes");
	st = remote_read(r, addr + l->bytes_sval, data, (size_t)size, err);
	if (st != TT_OK) {
		free(data);
		return st;
	}
	data[size] = 0;
	*out = data;
	*len = (size_t)size;
	return TT_OK;
}
