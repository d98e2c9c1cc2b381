#include "config.h"

#include <stdbool.h>

#include "python/linetable.h"

/* Entries scanned before we call a table malformed: one entry covers at
 * least one code unit, and code objects are far smaller than this. */
#define LINETABLE_MAX_ENTRIES (1u << 22)

enum {
	LOC_SHORT_MAX = 9,
	LOC_ONE_LINE0 = 10,
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13,
	LOC_LONG = 14,
	LOC_NONE = 15,
};

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static unsigned
read_byte(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

/* 6-bit groups, least significant first, 0x40 = more follows. */
static uint32_t
read_varint(struct cursor *c)
{
	unsigned b = read_byte(c);
	uint32_t v = b & 63;
	unsigned shift = 0;
	while (b & 64) {
		shift += 6;
		if (shift > 30) {
			c->bad = true;
			return 0;
		}
		b = read_byte(c);
		v |= (uint32_t)(b & 63) << shift;
	}
	return v;
}

static int32_t
read_svarint(struct cursor *c)
{
	uint32_t v = read_varint(c);
	return (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

int
linetable_addr2line(const uint8_t *table, size_t len, int firstlineno, int64_t addrq)
{
	if (addrq < 0)
		return firstlineno;
	struct cursor c = {.p = table, .end = table + len};
	int64_t line = firstlineno;
	int64_t addr = 0;
	for (unsigned n = 0; c.p < c.end && n < LINETABLE_MAX_ENTRIES; n++) {
		unsigned first = read_byte(&c);
		if (!(first & 0x80))
			return -1; /* every entry starts with the high bit set */
		unsigned code = (first >> 3) & 15;
		int64_t units = (first & 7) + 1;
		bool has_line = true;
		if (code == LOC_NONE) {
			has_line = false;
		} else if (code == LOC_LONG) {
			line += read_svarint(&c);
			read_varint(&c); /* end line delta */
			read_varint(&c); /* column + 1 */
			read_varint(&c); /* end column + 1 */
		} else if (code == LOC_NO_COLUMNS) {
			line += read_svarint(&c);
		} else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
			line += code - LOC_ONE_LINE0;
			read_byte(&c); /* column */
			read_byte(&c); /* end column */
		} else {
			read_byte(&c); /* short form: columns packed in one byte */
		}
		if (c.bad)
			return -1;
		if (line < INT32_MIN || line > INT32_MAX)
			return -1; /* a crafted table, not a real one */
		if (addrq < addr + units)
			return has_line ? (int)line : -1;
		addr += units;
	}
	return -1;
}
