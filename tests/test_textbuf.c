/* Unit tests for textbuf: text in a fixed buffer, never past its end. */
#include "config.h"

#include <string.h>

#include "tap.h"
#include "textbuf.h"

int
main(void)
{
	char buf[8 + 1 + 8];   /* 8 used, then a guard */
	struct textbuf t;

	memset(buf, 'G', sizeof buf);
	textbuf_init(&t, buf, 8);
	textbuf_puts(&t, "ab");
	textbuf_printf(&t, "%d-%s", 42, "x");
	tap_ok(strcmp(buf, "ab42-x") == 0 && t.len == 6 && !t.cut, "puts and printf: \"%s\"", buf);
	textbuf_puts(&t, "yz");
	tap_ok(strcmp(buf, "ab42-xy") == 0 && t.len == 7 && t.cut && buf[8] == 'G',
	       "past the end: cut to 7 bytes and a NUL, the guard untouched: \"%s\"", buf);
	textbuf_printf(&t, "%s", "more");
	tap_ok(strcmp(buf, "ab42-xy") == 0 && t.len == 7 && t.cut, "full: nothing more");

	memset(buf, 'G', sizeof buf);
	textbuf_init(&t, buf, 5);
	textbuf_printf(&t, "%s", "123456789");
	tap_ok(strcmp(buf, "1234") == 0 && t.len == 4 && t.cut && buf[5] == 'G',
	       "printf longer than the buffer: \"%s\", cut", buf);
	textbuf_init(&t, buf, 1);
	textbuf_puts(&t, "a");
	tap_ok(buf[0] == '\0' && t.len == 0 && t.cut, "a buffer of 1: the NUL alone");
	return tap_done();
}
