#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "sanitize.h"

size_t
utf8_decode(const unsigned char *s, size_t len, unsigned *cp)
{
	if (len == 0)
		return 0;
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c == 0xc0 && len >= 2 && s[1] == 0x80) {
		*cp = 0; /* U+0000 as pystr_to_utf8 stores it */
		return 2;
	} else if ((c & 0xe0) == 0xc0) {
		n = 2, min = 0x80, c &= 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3, min = 0x800, c &= 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4, min = 0x10000, c &= 0x07;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static bool
needs_escape(unsigned cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

size_t
sanitize_for_terminal(const char *in, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t len = strlen(in), o = 0;
	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t n = utf8_decode(p + i, len - i, &cp);
		char esc[16];
		const char *piece;
		size_t plen;
		if (n == 0) {
			snprintf(esc, sizeof esc, "\\x%02x", p[i]);
			piece = esc, plen = strlen(esc), n = 1;
		} else if (needs_escape(cp)) {
			if (cp < 0x100)
				snprintf(esc, sizeof esc, "\\x%02x", cp);
			else
				snprintf(esc, sizeof esc, "\\u{%x}", cp);
			piece = esc, plen = strlen(esc);
		} else {
			piece = in + i, plen = n;
		}
		if (o + plen + 1 > cap)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
		i += n;
	}
	out[o] = '\0';
	return o;
}

void
markup_put_text(FILE *f, const char *s, size_t len, size_t max_chars, const char *more)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0;
	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t n = utf8_decode(p + i, len - i, &cp);
		if (n == 0) {
			fprintf(f, "\\x%02x", p[i++]);
			continue;
		}
		if (++chars > max_chars) {
			fputs(more, f);
			return;
		}
		switch (cp) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '\t': fputc('\t', f); break;
		default:
			if (needs_escape(cp) || cp == 0xfffe || cp == 0xffff)
				fprintf(f, "\\u{%x}", cp);
			else
				fwrite(p + i, 1, n, f);
		}
		i += n;
	}
}

void
json_put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	fputc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t n = utf8_decode(p + i, len - i, &cp);
		if (n == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		switch (cp) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (needs_escape(cp))
				fprintf(f, "\\u%04x", cp);
			else
				fwrite(p + i, 1, n, f);
		}
		i += n;
	}
	fputc('"', f);
}
