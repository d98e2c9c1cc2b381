/* Unit tests for pystr: transcoding str data to UTF-8, parsing str headers,
 * and reading str and bytes objects through a fake memory backend. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fakemem.h"
#include "python/pylayout.h"
#include "python/pystr.h"
#include "mem/remote.h"
#include "tap.h"

/* Objects copied byte for byte out of a live CPython 3.15.2 (GIL build,
 * x86-64) with ctypes.string_at(id(o), sys.getsizeof(o)). */
static const uint8_t obj_hello[] = { /* 'hello': compact ASCII, interned */
	0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0xc0, 0xbf, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xca, 0x3e, 0x33, 0x32, 0x41, 0x53, 0x80, 0x73, 0x65, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00,
};
static const uint8_t obj_latin1[] = { /* 'gén_ü': compact, kind 1, not ASCII */
	0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0xc0, 0xbf, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xf2, 0x1a, 0x15, 0x87, 0xa8, 0x4a, 0xd0, 0x59, 0x24, 0x8e, 0xbe, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x67, 0xe9, 0x6e, 0x5f,
	0xfc, 0x00,
};
static const uint8_t obj_cjk[] = { /* '函数': compact, kind 2 */
	0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0xc0, 0xbf, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x96, 0x36, 0xfb, 0xae, 0x1b, 0x92, 0xe7, 0xb2, 0x28, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xfd, 0x51, 0x70, 0x65,
	0x00, 0x00,
};
static const uint8_t obj_astral[] = { /* '𝔣x😀': compact, kind 4 */
	0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0xc0, 0xbf, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x35, 0x21, 0xa8, 0x86, 0x47, 0x84, 0x29, 0x84, 0x30, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x23, 0xd5, 0x01, 0x00,
	0x78, 0x00, 0x00, 0x00, 0x00, 0xf6, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t obj_empty[] = { /* '': static, immortal, state 0xe7 */
	0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x05, 0x00, 0xe0, 0xc0, 0xbf, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe7, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t obj_bytes[] = { /* b'ab\x00c' */
	0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa0, 0xc2, 0xbf, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x52, 0x70, 0x94, 0xd8, 0x14, 0xa8, 0x68, 0xc3, 0x61, 0x62, 0x00, 0x63,
	0x00,
};

/* The 3.15 values of the fields pystr uses, as the live interpreter's
 * _Py_DebugOffsets reports them (unicode_object.state/.length/
 * .asciiobject_size/.compactunicodeobject_size, bytes_object.ob_size/
 * .ob_sval) and as sizeof(PyASCIIObject) = 40, sizeof(PyCompactUnicodeObject)
 * = 56 in cpython/unicodeobject.h imply. */
static struct py_layout
layout_315(void)
{
	struct py_layout l;
	memset(&l, 0, sizeof l);
	l.major = 3;
	l.minor = 15;
	l.str_state = 32;
	l.str_length = 16;
	l.str_ascii_size = 40;
	l.str_compact_size = 56;
	l.bytes_size = 16;
	l.bytes_sval = 32;
	return l;
}

/* state bits: interned:2, kind:3, compact:1, ascii:1 */
static uint32_t
state_bits(unsigned interned, unsigned kind, bool compact, bool ascii)
{
	return (interned & 3) | ((kind & 7) << 2) | ((uint32_t)compact << 5) |
	       ((uint32_t)ascii << 6);
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void
put_i64(uint8_t *p, int64_t v)
{
	memcpy(p, &v, 8);
}

/* Write a str header at p (layout_315 offsets). */
static void
put_str_header(uint8_t *p, uint32_t state, int64_t length)
{
	put_i64(p + 16, length);
	put_u32(p + 32, state);
}

/* ---- pystr_to_utf8 ----------------------------------------------------- */

/* Transcode into an exactly sized heap buffer (length * 4 + 1, the
 * documented requirement) and compare with the expected UTF-8. */
static void
check_utf8(const char *what, unsigned kind, bool ascii, const void *data, uint64_t length,
	   const char *want, size_t wantlen)
{
	size_t cap = (size_t)length * 4 + 1;
	char *out = malloc(cap);
	if (!out)
		abort();
	memset(out, 'Z', cap);
	size_t outlen = 12345;
	struct tt_error err = {0};
	tt_status st = pystr_to_utf8(kind, ascii, data, length, out, &outlen, &err);
	bool ok = st == TT_OK && outlen == wantlen && memcmp(out, want, wantlen) == 0 &&
		  out[wantlen] == '\0';
	if (!ok)
		tap_diag("%s: status %d, outlen %zu (want %zu), msg '%s'", what, (int)st, outlen,
			 wantlen, err.msg);
	tap_ok(ok, "pystr_to_utf8: %s", what);
	free(out);
}

static void
check_utf8_fails(const char *what, unsigned kind, bool ascii, const void *data,
		 uint64_t length)
{
	size_t cap = (size_t)length * 4 + 1;
	char *out = malloc(cap);
	if (!out)
		abort();
	size_t outlen = 0;
	struct tt_error err = {0};
	tt_status st = pystr_to_utf8(kind, ascii, data, length, out, &outlen, &err);
	tap_ok(st == TT_EBADMEM && err.status == TT_EBADMEM && err.msg[0] != '\0',
	       "pystr_to_utf8: %s is an error (%s)", what, err.msg);
	free(out);
}

static void
test_to_utf8(void)
{
	static const uint8_t hello[] = "hello";
	check_utf8("kind 1 ASCII 'hello'", 1, true, hello, 5, "hello", 5);

	static const uint8_t latin1[] = {0x67, 0xe9, 0x6e, 0x5f, 0xfc};
	check_utf8("kind 1 Latin-1 'gén_ü'", 1, false, latin1, 5, "g\xc3\xa9n_\xc3\xbc", 7);

	static const uint8_t edges1[] = {0x00, 0x7f, 0x80, 0xff};
	check_utf8("kind 1 U+0000 (as C0 80), U+007F, U+0080, U+00FF", 1, false, edges1, 4,
		   "\xc0\x80\x7f\xc2\x80\xc3\xbf", 7);

	static const uint16_t cjk[] = {0x51fd, 0x6570};
	check_utf8("kind 2 '函数'", 2, false, cjk, 2, "\xe5\x87\xbd\xe6\x95\xb0", 6);

	static const uint16_t edges2[] = {0x41, 0x7ff, 0x800, 0xfffd, 0xffff};
	check_utf8("kind 2 boundaries U+0041 U+07FF U+0800 U+FFFD U+FFFF", 2, false, edges2, 5,
		   "A\xdf\xbf\xe0\xa0\x80\xef\xbf\xbd\xef\xbf\xbf", 12);

	static const uint16_t surr2[] = {0x61, 0xd800, 0x62, 0xdfff, 0xdc80};
	check_utf8("kind 2 lone surrogates become U+FFFD", 2, false, surr2, 5,
		   "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd", 11);

	static const uint32_t fraktur[] = {0x1d523};
	check_utf8("kind 4 '𝔣' U+1D523", 4, false, fraktur, 1, "\xf0\x9d\x94\xa3", 4);

	static const uint32_t emoji[] = {0x1f600, 0x78, 0x1f44d, 0x1f3fd};
	check_utf8("kind 4 emoji U+1F600 'x' U+1F44D U+1F3FD", 4, false, emoji, 4,
		   "\xf0\x9f\x98\x80x\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", 13);

	static const uint32_t edges4[] = {0x10000, 0x10ffff, 0xd83d, 0xde00};
	check_utf8("kind 4 U+10000, U+10FFFF and a split surrogate pair", 4, false, edges4, 4,
		   "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\xef\xbf\xbd\xef\xbf\xbd", 14);

	/* Every character at its longest encoding fills the buffer exactly. */
	static const uint32_t four[] = {0x10ffff, 0x10ffff, 0x10ffff};
	check_utf8("kind 4 worst case fills length * 4 + 1 exactly", 4, false, four, 3,
		   "\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf", 12);

	/* U+0000 is kept as the overlong C0 80 so the result stays a C string. */
	static const uint8_t nul[] = {'a', 0, 'b'};
	check_utf8("kind 1 embedded NUL becomes C0 80", 1, true, nul, 3, "a\xc0\x80" "b", 4);
	static const uint16_t nul2[] = {0, 0x51fd, 0};
	check_utf8("kind 2 NULs become C0 80", 2, false, nul2, 3,
		   "\xc0\x80\xe5\x87\xbd\xc0\x80", 7);
	static const uint32_t nul4[] = {0x1f600, 0};
	check_utf8("kind 4 NUL becomes C0 80", 4, false, nul4, 2, "\xf0\x9f\x98\x80\xc0\x80", 6);

	check_utf8("length 0 gives an empty string", 1, true, hello, 0, "", 0);
	check_utf8("length 0 kind 4 gives an empty string", 4, false, fraktur, 0, "", 0);

	static const uint32_t toobig[] = {0x41, 0x110000};
	check_utf8_fails("kind 4 code point U+110000", 4, false, toobig, 2);
	static const uint32_t huge[] = {0xffffffffu};
	check_utf8_fails("kind 4 code point 0xFFFFFFFF", 4, false, huge, 1);
	static const uint8_t badascii[] = {'a', 0xe9, 'b'};
	check_utf8_fails("a non-ASCII byte in an ASCII str", 1, true, badascii, 3);
	static const uint8_t badascii80[] = {0x80};
	check_utf8_fails("byte 0x80 in an ASCII str", 1, true, badascii80, 1);
	static const uint8_t three[] = {'a', 'b', 'c', 'd', 'e', 'f'};
	check_utf8_fails("kind 3", 3, false, three, 2);
	check_utf8_fails("kind 0", 0, false, three, 2);
}

/* ---- pystr_parse_header ------------------------------------------------ */

static tt_status
parse(uint32_t state, int64_t length, size_t hdrlen, struct pystr_shape *shape,
      struct tt_error *err)
{
	struct py_layout l = layout_315();
	uint8_t hdr[64] = {0};
	put_str_header(hdr, state, length);
	memset(shape, 0xee, sizeof *shape);
	memset(err, 0, sizeof *err);
	/* An exactly sized copy: the parser must not look past hdrlen. */
	uint8_t *h = malloc(hdrlen ? hdrlen : 1);
	if (!h)
		abort();
	memcpy(h, hdr, hdrlen < sizeof hdr ? hdrlen : sizeof hdr);
	tt_status st = pystr_parse_header(&l, h, hdrlen, shape, err);
	free(h);
	return st;
}

static void
test_parse_header(void)
{
	struct pystr_shape s;
	struct tt_error err;
	struct py_layout l = layout_315();

	tap_ok(pystr_parse_header(&l, obj_hello, 40, &s, &err) == TT_OK && s.kind == 1 &&
	       s.ascii && s.length == 5 && s.data_offset == 40,
	       "header of a real 'hello': kind 1, ASCII, 5 chars, data at 40");
	tap_ok(pystr_parse_header(&l, obj_latin1, 56, &s, &err) == TT_OK && s.kind == 1 &&
	       !s.ascii && s.length == 5 && s.data_offset == 56,
	       "header of a real 'gén_ü': kind 1, not ASCII, data at 56");
	tap_ok(pystr_parse_header(&l, obj_cjk, 56, &s, &err) == TT_OK && s.kind == 2 &&
	       !s.ascii && s.length == 2 && s.data_offset == 56,
	       "header of a real '函数': kind 2, data at 56");
	tap_ok(pystr_parse_header(&l, obj_astral, 56, &s, &err) == TT_OK && s.kind == 4 &&
	       s.length == 3 && s.data_offset == 56,
	       "header of a real '𝔣x😀': kind 4, data at 56");
	tap_ok(pystr_parse_header(&l, obj_empty, 40, &s, &err) == TT_OK && s.kind == 1 &&
	       s.ascii && s.length == 0,
	       "header of the real static '' (state 0xe7) parses");

	tap_ok(parse(state_bits(0, 1, true, true), 3, 40, &s, &err) == TT_OK && s.length == 3,
	       "a compact ASCII header needs only asciiobject_size bytes");
	tap_ok(parse(state_bits(0, 1, true, true), 3, 39, &s, &err) == TT_EBADMEM,
	       "a header shorter than asciiobject_size is an error");
	tap_ok(parse(state_bits(0, 1, true, true), 3, 0, &s, &err) == TT_EBADMEM,
	       "an empty header is an error");
	tap_ok(parse(0xffffff00u | state_bits(1, 1, true, true), 7, 40, &s, &err) == TT_OK &&
	       s.kind == 1 && s.ascii && s.length == 7,
	       "state bits above ascii (statically_allocated, padding) are ignored");
	int interned_ok = 1;
	for (unsigned in = 0; in < 4; in++)
		if (parse(state_bits(in, 2, true, false), 1, 56, &s, &err) != TT_OK || s.kind != 2)
			interned_ok = 0;
	tap_ok(interned_ok, "all four interned states parse");

	for (unsigned kind = 0; kind < 8; kind++) {
		if (kind == 1 || kind == 2 || kind == 4)
			continue;
		tt_status st = parse(state_bits(0, kind, true, false), 1, 56, &s, &err);
		tap_ok(st == TT_EBADMEM && err.status == TT_EBADMEM,
		       "kind %u is an error (%s)", kind, err.msg);
	}
	tap_ok(parse(state_bits(0, 2, true, true), 1, 56, &s, &err) == TT_EBADMEM &&
	       parse(state_bits(0, 4, true, true), 1, 56, &s, &err) == TT_EBADMEM,
	       "ASCII flag with kind 2 or 4 is an error");
	tap_ok(parse(state_bits(0, 1, false, false), 1, 56, &s, &err) == TT_EBADMEM &&
	       parse(state_bits(0, 1, false, true), 1, 56, &s, &err) == TT_EBADMEM,
	       "a non-compact (legacy) str is an error (%s)", err.msg);
	tap_ok(parse(state_bits(0, 1, true, true), -1, 40, &s, &err) == TT_EBADMEM &&
	       parse(state_bits(0, 1, true, true), INT64_MIN, 40, &s, &err) == TT_EBADMEM,
	       "a negative length is an error (%s)", err.msg);
	tap_ok(parse(state_bits(0, 1, true, true), (int64_t)PYSTR_SANE_CHARS + 1, 40, &s, &err) ==
		       TT_EBADMEM &&
	       parse(state_bits(0, 4, true, false), INT64_MAX, 56, &s, &err) == TT_EBADMEM,
	       "an absurd length is an error (%s)", err.msg);
	tap_ok(parse(state_bits(0, 4, true, false), (int64_t)PYSTR_SANE_CHARS, 56, &s, &err) ==
		       TT_OK && s.length == PYSTR_SANE_CHARS,
	       "a length of exactly PYSTR_SANE_CHARS is accepted");
}

/* ---- pystr_read / pybytes_read through fake memory --------------------- */

static tt_status
read_str(struct fakemem *m, uint64_t addr, char **out, struct tt_error *err)
{
	struct py_layout l = layout_315();
	struct remote r;
	remote_open_backend(&r, fakemem_backend(m));
	memset(err, 0, sizeof *err);
	*out = (char *)"sentinel";
	return pystr_read(&r, &l, addr, out, err);
}

/* Put a real object at addr in its own region with `slack` bytes after it. */
static void
place(struct fakemem *m, uint64_t addr, const uint8_t *obj, size_t len, size_t slack)
{
	uint8_t *p = fakemem_add(m, addr, len + slack);
	memcpy(p, obj, len);
}

static void
expect_str(struct fakemem *m, uint64_t addr, const char *want, const char *what)
{
	char *out;
	struct tt_error err;
	tt_status st = read_str(m, addr, &out, &err);
	bool ok = st == TT_OK && out && strcmp(out, want) == 0;
	if (!ok)
		tap_diag("%s: status %d (%s), got '%s'", what, (int)st, err.msg,
			 st == TT_OK && out ? out : "(null)");
	tap_ok(ok, "pystr_read: %s", what);
	if (st == TT_OK)
		free(out);
}

static void
expect_str_fails(struct fakemem *m, uint64_t addr, tt_status want, const char *what)
{
	char *out;
	struct tt_error err;
	tt_status st = read_str(m, addr, &out, &err);
	tap_ok(st == want && err.status == want && out == NULL,
	       "pystr_read: %s fails with status %d (got %d: %s)", what, (int)want, (int)st,
	       err.msg);
	if (st == TT_OK)
		free(out);
}

static void
test_read_real_objects(void)
{
	struct fakemem m = {0};
	place(&m, 0x10000, obj_hello, sizeof obj_hello, 4096);
	place(&m, 0x20000, obj_latin1, sizeof obj_latin1, 4096);
	place(&m, 0x30000, obj_cjk, sizeof obj_cjk, 4096);
	place(&m, 0x40000, obj_astral, sizeof obj_astral, 4096);
	place(&m, 0x50000, obj_empty, sizeof obj_empty, 4096);
	expect_str(&m, 0x10000, "hello", "real 'hello'");
	expect_str(&m, 0x20000, "g\xc3\xa9n_\xc3\xbc", "real 'gén_ü'");
	expect_str(&m, 0x30000, "\xe5\x87\xbd\xe6\x95\xb0", "real '函数'");
	expect_str(&m, 0x40000, "\xf0\x9d\x94\xa3x\xf0\x9f\x98\x80", "real '𝔣x😀'");
	expect_str(&m, 0x50000, "", "real ''");
	uint64_t before = m.reads;
	expect_str(&m, 0x10000, "hello", "a short string");
	tap_ok(m.reads - before == 1, "a short string takes one read (took %llu)",
	       (unsigned long long)(m.reads - before));

	/* 100 ASCII characters still fit the speculative read. */
	uint8_t *q = fakemem_add(&m, 0x60000, 4096);
	put_str_header(q, state_bits(0, 1, true, true), 100);
	memset(q + 40, 'q', 100);
	char want100[101];
	memset(want100, 'q', 100);
	want100[100] = '\0';
	before = m.reads;
	expect_str(&m, 0x60000, want100, "a 100-char ASCII string");
	tap_ok(m.reads - before == 1, "a 100-char ASCII string takes one read (took %llu)",
	       (unsigned long long)(m.reads - before));

	/* The same objects ending exactly where their region ends, so the
	 * speculative read runs off the mapping and the reader falls back. */
	struct fakemem e = {0};
	place(&e, 0x10000, obj_latin1, sizeof obj_latin1, 0);
	place(&e, 0x20000, obj_cjk, sizeof obj_cjk, 0);
	place(&e, 0x30000, obj_astral, sizeof obj_astral, 0);
	place(&e, 0x40000, obj_hello, sizeof obj_hello, 0);
	place(&e, 0x50000, obj_empty, sizeof obj_empty, 0);
	expect_str(&e, 0x10000, "g\xc3\xa9n_\xc3\xbc", "'gén_ü' at the end of a region");
	expect_str(&e, 0x20000, "\xe5\x87\xbd\xe6\x95\xb0", "'函数' at the end of a region");
	expect_str(&e, 0x30000, "\xf0\x9d\x94\xa3x\xf0\x9f\x98\x80",
		   "'𝔣x😀' at the end of a region");
	/* A compact ASCII object is only asciiobject_size + length + 1 bytes:
	 * 46 for 'hello', 41 for '', both less than compactunicodeobject_size. */
	expect_str(&e, 0x40000, "hello", "'hello' (46 bytes) at the end of a region");
	expect_str(&e, 0x50000, "", "'' (41 bytes) at the end of a region");

	/* A 20-character ASCII string (61 bytes) at the end of a region. */
	uint8_t *p = fakemem_add(&e, 0x60000, 40 + 21);
	put_str_header(p, state_bits(1, 1, true, true), 20);
	memcpy(p + 40, "abcdefghijklmnopqrst", 21);
	expect_str(&e, 0x60000, "abcdefghijklmnopqrst", "20-char ASCII str at the end of a region");

	/* A header whose first bytes are mapped but not all of it. */
	p = fakemem_add(&e, 0x70000, 30);
	put_i64(p + 16, 1);
	expect_str_fails(&e, 0x70000, TT_EFAULT, "a header cut by the end of the mapping");

	fakemem_free(&m);
	fakemem_free(&e);
}

static void
test_read_long(void)
{
	struct fakemem m = {0};
	/* ASCII: exactly the limit, one past it, far past it. */
	const uint64_t lens[] = {PYSTR_MAX_CHARS - 1, PYSTR_MAX_CHARS, PYSTR_MAX_CHARS + 1, 100000};
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		uint64_t addr = 0x100000 * (i + 1);
		uint8_t *p = fakemem_add(&m, addr, 40 + lens[i] + 1);
		put_str_header(p, state_bits(0, 1, true, true), (int64_t)lens[i]);
		for (uint64_t j = 0; j < lens[i]; j++)
			p[40 + j] = (uint8_t)('a' + j % 26);
		char *out;
		struct tt_error err;
		tt_status st = read_str(&m, addr, &out, &err);
		bool cut = lens[i] > PYSTR_MAX_CHARS;
		size_t want = cut ? PYSTR_MAX_CHARS + 3 : (size_t)lens[i];
		bool ok = st == TT_OK && strlen(out) == want;
		for (size_t j = 0; ok && j < (cut ? PYSTR_MAX_CHARS : lens[i]); j++)
			ok = out[j] == (char)('a' + j % 26);
		if (ok && cut)
			ok = strcmp(out + PYSTR_MAX_CHARS, "...") == 0;
		tap_ok(ok, "pystr_read: ASCII str of %llu chars %s", (unsigned long long)lens[i],
		       cut ? "is cut to PYSTR_MAX_CHARS and ends with \"...\"" : "is read whole");
		if (st == TT_OK)
			free(out);
	}

	/* Kind 2 and kind 4 strings over the limit: cut on a character. */
	uint8_t *p = fakemem_add(&m, 0x900000, 56 + 5000 * 2 + 2);
	put_str_header(p, state_bits(0, 2, true, false), 5000);
	for (int j = 0; j < 5000; j++) {
		uint16_t c = 0x51fd;
		memcpy(p + 56 + j * 2, &c, 2);
	}
	char *out;
	struct tt_error err;
	tt_status st = read_str(&m, 0x900000, &out, &err);
	bool ok = st == TT_OK && strlen(out) == PYSTR_MAX_CHARS * 3 + 3 &&
		  memcmp(out + (PYSTR_MAX_CHARS - 1) * 3, "\xe5\x87\xbd...", 7) == 0;
	tap_ok(ok, "pystr_read: kind 2 str of 5000 chars is cut after %d characters + \"...\"",
	       PYSTR_MAX_CHARS);
	if (st == TT_OK)
		free(out);

	p = fakemem_add(&m, 0xa00000, 56 + 4200 * 4 + 4);
	put_str_header(p, state_bits(0, 4, true, false), 4200);
	for (int j = 0; j < 4200; j++) {
		uint32_t c = 0x1f600;
		memcpy(p + 56 + j * 4, &c, 4);
	}
	st = read_str(&m, 0xa00000, &out, &err);
	ok = st == TT_OK && strlen(out) == PYSTR_MAX_CHARS * 4 + 3 &&
	     memcmp(out + (PYSTR_MAX_CHARS - 1) * 4, "\xf0\x9f\x98\x80...", 8) == 0;
	tap_ok(ok, "pystr_read: kind 4 str of 4200 emoji is cut at %d characters + \"...\"",
	       PYSTR_MAX_CHARS);
	if (st == TT_OK)
		free(out);

	/* A plausible length whose data is not all mapped. */
	p = fakemem_add(&m, 0xb00000, 200);
	put_str_header(p, state_bits(0, 1, true, true), 1000);
	expect_str_fails(&m, 0xb00000, TT_EFAULT, "a str whose data runs off the mapping");
	/* The same with the length at the sanity limit: cut to the maximum, and
	 * that still runs off the mapping. */
	p = fakemem_add(&m, 0xc00000, 200);
	put_str_header(p, state_bits(0, 4, true, false), (int64_t)PYSTR_SANE_CHARS);
	expect_str_fails(&m, 0xc00000, TT_EFAULT, "a str of PYSTR_SANE_CHARS in 200 bytes");
	fakemem_free(&m);
}

static void
test_read_bad(void)
{
	struct fakemem m = {0};
	struct {
		uint32_t state;
		int64_t length;
		const char *what;
	} bad[] = {
		{state_bits(0, 3, true, false), 2, "kind 3"},
		{state_bits(0, 0, true, false), 2, "kind 0"},
		{state_bits(0, 7, true, false), 2, "kind 7"},
		{state_bits(0, 2, true, true), 2, "ASCII kind 2"},
		{state_bits(0, 1, false, false), 2, "a non-compact str"},
		{state_bits(0, 2, false, false), 2, "a non-compact kind 2 str"},
		{state_bits(0, 1, true, true), -1, "length -1"},
		{state_bits(0, 1, true, true), INT64_MIN, "length INT64_MIN"},
		{state_bits(0, 1, true, true), (int64_t)PYSTR_SANE_CHARS + 1, "length SANE+1"},
		{state_bits(0, 4, true, false), INT64_MAX, "length INT64_MAX"},
		{state_bits(0, 2, true, false), (int64_t)1 << 40, "length 2^40"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t addr = 0x10000 * (i + 1);
		uint8_t *p = fakemem_add(&m, addr, 512);
		put_str_header(p, bad[i].state, bad[i].length);
		memset(p + 56, 'x', 400);
		expect_str_fails(&m, addr, TT_EBADMEM, bad[i].what);
	}

	/* Bad data behind a good header. */
	uint8_t *p = fakemem_add(&m, 0x200000, 512);
	put_str_header(p, state_bits(0, 1, true, true), 3);
	memcpy(p + 40, "a\xffz", 4);
	expect_str_fails(&m, 0x200000, TT_EBADMEM, "an ASCII str holding byte 0xff");
	p = fakemem_add(&m, 0x210000, 512);
	put_str_header(p, state_bits(0, 4, true, false), 2);
	put_u32(p + 56, 0x41);
	put_u32(p + 60, 0x00200000);
	expect_str_fails(&m, 0x210000, TT_EBADMEM, "a kind 4 str holding U+200000");
	/* A NUL inside a name survives as C0 80. */
	p = fakemem_add(&m, 0x230000, 512);
	put_str_header(p, state_bits(0, 1, true, true), 5);
	memcpy(p + 40, "ab\0cd", 6);
	expect_str(&m, 0x230000, "ab\xc0\x80" "cd", "an ASCII str with an embedded NUL");
	/* Lone surrogates in memory are not an error. */
	p = fakemem_add(&m, 0x220000, 512);
	put_str_header(p, state_bits(0, 2, true, false), 2);
	uint16_t sur[] = {0xdcff, 0x66};
	memcpy(p + 56, sur, 4);
	expect_str(&m, 0x220000, "\xef\xbf\xbd" "f", "a kind 2 str with a lone surrogate");

	expect_str_fails(&m, 0, TT_EBADMEM, "a NULL pointer");
	expect_str_fails(&m, 0xdead0000, TT_EFAULT, "an unmapped address");

	/* Garbage headers everywhere in a region of random bytes: any status,
	 * but never a crash, and *out set only on success. */
	uint8_t *g = fakemem_add(&m, 0x900000, 8192);
	uint32_t x = 0x12345678;
	for (size_t i = 0; i < 8192; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		g[i] = (uint8_t)x;
	}
	int consistent = 1, decoded = 0;
	for (uint64_t a = 0x900000; a < 0x900000 + 8192; a += 8) {
		char *out;
		struct tt_error err;
		tt_status st = read_str(&m, a, &out, &err);
		if (st == TT_OK) {
			decoded++;
			if (!out)
				consistent = 0;
			free(out);
		} else if (out != NULL || err.status != st) {
			consistent = 0;
		}
	}
	tap_ok(consistent, "pystr_read over 1024 garbage headers: no crash, consistent results "
	       "(%d decoded)", decoded);
	fakemem_free(&m);
}

static void
test_bytes(void)
{
	struct py_layout l = layout_315();
	struct fakemem m = {0};
	struct remote r;
	remote_open_backend(&r, fakemem_backend(&m));
	struct tt_error err = {0};
	uint8_t *out;
	size_t len;

	place(&m, 0x10000, obj_bytes, sizeof obj_bytes, 0);
	tt_status st = pybytes_read(&r, &l, 0x10000, &out, &len, &err);
	tap_ok(st == TT_OK && len == 4 && memcmp(out, "ab\0c", 5) == 0,
	       "pybytes_read: real b'ab\\x00c' (ending its region) reads 4 bytes + NUL");
	if (st == TT_OK)
		free(out);

	uint8_t *p = fakemem_add(&m, 0x20000, 33);
	put_i64(p + 16, 0);
	st = pybytes_read(&r, &l, 0x20000, &out, &len, &err);
	tap_ok(st == TT_OK && len == 0 && out != NULL && out[0] == 0,
	       "pybytes_read: empty bytes gives length 0 and a NUL-terminated buffer");
	if (st == TT_OK)
		free(out);

	const int64_t badsizes[] = {-1, INT64_MIN, (int64_t)PYBYTES_MAX + 1, INT64_MAX};
	for (size_t i = 0; i < sizeof badsizes / sizeof badsizes[0]; i++) {
		uint64_t addr = 0x100000 * (i + 1);
		p = fakemem_add(&m, addr, 64);
		put_i64(p + 16, badsizes[i]);
		memset(&err, 0, sizeof err);
		out = (uint8_t *)"x";
		len = 99;
		st = pybytes_read(&r, &l, addr, &out, &len, &err);
		tap_ok(st == TT_EBADMEM && out == NULL && len == 0,
		       "pybytes_read: ob_size %lld is an error (%s)", (long long)badsizes[i], err.msg);
	}
	/* In range but larger than the mapping. */
	p = fakemem_add(&m, 0x800000, 64);
	put_i64(p + 16, (int64_t)PYBYTES_MAX);
	st = pybytes_read(&r, &l, 0x800000, &out, &len, &err);
	tap_ok(st == TT_EFAULT && out == NULL, "pybytes_read: PYBYTES_MAX bytes in a 64-byte "
	       "mapping is an unmapped-address error");
	p = fakemem_add(&m, 0x900000, 64);
	put_i64(p + 16, 33);
	st = pybytes_read(&r, &l, 0x900000, &out, &len, &err);
	tap_ok(st == TT_EFAULT && out == NULL,
	       "pybytes_read: one byte more than the mapping holds is an error");
	st = pybytes_read(&r, &l, 0, &out, &len, &err);
	tap_ok(st == TT_EBADMEM && out == NULL, "pybytes_read: NULL pointer is an error");
	st = pybytes_read(&r, &l, 0xdead0000, &out, &len, &err);
	tap_ok(st == TT_EFAULT && out == NULL, "pybytes_read: unmapped address is an error");
	fakemem_free(&m);
}

int
main(void)
{
	test_to_utf8();
	test_parse_header();
	test_read_real_objects();
	test_read_long();
	test_read_bad();
	test_bytes();
	return tap_done();
}
