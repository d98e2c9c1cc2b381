/* Unit tests for sanitize: terminal-safe copies, JSON strings, UTF-8. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "tap.h"

/* ---- A reference UTF-8 validator (Unicode 15, table 3-7) --------------- */

/* Length of the well-formed sequence at s[0..len), or 0. */
static size_t
ref_utf8_len(const unsigned char *s, size_t len)
{
	if (len == 0)
		return 0;
	unsigned char b = s[0];
	if (b < 0x80)
		return 1;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;
	if (b >= 0xc2 && b <= 0xdf)
		n = 2;
	else if (b == 0xe0)
		n = 3, lo = 0xa0;
	else if ((b >= 0xe1 && b <= 0xec) || b == 0xee || b == 0xef)
		n = 3;
	else if (b == 0xed)
		n = 3, hi = 0x9f;
	else if (b == 0xf0)
		n = 4, lo = 0x90;
	else if (b >= 0xf1 && b <= 0xf3)
		n = 4;
	else if (b == 0xf4)
		n = 4, hi = 0x8f;
	else
		return 0;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* The project's extension (sanitize.h): the overlong C0 80 stands for an
 * embedded U+0000, which pystr writes that way to keep names C strings. */
static size_t
ref_tt_len(const unsigned char *s, size_t len)
{
	if (len >= 2 && s[0] == 0xc0 && s[1] == 0x80)
		return 2;
	return ref_utf8_len(s, len);
}

/* Output checks shared by the terminal tests: no C0 control, no DEL, no C1
 * control (C2 80..C2 9F), no bidi control, and only well-formed UTF-8. */
static bool
terminal_safe(const char *out, const char **why)
{
	const unsigned char *p = (const unsigned char *)out;
	size_t len = strlen(out);
	for (size_t i = 0; i < len;) {
		size_t n = ref_utf8_len(p + i, len - i);
		if (n == 0) {
			*why = "invalid UTF-8";
			return false;
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			*why = "C0 control or DEL";
			return false;
		}
		if (n == 2 && p[i] == 0xc2 && p[i + 1] <= 0x9f) {
			*why = "C1 control";
			return false;
		}
		if (n == 3 && p[i] == 0xe2 && p[i + 1] == 0x80 &&
		    (p[i + 2] == 0x8e || p[i + 2] == 0x8f || (p[i + 2] >= 0xaa && p[i + 2] <= 0xae))) {
			*why = "bidi control U+200E/F or U+202A-E";
			return false;
		}
		if (n == 3 && p[i] == 0xe2 && p[i + 1] == 0x81 && p[i + 2] >= 0xa6 &&
		    p[i + 2] <= 0xa9) {
			*why = "bidi isolate U+2066-9";
			return false;
		}
		if (n == 2 && p[i] == 0xd8 && p[i + 1] == 0x9c) {
			*why = "U+061C";
			return false;
		}
		i += n;
	}
	return true;
}

/* ---- sanitize_for_terminal ------------------------------------------- */

static void
check_sanitize(const char *in, const char *want, const char *what)
{
	char out[512];
	memset(out, 'Z', sizeof out);
	size_t n = sanitize_for_terminal(in, out, sizeof out);
	bool ok = strcmp(out, want) == 0 && n == strlen(want);
	if (!ok)
		tap_diag("%s: got \"%s\" (%zu), want \"%s\"", what, out, n, want);
	tap_ok(ok, "sanitize: %s", what);
}

static void
test_sanitize_cases(void)
{
	check_sanitize("hello world", "hello world", "plain ASCII is untouched");
	check_sanitize("", "", "empty string");
	check_sanitize("caf\xc3\xa9 \xe5\x87\xbd\xe6\x95\xb0 \xf0\x9d\x94\xa3 \xf0\x9f\x98\x80",
		       "caf\xc3\xa9 \xe5\x87\xbd\xe6\x95\xb0 \xf0\x9d\x94\xa3 \xf0\x9f\x98\x80",
		       "é, 函数, 𝔣 and an emoji are untouched");
	check_sanitize("~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./", "~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./",
		       "printable ASCII punctuation (incl. backslash) is untouched");
	check_sanitize("\x1b[2J\x1b]0;pwned\x07", "\\x1b[2J\\x1b]0;pwned\\x07",
		       "ESC and BEL become \\x1b and \\x07");
	check_sanitize("a\rb\nc\td\x01", "a\\x0db\\x0ac\\x09d\\x01", "CR, LF, TAB, SOH escaped");
	check_sanitize("x\x7fy", "x\\x7fy", "DEL escaped");
	check_sanitize("\xc2\x9b" "31m", "\\x9b31m", "C1 CSI (U+009B as C2 9B) escaped");
	check_sanitize("\xc2\x80\xc2\x9f\xc2\xa0", "\\x80\\x9f\xc2\xa0",
		       "U+0080 and U+009F escaped, U+00A0 kept");
	check_sanitize("evil\xe2\x80\xaetxt.exe", "evil\\u{202e}txt.exe", "U+202E RLO escaped");
	check_sanitize("\xe2\x80\xaa\xe2\x80\xad\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f"
		       "\xd8\x9c",
		       "\\u{202a}\\u{202d}\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}",
		       "other bidi controls escaped");
	check_sanitize("a\xff" "b", "a\\xffb", "invalid byte 0xff escaped");
	check_sanitize("\xc3(", "\\xc3(", "lead byte without continuation escaped");
	check_sanitize("\xc0\xaf", "\\xc0\\xaf", "overlong '/' escaped byte by byte");
	check_sanitize("a\xc0\x80" "b", "a\\x00b", "C0 80 (an embedded NUL) shows as \\x00");
	check_sanitize("\xe0\x80\x80\xc0\x81", "\\xe0\\x80\\x80\\xc0\\x81",
		       "other overlong forms of NUL and U+0001 escaped byte by byte");
	check_sanitize("\xed\xa0\x80", "\\xed\\xa0\\x80", "UTF-8 surrogate escaped byte by byte");
	check_sanitize("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "code point > U+10FFFF escaped");
	check_sanitize("ok\xf0\x9f\x98", "ok\\xf0\\x9f\\x98", "truncated 4-byte sequence escaped");
	check_sanitize("\x80\xbf", "\\x80\\xbf", "lone continuation bytes escaped");
}

/* The evil string as pieces with their expected renderings, so the
 * truncation boundaries are known. */
static const struct {
	const char *in, *out;
} pieces[] = {
	{"a", "a"},
	{"\x1b", "\\x1b"},
	{"\xe5\x87\xbd", "\xe5\x87\xbd"},
	{"\xe2\x80\xae", "\\u{202e}"},
	{"\xff", "\\xff"},
	{"\xf0\x9d\x94\xa3", "\xf0\x9d\x94\xa3"},
	{"\x07", "\\x07"},
	{"\xc2\x9b", "\\x9b"},
	{"\xc3\xa9", "\xc3\xa9"},
	{"\x7f", "\\x7f"},
	{"\xc3", "\\xc3"},
	{"\xc0\x80", "\\x00"},
	{"b", "b"},
	{"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
};

#define NPIECES (sizeof pieces / sizeof pieces[0])

static void
test_sanitize_truncation(void)
{
	char in[256] = "", full[256] = "";
	size_t bounds[NPIECES + 1];
	bounds[0] = 0;
	for (size_t i = 0; i < NPIECES; i++) {
		strcat(in, pieces[i].in);
		strcat(full, pieces[i].out);
		bounds[i + 1] = strlen(full);
	}
	check_sanitize(in, full, "the evil string renders piece by piece");

	for (size_t cap = 1; cap <= 60; cap++) {
		/* Longest run of whole pieces that fits with its NUL. */
		size_t want = 0;
		for (size_t i = 0; i <= NPIECES; i++)
			if (bounds[i] + 1 <= cap)
				want = bounds[i];
		char *out = malloc(cap); /* exactly cap: overruns hit ASan */
		if (!out)
			abort();
		memset(out, 'Z', cap);
		size_t n = sanitize_for_terminal(in, out, cap);
		const char *why = "";
		bool ok = n == want && memchr(out, '\0', cap) == out + n &&
			  memcmp(out, full, n) == 0 && terminal_safe(out, &why);
		if (!ok)
			tap_diag("cap %zu: returned %zu, want %zu (%s)", cap, n, want, why);
		tap_ok(ok, "sanitize with cap %zu keeps %zu bytes: whole escapes and characters",
		       cap, want);
		free(out);
	}
}

static uint32_t rng = 0x9e3779b9;

static uint32_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* Random strings biased toward the interesting bytes. */
static void
random_string(char *s, size_t maxlen)
{
	static const unsigned char interesting[] = {
		0x01, 0x07, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, '"', '\\', '/', 'a', 0x7f, 0x80, 0x9b,
		0x9f, 0xa0, 0xae, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xd8, 0x9c, 0xdf, 0xe0, 0xe2,
		0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xf8, 0xff, 0x8e, 0x81, 0xa6, 0x90, 0x8f,
	};
	size_t len = next_rand() % maxlen;
	for (size_t i = 0; i < len; i++) {
		uint32_t r = next_rand();
		unsigned char c = (r & 3) ? interesting[(r >> 8) % sizeof interesting]
					  : (unsigned char)(r >> 16);
		s[i] = c ? (char)c : 'z';
	}
	s[len] = '\0';
}

static void
test_sanitize_fuzz(void)
{
	int unsafe = 0, bad_cut = 0;
	for (int iter = 0; iter < 20000; iter++) {
		char in[64], full[1024];
		random_string(in, sizeof in);
		size_t n = sanitize_for_terminal(in, full, sizeof full);
		const char *why = "";
		if (n != strlen(full) || !terminal_safe(full, &why)) {
			if (unsafe++ < 3)
				tap_diag("unsafe output (%s) for input of %zu bytes", why, strlen(in));
		}
		size_t cap = 1 + next_rand() % 48;
		char *out = malloc(cap);
		if (!out)
			abort();
		size_t m = sanitize_for_terminal(in, out, cap);
		if (m >= cap || out[m] != '\0' || memcmp(out, full, m) != 0 ||
		    !terminal_safe(out, &why))
			bad_cut++;
		free(out);
	}
	tap_ok(unsafe == 0, "sanitize: 20000 random strings give terminal-safe output");
	tap_ok(bad_cut == 0, "sanitize: cut copies are safe, NUL-terminated prefixes");
}

/* ---- json_put_string ------------------------------------------------- */

static char *
json_of(const char *s, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		abort();
	json_put_string(f, s);
	fclose(f);
	*len = size;
	return buf;
}

static void
check_json(const char *in, const char *want, const char *what)
{
	size_t len;
	char *got = json_of(in, &len);
	bool ok = len == strlen(want) && memcmp(got, want, len) == 0;
	if (!ok)
		tap_diag("%s: got %s, want %s", what, got, want);
	tap_ok(ok, "json: %s", what);
	free(got);
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode a JSON string literal (RFC 8259) to UTF-8; false if it is not a
 * valid one: raw control characters, bad escapes, unpaired surrogates. */
static bool
json_decode(const char *j, size_t len, char *out, size_t cap, size_t *outlen)
{
	if (len < 2 || j[0] != '"' || j[len - 1] != '"')
		return false;
	size_t o = 0;
	for (size_t i = 1; i < len - 1;) {
		unsigned char c = (unsigned char)j[i];
		if (o + 4 >= cap)
			return false;
		if (c < 0x20 || c == '"')
			return false;
		if (c != '\\') {
			out[o++] = (char)c;
			i++;
			continue;
		}
		if (i + 1 >= len - 1)
			return false;
		char e = j[i + 1];
		i += 2;
		switch (e) {
		case '"': out[o++] = '"'; continue;
		case '\\': out[o++] = '\\'; continue;
		case '/': out[o++] = '/'; continue;
		case 'b': out[o++] = '\b'; continue;
		case 'f': out[o++] = '\f'; continue;
		case 'n': out[o++] = '\n'; continue;
		case 'r': out[o++] = '\r'; continue;
		case 't': out[o++] = '\t'; continue;
		case 'u': break;
		default: return false;
		}
		if (i + 4 > len - 1)
			return false;
		unsigned cp = 0;
		for (int k = 0; k < 4; k++) {
			int h = hexval(j[i + k]);
			if (h < 0)
				return false;
			cp = cp << 4 | (unsigned)h;
		}
		i += 4;
		if (cp >= 0xd800 && cp <= 0xdfff)
			return false; /* json_put_string never needs surrogate pairs */
		if (cp < 0x80) {
			out[o++] = (char)cp;
		} else if (cp < 0x800) {
			out[o++] = (char)(0xc0 | cp >> 6);
			out[o++] = (char)(0x80 | (cp & 0x3f));
		} else {
			out[o++] = (char)(0xe0 | cp >> 12);
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	*outlen = o;
	return true;
}

/* What the round trip must give: the input with each byte that does not
 * start a well-formed sequence replaced by U+FFFD, and C0 80 as NUL. */
static size_t
replace_invalid(const char *in, char *out)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t len = strlen(in), o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = ref_tt_len(p + i, len - i);
		if (n == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else if (p[i] == 0xc0) {
			out[o++] = '\0';
			i += 2;
		} else {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		}
	}
	return o;
}

/* Strictly well-formed UTF-8 (no C0 80 either: JSON spells NUL \u0000). */
static bool
well_formed(const char *j, size_t len)
{
	const unsigned char *p = (const unsigned char *)j;
	for (size_t i = 0; i < len;) {
		size_t n = ref_utf8_len(p + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

/* Raw bytes a JSON consumer printing the document to a terminal must not
 * see: C0, DEL, C1 (C2 80..9F). */
static bool
json_raw_safe(const char *j, size_t len)
{
	const unsigned char *p = (const unsigned char *)j;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			return false;
		if (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			return false;
	}
	return true;
}

static void
test_json(void)
{
	check_json("plain", "\"plain\"", "plain ASCII");
	check_json("", "\"\"", "empty string");
	check_json("say \"hi\"", "\"say \\\"hi\\\"\"", "quotes escaped");
	check_json("C:\\dir\\f", "\"C:\\\\dir\\\\f\"", "backslashes escaped");
	check_json("a\nb\tc\rd", "\"a\\nb\\tc\\rd\"", "\\n, \\t, \\r");
	check_json("\x01\x08\x0c\x1b\x1f", "\"\\u0001\\u0008\\u000c\\u001b\\u001f\"",
		   "other C0 controls become \\u00XX");
	check_json("del\x7f", "\"del\\u007f\"", "DEL becomes \\u007f");
	check_json("\xc2\x9b" "31m", "\"\\u009b31m\"", "C1 CSI becomes \\u009b");
	check_json("\xe2\x80\xae", "\"\\u202e\"", "U+202E becomes \\u202e");
	check_json("caf\xc3\xa9 \xe5\x87\xbd \xf0\x9d\x94\xa3",
		   "\"caf\xc3\xa9 \xe5\x87\xbd \xf0\x9d\x94\xa3\"", "valid UTF-8 kept raw");
	check_json("a\xff" "b", "\"a\\ufffdb\"", "invalid byte becomes \\ufffd");
	check_json("\xc0\xaf", "\"\\ufffd\\ufffd\"", "overlong sequence: one \\ufffd per byte");
	check_json("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "UTF-8 surrogate: \\ufffd per byte");
	check_json("x\xe5\x87", "\"x\\ufffd\\ufffd\"", "truncated sequence at the end");
	check_json("/", "\"/\"", "slash needs no escape");
	check_json("a\xc0\x80" "b", "\"a\\u0000b\"", "C0 80 (an embedded NUL) becomes \\u0000");
	check_json("\xc0\x81\xe0\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"",
		   "other overlong forms: \\ufffd per byte");

	int bad = 0, unsafe = 0;
	for (int iter = 0; iter < 20000; iter++) {
		char in[64], want[256], dec[512];
		random_string(in, sizeof in);
		size_t len, declen = 0;
		char *j = json_of(in, &len);
		size_t wantlen = replace_invalid(in, want);
		if (!json_decode(j, len, dec, sizeof dec, &declen) || declen != wantlen ||
		    memcmp(dec, want, wantlen) != 0) {
			if (bad++ < 3)
				tap_diag("json round trip failed for %s", j);
		}
		if (!json_raw_safe(j, len) || !well_formed(j, len))
			unsafe++;
		free(j);
	}
	tap_ok(bad == 0, "json: 20000 random strings are valid JSON that decode to the input "
	       "(invalid bytes as U+FFFD)");
	tap_ok(unsafe == 0, "json: output is well-formed UTF-8 without raw C0, DEL or C1 bytes");
}

/* ---- utf8_decode ----------------------------------------------------- */

static void
check_decode(const char *bytes, size_t len, size_t want_n, unsigned want_cp, const char *what)
{
	/* Exactly len bytes on the heap: no peeking past the end. */
	unsigned char *s = malloc(len ? len : 1);
	if (!s)
		abort();
	memcpy(s, bytes, len);
	unsigned cp = 0xdeadbeef;
	size_t n = utf8_decode(s, len, &cp);
	bool ok = n == want_n && (n == 0 || cp == want_cp);
	if (!ok)
		tap_diag("%s: got %zu / U+%04X", what, n, cp);
	tap_ok(ok, "utf8_decode: %s", what);
	free(s);
}

static void
test_utf8_decode(void)
{
	check_decode("A", 1, 1, 0x41, "ASCII");
	check_decode("\x00", 1, 1, 0, "NUL");
	check_decode("\x7f", 1, 1, 0x7f, "DEL is a valid character");
	check_decode("\xc2\x80", 2, 2, 0x80, "U+0080");
	check_decode("\xc3\xa9", 2, 2, 0xe9, "é");
	check_decode("\xdf\xbf", 2, 2, 0x7ff, "U+07FF");
	check_decode("\xe0\xa0\x80", 3, 3, 0x800, "U+0800");
	check_decode("\xe5\x87\xbd", 3, 3, 0x51fd, "函");
	check_decode("\xed\x9f\xbf", 3, 3, 0xd7ff, "U+D7FF");
	check_decode("\xee\x80\x80", 3, 3, 0xe000, "U+E000");
	check_decode("\xef\xbf\xbf", 3, 3, 0xffff, "U+FFFF");
	check_decode("\xf0\x90\x80\x80", 4, 4, 0x10000, "U+10000");
	check_decode("\xf0\x9d\x94\xa3", 4, 4, 0x1d523, "𝔣 U+1D523");
	check_decode("\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff, "U+10FFFF");
	check_decode("\xc3\xa9xyz", 5, 2, 0xe9, "decodes one sequence and stops");

	check_decode("", 0, 0, 0, "empty input");
	check_decode("\xc0\x80", 2, 2, 0, "C0 80 is U+0000 (the documented exception)");
	check_decode("\xc0\x80", 1, 0, 0, "C0 with len 1");
	check_decode("\xc0\x81", 2, 0, 0, "overlong C0 81");
	check_decode("\xc0\xaf", 2, 0, 0, "overlong '/' C0 AF");
	check_decode("\xe0\x80\x80", 3, 0, 0, "3-byte overlong NUL E0 80 80");
	check_decode("\xf0\x80\x80\x80", 4, 0, 0, "4-byte overlong NUL F0 80 80 80");
	check_decode("\xc1\xbf", 2, 0, 0, "overlong C1 BF");
	check_decode("\xe0\x9f\xbf", 3, 0, 0, "overlong E0 9F BF (U+07FF)");
	check_decode("\xf0\x8f\xbf\xbf", 4, 0, 0, "overlong F0 8F BF BF (U+FFFF)");
	check_decode("\xed\xa0\x80", 3, 0, 0, "surrogate U+D800");
	check_decode("\xed\xbf\xbf", 3, 0, 0, "surrogate U+DFFF");
	check_decode("\xed\xb2\x80", 3, 0, 0, "surrogate U+DC80");
	check_decode("\xf4\x90\x80\x80", 4, 0, 0, "U+110000");
	check_decode("\xf7\xbf\xbf\xbf", 4, 0, 0, "U+1FFFFF");
	check_decode("\xf8\x88\x80\x80\x80", 5, 0, 0, "5-byte form");
	check_decode("\xfc\x84\x80\x80\x80\x80", 6, 0, 0, "6-byte form");
	check_decode("\xfe", 1, 0, 0, "byte FE");
	check_decode("\xff", 1, 0, 0, "byte FF");
	check_decode("\x80", 1, 0, 0, "lone continuation 80");
	check_decode("\xbf", 1, 0, 0, "lone continuation BF");
	check_decode("\xc3", 1, 0, 0, "2-byte lead at the end of input");
	check_decode("\xe5\x87", 2, 0, 0, "3-byte sequence cut after 2 bytes");
	check_decode("\xf0\x9d\x94", 3, 0, 0, "4-byte sequence cut after 3 bytes");
	check_decode("\xc3\xa9", 1, 0, 0, "é with len 1");
	check_decode("\xe5\x41\xbd", 3, 0, 0, "ASCII where a continuation belongs");
	check_decode("\xe5\x87\xc3", 3, 0, 0, "lead byte where a continuation belongs");

	/* Agreement with the reference on every 1-, 2- and 3-byte string and
	 * on random 4-byte strings. */
	int disagree = 0;
	unsigned char s[4];
	for (unsigned a = 0; a < 256; a++) {
		for (unsigned b = 0; b < 256; b++) {
			for (unsigned c = 0x70; c < 0xd0; c++) {
				s[0] = (unsigned char)a, s[1] = (unsigned char)b, s[2] = (unsigned char)c;
				for (size_t len = 1; len <= 3; len++) {
					unsigned cp;
					size_t n = utf8_decode(s, len, &cp);
					if (n != ref_tt_len(s, len) && disagree++ < 3)
						tap_diag("disagree on %02x %02x %02x len %zu: %zu vs %zu",
							 a, b, c, len, n, ref_tt_len(s, len));
				}
			}
		}
	}
	for (int i = 0; i < 200000; i++) {
		uint32_t r = next_rand();
		s[0] = (unsigned char)(0xc0 | (r & 0x3f));
		s[1] = (unsigned char)(r >> 8), s[2] = (unsigned char)(r >> 16);
		s[3] = (unsigned char)(r >> 24);
		if ((r & 0x300) == 0)
			s[1] = (unsigned char)(0x80 | (s[1] & 0x3f));
		unsigned cp;
		if (utf8_decode(s, 4, &cp) != ref_tt_len(s, 4) && disagree++ < 3)
			tap_diag("disagree on %02x %02x %02x %02x", s[0], s[1], s[2], s[3]);
	}
	tap_ok(disagree == 0, "utf8_decode agrees with the Unicode well-formedness table "
	       "(plus C0 80)");
}

int
main(void)
{
	test_sanitize_cases();
	test_sanitize_truncation();
	test_sanitize_fuzz();
	test_json();
	test_utf8_decode();
	return tap_done();
}
