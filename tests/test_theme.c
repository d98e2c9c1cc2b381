/* Unit tests for the theme system: the file format, the shipped themes,
 * the search path, and the mapping onto real terminal descriptions. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curses.h>

#include "tap.h"
#include "theme.h"

static const char *const shipped[] = {"default", "light", "mono", "high-contrast"};

static char themes_dir[4096];
static char tmp_root[256];

/* ---- helpers ------------------------------------------------------------ */

static bool
style_eq(const struct theme_style *a, const struct theme_style *b)
{
	return a->fg == b->fg && a->bg == b->bg && a->attrs == b->attrs && a->set == b->set;
}

static bool
style_val_eq(const struct theme_style *a, const struct theme_style *b)
{
	return a->fg == b->fg && a->bg == b->bg && a->attrs == b->attrs;
}

static int
count_lines(const char *s)
{
	int n = 0;
	if (!*s)
		return 0;
	for (n = 1; *s; s++)
		n += *s == '\n';
	return n;
}

/* Warnings for a TAP description: one line, so the TAP stream stays valid. */
static const char *
oneline(const char *s)
{
	static char buf[600];
	size_t o = 0;
	for (; *s && o + 4 < sizeof buf; s++) {
		if (*s == '\n') {
			memcpy(buf + o, " | ", 3);
			o += 3;
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}

static bool
write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(text, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

static bool
write_text(const char *path, const char *text)
{
	return write_file(path, text, strlen(text));
}

static void
mkdirs(const char *path)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

/* Parse `text` as origin "t.theme"; returns rc, fills t, warnings. */
static int
parse(const char *text, struct theme *t, char *warn, size_t wlen)
{
	char err[256];
	return theme_parse(text, "t.theme", t, warn, wlen, err, sizeof err);
}

/* Parse one `title = VALUE` line; returns the title style, *ok = no warning. */
static struct theme_style
parse_title(const char *value, bool *ok)
{
	char text[256], warn[512];
	struct theme t;
	snprintf(text, sizeof text, "title = %s\n", value);
	int rc = parse(text, &t, warn, sizeof warn);
	*ok = rc == 0 && warn[0] == '\0' && t.styles[ROLE_TITLE].set;
	return t.styles[ROLE_TITLE];
}

/* ---- the role keys ------------------------------------------------------ */

static void
test_role_keys(void)
{
	bool all = true, unique = true;
	for (int r = 0; r < ROLE_COUNT; r++) {
		const char *k = theme_role_key((enum theme_role)r);
		if (!k || !*k) {
			all = false;
			continue;
		}
		for (int s = 0; s < r; s++)
			if (theme_role_key((enum theme_role)s) &&
			    strcmp(theme_role_key((enum theme_role)s), k) == 0)
				unique = false;
	}
	tap_ok(all, "every role has a key");
	tap_ok(unique, "role keys are distinct");
	tap_ok(theme_role_key(ROLE_COUNT) == NULL && theme_role_key((enum theme_role)-1) == NULL,
	       "out-of-range roles have no key");
	tap_ok(strcmp(theme_role_key(ROLE_TABLE_HEADER), "table.header") == 0 &&
	       strcmp(theme_role_key(ROLE_SORTED_HEADER), "table.sorted") == 0 &&
	       strcmp(theme_role_key(ROLE_SELECTED), "row.selected") == 0 &&
	       strcmp(theme_role_key(ROLE_ON_CPU), "cpu") == 0 &&
	       strcmp(theme_role_key(ROLE_GIL_WAIT), "gil.wait") == 0,
	       "role keys as documented");
}

/* ---- theme files from before a role existed ----------------------------- */

/* A theme file written before the call tree and flame roles (as shipped up
 * to then): it loads with no warnings, and the new roles keep the
 * compiled-in styles. */
static void
test_old_theme(void)
{
	static const char old[] =
		"name = old\n"
		"default      = default;default\ntitle = brightwhite;red;bold\nheader = cyan\n"
		"header.value = default;default;bold\ntable.header = black;green\n"
		"table.sorted = black;cyan;bold\nrow.selected = black;cyan\npercent.hot = red;;bold\n"
		"percent.warm = yellow\npercent.cold = green\nfunction = default\nfile = cyan\n"
		"gil = magenta;;bold\ngil.wait = yellow\ncpu = green\nidle = default;;dim\n"
		"warning = yellow;;bold\nerror = red;;bold\nstatus = black;cyan\nhelp = default\n"
		"border = cyan\nfilter = yellow;;bold\ndim = default;;dim\n";
	struct theme t, def;
	char warn[1024];
	theme_default(&def);
	int rc = parse(old, &t, warn, sizeof warn);
	tap_ok(rc == 0 && warn[0] == '\0', "a theme file without the tree and flame roles loads, no warnings (%s)",
	       oneline(warn));
	bool kept = true;
	for (int r = ROLE_TREE_GUIDE; r <= ROLE_FLAME_SELECTED; r++)
		kept &= !t.styles[r].set && style_val_eq(&t.styles[r], &def.styles[r]);
	tap_ok(kept && t.styles[ROLE_TITLE].bg == 1, "its own roles apply, the new ones keep the defaults");
	tap_ok(strcmp(theme_role_key(ROLE_TREE_GUIDE), "tree.guide") == 0 &&
	       strcmp(theme_role_key(ROLE_TREE_FOLD), "tree.fold") == 0 &&
	       strcmp(theme_role_key(ROLE_FLAME_HOT), "flame.hot") == 0 &&
	       strcmp(theme_role_key(ROLE_FLAME_SELECTED), "flame.selected") == 0,
	       "tree and flame role keys as documented");
}

/* ---- shipped themes ----------------------------------------------------- */

static void
test_shipped(void)
{
	struct theme def;
	theme_default(&def);

	for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
		char path[4200], warn[2048], err[512];
		struct theme t;
		snprintf(path, sizeof path, "%s/%s.theme", themes_dir, shipped[i]);
		int rc = theme_load(path, NULL, &t, warn, sizeof warn, err, sizeof err);
		tap_ok(rc == 0, "%s.theme loads (%s)", shipped[i], err);
		tap_ok(warn[0] == '\0', "%s.theme has no warnings", shipped[i]);
		if (warn[0])
			tap_diag("%s", warn);
		int unset = -1;
		for (int r = 0; r < ROLE_COUNT && unset < 0; r++)
			if (!t.styles[r].set)
				unset = r;
		tap_ok(unset < 0, "%s.theme sets every role%s%s", shipped[i],
		       unset < 0 ? "" : ", not ", unset < 0 ? "" : theme_role_key(unset));
		tap_ok(strcmp(t.name, shipped[i]) == 0, "%s.theme is named '%s' (got '%s')",
		       shipped[i], shipped[i], t.name);

		if (strcmp(shipped[i], "default") == 0) {
			bool same = strcmp(t.name, def.name) == 0;
			for (int r = 0; r < ROLE_COUNT; r++)
				if (!style_eq(&t.styles[r], &def.styles[r])) {
					same = false;
					tap_diag("%s: file %d;%d;%u, compiled-in %d;%d;%u",
						 theme_role_key(r), t.styles[r].fg, t.styles[r].bg,
						 t.styles[r].attrs, def.styles[r].fg, def.styles[r].bg,
						 def.styles[r].attrs);
				}
			tap_ok(same, "theme_default() equals themes/default.theme");
		} else if (strcmp(shipped[i], "mono") == 0) {
			bool nocolour = true;
			for (int r = 0; r < ROLE_COUNT; r++)
				nocolour &= t.styles[r].fg == -1 && t.styles[r].bg == -1;
			tap_ok(nocolour, "mono.theme uses no colours");
			tap_ok((t.styles[ROLE_SELECTED].attrs & THEME_ATTR_REVERSE) &&
			       (t.styles[ROLE_PERCENT_HOT].attrs & THEME_ATTR_BOLD),
			       "mono.theme: selected is reverse, hot is bold");
		} else if (strcmp(shipped[i], "light") == 0) {
			/* On the terminal's (white) background: no yellow, cyan or white text. */
			bool readable = true;
			for (int r = 0; r < ROLE_COUNT; r++) {
				int fg = t.styles[r].fg;
				if (t.styles[r].bg == -1 && !(t.styles[r].attrs & THEME_ATTR_REVERSE) &&
				    (fg == 3 || fg == 11 || fg == 6 || fg == 14 || fg == 7 || fg == 15 ||
				     fg == 226 || fg == 227 || fg == 228 || fg == 229 || fg == 230 || fg == 231)) {
					readable = false;
					tap_diag("light: %s has fg %d on the background", theme_role_key(r), fg);
				}
			}
			tap_ok(readable, "light.theme has no light text on the terminal background");
		} else if (strcmp(shipped[i], "high-contrast") == 0) {
			bool black = t.styles[ROLE_DEFAULT].bg == 0, nodim = true;
			for (int r = 0; r < ROLE_COUNT; r++)
				nodim &= !(t.styles[r].attrs & THEME_ATTR_DIM);
			tap_ok(black, "high-contrast.theme is on black");
			tap_ok(nodim, "high-contrast.theme has no dim text");
		}
	}
}

/* ---- values ------------------------------------------------------------- */

static void
test_colours(void)
{
	static const struct {
		const char *text;
		int fg;
	} cases[] = {
		{"default", -1}, {"black", 0}, {"red", 1}, {"green", 2}, {"yellow", 3},
		{"blue", 4}, {"magenta", 5}, {"cyan", 6}, {"white", 7},
		{"brightblack", 8}, {"brightred", 9}, {"brightwhite", 15}, {"BrightCyan", 14},
		{"RED", 1}, {"color0", 0}, {"color7", 7}, {"color255", 255}, {"colour17", 17},
		/* #RRGGBB: nearest of 16..255 by RGB distance */
		{"#ff0000", 196}, {"#000000", 16}, {"#ffffff", 231}, {"#FFFFFF", 231},
		{"#808080", 244}, {"#5f87af", 67}, {"#ff8700", 208}, {"#0000ff", 21},
		{"#080808", 232}, {"#eeeeee", 255}, {"#010101", 16}, {"#7f7f7f", 244},
		{"#ff0001", 196}, {"#d7af87", 180},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool ok;
		struct theme_style s = parse_title(cases[i].text, &ok);
		tap_ok(ok && s.fg == cases[i].fg && s.bg == -1 && s.attrs == 0,
		       "colour '%s' -> %d (got %d)", cases[i].text, cases[i].fg, s.fg);
	}

	static const char *const bad[] = {
		"bleu", "color256", "color", "color-1", "color1234", "#fff", "#ff00000",
		"#gg0000", "bright", "brightbright", "brightdefault", "rgb(1,2,3)", "1",
		"red blue", "#ff 000",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[128], warn[512];
		struct theme t, def;
		theme_default(&def);
		snprintf(text, sizeof text, "default = default\ntitle = %s\n", bad[i]);
		int rc = parse(text, &t, warn, sizeof warn);
		tap_ok(rc == 0 && strstr(warn, "t.theme:2: bad colour") &&
		       style_val_eq(&t.styles[ROLE_TITLE], &def.styles[ROLE_TITLE]) &&
		       !t.styles[ROLE_TITLE].set,
		       "bad colour '%s' warns and keeps the default (%s)", bad[i], oneline(warn));
	}
}

static void
test_values(void)
{
	bool ok;
	struct theme_style s;

	s = parse_title("black;cyan;bold,reverse", &ok);
	tap_ok(ok && s.fg == 0 && s.bg == 6 && s.attrs == (THEME_ATTR_BOLD | THEME_ATTR_REVERSE),
	       "FG;BG;ATTRS");
	s = parse_title("red;blue", &ok);
	tap_ok(ok && s.fg == 1 && s.bg == 4 && s.attrs == 0, "FG;BG");
	s = parse_title("red", &ok);
	tap_ok(ok && s.fg == 1 && s.bg == -1 && s.attrs == 0, "FG alone");
	s = parse_title(" green ; default ; underline ", &ok);
	tap_ok(ok && s.fg == 2 && s.bg == -1 && s.attrs == THEME_ATTR_UNDERLINE,
	       "spaces around fields");
	s = parse_title(";;bold", &ok);
	tap_ok(ok && s.fg == -1 && s.bg == -1 && s.attrs == THEME_ATTR_BOLD,
	       "empty FG and BG mean default");
	s = parse_title("red;;", &ok);
	tap_ok(ok && s.fg == 1 && s.bg == -1 && s.attrs == 0, "empty ATTRS");
	s = parse_title("default;default;bold,dim,underline,reverse,italic,standout", &ok);
	tap_ok(ok && s.attrs == (THEME_ATTR_BOLD | THEME_ATTR_DIM | THEME_ATTR_UNDERLINE |
				 THEME_ATTR_REVERSE | THEME_ATTR_ITALIC | THEME_ATTR_STANDOUT),
	       "every attribute");
	s = parse_title("default;default; Bold , ITALIC ,", &ok);
	tap_ok(ok && s.attrs == (THEME_ATTR_BOLD | THEME_ATTR_ITALIC),
	       "attributes: case, spaces, trailing comma");
	s = parse_title("default;default;none", &ok);
	tap_ok(ok && s.attrs == 0, "attribute 'none'");
	s = parse_title("#ff0000;#0000ff;dim", &ok);
	tap_ok(ok && s.fg == 196 && s.bg == 21 && s.attrs == THEME_ATTR_DIM, "#RRGGBB for FG and BG");

	struct theme t, def;
	char warn[512];
	int rc;
	theme_default(&def);
	rc = parse("title = red;blue;blink\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strcmp(warn, "t.theme:1: bad attribute 'blink' for title") == 0 &&
	       style_val_eq(&t.styles[ROLE_TITLE], &def.styles[ROLE_TITLE]),
	       "bad attribute warns and keeps the default (%s)", oneline(warn));
	rc = parse("title = red;blue;bold;x\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strstr(warn, "t.theme:1: too many fields") &&
	       style_val_eq(&t.styles[ROLE_TITLE], &def.styles[ROLE_TITLE]),
	       "four fields warn (%s)", oneline(warn));
	rc = parse("title = red;bleu\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strcmp(warn, "t.theme:1: bad background colour 'bleu' for title") == 0,
	       "bad background colour warns (%s)", oneline(warn));
	rc = parse("title =\nfile = red\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strcmp(warn, "t.theme:1: empty value for title") == 0 &&
	       !t.styles[ROLE_TITLE].set,
	       "empty value warns (%s)", oneline(warn));
	rc = parse("title = red\ntitle = blue\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strstr(warn, "t.theme:2: title given again") && t.styles[ROLE_TITLE].fg == 4,
	       "a repeated key warns and the later one counts (%s)", oneline(warn));
}

/* ---- file structure ----------------------------------------------------- */

static void
test_structure(void)
{
	struct theme t, def;
	char warn[1024], err[256];
	int rc;

	theme_default(&def);

	/* Unknown key: warning naming file:line; nothing else changes. */
	rc = parse("# a theme\ntitle = red\n\nfancy.key = blue\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strcmp(warn, "t.theme:4: unknown key 'fancy.key'") == 0,
	       "unknown key warns with file:line (%s)", oneline(warn));
	bool unchanged = true;
	for (int r = 0; r < ROLE_COUNT; r++)
		if (r != ROLE_TITLE && !style_val_eq(&t.styles[r], &def.styles[r]))
			unchanged = false;
	tap_ok(unchanged && t.styles[ROLE_TITLE].fg == 1, "unknown key changes no role");
	rc = parse("Title = red\nfile = blue\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strstr(warn, "t.theme:1: unknown key 'Title'") &&
	       style_val_eq(&t.styles[ROLE_TITLE], &def.styles[ROLE_TITLE]),
	       "keys are case-sensitive");

	/* The exact message the UI shows. */
	rc = parse("default = default\nrow.selected = bleu\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strcmp(warn, "t.theme:2: bad colour 'bleu' for row.selected") == 0 &&
	       style_val_eq(&t.styles[ROLE_SELECTED], &def.styles[ROLE_SELECTED]) &&
	       !t.styles[ROLE_SELECTED].set,
	       "bad colour: 'FILE:LINE: bad colour 'bleu' for row.selected', default kept (%s)", oneline(warn));

	/* Missing keys keep the defaults (and are not marked set). */
	rc = parse("title = brightred;black;underline\n", &t, warn, sizeof warn);
	bool kept = rc == 0 && warn[0] == '\0';
	for (int r = 0; r < ROLE_COUNT; r++)
		if (r != ROLE_TITLE && (!style_val_eq(&t.styles[r], &def.styles[r]) || t.styles[r].set))
			kept = false;
	tap_ok(kept, "missing keys keep the defaults");
	tap_ok(t.styles[ROLE_TITLE].set && t.styles[ROLE_TITLE].fg == 9 &&
	       t.styles[ROLE_TITLE].bg == 0 && t.styles[ROLE_TITLE].attrs == THEME_ATTR_UNDERLINE,
	       "the given key is set");

	/* CRLF, comments, blanks, indentation, no final newline, BOM. */
	rc = parse("\xef\xbb\xbf# comment\r\n\r\n   # indented comment\r\n\ttitle = red;blue;bold \r\n"
		   "name = crlf\r\n   file=green", &t, warn, sizeof warn);
	tap_ok(rc == 0 && warn[0] == '\0' && t.styles[ROLE_TITLE].fg == 1 &&
	       t.styles[ROLE_TITLE].bg == 4 && t.styles[ROLE_TITLE].attrs == THEME_ATTR_BOLD &&
	       t.styles[ROLE_FILE].fg == 2 && strcmp(t.name, "crlf") == 0,
	       "CRLF line endings, comments, BOM, last line without newline (%s)", oneline(warn));
	rc = parse("title = red\r\nfile = #00ff00\r\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && warn[0] == '\0' && t.styles[ROLE_FILE].fg == 46,
	       "CRLF after #RRGGBB");

	/* A line without '=' and a missing key. */
	rc = parse("title = red\njust some words\n= blue\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strstr(warn, "t.theme:2: expected 'key = value', got 'just some words'") &&
	       strstr(warn, "t.theme:3: missing key") && count_lines(warn) == 2,
	       "a line without '=' warns, and so does '= value'");

	/* An over-long line is skipped with a warning, the next one still read. */
	{
		size_t n = THEME_MAX_LINE + 100;
		char *text = malloc(n + 64);
		memcpy(text, "title = ", 8);
		memset(text + 8, 'x', n - 8);
		strcpy(text + n, "\nfile = red\n");
		rc = parse(text, &t, warn, sizeof warn);
		tap_ok(rc == 0 && strstr(warn, "t.theme:1: line longer than") &&
		       count_lines(warn) == 1 && t.styles[ROLE_FILE].fg == 1 &&
		       !t.styles[ROLE_TITLE].set,
		       "an over-long line warns and is skipped (%s)", oneline(warn));
		free(text);
	}

	/* Control bytes in a value never reach the warning verbatim. */
	rc = parse("title = re\x1b[2Jd\n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && !strchr(warn, '\x1b') && strstr(warn, "bad colour 're?[2Jd'"),
	       "control bytes in messages are replaced (%s)", oneline(warn));
	/* C1 controls: raw (an 8-bit terminal's CSI) and UTF-8 encoded (U+009B);
	 * valid UTF-8 text is kept. */
	rc = parse("title = re\x9b" "2Jd\nk\xc2\x9b" "1m\xc3\xa9 = red\n", &t, warn, sizeof warn);
	bool c1 = false;
	for (const char *p = warn; *p; p++)
		c1 |= (unsigned char)p[0] == 0xc2 && (unsigned char)p[1] >= 0x80 &&
		      (unsigned char)p[1] <= 0x9f;
	c1 |= strchr(warn, '\x9b') != NULL;
	tap_ok(rc == 0 && !c1 && strstr(warn, "bad colour 're?2Jd'") &&
	       strstr(warn, "unknown key 'k?1m\xc3\xa9'"),
	       "C1 controls in messages are replaced, UTF-8 kept (%s)", oneline(warn));

	/* Names. */
	rc = theme_parse("title = red\n", "/some/where/ocean.theme", &t, warn, sizeof warn,
			 err, sizeof err);
	tap_ok(rc == 0 && strcmp(t.name, "ocean") == 0, "without 'name' the theme is named after its file");
	rc = parse("name =   Deep  Ocean  \n", &t, warn, sizeof warn);
	tap_ok(rc == 0 && strcmp(t.name, "Deep  Ocean") == 0, "name is trimmed");
	{
		char text[256];
		snprintf(text, sizeof text, "name = %0100d\n", 0);
		rc = parse(text, &t, warn, sizeof warn);
		tap_ok(rc == 0 && strlen(t.name) == sizeof t.name - 1, "a long name is cut to fit");
	}

	/* Not a theme file; empty text is a theme (the default). */
	rc = theme_parse("hello world\nthis is not it\n", "x.txt", &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && strstr(err, "x.txt") && strstr(err, "not a theme file") && !strchr(err, '\n'),
	       "text without a known key is not a theme file (%s)", err);
	rc = theme_parse("# nothing\n\n", "e.theme", &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == 0 && warn[0] == '\0' && style_val_eq(&t.styles[ROLE_SELECTED], &def.styles[ROLE_SELECTED]),
	       "a file of comments is the default theme");
	rc = theme_parse(NULL, "n", &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && err[0], "NULL text is an error");
}

/* ---- the warnings buffer ------------------------------------------------ */

static void
test_truncation(void)
{
	char text[2048] = "";
	for (int i = 0; i < 40; i++) {
		char line[64];
		snprintf(line, sizeof line, "title = nonsense%d\n", i);
		strcat(text, line);
	}

	/* Big enough: one line per problem. */
	{
		static char warn[8192];
		struct theme t;
		int rc = parse(text, &t, warn, sizeof warn);
		tap_ok(rc == 0 && count_lines(warn) == 40 + 39,
		       "one line per warning (40 bad values, 39 repeats): %d", count_lines(warn));
	}

	/* Every small size: never a byte past wlen, always NUL-terminated. */
	bool safe = true, marked = true;
	for (size_t wlen = 0; wlen <= 300; wlen++) {
		unsigned char buf[300 + 64];
		struct theme t;
		memset(buf, 0xa5, sizeof buf);
		parse(text, &t, (char *)buf, wlen);
		for (size_t i = wlen; i < sizeof buf; i++)
			if (buf[i] != 0xa5)
				safe = false;
		if (wlen > 0 && !memchr(buf, '\0', wlen))
			safe = false;
		if (wlen >= 8 && !strstr((char *)buf, "..."))
			marked = false;
	}
	tap_ok(safe, "a small warnings buffer is never overrun and always terminated");
	tap_ok(marked, "a truncated warnings buffer ends in '...'");

	struct theme t;
	tap_ok(theme_parse(text, "t", &t, NULL, 0, NULL, 0) == 0, "NULL warnings and err buffers");

	bool esafe = true;
	for (size_t elen = 0; elen <= 40; elen++) {
		char ebuf[40 + 32];
		memset(ebuf, 'Z', sizeof ebuf);
		theme_load("/nonexistent/dir/with/a/long/name/x.theme", NULL, &t, NULL, 0, ebuf, elen);
		for (size_t i = elen; i < sizeof ebuf; i++)
			if (ebuf[i] != 'Z')
				esafe = false;
		if (elen > 0 && !memchr(ebuf, '\0', elen))
			esafe = false;
	}
	tap_ok(esafe, "a small error buffer is never overrun");
}

/* ---- loading and the search path ---------------------------------------- */

static void
test_load(void)
{
	char xdg[512], sys[512], home[512], path[1024], warn[1024], err[1024];
	struct theme t, def;
	int rc;

	theme_default(&def);
	snprintf(xdg, sizeof xdg, "%s/xdg", tmp_root);
	snprintf(sys, sizeof sys, "%s/sys", tmp_root);
	snprintf(home, sizeof home, "%s/home", tmp_root);
	snprintf(path, sizeof path, "%s/tachyon-top/themes", xdg);
	mkdirs(path);
	mkdirs(sys);
	snprintf(path, sizeof path, "%s/.config/tachyon-top/themes", home);
	mkdirs(path);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	setenv("HOME", home, 1);

	/* Missing: the message says where it looked. */
	rc = theme_load("nosuch", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && strstr(err, "nosuch") && strstr(err, xdg) && strstr(err, sys) &&
	       !strchr(err, '\n'),
	       "a missing theme names the directories searched (%s)", err);
	tap_ok(rc == -1 && style_val_eq(&t.styles[ROLE_SELECTED], &def.styles[ROLE_SELECTED]),
	       "a failed load leaves the default in *out");
	rc = theme_load("/nonexistent/x.theme", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && strstr(err, "/nonexistent/x.theme") && strstr(err, "No such file"),
	       "a missing path says which (%s)", err);

	/* System dir only. */
	snprintf(path, sizeof path, "%s/ocean.theme", sys);
	write_text(path, "name = sys-ocean\ntitle = red\n");
	rc = theme_load("ocean", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == 0 && strcmp(t.name, "sys-ocean") == 0, "found in the system directory (%s)", err);
	rc = theme_load("ocean.theme", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == 0 && strcmp(t.name, "sys-ocean") == 0, "NAME.theme is not suffixed again");

	/* User dir wins. */
	snprintf(path, sizeof path, "%s/tachyon-top/themes/ocean.theme", xdg);
	write_text(path, "name = user-ocean\ntitle = blue\n");
	rc = theme_load("ocean", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == 0 && strcmp(t.name, "user-ocean") == 0 && t.styles[ROLE_TITLE].fg == 4,
	       "$XDG_CONFIG_HOME/tachyon-top/themes comes before the system directory");

	/* Without XDG_CONFIG_HOME (or with a relative one): ~/.config. */
	snprintf(path, sizeof path, "%s/.config/tachyon-top/themes/ocean.theme", home);
	write_text(path, "name = home-ocean\n");
	unsetenv("XDG_CONFIG_HOME");
	rc = theme_load("ocean", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == 0 && strcmp(t.name, "home-ocean") == 0,
	       "without $XDG_CONFIG_HOME, ~/.config/tachyon-top/themes (%s)", err);
	setenv("XDG_CONFIG_HOME", "relative/dir", 1);
	rc = theme_load("ocean", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == 0 && strcmp(t.name, "home-ocean") == 0, "a relative $XDG_CONFIG_HOME is ignored");
	setenv("XDG_CONFIG_HOME", xdg, 1);

	/* Warnings from a loaded file name the file. */
	snprintf(path, sizeof path, "%s/warny.theme", sys);
	write_text(path, "title = red\nbogus = 1\n");
	rc = theme_load("warny", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == 0 && strstr(warn, "warny.theme:2: unknown key 'bogus'"),
	       "warnings carry the file's path and line (%s)", oneline(warn));

	/* Found but unusable in the user dir: an error, not a silent fallback. */
	snprintf(path, sizeof path, "%s/tachyon-top/themes/dir.theme", xdg);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/dir.theme", sys);
	write_text(path, "title = red\n");
	rc = theme_load("dir", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && strstr(err, "not a regular file"), "a directory is not a theme (%s)", err);

	snprintf(path, sizeof path, "%s/bin.theme", sys);
	write_file(path, "title = red\n\0\x01\x02", 15);
	rc = theme_load("bin", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && strstr(err, "not a theme file"), "binary data is not a theme (%s)", err);

	snprintf(path, sizeof path, "%s/big.theme", sys);
	{
		size_t n = THEME_MAX_FILE + 10;
		char *big = malloc(n);
		memset(big, '#', n);
		write_file(path, big, n);
		free(big);
	}
	rc = theme_load("big", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && strstr(err, "too large"), "a file over the size cap is refused (%s)", err);

	snprintf(path, sizeof path, "%s/notes.theme", sys);
	write_text(path, "these are my notes\nabout themes\n");
	rc = theme_load("notes", sys, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && strstr(err, "notes.theme: not a theme file"), "a text file without keys (%s)", err);

	if (geteuid() != 0) {
		snprintf(path, sizeof path, "%s/tachyon-top/themes/locked.theme", xdg);
		write_text(path, "title = red\n");
		chmod(path, 0);
		rc = theme_load("locked", sys, &t, warn, sizeof warn, err, sizeof err);
		tap_ok(rc == -1 && strstr(err, "cannot open") && strstr(err, "Permission denied"),
		       "an unreadable file is an error (%s)", err);
	} else {
		tap_ok(1, "# SKIP unreadable files: running as root");
	}

	/* "default" always exists. */
	rc = theme_load("default", "/nonexistent", &t, warn, sizeof warn, err, sizeof err);
	bool same = rc == 0 && strcmp(t.name, "default") == 0;
	for (int r = 0; r < ROLE_COUNT; r++)
		same &= style_eq(&t.styles[r], &def.styles[r]);
	tap_ok(same, "'default' without a file is the compiled-in theme");

	/* The shipped themes by name from the system directory. */
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/nonexistent", 1);
	rc = theme_load("high-contrast", themes_dir, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == 0 && strcmp(t.name, "high-contrast") == 0, "shipped theme by name (%s)", err);
	unsetenv("HOME");
	rc = theme_load("nosuch", NULL, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && strstr(err, "no theme directory"), "no directory at all (%s)", err);
	rc = theme_load("", NULL, &t, warn, sizeof warn, err, sizeof err);
	tap_ok(rc == -1 && err[0], "empty name");
}

/* ---- garbage ------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void
test_garbage(void)
{
	static const char *const pieces[] = {
		"title", "row.selected", "name", "=", ";", ",", "#", "#ff00ff", "bright",
		"red", "color", "255", "bold", "\n", "\r\n", " ", "\t", "default", "\xef\xbb\xbf",
		"\xff", "\xc3", "\x1b", "dim", "percent.hot", "=;=;=",
	};
	char *buf = malloc(4096);
	bool sane = true;
	int parsed = 0;

	for (int it = 0; it < 20000; it++) {
		size_t len = 0, want = next_rand() % 1500;
		if (it % 2) {
			while (len < want) {   /* random bytes */
				char c = (char)(next_rand() & 0xff);
				buf[len++] = c ? c : '\n';
			}
		} else {
			while (len < want) {   /* plausible tokens */
				const char *p = pieces[next_rand() % (sizeof pieces / sizeof pieces[0])];
				size_t n = strlen(p);
				if (len + n >= 4000)
					break;
				memcpy(buf + len, p, n);
				len += n;
			}
		}
		buf[len] = '\0';

		size_t wlen = next_rand() % 200;
		char *warn = malloc(wlen + 1), err[80];
		struct theme t;
		int rc = theme_parse(buf, "g", &t, wlen ? warn : NULL, wlen, err, sizeof err);
		parsed += rc == 0;
		if ((rc != 0 && rc != -1) || !memchr(t.name, '\0', sizeof t.name) ||
		    (wlen && strlen(warn) >= wlen) || strlen(err) >= sizeof err)
			sane = false;
		for (int r = 0; r < ROLE_COUNT; r++)
			if (t.styles[r].fg < -1 || t.styles[r].fg > 255 || t.styles[r].bg < -1 ||
			    t.styles[r].bg > 255 || t.styles[r].attrs > 63)
				sane = false;
		free(warn);
	}
	free(buf);
	tap_ok(sane, "20000 garbage inputs: no crash, results in range (%d parsed)", parsed);
}

/* ---- the terminal ------------------------------------------------------- */

static FILE *term_out, *term_in;

static SCREEN *
open_term(const char *type)
{
	setenv("TERM", type, 1);
	term_out = fopen("/dev/null", "w");
	term_in = fopen("/dev/null", "r");
	if (!term_out || !term_in)
		return NULL;
	SCREEN *s = newterm(type, term_out, term_in);
	if (!s) {
		fclose(term_out);
		fclose(term_in);
		return NULL;
	}
	set_term(s);
	return s;
}

static void
close_term(SCREEN *s)
{
	endwin();
	delscreen(s);
	fclose(term_out);
	fclose(term_in);
}

static attr_t
A(enum theme_role r)
{
	return (attr_t)theme_attr(r);
}

static int
pair_of(enum theme_role r)
{
	return (int)PAIR_NUMBER(A(r));
}

static bool
pair_colours(enum theme_role r, int *fg, int *bg)
{
	int p = pair_of(r);
#if defined(NCURSES_EXT_COLORS) && NCURSES_VERSION_PATCH >= 20170401
	return extended_pair_content(p, fg, bg) != ERR;
#else
	short f, b;
	if (pair_content((short)p, &f, &b) == ERR)
		return false;
	*fg = f;
	*bg = b;
	return true;
#endif
}

static bool
any_pair(void)
{
	for (int r = 0; r < ROLE_COUNT; r++)
		if (pair_of(r))
			return true;
	return false;
}

/* The roles that must stand apart from ordinary text without colour. */
static bool
mono_fallbacks_ok(const char *what)
{
	attr_t d = A(ROLE_DEFAULT) & ~A_COLOR;
	bool ok = !any_pair() && (A(ROLE_SELECTED) & A_REVERSE) && (A(ROLE_PERCENT_HOT) & A_BOLD) &&
		  (A(ROLE_WARNING) & A_BOLD) && (A(ROLE_ERROR) & A_BOLD) &&
		  A(ROLE_TABLE_HEADER) != d && A(ROLE_SORTED_HEADER) != A(ROLE_TABLE_HEADER) &&
		  A(ROLE_SORTED_HEADER) != d && A(ROLE_STATUS) != d &&
		  (A(ROLE_FLAME_HOT) & A_REVERSE) && (A(ROLE_FLAME_COLD) & A_REVERSE) &&
		  A(ROLE_FLAME_SELECTED) != A(ROLE_FLAME_HOT) && A(ROLE_FLAME_SELECTED) != d;
	if (!ok)
		tap_diag("%s: selected %#x hot %#x table %#x sorted %#x default %#x", what,
			 (unsigned)A(ROLE_SELECTED), (unsigned)A(ROLE_PERCENT_HOT),
			 (unsigned)A(ROLE_TABLE_HEADER), (unsigned)A(ROLE_SORTED_HEADER), (unsigned)d);
	return ok;
}

/* A theme of plain text everywhere: the worst case for monochrome. */
static void
plain_theme(struct theme *t)
{
	char text[2048] = "";
	char warn[256];
	for (int r = 0; r < ROLE_COUNT; r++) {
		strcat(text, theme_role_key(r));
		strcat(text, " = default\n");
	}
	parse(text, t, warn, sizeof warn);
}

static bool
have_tic(void)
{
	return system("tic -V >/dev/null 2>&1") == 0;
}

static void
test_terminal(void)
{
	struct theme def, mono, plain, custom, own;
	char warn[512], err[256], path[4200];
	SCREEN *s;

	theme_default(&def);
	plain_theme(&plain);
	snprintf(path, sizeof path, "%s/mono.theme", themes_dir);
	theme_load(path, NULL, &mono, warn, sizeof warn, err, sizeof err);
	theme_parse("title = color196;color21\nheader = color236;color234\n"
		    "file = brightgreen;default\nhelp = #808080\n"
		    "table.header = red;blue\ntable.sorted = red;blue\n",
		    "custom", &custom, warn, sizeof warn, err, sizeof err);

	theme_attr(ROLE_SELECTED);   /* before any apply: must not crash */
	unsetenv("NO_COLOR");

	s = open_term("xterm-256color");
	if (!s) {
		tap_ok(1, "# SKIP terminal tests: no terminfo for xterm-256color");
		return;
	}
	int fg = 0, bg = 0;
	bool ok;

	theme_apply(&def, false);
	tap_ok(pair_of(ROLE_DEFAULT) == 0, "256 colours: ordinary text keeps the terminal's colours");
	ok = pair_colours(ROLE_SELECTED, &fg, &bg);
	tap_ok(ok && pair_of(ROLE_SELECTED) != 0 && fg == 0 && bg == 6,
	       "256 colours: selected is black on cyan (%d;%d)", fg, bg);
	ok = pair_colours(ROLE_PERCENT_HOT, &fg, &bg);
	tap_ok(ok && pair_of(ROLE_PERCENT_HOT) != 0 && fg == 1 && bg == -1 &&
	       (A(ROLE_PERCENT_HOT) & A_BOLD),
	       "256 colours: hot is bold red on the terminal background (%d;%d)", fg, bg);
	tap_ok(pair_of(ROLE_TABLE_HEADER) != pair_of(ROLE_SORTED_HEADER),
	       "256 colours: the sort heading has its own colours");
	tap_ok(pair_of(ROLE_SELECTED) == pair_of(ROLE_STATUS), "equal colours share a pair");
	theme_apply(&custom, false);
	ok = pair_colours(ROLE_TITLE, &fg, &bg);
	tap_ok(ok && fg == 196 && bg == 21 && !(A(ROLE_TITLE) & A_BOLD),
	       "256 colours: indices pass unchanged (%d;%d)", fg, bg);
	tap_ok(A(ROLE_SORTED_HEADER) != A(ROLE_TABLE_HEADER) && (A(ROLE_SORTED_HEADER) & A_BOLD),
	       "a sort heading styled like the others gets bold");
	theme_apply(&plain, false);
	tap_ok(A(ROLE_SELECTED) & A_REVERSE, "colour terminal, plain theme: selected is reverse");
	theme_apply(NULL, false);
	tap_ok(pair_of(ROLE_SELECTED) != 0, "theme_apply(NULL) applies the default");

	theme_apply(&def, true);
	tap_ok(mono_fallbacks_ok("monochrome=true"), "monochrome=true: no colours, fallbacks in place");
	setenv("NO_COLOR", "1", 1);
	theme_apply(&def, false);
	tap_ok(mono_fallbacks_ok("NO_COLOR=1"), "NO_COLOR=1: no colours, fallbacks in place");
	theme_apply(&plain, false);
	tap_ok(mono_fallbacks_ok("NO_COLOR, plain"), "NO_COLOR with a plain theme: fallbacks in place");
	tap_ok((A(ROLE_TITLE) & A_BOLD) && (A(ROLE_TABLE_HEADER) & A_UNDERLINE) &&
	       (A(ROLE_HEADER_VALUE) & A_BOLD),
	       "monochrome: title and figures bold, headings underlined");
	/* Attributes of their own do not excuse these roles from the fallback:
	 * without colour, bold alone does not mark a selected row. */
	theme_parse("row.selected = black;cyan;bold\npercent.hot = red;default;underline\n"
		    "warning = yellow;default;italic\nerror = red;default;underline\n",
		    "own", &own, warn, sizeof warn, err, sizeof err);
	theme_apply(&own, false);
	tap_ok(mono_fallbacks_ok("NO_COLOR, own attributes"),
	       "monochrome: selected gets reverse and hot/warning/error bold even with other attributes");
	theme_apply(&mono, false);
	tap_ok(mono_fallbacks_ok("NO_COLOR, mono") && (A(ROLE_ERROR) & A_REVERSE) &&
	       (A(ROLE_TABLE_HEADER) & A_UNDERLINE),
	       "mono.theme keeps its own attributes");
	setenv("NO_COLOR", "", 1);
	theme_apply(&def, false);
	tap_ok(any_pair(), "an empty NO_COLOR does not disable colour");
	unsetenv("NO_COLOR");
	tap_ok(theme_attr(ROLE_COUNT) == 0 && theme_attr((enum theme_role)-5) == 0,
	       "theme_attr out of range is 0");
	close_term(s);

	/* 8 colours: nearest basic colour, bright foregrounds as bold. */
	s = open_term("xterm");
	if (s) {
		theme_apply(&custom, false);
		ok = pair_colours(ROLE_TITLE, &fg, &bg);
		tap_ok(COLORS == 8 && ok && fg == 1 && bg == 4 && (A(ROLE_TITLE) & A_BOLD),
		       "8 colours: color196;color21 -> bold red on blue (%d;%d)", fg, bg);
		ok = pair_colours(ROLE_FILE, &fg, &bg);
		tap_ok(ok && fg == 2 && (A(ROLE_FILE) & A_BOLD),
		       "8 colours: brightgreen -> bold green (%d)", fg);
		ok = pair_colours(ROLE_HELP, &fg, &bg);
		tap_ok(ok && fg == 7 && (A(ROLE_HELP) & A_DIM), "8 colours: grey -> dim white (%d)", fg);
		ok = pair_colours(ROLE_HEADER, &fg, &bg);
		tap_ok(ok && fg != bg,
		       "8 colours: two dark greys do not become black on black (%d;%d)", fg, bg);
		theme_apply(&def, false);
		ok = pair_colours(ROLE_SELECTED, &fg, &bg) && fg == 0 && bg == 6;
		ok = ok && pair_colours(ROLE_PERCENT_WARM, &fg, &bg) && fg == 3;
		tap_ok(ok, "8 colours: the default theme keeps its basic colours");
		for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
			struct theme t;
			ok = true;
			snprintf(path, sizeof path, "%s/%s.theme", themes_dir, shipped[i]);
			theme_load(path, NULL, &t, warn, sizeof warn, err, sizeof err);
			theme_apply(&t, false);
			for (int r = 0; r < ROLE_COUNT; r++)
				if (pair_of(r) && pair_colours(r, &fg, &bg) && fg == bg)
					ok = false;
			if (A(ROLE_SELECTED) == A(ROLE_DEFAULT))
				ok = false;
			tap_ok(ok, "8 colours: %s.theme has no invisible text and a visible selection",
			       shipped[i]);
		}
		close_term(s);
	} else {
		tap_ok(1, "# SKIP 8-colour tests: no terminfo for xterm");
	}

	/* No colours at all. */
	s = open_term("vt100");
	if (s) {
		theme_apply(&def, false);
		tap_ok(!has_colors() && mono_fallbacks_ok("vt100"),
		       "vt100: no colours, fallbacks in place");
		theme_apply(&plain, false);
		tap_ok(mono_fallbacks_ok("vt100, plain"), "vt100 with a plain theme: fallbacks in place");
		close_term(s);
	} else {
		tap_ok(1, "# SKIP monochrome terminal tests: no terminfo for vt100");
	}

	/* Direct colour (xterm-direct): RGB values, ANSI below 8. The entry is
	 * compiled here so the test does not depend on ncurses-term. */
	char tdir[512], src[600], cmd[1400];
	snprintf(tdir, sizeof tdir, "%s/terminfo", tmp_root);
	snprintf(src, sizeof src, "%s/direct.ti", tmp_root);
	mkdirs(tdir);
	write_text(src,
		   "tt-direct|direct colour for test_theme,\n"
		   "\tcolors#0x1000000, pairs#0x10000, RGB,\n"
		   "\tsetaf=\\E[%?%p1%{8}%<%t3%p1%d%e38:2::%p1%{65536}%/%d:%p1%{256}%/%{255}%&%d:%p1%{255}%&%d%;m,\n"
		   "\tsetab=\\E[%?%p1%{8}%<%t4%p1%d%e48:2::%p1%{65536}%/%d:%p1%{256}%/%{255}%&%d:%p1%{255}%&%d%;m,\n"
		   "\tuse=xterm-256color,\n");
	snprintf(cmd, sizeof cmd, "tic -x -o '%s' '%s' >/dev/null 2>&1", tdir, src);
	if (have_tic() && system(cmd) == 0) {
		setenv("TERMINFO", tdir, 1);
		s = open_term("tt-direct");
		if (s) {
			theme_apply(&custom, false);
			/* 0x0000ff is kept clear of 0..255, which some direct
			 * variants read as palette indices: 0x0001ff. */
			ok = pair_colours(ROLE_TITLE, &fg, &bg);
			tap_ok(COLORS >= 0x1000000 && ok && fg == 0xff0000 && bg == 0x0001ff,
			       "direct colour: color196;color21 -> RGB %#x;%#x", (unsigned)fg, (unsigned)bg);
			theme_apply(&def, false);
			ok = pair_colours(ROLE_SELECTED, &fg, &bg);
			tap_ok(ok && fg == 0 && bg == 6, "direct colour: basic colours stay ANSI (%d;%d)",
			       fg, bg);
			close_term(s);
		} else {
			tap_ok(1, "# SKIP direct colour: newterm failed");
		}
		unsetenv("TERMINFO");
	} else {
		tap_ok(1, "# SKIP direct colour: tic not available");
	}
}

/* ---- main --------------------------------------------------------------- */

static void
rm_rf(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
}

int
main(void)
{
	const char *srcdir = getenv("TT_SRCDIR");
	const char *tmp = getenv("TMPDIR");

	snprintf(themes_dir, sizeof themes_dir, "%s/themes", srcdir && *srcdir ? srcdir : ".");
	snprintf(tmp_root, sizeof tmp_root, "%s/test_theme.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmp_root)) {
		printf("Bail out! mkdtemp %s: %s\n", tmp_root, strerror(errno));
		return 1;
	}

	test_role_keys();
	test_old_theme();
	test_shipped();
	test_colours();
	test_values();
	test_structure();
	test_truncation();
	test_load();
	test_garbage();
	test_terminal();

	rm_rf(tmp_root);
	return tap_done();
}
