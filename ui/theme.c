/* Colour themes: the compiled-in default, and the theme-file parser and
 * loader (themeterm.c maps a theme onto the terminal). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sanitize.h"
#include "theme.h"
#include "xterm256.h"

/* ------------------------------------------------------------------------
 * Role keys and the compiled-in default
 * ---------------------------------------------------------------------- */

static const char *const role_keys[ROLE_COUNT] = {
	[ROLE_DEFAULT] = "default",
	[ROLE_TITLE] = "title",
	[ROLE_HEADER] = "header",
	[ROLE_HEADER_VALUE] = "header.value",
	[ROLE_TABLE_HEADER] = "table.header",
	[ROLE_SORTED_HEADER] = "table.sorted",
	[ROLE_SELECTED] = "row.selected",
	[ROLE_PERCENT_HOT] = "percent.hot",
	[ROLE_PERCENT_WARM] = "percent.warm",
	[ROLE_PERCENT_COLD] = "percent.cold",
	[ROLE_FUNCTION] = "function",
	[ROLE_FILE] = "file",
	[ROLE_GIL] = "gil",
	[ROLE_GIL_WAIT] = "gil.wait",
	[ROLE_ON_CPU] = "cpu",
	[ROLE_IDLE] = "idle",
	[ROLE_WARNING] = "warning",
	[ROLE_ERROR] = "error",
	[ROLE_STATUS] = "status",
	[ROLE_HELP] = "help",
	[ROLE_BORDER] = "border",
	[ROLE_FILTER] = "filter",
	[ROLE_DIM] = "dim",
	[ROLE_TREE_GUIDE] = "tree.guide",
	[ROLE_TREE_FOLD] = "tree.fold",
	[ROLE_FLAME_HOT] = "flame.hot",
	[ROLE_FLAME_WARM] = "flame.warm",
	[ROLE_FLAME_COLD] = "flame.cold",
	[ROLE_FLAME_SELECTED] = "flame.selected",
};

const char *
theme_role_key(enum theme_role role)
{
	if ((unsigned)role >= ROLE_COUNT)
		return NULL;
	return role_keys[role];
}

enum { C_DEF = -1, C_BLACK, C_RED, C_GREEN, C_YELLOW, C_BLUE, C_MAGENTA, C_CYAN, C_WHITE, C_BRIGHT };
enum { A_B = THEME_ATTR_BOLD, A_D = THEME_ATTR_DIM };
#define ST(f, b, a) { (f), (b), (a), true }

/* Must stay equal to themes/default.theme (tests/test_theme checks). */
static const struct theme_style default_styles[ROLE_COUNT] = {
	[ROLE_DEFAULT] = ST(C_DEF, C_DEF, 0),
	[ROLE_TITLE] = ST(C_BRIGHT + C_WHITE, C_BLUE, A_B),
	[ROLE_HEADER] = ST(C_CYAN, C_DEF, 0),
	[ROLE_HEADER_VALUE] = ST(C_DEF, C_DEF, A_B),
	[ROLE_TABLE_HEADER] = ST(C_BLACK, C_GREEN, 0),
	[ROLE_SORTED_HEADER] = ST(C_BLACK, C_CYAN, A_B),
	[ROLE_SELECTED] = ST(C_BLACK, C_CYAN, 0),
	[ROLE_PERCENT_HOT] = ST(C_RED, C_DEF, A_B),
	[ROLE_PERCENT_WARM] = ST(C_YELLOW, C_DEF, 0),
	[ROLE_PERCENT_COLD] = ST(C_GREEN, C_DEF, 0),
	[ROLE_FUNCTION] = ST(C_DEF, C_DEF, 0),
	[ROLE_FILE] = ST(C_CYAN, C_DEF, 0),
	[ROLE_GIL] = ST(C_MAGENTA, C_DEF, A_B),
	[ROLE_GIL_WAIT] = ST(C_YELLOW, C_DEF, 0),
	[ROLE_ON_CPU] = ST(C_GREEN, C_DEF, 0),
	[ROLE_IDLE] = ST(C_DEF, C_DEF, A_D),
	[ROLE_WARNING] = ST(C_YELLOW, C_DEF, A_B),
	[ROLE_ERROR] = ST(C_RED, C_DEF, A_B),
	[ROLE_STATUS] = ST(C_BLACK, C_CYAN, 0),
	[ROLE_HELP] = ST(C_DEF, C_DEF, 0),
	[ROLE_BORDER] = ST(C_CYAN, C_DEF, 0),
	[ROLE_FILTER] = ST(C_YELLOW, C_DEF, A_B),
	[ROLE_DIM] = ST(C_DEF, C_DEF, A_D),
	[ROLE_TREE_GUIDE] = ST(C_CYAN, C_DEF, A_D),
	[ROLE_TREE_FOLD] = ST(C_MAGENTA, C_DEF, 0),
	[ROLE_FLAME_HOT] = ST(C_BLACK, 203, 0),
	[ROLE_FLAME_WARM] = ST(C_BLACK, 215, 0),
	[ROLE_FLAME_COLD] = ST(C_BLACK, 223, 0),
	[ROLE_FLAME_SELECTED] = ST(C_BRIGHT + C_WHITE, C_BLUE, A_B),
};

void
theme_default(struct theme *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "default");
	memcpy(out->styles, default_styles, sizeof out->styles);
}

/* ------------------------------------------------------------------------
 * Small string helpers
 * ---------------------------------------------------------------------- */

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void
trim(const char **s, size_t *n)
{
	while (*n && is_blank(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && is_blank((*s)[*n - 1]))
		(*n)--;
}

static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* ASCII-only, so the result does not depend on the locale. */
static bool
eq_ci(const char *s, size_t n, const char *word)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (word[i] == '\0' || lower(s[i]) != word[i])
			return false;
	return word[i] == '\0';
}

static bool
prefix_ci(const char *s, size_t n, const char *word, size_t *plen)
{
	size_t w = strlen(word);
	if (n < w)
		return false;
	for (size_t i = 0; i < w; i++)
		if (lower(s[i]) != word[i])
			return false;
	*plen = w;
	return true;
}

/* Copy s[0..n) to dst (room for n + 1 bytes), each C0 or C1 control
 * character, DEL and byte that is not valid UTF-8 replaced by '?': an 8-bit
 * terminal takes a raw 0x9b as CSI, a UTF-8 one U+009B. Returns the length. */
static size_t
copy_printable(char *dst, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t len = utf8_decode((const unsigned char *)s + i, n - i, &cp);
		if (len == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
			dst[o++] = '?';
			i += len ? len : 1;
			continue;
		}
		memcpy(dst + o, s + i, len);
		o += len;
		i += len;
	}
	dst[o] = '\0';
	return o;
}

/* Copy s[0..n) for a message: control bytes become '?' so a warning stays
 * one line; too long -> cut (on a UTF-8 boundary) and "..." appended. */
static void
sanitize(char *dst, size_t dstlen, const char *s, size_t n)
{
	size_t k = n, o = 0;
	if (dstlen < 4) {
		if (dstlen)
			dst[0] = '\0';
		return;
	}
	if (k > dstlen - 1) {
		k = dstlen - 4;
		while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
	}
	o = copy_printable(dst, s, k);
	if (k < n)
		for (int i = 0; i < 3; i++)
			dst[o++] = '.';
	dst[o] = '\0';
}

/* Warnings: newline-separated lines in the caller's buffer. Once a line does
 * not fit, as much as fits is kept with "..." and later ones are dropped, so
 * the buffer never ends in a misleading half-sentence. */
struct wbuf {
	char *buf;
	size_t cap, len;
	bool full;
};

static void
wbuf_init(struct wbuf *w, char *buf, size_t cap)
{
	w->buf = buf && cap ? buf : NULL;
	w->cap = w->buf ? cap : 0;
	w->len = 0;
	w->full = false;
	if (w->buf)
		w->buf[0] = '\0';
}

static void __attribute__((format(printf, 2, 3)))
warnf(struct wbuf *w, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	size_t n, sep, avail;

	if (!w->buf || w->full)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	n = strlen(line);
	sep = w->len ? 1 : 0;
	avail = w->cap - 1 - w->len;   /* bytes left before the NUL */
	if (sep + n <= avail) {
		if (sep)
			w->buf[w->len++] = '\n';
		memcpy(w->buf + w->len, line, n);
		w->len += n;
		w->buf[w->len] = '\0';
		return;
	}
	w->full = true;
	if (avail < sep + 4) {
		/* No room for a piece of this line: mark the cut at the very end. */
		size_t at;
		if (w->cap < 4)
			return;
		at = w->cap - 4;
		while (at > 0 && ((unsigned char)w->buf[at] & 0xc0) == 0x80)
			at--;
		memcpy(w->buf + at, "...", 4);
		w->len = at + 3;
		return;
	}
	if (sep)
		w->buf[w->len++] = '\n';
	n = avail - sep - 3;
	while (n > 0 && ((unsigned char)line[n] & 0xc0) == 0x80)
		n--;
	memcpy(w->buf + w->len, line, n);
	memcpy(w->buf + w->len + n, "...", 4);
	w->len += n + 3;
}

static void __attribute__((format(printf, 3, 4)))
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------
 * Values: FG;BG;ATTRS
 * ---------------------------------------------------------------------- */

static const char *const colour_names[8] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
};

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static bool
parse_colour(const char *s, size_t n, short *out)
{
	size_t p;

	if (n == 0 || eq_ci(s, n, "default")) {   /* an empty field means default */
		*out = -1;
		return true;
	}
	if (s[0] == '#') {
		int v[6];
		if (n != 7)
			return false;
		for (int i = 0; i < 6; i++)
			if ((v[i] = hexval(s[1 + i])) < 0)
				return false;
		*out = (short)xterm_from_rgb(v[0] * 16 + v[1], v[2] * 16 + v[3], v[4] * 16 + v[5]);
		return true;
	}
	if (prefix_ci(s, n, "colour", &p) || prefix_ci(s, n, "color", &p)) {
		int v = 0;
		if (n == p || n - p > 3)
			return false;
		for (size_t i = p; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return false;
			v = v * 10 + (s[i] - '0');
		}
		if (v > 255)
			return false;
		*out = (short)v;
		return true;
	}
	int base = 0;
	if (prefix_ci(s, n, "bright", &p)) {
		base = 8;
		s += p;
		n -= p;
	}
	for (int i = 0; i < 8; i++)
		if (eq_ci(s, n, colour_names[i])) {
			*out = (short)(base + i);
			return true;
		}
	return false;
}

static const struct {
	const char *name;
	unsigned bit;
} attr_names[] = {
	{"bold", THEME_ATTR_BOLD}, {"dim", THEME_ATTR_DIM},
	{"underline", THEME_ATTR_UNDERLINE}, {"reverse", THEME_ATTR_REVERSE},
	{"italic", THEME_ATTR_ITALIC}, {"standout", THEME_ATTR_STANDOUT},
	{"none", 0},
};

/* Comma-separated attribute names; on failure bad/badn is the culprit. */
static bool
parse_attrs(const char *s, size_t n, unsigned *out, const char **bad, size_t *badn)
{
	unsigned a = 0;
	size_t i = 0;

	while (i <= n) {
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		const char *w = s + i;
		size_t wn = j - i;
		trim(&w, &wn);
		if (wn) {   /* "bold,,underline" is harmless */
			size_t k;
			for (k = 0; k < sizeof attr_names / sizeof attr_names[0]; k++)
				if (eq_ci(w, wn, attr_names[k].name))
					break;
			if (k == sizeof attr_names / sizeof attr_names[0]) {
				*bad = w;
				*badn = wn;
				return false;
			}
			a |= attr_names[k].bit;
		}
		i = j + 1;
	}
	*out = a;
	return true;
}

/* Parse "FG;BG;ATTRS" (BG and ATTRS optional). On failure `why` says what
 * was wrong, e.g. "bad colour 'bleu'". */
static bool
parse_style(const char *v, size_t n, struct theme_style *st, char *why, size_t whylen)
{
	const char *f[3];
	size_t fl[3], start = 0;
	int nf = 0;
	char q[64];

	if (n == 0) {
		snprintf(why, whylen, "empty value");
		return false;
	}
	for (size_t i = 0; i <= n; i++) {
		if (i < n && v[i] != ';')
			continue;
		if (nf == 3) {
			sanitize(q, sizeof q, v, n);
			snprintf(why, whylen, "too many fields in '%s' (want FG;BG;ATTRS)", q);
			return false;
		}
		f[nf] = v + start;
		fl[nf] = i - start;
		trim(&f[nf], &fl[nf]);
		nf++;
		start = i + 1;
	}

	struct theme_style s = {-1, -1, 0, true};
	for (int i = 0; i < nf && i < 2; i++) {
		if (!parse_colour(f[i], fl[i], i == 0 ? &s.fg : &s.bg)) {
			sanitize(q, sizeof q, f[i], fl[i]);
			snprintf(why, whylen, "bad %scolour '%s'", i ? "background " : "", q);
			return false;
		}
	}
	if (nf == 3) {
		const char *bad = NULL;
		size_t badn = 0;
		if (!parse_attrs(f[2], fl[2], &s.attrs, &bad, &badn)) {
			sanitize(q, sizeof q, bad, badn);
			snprintf(why, whylen, "bad attribute '%s'", q);
			return false;
		}
	}
	*st = s;
	return true;
}

/* ------------------------------------------------------------------------
 * Theme text
 * ---------------------------------------------------------------------- */

static int
find_role(const char *k, size_t n)
{
	for (int r = 0; r < ROLE_COUNT; r++)
		if (strlen(role_keys[r]) == n && memcmp(role_keys[r], k, n) == 0)
			return r;
	return -1;
}

/* A name for the UI: control bytes replaced, cut to fit on a UTF-8 boundary. */
static void
set_name(struct theme *t, const char *s, size_t n)
{
	size_t k = n < sizeof t->name ? n : sizeof t->name - 1;
	if (k < n)
		while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
	copy_printable(t->name, s, k);
}

/* Without a `name` key a theme is called after its file: "/x/light.theme" -> "light". */
static void
name_from_origin(struct theme *t, const char *origin)
{
	const char *b = strrchr(origin, '/');
	size_t n;
	b = b ? b + 1 : origin;
	n = strlen(b);
	if (n > 6 && strcmp(b + n - 6, ".theme") == 0)
		n -= 6;
	if (n == 0)
		set_name(t, "theme", 5);
	else
		set_name(t, b, n);
}

int
theme_parse(const char *text, const char *origin, struct theme *out,
	    char *warnings, size_t wlen, char *err, size_t errlen)
{
	struct wbuf w;
	char org[256], q[64], why[160];
	unsigned long lineno = 0, first_line[ROLE_COUNT] = {0};
	unsigned content = 0, known = 0;
	const char *p;

	wbuf_init(&w, warnings, wlen);
	errf(err, errlen, "%s", "");
	if (!out)
		return -1;
	theme_default(out);
	if (!origin || !*origin)
		origin = "theme";
	sanitize(org, sizeof org, origin, strlen(origin));
	if (!text) {
		errf(err, errlen, "%s: no theme text", org);
		return -1;
	}
	/* Missing keys keep the default style but are not marked as given. */
	for (int r = 0; r < ROLE_COUNT; r++)
		out->styles[r].set = false;
	name_from_origin(out, origin);

	p = text;
	if ((unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbb &&
	    (unsigned char)p[2] == 0xbf)
		p += 3;   /* UTF-8 byte order mark from some editors */
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *line = p, *eq;
		size_t ln = len;

		p = nl ? nl + 1 : p + len;
		lineno++;
		trim(&line, &ln);
		if (ln == 0 || line[0] == '#')
			continue;
		content++;
		if (len > THEME_MAX_LINE) {
			warnf(&w, "%s:%lu: line longer than %u bytes, ignored", org, lineno,
			      THEME_MAX_LINE);
			continue;
		}
		eq = memchr(line, '=', ln);
		if (!eq) {
			sanitize(q, sizeof q, line, ln);
			warnf(&w, "%s:%lu: expected 'key = value', got '%s'", org, lineno, q);
			continue;
		}
		const char *k = line, *v = eq + 1;
		size_t kn = (size_t)(eq - line), vn = ln - kn - 1;
		trim(&k, &kn);
		trim(&v, &vn);
		if (kn == 0) {
			warnf(&w, "%s:%lu: missing key before '='", org, lineno);
			continue;
		}
		if (kn == 4 && memcmp(k, "name", 4) == 0) {
			known++;
			if (vn == 0)
				warnf(&w, "%s:%lu: empty name", org, lineno);
			else
				set_name(out, v, vn);
			continue;
		}
		int r = find_role(k, kn);
		if (r < 0) {
			sanitize(q, sizeof q, k, kn);
			warnf(&w, "%s:%lu: unknown key '%s'", org, lineno, q);
			continue;
		}
		known++;
		if (first_line[r])
			warnf(&w, "%s:%lu: %s given again (first on line %lu); the later one counts",
			      org, lineno, role_keys[r], first_line[r]);
		else
			first_line[r] = lineno;
		struct theme_style st;
		if (!parse_style(v, vn, &st, why, sizeof why)) {
			warnf(&w, "%s:%lu: %s for %s", org, lineno, why, role_keys[r]);
			continue;
		}
		out->styles[r] = st;
	}

	/* Anything with content but not one known key is some other file. */
	if (content > 0 && known == 0) {
		errf(err, errlen, "%s: not a theme file (no known 'key = value' line)", org);
		theme_default(out);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Files
 * ---------------------------------------------------------------------- */

/* Read a whole theme file into a malloc'ed NUL-terminated string. Returns 0,
 * or an errno value with `err` filled (ENOENT/ENOTDIR: "not here"). */
static int
read_theme_file(const char *path, char **text, char *err, size_t errlen)
{
	char shown[256];
	struct stat st;
	char *buf;
	size_t total = 0;
	int fd, e;

	*text = NULL;
	sanitize(shown, sizeof shown, path, strlen(path));
	/* O_NONBLOCK: a FIFO named like a theme must not hang the program. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		errf(err, errlen, "cannot open theme file '%s': %s", shown, strerror(e));
		return e;
	}
	if (fstat(fd, &st) != 0) {
		e = errno;
		errf(err, errlen, "cannot read theme file '%s': %s", shown, strerror(e));
		close(fd);
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		errf(err, errlen, "theme file '%s' is not a regular file", shown);
		close(fd);
		return EINVAL;
	}
	if (st.st_size > (off_t)THEME_MAX_FILE) {
		errf(err, errlen, "theme file '%s' is too large (limit %u KiB)", shown,
		     THEME_MAX_FILE / 1024);
		close(fd);
		return EFBIG;
	}
	buf = malloc(THEME_MAX_FILE + 2);
	if (!buf) {
		errf(err, errlen, "cannot read theme file '%s': out of memory", shown);
		close(fd);
		return ENOMEM;
	}
	/* Read one byte past the limit to notice a file that grew meanwhile. */
	while (total <= THEME_MAX_FILE) {
		ssize_t got = read(fd, buf + total, THEME_MAX_FILE + 1 - total);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			e = errno;
			errf(err, errlen, "cannot read theme file '%s': %s", shown, strerror(e));
			free(buf);
			close(fd);
			return e;
		}
		if (got == 0)
			break;
		total += (size_t)got;
	}
	close(fd);
	if (total > THEME_MAX_FILE) {
		errf(err, errlen, "theme file '%s' is too large (limit %u KiB)", shown,
		     THEME_MAX_FILE / 1024);
		free(buf);
		return EFBIG;
	}
	if (memchr(buf, '\0', total)) {
		errf(err, errlen, "'%s' is not a theme file (binary data)", shown);
		free(buf);
		return EINVAL;
	}
	buf[total] = '\0';
	*text = buf;
	return 0;
}

static int
load_path(const char *path, struct theme *out, char *warnings, size_t wlen,
	  char *err, size_t errlen)
{
	char *text;
	int rc;

	if (read_theme_file(path, &text, err, errlen) != 0)
		return -1;
	rc = theme_parse(text, path, out, warnings, wlen, err, errlen);
	free(text);
	return rc;
}

int
theme_load(const char *name_or_path, const char *system_dir, struct theme *out,
	   char *warnings, size_t wlen, char *err, size_t errlen)
{
	char user_dir[PATH_MAX], path[PATH_MAX], file[NAME_MAX + 1], shown[256];
	char looked[512] = "";
	const char *dirs[2];
	const char *xdg, *home;
	struct wbuf w;
	size_t n;
	int ndirs = 0;

	wbuf_init(&w, warnings, wlen);
	errf(err, errlen, "%s", "");
	if (!out)
		return -1;
	theme_default(out);
	if (!name_or_path || !*name_or_path) {
		errf(err, errlen, "no theme name given");
		return -1;
	}
	if (strchr(name_or_path, '/'))
		return load_path(name_or_path, out, warnings, wlen, err, errlen);

	n = strlen(name_or_path);
	sanitize(shown, sizeof shown, name_or_path, n);
	if (snprintf(file, sizeof file, "%s%s", name_or_path,
		     n > 6 && strcmp(name_or_path + n - 6, ".theme") == 0 ? "" : ".theme") >=
	    (int)sizeof file) {
		errf(err, errlen, "theme name '%s' is too long", shown);
		return -1;
	}

	/* XDG says a relative $XDG_CONFIG_HOME is to be ignored. */
	xdg = getenv("XDG_CONFIG_HOME");
	home = getenv("HOME");
	if (xdg && xdg[0] == '/') {
		if (snprintf(user_dir, sizeof user_dir, "%s/tachyon-top/themes", xdg) <
		    (int)sizeof user_dir)
			dirs[ndirs++] = user_dir;
	} else if (home && home[0]) {
		if (snprintf(user_dir, sizeof user_dir, "%s/.config/tachyon-top/themes", home) <
		    (int)sizeof user_dir)
			dirs[ndirs++] = user_dir;
	}
	if (system_dir && system_dir[0])
		dirs[ndirs++] = system_dir;

	for (int i = 0; i < ndirs; i++) {
		char *text;
		int e;
		size_t used = strlen(looked);

		snprintf(looked + used, sizeof looked - used, "%s%s", used ? ", " : "", dirs[i]);
		if (snprintf(path, sizeof path, "%s/%s", dirs[i], file) >= (int)sizeof path)
			continue;
		e = read_theme_file(path, &text, err, errlen);
		if (e == ENOENT || e == ENOTDIR)
			continue;
		/* Found but unusable: say so rather than silently use another. */
		if (e != 0)
			return -1;
		e = theme_parse(text, path, out, warnings, wlen, err, errlen);
		free(text);
		return e;
	}

	if (strcmp(file, "default.theme") == 0) {
		theme_default(out);   /* the compiled-in copy stands in */
		errf(err, errlen, "%s", "");
		return 0;
	}
	if (ndirs == 0) {
		errf(err, errlen, "theme '%s' not found: no theme directory "
		     "($XDG_CONFIG_HOME and $HOME unset, no system directory)", shown);
	} else {
		char lk[400], fn[128];
		sanitize(lk, sizeof lk, looked, strlen(looked));
		sanitize(fn, sizeof fn, file, strlen(file));
		errf(err, errlen, "theme '%s' not found (looked for %s in %s)", shown, fn, lk);
	}
	return -1;
}
