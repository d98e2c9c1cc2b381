/* Text in a fixed buffer (textbuf.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "textbuf.h"

void
textbuf_init(struct textbuf *t, char *buf, size_t cap)
{
	t->p = buf;
	t->cap = cap;
	t->len = 0;
	t->cut = false;
	buf[0] = '\0';
}

void
textbuf_put(struct textbuf *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		n = t->cap > t->len + 1 ? t->cap - t->len - 1 : 0;
		t->cut = true;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

void
textbuf_puts(struct textbuf *t, const char *s)
{
	textbuf_put(t, s, strlen(s));
}

void
textbuf_printf(struct textbuf *t, const char *fmt, ...)
{
	size_t room = t->cap - t->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->p + t->len, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->p[t->len] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		t->cut = true;
		n = (int)(room - 1);
	}
	t->len += (size_t)n;
}
