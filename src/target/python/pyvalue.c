/* Values and locals read from a target (pyvalue.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "textbuf.h"
#include "python/pyint.h"
#include "python/pystr.h"
#include "python/pyvalue.h"

/* Python refuses to print an int of more than 4,300 decimal digits; 480
 * digits of 30 bits are 4,335 of them. */
#define INT_MAX_DIGITS 480
/* An int of more digits than this would not fit in memory: garbage. */
#define INT_SANE_DIGITS (1ull << 36)
/* Characters of a str or bytes read at most, whatever the limit says. */
#define TEXT_READ_MAX 4096
#define TYPE_NAME_MAX 160
/* Entries of a class's dict looked through for its __module__. */
#define TYPE_DICT_ENTRIES 256
#define TYPES_KEPT 4096

enum kind {
	K_OTHER, K_NONE, K_BOOL, K_INT, K_FLOAT, K_STR, K_BYTES, K_BYTEARRAY, K_TUPLE, K_LIST,
	K_DICT, K_SET, K_FROZENSET, K_CELL, K_DUMMY, K_FUNCTION, K_TYPE, K_METHOD, K_CFUNCTION,
	K_MODULE,
};

static const struct {
	const char *name;
	enum kind kind;
} BUILTINS[] = {
	{"NoneType", K_NONE}, {"bool", K_BOOL}, {"int", K_INT}, {"float", K_FLOAT},
	{"str", K_STR}, {"bytes", K_BYTES}, {"bytearray", K_BYTEARRAY}, {"tuple", K_TUPLE},
	{"list", K_LIST}, {"dict", K_DICT}, {"set", K_SET}, {"frozenset", K_FROZENSET},
	{"cell", K_CELL}, {"<dummy key> type", K_DUMMY}, {"function", K_FUNCTION},
	{"type", K_TYPE}, {"method", K_METHOD}, {"builtin_function_or_method", K_CFUNCTION},
	{"module", K_MODULE},
};

struct type_info {
	uint64_t addr;              /* keytab's key */
	enum kind kind;
	char name[TYPE_NAME_MAX];
};

void
pyvalue_init(struct pyvalue *v, struct remote *mem, const struct py_layout *l,
	     const struct pyvalue_limits *lim)
{
	memset(v, 0, sizeof *v);
	v->mem = mem;
	v->l = l;
	v->lim = *lim;
	if (v->lim.chars + 64 > PYVALUE_TEXT_MAX)
		v->lim.chars = PYVALUE_TEXT_MAX - 64;
	keytab_init(&v->types, sizeof(struct type_info));
	v->frame_left = v->lim.frame_bytes;
}

void
pyvalue_free(struct pyvalue *v)
{
	keytab_free(&v->types);
}

/* Read from the target within the value's budget. */
static bool
rd(struct pyvalue *v, uint64_t addr, void *buf, size_t len)
{
	struct tt_error err;
	if (len > v->budget || addr == 0)
		return false;
	v->budget -= len;
	return remote_read(v->mem, addr, buf, len, &err) == TT_OK;
}

static bool
rd_u64(struct pyvalue *v, uint64_t addr, uint64_t *out)
{
	return rd(v, addr, out, 8);
}

static const struct type_info *type_of(struct pyvalue *v, uint64_t type);

/* The str object at addr (and nothing else) as UTF-8: NULL when it is not
 * one or cannot be read. Free it. */
static char *
str_object(struct pyvalue *v, uint64_t addr)
{
	uint64_t type;
	const struct type_info *ti;
	struct tt_error err;
	char *s = NULL;
	if (addr == 0 || (addr & 7) || remote_read_u64(v->mem, addr + v->l->ob_type, &type, &err) ||
	    !(ti = type_of(v, type)) || ti->kind != K_STR ||
	    pystr_read(v->mem, v->l, addr, &s, &err) != TT_OK)
		return NULL;
	return s;
}

/* A dict's entries, read from its keys object: each entry's key and value
 * (a split dict's values are in their own array). */
struct dict_entries {
	uint64_t entries, values;   /* values: a split dict's array, else 0 */
	size_t size;                /* bytes an entry takes */
	uint8_t kind;               /* DICT_KEYS_GENERAL 0, UNICODE 1, SPLIT 2 */
	int64_t n;                  /* entries, deleted ones included */
};

/* A read for a dict's reader; budgeted: it counts against the value's
 * budget (a repr), else not (a class's or module's own names). */
static bool
dict_read(struct pyvalue *v, bool budgeted, uint64_t addr, void *buf, size_t len)
{
	struct tt_error err;
	return budgeted ? rd(v, addr, buf, len)
			: remote_read(v->mem, addr, buf, len, &err) == TT_OK;
}

/* Open the keys object at keys, whose values are in the array at values
 * when the dict is split (else 0). */
static bool
keys_open(struct pyvalue *v, uint64_t keys, uint64_t values, bool budgeted,
	  struct dict_entries *d)
{
	uint8_t hdr[PY_DICTKEYS_INDICES];
	d->values = values;
	if (!keys || (keys & 7) || !dict_read(v, budgeted, keys, hdr, sizeof hdr))
		return false;
	uint8_t log2_index = hdr[PY_DICTKEYS_LOG2_INDEX_BYTES];
	d->kind = hdr[PY_DICTKEYS_KIND];
	memcpy(&d->n, hdr + PY_DICTKEYS_NENTRIES, 8);
	if (log2_index > 40 || d->kind > 2 || d->n < 0 || (uint64_t)d->n > (1ull << 40))
		return false;
	d->entries = keys + PY_DICTKEYS_INDICES + (1ull << log2_index);
	d->size = d->kind == 0 ? 24 : 16;
	return true;
}

/* Open the dict at dict (dict_read says what budgeted is). */
static bool
dict_open(struct pyvalue *v, uint64_t dict, bool budgeted, struct dict_entries *d)
{
	const struct py_layout *l = v->l;
	uint64_t keys, values;
	return dict && !(dict & 7) && dict_read(v, budgeted, dict + l->dict_keys, &keys, 8) &&
	       dict_read(v, budgeted, dict + l->dict_values, &values, 8) &&
	       keys_open(v, keys, values, budgeted, d);
}

/* Entry i's key and value (0 and 0: deleted); false when unreadable. */
static bool
dict_entry(struct pyvalue *v, const struct dict_entries *d, bool budgeted, int64_t i,
	   uint64_t *key, uint64_t *value)
{
	uint64_t e[3] = {0};
	if (!dict_read(v, budgeted, d->entries + (uint64_t)i * d->size, e, d->size))
		return false;
	*key = d->kind == 0 ? e[1] : e[0];
	*value = d->kind == 0 ? e[2] : e[1];
	if (d->values &&
	    !dict_read(v, budgeted, d->values + v->l->dict_values_array + 8ull * (uint64_t)i,
		       value, 8))
		*value = 0;
	return true;
}

/* The index of str key `name` among the first `max` entries of the open
 * dict d, or -1 (keys only: shared keys have no values of their own). */
static int64_t
entries_index(struct pyvalue *v, const struct dict_entries *d, const char *name, int64_t max)
{
	int64_t n = d->n < max ? d->n : max;
	for (int64_t i = 0; i < n; i++) {
		uint64_t e[3] = {0};
		if (!dict_read(v, false, d->entries + (uint64_t)i * d->size, e, d->size))
			return -1;
		char *k = str_object(v, d->kind == 0 ? e[1] : e[0]);
		bool found = k && strcmp(k, name) == 0;
		free(k);
		if (found)
			return i;
	}
	return -1;
}

/* The value of key `name` (a str) among the first `max` entries of the
 * open dict d, or 0. */
static uint64_t
entries_get_str(struct pyvalue *v, const struct dict_entries *d, const char *name, int64_t max)
{
	int64_t i = entries_index(v, d, name, max);
	uint64_t key, value;
	return i >= 0 && dict_entry(v, d, false, i, &key, &value) ? value : 0;
}

/* The value of key `name` (a str) in the dict at dict, or 0: a class's
 * or a module's own dict, its first entries. */
static uint64_t
dict_get_str(struct pyvalue *v, uint64_t dict, const char *name)
{
	struct dict_entries d;
	return dict_open(v, dict, false, &d) ? entries_get_str(v, &d, name, TYPE_DICT_ENTRIES) : 0;
}

/* A class's name as repr() writes it: its __module__ (unless builtins)
 * and __qualname__; tp_name when they cannot be read. */
static void
class_name(struct pyvalue *v, uint64_t type, const char *tp_name, char *out, size_t len)
{
	uint64_t qual_ptr = 0, dict = 0;
	struct tt_error err;
	char *qual = NULL, *mod = NULL;
	if (!remote_read_u64(v->mem, type + v->l->heap_qualname, &qual_ptr, &err))
		qual = str_object(v, qual_ptr);
	if (!remote_read_u64(v->mem, type + v->l->type_dict, &dict, &err) && dict)
		mod = str_object(v, dict_get_str(v, dict, "__module__"));
	bool with_module = mod && strcmp(mod, "builtins") != 0;
	if (snprintf(out, len, "%s%s%s", with_module ? mod : "", with_module ? "." : "",
		     qual ? qual : tp_name) >= (int)len)
		memcpy(out + len - 4, "...", 4);   /* cut: say so */
	free(qual);
	free(mod);
}

/* The C string that the pointer at ptr_addr points to, into out (len >
 * 8): its length, 0 when it cannot be read, is empty, does not end within
 * len or has bytes other than printable ASCII (a type's tp_name, a
 * built-in function's name). */
static size_t
c_name(struct pyvalue *v, uint64_t ptr_addr, char *out, size_t len)
{
	uint64_t ptr;
	struct tt_error err;
	if (!ptr_addr || (ptr_addr & 7) || remote_read_u64(v->mem, ptr_addr, &ptr, &err) || !ptr)
		return 0;
	/* the name may end just before an unmapped page */
	size_t got = 0;
	for (size_t want = len; want >= 8 && !got; want /= 2)
		if (remote_read(v->mem, ptr, out, want, &err) == TT_OK)
			got = want;
	if (!got)
		return 0;
	size_t n = strnlen(out, got);
	if (n == 0 || n == got)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] >= 0x7f)
			return 0;
	return n;
}

/* What the type object at addr is: a built-in type is a static type (not
 * a heap type, which a class statement makes) of one of their names. */
static const struct type_info *
type_of(struct pyvalue *v, uint64_t type)
{
	struct type_info *ti = keytab_find(&v->types, type);
	if (ti)
		return ti;
	uint64_t flags;
	char name[TYPE_NAME_MAX];
	struct tt_error err;
	size_t n = c_name(v, type + v->l->tp_name, name, sizeof name);
	if (!n || remote_read_u64(v->mem, type + v->l->type_flags, &flags, &err))
		return NULL;
	if (v->types.count >= TYPES_KEPT)
		keytab_clear(&v->types);
	bool added;
	ti = keytab_put(&v->types, type, &added);
	if (!ti)
		return NULL;
	ti->kind = K_OTHER;
	memcpy(ti->name, name, n + 1);
	if (!(flags & PY_TPFLAGS_HEAPTYPE)) {
		for (size_t i = 0; i < sizeof BUILTINS / sizeof BUILTINS[0]; i++)
			if (strcmp(name, BUILTINS[i].name) == 0)
				ti->kind = BUILTINS[i].kind;
		return ti;
	}
	/* named after the entry is in: a class whose __module__ is itself
	 * an instance of it does not loop */
	char full[TYPE_NAME_MAX];
	class_name(v, type, name, full, sizeof full);
	if ((ti = keytab_find(&v->types, type)) != NULL)
		memcpy(ti->name, full, sizeof full);
	return ti;
}

static void render(struct pyvalue *v, uint64_t addr, unsigned depth, struct textbuf *t);
static void render_as(struct pyvalue *v, uint64_t addr, const struct type_info *ti,
		      unsigned depth, struct textbuf *t);

/* The type of the object at addr (read within the value's budget), or
 * NULL when it has none that reads as a type. */
static const struct type_info *
object_type(struct pyvalue *v, uint64_t addr)
{
	uint64_t type;
	if (addr == 0 || (addr & 7) || !rd_u64(v, addr + v->l->ob_type, &type))
		return NULL;
	return type_of(v, type);
}
static bool repr_object(struct pyvalue *v, uint64_t addr, struct textbuf *t, char *type,
			size_t type_len);
static bool repr_within(struct pyvalue *v, uint64_t addr, size_t budget, char *text, char *type,
			size_t type_len);

/* An int of n 30-bit digits (least significant first) in decimal. */
static void
put_int(struct textbuf *t, uint32_t *d, size_t n, bool negative)
{
	/* base 10^9 chunks, least significant first */
	uint32_t chunks[INT_MAX_DIGITS * 30 / 29 + 2];
	size_t nc = 0;
	while (n > 0 && d[n - 1] == 0)
		n--;
	while (n > 0) {
		uint64_t rem = 0;
		for (size_t i = n; i-- > 0;) {
			uint64_t cur = (rem << PYINT_DIGIT_BITS) | d[i];
			d[i] = (uint32_t)(cur / 1000000000u);
			rem = cur % 1000000000u;
		}
		chunks[nc++] = (uint32_t)rem;
		while (n > 0 && d[n - 1] == 0)
			n--;
	}
	char buf[16];
	size_t digits = nc ? (size_t)snprintf(buf, sizeof buf, "%u", chunks[nc - 1]) + 9 * (nc - 1)
			   : 1;
	if (negative)
		textbuf_puts(t, "-");
	if (nc == 0) {
		textbuf_puts(t, "0");
		return;
	}
	textbuf_printf(t, "%u", chunks[nc - 1]);
	for (size_t i = nc - 1; i-- > 0;) {
		if (t->len + 40 >= t->cap) {
			textbuf_printf(t, "... (%zu digits)", digits);
			return;
		}
		textbuf_printf(t, "%09u", chunks[i]);
	}
}

static void
render_int(struct pyvalue *v, uint64_t addr, bool as_bool, struct textbuf *t)
{
	const struct py_layout *l = v->l;
	uint64_t size;
	if (!rd_u64(v, addr + l->long_size, &size)) {
		textbuf_puts(t, "<changing>");
		return;
	}
	struct pyint_shape sh;
	if (!pyint_shape(l, size, &sh)) {
		textbuf_puts(t, "<changing>");   /* memory being freed or reused */
		return;
	}
	uint64_t n = sh.ndigits;
	if (n > INT_SANE_DIGITS) {
		textbuf_puts(t, "<changing>");
		return;
	}
	if (as_bool) {
		textbuf_puts(t, n ? "True" : "False");
		return;
	}
	if (n > INT_MAX_DIGITS) {
		textbuf_printf(t, "<int of %llu bits>", (unsigned long long)n * PYINT_DIGIT_BITS);
		return;
	}
	uint32_t d[INT_MAX_DIGITS];
	if (n && !rd(v, addr + l->long_digits, d, n * 4)) {
		textbuf_puts(t, "<changing>");
		return;
	}
	if (!pyint_digits_valid(d, n)) {
		textbuf_puts(t, "<changing>");
		return;
	}
	put_int(t, d, n, sh.negative);
}

/* repr(float): the fewest significant digits that read back the same,
 * fixed notation for decimal exponents -4 to 15, else d.ddde+XX. */
static void
put_float(struct textbuf *t, double x)
{
	if (isnan(x)) {
		textbuf_puts(t, "nan");
		return;
	}
	if (isinf(x)) {
		textbuf_puts(t, x < 0 ? "-inf" : "inf");
		return;
	}
	char e[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof e, "%.*e", prec - 1, x);
		if (strtod(e, NULL) == x)
			break;
	}
	/* e: [-]d[.ddd]e[+-]XX */
	char digits[24];
	size_t nd = 0;
	const char *p = e;
	bool negative = *p == '-';
	if (negative)
		p++;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	int exp = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (negative)
		textbuf_puts(t, "-");
	if (exp >= -4 && exp < 16) {
		if (exp < 0) {
			textbuf_puts(t, "0.");
			for (int i = -1; i > exp; i--)
				textbuf_puts(t, "0");
			textbuf_puts(t, digits);
		} else {
			for (int i = 0; i <= exp; i++)
				textbuf_put(t, (size_t)i < nd ? &digits[i] : "0", 1);
			textbuf_puts(t, ".");
			textbuf_puts(t, (size_t)exp + 1 < nd ? digits + exp + 1 : "0");
		}
	} else {
		textbuf_put(t, digits, 1);
		if (nd > 1) {
			textbuf_puts(t, ".");
			textbuf_puts(t, digits + 1);
		}
		textbuf_printf(t, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
	}
}

/* Code points repr() escapes though they are not ASCII control characters:
 * the Latin-1 controls and no-break space, and the common non-printable
 * (format, separator, surrogate, private-use, noncharacter) ranges. */
static bool
unprintable(uint32_t c)
{
	return (c >= 0x7f && c <= 0xa0) || c == 0xad || (c >= 0x200b && c <= 0x200f) ||
	       (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x206f) || c == 0xfeff ||
	       (c >= 0xd800 && c <= 0xf8ff) || (c >= 0xfff0 && c <= 0xfffb) ||
	       (c & 0xfffe) == 0xfffe || c >= 0xe0000;
}

static void
put_utf8(struct textbuf *t, uint32_t c)
{
	char b[4];
	size_t n;
	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	textbuf_put(t, b, n);
}

/* One character of a str (bytes: is_bytes) the way repr() writes it
 * between `quote`s. */
static void
put_escaped(struct textbuf *t, uint32_t c, char quote, bool is_bytes)
{
	if (c == '\\' || c == (uint32_t)quote) {
		char b[2] = {'\\', (char)c};
		textbuf_put(t, b, 2);
	} else if (c == '\t') {
		textbuf_puts(t, "\\t");
	} else if (c == '\n') {
		textbuf_puts(t, "\\n");
	} else if (c == '\r') {
		textbuf_puts(t, "\\r");
	} else if (c < 0x20 || c == 0x7f || (is_bytes && c >= 0x80)) {
		textbuf_printf(t, "\\x%02x", c);
	} else if (c < 0x7f) {
		char b = (char)c;
		textbuf_put(t, &b, 1);
	} else if (c > 0x10ffff || unprintable(c)) {
		if (c <= 0xff)
			textbuf_printf(t, "\\x%02x", c);
		else if (c <= 0xffff)
			textbuf_printf(t, "\\u%04x", c);
		else
			textbuf_printf(t, "\\U%08x", c);
	} else {
		put_utf8(t, c);
	}
}

static uint32_t
char_at(const uint8_t *data, unsigned kind, size_t i)
{
	if (kind == 1)
		return data[i];
	if (kind == 2) {
		uint16_t c;
		memcpy(&c, data + 2 * i, 2);
		return c;
	}
	uint32_t c;
	memcpy(&c, data + 4 * i, 4);
	return c;
}

/* The quotes repr() picks: single, unless the text has one and no double. */
static char
pick_quote(const uint8_t *data, unsigned kind, size_t n)
{
	bool single = false, dbl = false;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = char_at(data, kind, i);
		single |= c == '\'';
		dbl |= c == '"';
	}
	return single && !dbl ? '"' : '\'';
}

/* Characters of a str or bytes shown: what the text still has room for. */
static size_t
chars_shown(const struct pyvalue *v, const struct textbuf *t, uint64_t length)
{
	size_t room = v->lim.chars > t->len ? v->lim.chars - t->len : 1;
	if (room > TEXT_READ_MAX)
		room = TEXT_READ_MAX;
	return length < room ? (size_t)length : room;
}

static void
put_text(struct pyvalue *v, struct textbuf *t, const uint8_t *data, unsigned kind, size_t shown,
	 uint64_t length, bool is_bytes)
{
	char quote = pick_quote(data, kind, shown);
	if (is_bytes)
		textbuf_puts(t, "b");
	textbuf_put(t, &quote, 1);
	for (size_t i = 0; i < shown && t->len + 12 < t->cap; i++)
		put_escaped(t, char_at(data, kind, i), quote, is_bytes);
	textbuf_put(t, &quote, 1);
	if (shown < length)
		textbuf_printf(t, "... (%llu %s)", (unsigned long long)length, is_bytes ? "bytes" : "chars");
	(void)v;
}

static void
render_str(struct pyvalue *v, uint64_t addr, struct textbuf *t)
{
	const struct py_layout *l = v->l;
	uint8_t hdr[128];
	struct pystr_shape shape;
	struct tt_error err;
	if (l->str_compact_size > sizeof hdr || !rd(v, addr, hdr, l->str_compact_size) ||
	    pystr_parse_header_upto(l, hdr, l->str_compact_size, UINT64_MAX >> 8, &shape, &err)) {
		textbuf_puts(t, "<changing>");
		return;
	}
	size_t shown = chars_shown(v, t, shape.length);
	uint8_t *data = malloc(shown * shape.kind + 1);
	if (!data || (shown && !rd(v, addr + shape.data_offset, data, shown * shape.kind)))
		textbuf_puts(t, "<changing>");
	else
		put_text(v, t, data, shape.kind, shown, shape.length, false);
	free(data);
}

static void
render_bytes(struct pyvalue *v, uint64_t addr, bool bytearray, struct textbuf *t)
{
	const struct py_layout *l = v->l;
	uint64_t size, start = addr + l->bytes_sval;
	if (!rd_u64(v, addr + (bytearray ? l->bytearray_size : l->bytes_size), &size) ||
	    (int64_t)size < 0 || (bytearray && !rd_u64(v, addr + l->bytearray_start, &start))) {
		textbuf_puts(t, "<changing>");
		return;
	}
	if (bytearray)
		textbuf_puts(t, "bytearray(");
	size_t shown = chars_shown(v, t, size);
	uint8_t *data = malloc(shown + 1);
	if (!data || (shown && !rd(v, start, data, shown)))
		textbuf_puts(t, "<changing>");
	else
		put_text(v, t, data, 1, shown, size, true);
	free(data);
	if (bytearray)
		textbuf_puts(t, ")");
}

/* Has this container shown what it may? Then say how many it holds. */
static bool
enough(const struct pyvalue *v, const struct textbuf *t, unsigned shown, uint64_t total)
{
	if (shown < v->lim.items && t->len < v->lim.chars && v->budget >= 64)
		return false;
	(void)total;
	return true;
}

static void
put_rest(struct textbuf *t, unsigned shown, uint64_t total)
{
	if (shown < total)
		textbuf_printf(t, "%s... (%llu item%s)", shown ? ", " : "", (unsigned long long)total,
		     total == 1 ? "" : "s");
}

/* Items of a tuple or list: `n` pointers at `items`. */
static void
render_items(struct pyvalue *v, uint64_t items, uint64_t n, unsigned depth, struct textbuf *t)
{
	unsigned shown = 0;
	for (; shown < n && !enough(v, t, shown, n); shown++) {
		uint64_t item;
		if (shown)
			textbuf_puts(t, ", ");
		if (!rd_u64(v, items + 8ull * shown, &item))
			textbuf_puts(t, "<changing>");
		else
			render(v, item, depth + 1, t);
	}
	put_rest(t, shown, n);
}

static void
render_sequence(struct pyvalue *v, uint64_t addr, enum kind kind, unsigned depth, struct textbuf *t)
{
	const struct py_layout *l = v->l;
	bool tuple = kind == K_TUPLE;
	uint64_t n, items = addr + l->tuple_item;
	if (!rd_u64(v, addr + (tuple ? l->tuple_size : l->list_size), &n) || (int64_t)n < 0 ||
	    (!tuple && !rd_u64(v, addr + l->list_item, &items))) {
		textbuf_puts(t, "<changing>");
		return;
	}
	textbuf_puts(t, tuple ? "(" : "[");
	if (n && depth > v->lim.depth)
		put_rest(t, 0, n);
	else
		render_items(v, items, n, depth, t);
	textbuf_puts(t, tuple ? (n == 1 ? ",)" : ")") : "]");
}

static void
render_dict(struct pyvalue *v, uint64_t addr, unsigned depth, struct textbuf *t)
{
	uint64_t used;
	struct dict_entries d;
	if (!rd_u64(v, addr + v->l->dict_used, &used) || (int64_t)used < 0 ||
	    !dict_open(v, addr, true, &d)) {
		textbuf_puts(t, "<changing>");
		return;
	}
	textbuf_puts(t, "{");
	if (used && depth > v->lim.depth) {
		put_rest(t, 0, used);
		textbuf_puts(t, "}");
		return;
	}
	unsigned shown = 0;
	for (int64_t i = 0; i < d.n && !enough(v, t, shown, used); i++) {
		uint64_t key, value;
		if (!dict_entry(v, &d, true, i, &key, &value)) {
			textbuf_puts(t, shown ? ", <changing>" : "<changing>");
			break;
		}
		if (!key || !value)
			continue;   /* deleted */
		if (shown++)
			textbuf_puts(t, ", ");
		render(v, key, depth + 1, t);
		textbuf_puts(t, ": ");
		render(v, value, depth + 1, t);
	}
	put_rest(t, shown, used);
	textbuf_puts(t, "}");
}

static void
render_set(struct pyvalue *v, uint64_t addr, bool frozen, unsigned depth, struct textbuf *t)
{
	const struct py_layout *l = v->l;
	uint64_t used, mask, table;
	if (!rd_u64(v, addr + l->set_used, &used) || !rd_u64(v, addr + l->set_mask, &mask) ||
	    !rd_u64(v, addr + l->set_table, &table) || (int64_t)used < 0 ||
	    (mask & (mask + 1)) != 0 || mask > (1ull << 40)) {
		textbuf_puts(t, "<changing>");
		return;
	}
	const char *name = frozen ? "frozenset" : "set";
	if (used == 0) {
		textbuf_printf(t, "%s()", name);
		return;
	}
	if (frozen)
		textbuf_puts(t, "frozenset(");
	textbuf_puts(t, "{");
	unsigned shown = 0;
	if (depth > v->lim.depth) {
		put_rest(t, 0, used);
	} else {
		/* entries: key, hash; empty slots NULL, removed ones a dummy */
		for (uint64_t i = 0; i <= mask && shown < used && !enough(v, t, shown, used); i++) {
			uint64_t key;
			if (!rd_u64(v, table + 16 * i, &key)) {
				textbuf_puts(t, shown ? ", <changing>" : "<changing>");
				break;
			}
			const struct type_info *ti;
			if (!key || ((ti = object_type(v, key)) && ti->kind == K_DUMMY))
				continue;
			if (shown++)
				textbuf_puts(t, ", ");
			render(v, key, depth + 1, t);
		}
		put_rest(t, shown, used);
	}
	textbuf_puts(t, frozen ? "})" : "}");
}

static void
render(struct pyvalue *v, uint64_t addr, unsigned depth, struct textbuf *t)
{
	const struct type_info *ti = object_type(v, addr);
	if (ti)
		render_as(v, addr, ti, depth, t);
	else
		textbuf_puts(t, "<changing>");
}

/* A bound method as repr() writes it: its function's qualified name and
 * the repr of what it is bound to. */
static void
render_method(struct pyvalue *v, uint64_t addr, unsigned depth, struct textbuf *t)
{
	uint64_t func = 0, self = 0, qual_ptr = 0;
	const struct type_info *fi;
	if (!rd_u64(v, addr + v->l->method_func, &func) || !rd_u64(v, addr + v->l->method_self, &self)) {
		textbuf_puts(t, "<changing>");
		return;
	}
	char *qual = (fi = object_type(v, func)) && fi->kind == K_FUNCTION &&
				     rd_u64(v, func + v->l->func_qualname, &qual_ptr)
			     ? str_object(v, qual_ptr)
			     : NULL;
	textbuf_printf(t, "<bound method %s of ", qual ? qual : "?");
	free(qual);
	if (depth > v->lim.depth)
		textbuf_puts(t, "...");   /* bound to a method bound to ...: cut as containers are */
	else
		render(v, self, depth + 1, t);
	textbuf_puts(t, ">");
}

/* A built-in function, or a built-in method and the type it is bound to. */
static void
render_cfunction(struct pyvalue *v, uint64_t addr, struct textbuf *t)
{
	uint64_t def = 0, self = 0;
	char name[TYPE_NAME_MAX], of[TYPE_NAME_MAX];
	const struct type_info *si = NULL;
	if (!rd_u64(v, addr + v->l->cfunc_ml, &def) || !rd_u64(v, addr + v->l->cfunc_self, &self) ||
	    !c_name(v, def + PY_METHODDEF_NAME, name, sizeof name) ||
	    (self && !(si = object_type(v, self)))) {
		textbuf_puts(t, "<changing>");
		return;
	}
	uint64_t self_type = 0;
	if (!self || si->kind == K_MODULE)
		textbuf_printf(t, "<built-in function %s>", name);
	else if (rd_u64(v, self + v->l->ob_type, &self_type) &&
		 c_name(v, self_type + v->l->tp_name, of, sizeof of))
		textbuf_printf(t, "<built-in method %s of %s object at 0x%llx>", name, of,
		     (unsigned long long)self);
	else
		textbuf_puts(t, "<changing>");
}

/* A module as importlib's repr writes it: built in, frozen, or from its
 * file. */
static void
render_module(struct pyvalue *v, uint64_t addr, struct textbuf *t)
{
	uint64_t dict = 0, name, loader, file;
	const struct type_info *ni;
	if (!rd_u64(v, addr + v->l->module_dict, &dict) || !dict ||
	    !(name = dict_get_str(v, dict, "__name__")) || !(ni = object_type(v, name)) ||
	    ni->kind != K_STR) {
		textbuf_puts(t, "<changing>");
		return;
	}
	textbuf_puts(t, "<module ");
	render_str(v, name, t);
	/* the loader of a built-in or frozen module is its importer class */
	const struct type_info *li = (loader = dict_get_str(v, dict, "__loader__")) != 0
					     ? object_type(v, loader)
					     : NULL;
	const struct type_info *lc = li && li->kind == K_TYPE ? type_of(v, loader) : NULL;
	const struct type_info *fi = (file = dict_get_str(v, dict, "__file__")) != 0
					     ? object_type(v, file)
					     : NULL;
	if (lc && strcmp(lc->name, "_frozen_importlib.BuiltinImporter") == 0) {
		textbuf_puts(t, " (built-in)");
	} else if (lc && strcmp(lc->name, "_frozen_importlib.FrozenImporter") == 0) {
		textbuf_puts(t, " (frozen)");
	} else if (fi && fi->kind == K_STR) {
		textbuf_puts(t, " from ");
		render_str(v, file, t);
	}
	textbuf_puts(t, ">");
}

/* The object at addr, of type ti, as repr() writes it. */
static void
render_as(struct pyvalue *v, uint64_t addr, const struct type_info *ti, unsigned depth,
	  struct textbuf *t)
{
	switch (ti->kind) {
	case K_NONE: textbuf_puts(t, "None"); break;
	case K_BOOL: render_int(v, addr, true, t); break;
	case K_INT: render_int(v, addr, false, t); break;
	case K_FLOAT: {
		double x;
		if (rd(v, addr + v->l->float_value, &x, 8))
			put_float(t, x);
		else
			textbuf_puts(t, "<changing>");
		break;
	}
	case K_STR: render_str(v, addr, t); break;
	case K_BYTES: render_bytes(v, addr, false, t); break;
	case K_BYTEARRAY: render_bytes(v, addr, true, t); break;
	case K_TUPLE:
	case K_LIST: render_sequence(v, addr, ti->kind, depth, t); break;
	case K_DICT: render_dict(v, addr, depth, t); break;
	case K_SET:
	case K_FROZENSET: render_set(v, addr, ti->kind == K_FROZENSET, depth, t); break;
	case K_FUNCTION: {
		uint64_t qual_ptr;
		char *qual = rd_u64(v, addr + v->l->func_qualname, &qual_ptr) ? str_object(v, qual_ptr)
									     : NULL;
		textbuf_printf(t, "<function %s at 0x%llx>", qual ? qual : "?", (unsigned long long)addr);
		free(qual);
		break;
	}
	case K_TYPE: {
		const struct type_info *self = type_of(v, addr);
		if (self)
			textbuf_printf(t, "<class '%s'>", self->name);
		else
			textbuf_puts(t, "<changing>");
		break;
	}
	case K_METHOD: render_method(v, addr, depth, t); break;
	case K_CFUNCTION: render_cfunction(v, addr, t); break;
	case K_MODULE: render_module(v, addr, t); break;
	case K_CELL:
	case K_DUMMY:
	case K_OTHER:
		textbuf_printf(t, "<%s object at 0x%llx>", ti->name, (unsigned long long)addr);
		break;
	}
}

bool
pyvalue_repr(struct pyvalue *v, uint64_t addr, char *text, char *type, size_t type_len)
{
	return repr_within(v, addr, v->lim.bytes, text, type, type_len);
}

/* pyvalue_repr reading at most `budget` bytes; what it read is taken from
 * the frame's budget. */
static bool
repr_within(struct pyvalue *v, uint64_t addr, size_t budget, char *text, char *type,
	    size_t type_len)
{
	struct textbuf t;
	textbuf_init(&t, text, PYVALUE_TEXT_MAX);
	type[0] = '\0';
	v->budget = budget;
	bool ok = repr_object(v, addr, &t, type, type_len);
	size_t used = budget - v->budget;
	v->frame_left = v->frame_left > used ? v->frame_left - used : 0;
	return ok;
}

static bool
repr_object(struct pyvalue *v, uint64_t addr, struct textbuf *t, char *type, size_t type_len)
{
	const struct type_info *ti = object_type(v, addr);
	if (!ti) {
		textbuf_puts(t, "<changing>");
		return false;
	}
	snprintf(type, type_len, "%s", ti->name);
	render_as(v, addr, ti, 0, t);
	return true;
}

/* The locals' names, kinds and objects, without their values. */
static int
list_locals(struct pyvalue *v, uint64_t frame_addr, uint64_t code_addr, struct pylocal *out,
	    size_t max, struct tt_error *err)
{
	const struct py_layout *l = v->l;
	if (!l->has_values)
		return tt_fail(err, TT_EVERSION, 0, "this interpreter's table gives no locals"), -1;
	int32_t flags, argcount, kwonly;
	uint64_t names, kinds, n;
	if (remote_read(v->mem, code_addr + l->co_flags, &flags, 4, err) ||
	    remote_read(v->mem, code_addr + l->co_argcount, &argcount, 4, err) ||
	    remote_read(v->mem, code_addr + l->co_kwonlyargcount, &kwonly, 4, err) ||
	    remote_read_u64(v->mem, code_addr + l->co_localsplusnames, &names, err) ||
	    remote_read_u64(v->mem, code_addr + l->co_localspluskinds, &kinds, err) ||
	    remote_read_u64(v->mem, names + l->tuple_size, &n, err))
		return -1;
	if (argcount < 0 || kwonly < 0 || n > 65535)
		return tt_fail(err, TT_EBADMEM, 0, "implausible code object at 0x%llx",
			       (unsigned long long)code_addr), -1;
	size_t count = n < PYLOCALS_MAX ? (size_t)n : PYLOCALS_MAX;
	uint64_t name_ptrs[PYLOCALS_MAX];
	uint8_t kind[PYLOCALS_MAX];
	uint64_t slots[PYLOCALS_MAX];
	if (count && (remote_read(v->mem, names + l->tuple_item, name_ptrs, count * 8, err) ||
		      remote_read(v->mem, kinds + l->bytes_sval, kind, count, err) ||
		      remote_read(v->mem, frame_addr + l->fr_localsplus, slots, count * 8, err)))
		return -1;
	v->frame_left = v->lim.frame_bytes;
	uint64_t nargs = (uint64_t)argcount + (uint64_t)kwonly + !!(flags & PY_CO_VARARGS) +
			 !!(flags & PY_CO_VARKEYWORDS);
	size_t k = 0;
	for (size_t i = 0; i < count && k < max; i++) {
		if (kind[i] & PY_CO_FAST_HIDDEN)
			continue;   /* an inlined comprehension's, not the function's */
		struct pylocal *p = &out[k++];
		char *name = NULL;
		struct tt_error e;
		if (pystr_read(v->mem, l, name_ptrs[i], &name, &e) == TT_OK) {
			snprintf(p->name, sizeof p->name, "%s", name);
			free(name);
		} else {
			snprintf(p->name, sizeof p->name, "<local %zu>", i);
		}
		p->kind = i < nargs ? PYLOCAL_ARG : (kind[i] & PY_CO_FAST_CELL) ? PYLOCAL_CELL
			  : (kind[i] & PY_CO_FAST_FREE) ? PYLOCAL_FREE : PYLOCAL_LOCAL;
		p->slot = (unsigned)i;
		p->addr = slots[i] & ~l->tag_mask;
	}
	return (int)k;
}

/* Does the frame at frame_addr still run the code at code_addr? */
static bool
frame_runs(struct pyvalue *v, uint64_t frame_addr, uint64_t code_addr)
{
	uint64_t code;
	struct tt_error err;
	return remote_read_u64(v->mem, frame_addr + v->l->fr_executable, &code, &err) == TT_OK &&
	       (code & ~v->l->tag_mask) == code_addr;
}

static void
local_value(struct pyvalue *v, uint64_t frame_addr, const struct pylocal *local, char *text,
	    char *type, size_t type_len)
{
	if (!local->addr) {
		snprintf(text, PYVALUE_TEXT_MAX, "<unbound>");
		type[0] = '\0';
		return;
	}
	if (v->frame_left < 256) {
		snprintf(text, PYVALUE_TEXT_MAX, "<not read: %zu KB read for this frame already>",
			 v->lim.frame_bytes >> 10);
		type[0] = '\0';
		return;
	}
	uint64_t addr = local->addr;
	/* a cell variable holds its cell (an argument made one, a free
	 * variable the closure's): show what is in it */
	if (local->kind != PYLOCAL_LOCAL) {
		uint64_t tp, inner;
		struct tt_error err;
		v->budget = v->lim.bytes;
		const struct type_info *ti;
		if (!remote_read_u64(v->mem, addr + v->l->ob_type, &tp, &err) &&
		    (ti = type_of(v, tp)) && ti->kind == K_CELL) {
			if (remote_read_u64(v->mem, addr + v->l->cell_ref, &inner, &err)) {
				snprintf(text, PYVALUE_TEXT_MAX, "<changing>");
				type[0] = '\0';
				return;
			}
			if (!inner) {
				snprintf(text, PYVALUE_TEXT_MAX, "<unbound>");
				type[0] = '\0';
				return;
			}
			addr = inner;
		}
	}
	/* Read twice, and the frame still holding the object after: what was
	 * read is what the variable held. A counter's slot alternates between
	 * two addresses, each int freed and made again at one of them: the
	 * slot alone could match while its object was being remade. */
	char again[PYVALUE_TEXT_MAX];
	char type2[160];
	size_t budget = v->lim.bytes < v->frame_left / 2 ? v->lim.bytes : v->frame_left / 2;
	repr_within(v, addr, budget, text, type, type_len);
	repr_within(v, addr, budget, again, type2, sizeof type2);
	uint64_t now;
	struct tt_error err;
	if (strcmp(text, again) != 0 ||
	    remote_read_u64(v->mem, frame_addr + v->l->fr_localsplus + 8ull * local->slot, &now,
			    &err) ||
	    (now & ~v->l->tag_mask) != local->addr) {
		snprintf(text, PYVALUE_TEXT_MAX, "<changing>");
		type[0] = '\0';
	}
}

int
pylocals_read(struct pyvalue *v, uint64_t frame_addr, uint64_t code_addr, struct pylocal *out,
	      size_t max, struct tt_error *err)
{
	int n = list_locals(v, frame_addr, code_addr, out, max, err);
	for (int i = 0; i < n; i++)
		local_value(v, frame_addr, &out[i], out[i].repr, out[i].type, sizeof out[i].type);
	if (n >= 0 && !frame_runs(v, frame_addr, code_addr))
		return tt_fail(err, TT_EBADMEM, 0, "the frame returned while its locals were read"),
		       -1;
	return n;
}

/* ---------------------------------------------------------------------
 * What objects hold, for readers other than repr (pyvalue.h)
 * ------------------------------------------------------------------- */

char *
pyvalue_str(struct pyvalue *v, uint64_t addr)
{
	return str_object(v, addr);
}

/* An int's value from its size field and the digits after it (avail
 * bytes of them at digits): false when it is negative, past 64 bits, or
 * its digits are not all there. */
static bool
long_value(const struct py_layout *l, uint64_t size, const uint8_t *digits, size_t avail,
	   uint64_t *out)
{
	struct pyint_shape sh;
	uint32_t d[3];
	if (!pyint_shape(l, size, &sh) || sh.negative || sh.ndigits > 3 || sh.ndigits * 4 > avail)
		return false;
	memcpy(d, digits, sh.ndigits * 4);
	return pyint_magnitude(d, sh.ndigits, out);
}

/* How many digits an int with this size field has (at most 3 asked). */
static size_t
long_digit_bytes(const struct py_layout *l, uint64_t size)
{
	struct pyint_shape sh;
	return pyint_shape(l, size, &sh) && sh.ndigits <= 3 ? sh.ndigits * 4 : 0;
}

bool
pyvalue_u64(struct pyvalue *v, uint64_t addr, uint64_t *out)
{
	const struct py_layout *l = v->l;
	const struct type_info *ti;
	uint64_t type, size;
	uint8_t d[12];
	struct tt_error err;
	if (!addr || (addr & 7) || remote_read_u64(v->mem, addr + l->ob_type, &type, &err) ||
	    !(ti = type_of(v, type)) || ti->kind != K_INT ||
	    remote_read_u64(v->mem, addr + l->long_size, &size, &err))
		return false;
	size_t nd = long_digit_bytes(l, size);
	if (nd && remote_read(v->mem, addr + l->long_digits, d, nd, &err))
		return false;
	return long_value(l, size, d, nd, out);
}

static bool
gather(void *ctx, uint64_t key, uint64_t value)
{
	struct pyvalue_items *g = ctx;
	if ((g->n == g->cap && !grow_array((void **)&g->keys, &g->cap, g->n + 1, sizeof *g->keys)) ||
	    (g->n == g->vcap &&
	     !grow_array((void **)&g->values, &g->vcap, g->n + 1, sizeof *g->values)))
		return false;
	g->keys[g->n] = key;
	g->values[g->n++] = value;
	return true;
}

bool
pyvalue_dict_items(struct pyvalue *v, uint64_t dict, unsigned max, struct pyvalue_items *out)
{
	out->n = 0;
	return pyvalue_dict_each(v, dict, max, gather, out);
}

void
pyvalue_items_free(struct pyvalue_items *items)
{
	free(items->keys);
	free(items->values);
	*items = (struct pyvalue_items){0};
}

uint64_t
pyvalue_dict_get(struct pyvalue *v, uint64_t dict, const char *key, unsigned max)
{
	/* every key's text in a few reads (sys.modules holds hundreds) */
	struct pyvalue_items g = {0};
	uint64_t found = 0;
	char **keys = NULL;
	if (pyvalue_dict_items(v, dict, max, &g) && g.n &&
	    (keys = calloc(g.n, sizeof *keys)) != NULL) {
		pyvalue_str_many(v, g.keys, g.n, keys);
		for (uint32_t i = 0; i < g.n; i++) {
			if (!found && keys[i] && strcmp(keys[i], key) == 0)
				found = g.values[i];
			free(keys[i]);
		}
	}
	free(keys);
	pyvalue_items_free(&g);
	return found;
}

/* Entries read per backend call by pyvalue_dict_each. */
#define DICT_CHUNK 256

bool
pyvalue_dict_each(struct pyvalue *v, uint64_t dict, unsigned max, pyvalue_entry_fn *fn,
		  void *ctx)
{
	struct dict_entries d;
	if (!dict_open(v, dict, false, &d))
		return false;
	int64_t n = d.n < (int64_t)max ? d.n : (int64_t)max;
	uint64_t e[DICT_CHUNK * 3], vals[DICT_CHUNK];
	for (int64_t at = 0; at < n; at += DICT_CHUNK) {
		int64_t k = n - at < DICT_CHUNK ? n - at : DICT_CHUNK;
		struct remote_seg seg[2] = {
			{d.entries + (uint64_t)at * d.size, e, (size_t)k * d.size},
			{d.values + v->l->dict_values_array + 8ull * (uint64_t)at, vals, (size_t)k * 8},
		};
		size_t want = d.values ? 2 : 1, got;
		struct tt_error err;
		if (remote_readv(v->mem, seg, want, &got, &err) != TT_OK || got != want)
			return false;
		size_t words = d.size / 8;
		for (int64_t i = 0; i < k; i++) {
			const uint64_t *entry = e + (size_t)i * words;
			uint64_t key = d.kind == 0 ? entry[1] : entry[0];
			uint64_t value = d.values ? vals[i] : d.kind == 0 ? entry[2] : entry[1];
			if (key && value && !fn(ctx, key, value))
				return true;
		}
	}
	return true;
}

/* Read each of segs into its own buffer: ok[i] says whether segs[i] was
 * read in full (a segment that was not does not stop the rest). */
static void
read_each(struct pyvalue *v, struct remote_seg *segs, size_t n, bool *ok)
{
	size_t i = 0;
	while (i < n) {
		size_t got = 0;
		struct tt_error err;
		if (remote_readv(v->mem, segs + i, n - i, &got, &err) != TT_OK) {
			memset(ok + i, 0, (n - i) * sizeof *ok);
			return;
		}
		for (size_t k = 0; k < got; k++)
			ok[i + k] = true;
		if (i + got < n)
			ok[i + got] = false;
		i += got + 1;
	}
}

/* Windows of len bytes, one per object, from its address + off, read in
 * a few backend calls: window i at buf + i * len, read[i] whether it was
 * read whole (never for a NULL or misaligned address). */
struct windows {
	uint8_t *buf;
	bool *read;
	size_t len;
};

/* false when memory is short (nothing read: read them one by one) */
static bool
windows_read(struct pyvalue *v, const uint64_t *addrs, size_t n, int64_t off, size_t len,
	     struct windows *w)
{
	size_t m = n ? n : 1;
	w->len = len;
	w->buf = malloc(m * len);
	w->read = malloc(m * sizeof *w->read);
	struct remote_seg *segs = malloc(m * sizeof *segs);
	if (!w->buf || !w->read || !segs) {
		free(segs);
		free(w->buf);
		free(w->read);
		w->buf = NULL;
		w->read = NULL;
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		bool valid = addrs[i] && !(addrs[i] & 7);
		segs[i] = (struct remote_seg){addrs[i] + (uint64_t)off, w->buf + i * len,
					      valid ? len : 0};
	}
	read_each(v, segs, n, w->read);
	for (size_t i = 0; i < n; i++)
		w->read[i] = w->read[i] && segs[i].len;
	free(segs);
	return true;
}

static void
windows_free(struct windows *w)
{
	free(w->buf);
	free(w->read);
}

/* The type of the object whose ob_type field holds type, if it is of
 * kind k. */
static bool
is_kind(struct pyvalue *v, uint64_t type, enum kind k)
{
	const struct type_info *ti = type_of(v, type);
	return ti && ti->kind == k;
}

void
pyvalue_u64_many(struct pyvalue *v, const uint64_t *addrs, size_t n, uint64_t *out, bool *ok)
{
	const struct py_layout *l = v->l;
	struct windows w;
	bool batched = windows_read(v, addrs, n, 0, l->long_digits + 12, &w);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = batched ? w.buf + i * w.len : NULL;
		uint64_t type, size;
		if (!batched || !w.read[i]) {
			ok[i] = pyvalue_u64(v, addrs[i], &out[i]);
			continue;
		}
		memcpy(&type, b + l->ob_type, 8);
		memcpy(&size, b + l->long_size, 8);
		ok[i] = is_kind(v, type, K_INT) &&
			long_value(l, size, b + l->long_digits, 12, &out[i]);
	}
	if (batched)
		windows_free(&w);
}

void
pyvalue_str_many(struct pyvalue *v, const uint64_t *addrs, size_t n, char **out)
{
	const struct py_layout *l = v->l;
	/* the header and a name's characters, most names whole */
	struct windows w;
	bool batched = windows_read(v, addrs, n, 0, l->str_compact_size + 128, &w);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = batched ? w.buf + i * w.len : NULL;
		uint64_t type;
		struct tt_error err;
		out[i] = NULL;
		if (!batched || !w.read[i]) {
			out[i] = str_object(v, addrs[i]);
			continue;
		}
		memcpy(&type, b + l->ob_type, 8);
		if (is_kind(v, type, K_STR) &&
		    pystr_from_bytes(l, b, w.len, &out[i], &err) == TT_EFAULT)
			out[i] = str_object(v, addrs[i]);   /* longer than was read */
	}
	if (batched)
		windows_free(&w);
}

/* Attribute `name` among an instance's split values (at values: their
 * array follows PyDictValues' header), named by its type's shared keys. */
static uint64_t
split_get(struct pyvalue *v, uint64_t type, uint64_t values, const char *name)
{
	uint64_t keys;
	struct dict_entries d;
	struct tt_error err;
	if (remote_read_u64(v->mem, type + v->l->heap_cached_keys, &keys, &err) ||
	    !keys_open(v, keys, values, false, &d))
		return 0;
	return entries_get_str(v, &d, name, TYPE_DICT_ENTRIES);
}

uint64_t
pyvalue_attr(struct pyvalue *v, uint64_t obj, const char *name)
{
	const struct py_layout *l = v->l;
	uint64_t type, flags, dict;
	struct tt_error err;
	if (!obj || (obj & 7) || remote_read_u64(v->mem, obj + l->ob_type, &type, &err) ||
	    remote_read_u64(v->mem, type + l->type_flags, &flags, &err) ||
	    !(flags & PY_TPFLAGS_HEAPTYPE) || !(flags & PY_TPFLAGS_MANAGED_DICT) ||
	    remote_read_u64(v->mem, obj - PY_MANAGED_DICT_BEFORE, &dict, &err))
		return 0;
	if (l->minor == 11) {
		/* the dict once made, else the values pointer one further */
		uint64_t values;
		if (dict)
			return dict_get_str(v, dict, name);
		return !remote_read_u64(v->mem, obj - PY_MANAGED_VALUES_BEFORE_311, &values, &err) &&
			       values
			       ? split_get(v, type, values, name)
			       : 0;
	}
	if (l->minor == 12) {
		/* dict or values, the values kept as their address - 1 (odd) */
		if (dict & 1)
			return split_get(v, type, dict + 1, name);
		return dict ? dict_get_str(v, dict, name) : 0;
	}
	/* 3.13+: the dict once made, else the values inline after the
	 * object (when its type keeps them there and they are still valid) */
	if (dict)
		return dict_get_str(v, dict, name);
	uint64_t size;
	uint8_t valid;
	if (!(flags & PY_TPFLAGS_INLINE_VALUES) ||
	    remote_read_u64(v->mem, type + l->tp_basicsize, &size, &err) || size > (1u << 20) ||
	    remote_read(v->mem, obj + size + PY_DICTVALUES_VALID, &valid, 1, &err) || !valid)
		return 0;
	return split_get(v, type, obj + size, name);
}

/* Where instances of one type keep attribute `name` while their values
 * are their own (no dict made for them): entry `index` of the type's
 * shared keys. */
struct attr_site {
	uint64_t type;
	uint64_t size;    /* tp_basicsize: 3.13+ keeps the values after it */
	int64_t index;    /* -1: not one the batch can read (read one by one) */
};

/* Attr sites remembered per batch: the classes of the objects asked for
 * (a thread's is threading.Thread or one of a few subclasses). */
#define ATTR_SITES_MAX 32

static void
attr_site_learn(struct pyvalue *v, uint64_t type, const char *name, struct attr_site *site)
{
	const struct py_layout *l = v->l;
	uint64_t flags, keys;
	struct dict_entries d;
	struct tt_error err;
	site->type = type;
	site->index = -1;
	if (!type || (type & 7) || remote_read_u64(v->mem, type + l->type_flags, &flags, &err) ||
	    !(flags & PY_TPFLAGS_HEAPTYPE) || !(flags & PY_TPFLAGS_MANAGED_DICT) ||
	    (l->minor >= 13 && !(flags & PY_TPFLAGS_INLINE_VALUES)) ||
	    remote_read_u64(v->mem, type + l->tp_basicsize, &site->size, &err) ||
	    site->size > (1u << 20) ||
	    remote_read_u64(v->mem, type + l->heap_cached_keys, &keys, &err) ||
	    !keys_open(v, keys, 0, false, &d))
		return;
	site->index = entries_index(v, &d, name, TYPE_DICT_ENTRIES);
}

void
pyvalue_attr_many(struct pyvalue *v, const uint64_t *objs, size_t n, const char *name,
		  uint64_t *out)
{
	const struct py_layout *l = v->l;
	uint64_t *at = calloc(n ? n : 1, sizeof *at);   /* where each one's values are */
	int64_t *slot = malloc((n ? n : 1) * sizeof *slot);
	/* each object's pre-header (3.11's values pointer, the managed dict)
	 * to its type pointer */
	struct windows head = {0}, vals = {0};
	bool batched = at && slot &&
		       windows_read(v, objs, n, -(int64_t)PY_MANAGED_VALUES_BEFORE_311,
				    (size_t)(PY_MANAGED_VALUES_BEFORE_311 + l->ob_type + 8), &head);
	struct attr_site sites[ATTR_SITES_MAX];
	size_t nsites = 0, vlen = 0;
	/* Where each object's value is: values + dict_values_array + 8 *
	 * slot[i]; -1: read one by one. */
	for (size_t i = 0; i < n && batched; i++) {
		const uint8_t *b = head.buf + i * head.len;
		uint64_t values, dict, type;
		slot[i] = -1;
		if (!head.read[i])
			continue;
		memcpy(&values, b, 8);
		memcpy(&dict, b + PY_MANAGED_VALUES_BEFORE_311 - PY_MANAGED_DICT_BEFORE, 8);
		memcpy(&type, b + PY_MANAGED_VALUES_BEFORE_311 + l->ob_type, 8);
		struct attr_site *site = NULL;
		for (size_t k = 0; k < nsites && !site; k++)
			if (sites[k].type == type)
				site = &sites[k];
		if (!site && nsites < ATTR_SITES_MAX)
			attr_site_learn(v, type, name, site = &sites[nsites++]);
		if (!site || site->index < 0)
			continue;
		if (l->minor == 11 && !dict && values)
			at[i] = values;
		else if (l->minor == 12 && (dict & 1))
			at[i] = dict + 1;
		else if (l->minor >= 13 && !dict)
			at[i] = objs[i] + site->size;
		else
			continue;
		slot[i] = site->index;
		if (l->dict_values_array + 8 * (size_t)slot[i] + 8 > vlen)
			vlen = l->dict_values_array + 8 * (size_t)slot[i] + 8;
	}
	/* the values up to the one asked for: from 3.13, their header's
	 * valid byte too (those of no slot have no address: not read) */
	if (batched && vlen && windows_read(v, at, n, 0, vlen, &vals)) {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *b = vals.buf + i * vals.len;
			if (slot[i] < 0)
				continue;
			if (!vals.read[i] || (l->minor >= 13 && !b[PY_DICTVALUES_VALID]))
				slot[i] = -1;
			else
				memcpy(&out[i], b + l->dict_values_array + 8 * (size_t)slot[i], 8);
		}
		windows_free(&vals);
	} else if (slot) {
		for (size_t i = 0; i < n; i++)
			slot[i] = -1;
	}
	/* the rest as pyvalue_attr reads them: a dict made, another class */
	for (size_t i = 0; i < n; i++)
		if (!batched || slot[i] < 0)
			out[i] = pyvalue_attr(v, objs[i], name);
	if (batched)
		windows_free(&head);
	free(slot);
	free(at);
}
