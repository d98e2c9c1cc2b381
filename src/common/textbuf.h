/* Text built in a caller's fixed buffer: never written past its end,
 * always ended by a NUL; what does not fit is cut, and cut says so. */
#ifndef TT_TEXTBUF_H
#define TT_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

struct textbuf {
	char *p;
	size_t len, cap;   /* len < cap: the NUL at p[len] */
	bool cut;
};

/* cap >= 1 */
void textbuf_init(struct textbuf *t, char *buf, size_t cap);
void textbuf_put(struct textbuf *t, const char *s, size_t n);
void textbuf_puts(struct textbuf *t, const char *s);
void textbuf_printf(struct textbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
