/* Making strings from the target safe to show. A target controls its
 * function and file names and can put terminal escape sequences in them. */
#ifndef TT_SANITIZE_H
#define TT_SANITIZE_H

#include <stddef.h>
#include <stdio.h>

/* Copy UTF-8 `in` to `out` (capacity cap >= 1, always NUL-terminated) with
 * every C0/C1 control character, DEL, bidirectional override and invalid
 * UTF-8 byte written as a visible escape (\x1b, \u{202e}). Output is cut at
 * an escape or character boundary. Returns the bytes written. */
size_t sanitize_for_terminal(const char *in, char *out, size_t cap);

/* Write `s` as a JSON string literal (quotes included), escaping as JSON
 * requires plus DEL and C1 controls; invalid UTF-8 becomes U+FFFD. */
void json_put_string(FILE *f, const char *s);

/* Write UTF-8 `s` (len bytes) as XML or HTML text: the five markup
 * characters as entities; control characters (but a tab), DEL, C1,
 * bidirectional controls, U+FFFE, U+FFFF and invalid bytes as visible
 * escapes (\u{202e}, \xff), so nothing from the target can end an element
 * or hide text. At most max_chars characters, then `more`. */
void markup_put_text(FILE *f, const char *s, size_t len, size_t max_chars, const char *more);

/* Decode one UTF-8 sequence at s (len bytes available). Returns its length
 * (1-4) and the code point in *cp, or 0 for an invalid sequence. The
 * overlong C0 80 is accepted as U+0000 (how names keep an embedded NUL). */
size_t utf8_decode(const unsigned char *s, size_t len, unsigned *cp);

#endif
