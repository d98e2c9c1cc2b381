/* Colour themes: named styles for every part of the screen, loaded from
 * small `key = FG;BG;ATTRS` files and turned into ncurses attributes.
 *
 * The parser is pure (no curses) so it can be unit-tested and fuzzed; only
 * theme_apply() and theme_attr() touch the terminal. ncurses is kept out of
 * this header: theme_attr() returns the attr_t as an int. */
#ifndef TT_THEME_H
#define TT_THEME_H

#include <stdbool.h>
#include <stddef.h>

enum theme_role {
	ROLE_DEFAULT,        /* ordinary text */
	ROLE_TITLE,          /* program name / title bar */
	ROLE_HEADER,         /* header labels */
	ROLE_HEADER_VALUE,   /* header figures */
	ROLE_TABLE_HEADER,   /* column headings */
	ROLE_SORTED_HEADER,  /* the heading of the sort column */
	ROLE_SELECTED,       /* the selected row */
	ROLE_PERCENT_HOT,    /* high percentages (>= 20%) */
	ROLE_PERCENT_WARM,   /* middling (>= 5%) */
	ROLE_PERCENT_COLD,   /* small */
	ROLE_FUNCTION,       /* function names */
	ROLE_FILE,           /* file:line */
	ROLE_GIL,            /* holds the GIL */
	ROLE_GIL_WAIT,       /* waits for the GIL */
	ROLE_ON_CPU,         /* on CPU */
	ROLE_IDLE,           /* idle */
	ROLE_WARNING,        /* warnings (behind schedule, errors) */
	ROLE_ERROR,          /* errors, "process exited" */
	ROLE_STATUS,         /* the bottom status/key line */
	ROLE_HELP,           /* help overlay */
	ROLE_BORDER,         /* panel titles and separators */
	ROLE_FILTER,         /* the filter prompt and active filter */
	ROLE_DIM,            /* secondary text */
	ROLE_TREE_GUIDE,     /* call tree: indentation guides and open/closed marks */
	ROLE_TREE_FOLD,      /* call tree: "... N more" and cut-depth lines */
	ROLE_FLAME_HOT,      /* flame view: frames with >= 20% of the samples shown */
	ROLE_FLAME_WARM,     /* >= 5% */
	ROLE_FLAME_COLD,     /* the rest */
	ROLE_FLAME_SELECTED, /* the selected frame */
	ROLE_COUNT
};

/* Colours: -1 = terminal default, 0..255 = xterm-256 index.
 * `set` is true when the theme text gave this role explicitly (theme_default()
 * gives all of them); a role with `set` false still holds a usable style, the
 * compiled-in default one. */
struct theme_style { short fg, bg; unsigned attrs; /* THEME_ATTR_* bits */ bool set; };
enum { THEME_ATTR_BOLD = 1, THEME_ATTR_DIM = 2, THEME_ATTR_UNDERLINE = 4, THEME_ATTR_REVERSE = 8,
       THEME_ATTR_ITALIC = 16, THEME_ATTR_STANDOUT = 32 };
struct theme { char name[64]; struct theme_style styles[ROLE_COUNT]; };

/* Largest theme file theme_load() accepts, and longest line. */
#define THEME_MAX_FILE (64u * 1024u)
#define THEME_MAX_LINE 1024u

void theme_default(struct theme *out);               /* compiled-in default, equal to themes/default.theme */

/* Load a theme: name_or_path containing '/' is a path; otherwise NAME.theme is searched in
 * $XDG_CONFIG_HOME/tachyon-top/themes (or ~/.config/tachyon-top/themes), then in system_dir
 * (may be NULL). A NAME already ending in ".theme" is not suffixed again. The name "default"
 * falls back to the compiled-in theme when no default.theme file is found.
 * Starts from theme_default(), so missing keys keep defaults. Unknown keys and bad values are
 * not fatal: each appends one line to `warnings` (NUL-terminated, newline-separated, truncated
 * safely). Returns 0, or -1 with a one-line `err` (file not found: say where it looked;
 * unreadable; not a theme file); on -1 *out holds the compiled-in default. */
int theme_load(const char *name_or_path, const char *system_dir, struct theme *out,
               char *warnings, size_t wlen, char *err, size_t errlen);

/* Parse theme text (used by theme_load and the tests); `origin` names it in messages, and
 * without a `name` key the theme is named after origin's base name minus ".theme".
 * Returns -1 ("not a theme file") only when the text has content but no known key. */
int theme_parse(const char *text, const char *origin, struct theme *out,
                char *warnings, size_t wlen, char *err, size_t errlen);

/* (#RRGGBB values become the nearest xterm colour among 16..255 -- never 0..15, which each
 * terminal sets differently: #000000 -> 16, #ff0000 -> 196, #ffffff -> 231.) */

const char *theme_role_key(enum theme_role role);    /* "table.header" etc.; NULL if out of range */

/* After initscr(): set up colour pairs and compute each role's attr_t. Handles:
 * has_colors() false or NO_COLOR set in the environment (non-empty, per no-color.org) or
 * `monochrome` true -> no colours at all, each role keeps its attributes, and roles that would
 * become indistinguishable get a sensible monochrome fallback (selected -> reverse, headers ->
 * bold/underline, warnings/errors -> bold, hot percent -> bold); COLORS < 256 -> map
 * 256-colour indices to the nearest of the 8 (or 16 when COLORS >= 16) basic colours;
 * use_default_colors() so -1 works. Call again after a theme change.
 * A role whose FG or BG is -1 takes that colour from ROLE_DEFAULT, so a theme with a
 * background on `default` paints it everywhere (paint the window with
 * wbkgd(win, ' ' | theme_attr(ROLE_DEFAULT)) too). */
void theme_apply(const struct theme *t, bool monochrome);

/* An ncurses attr_t (as int) for attron/attrset/wattrset: attributes | COLOR_PAIR(n).
 * Use with wattrset/wattron, not wattr_set (which takes the pair separately).
 * 0 (A_NORMAL) before theme_apply() or for a role out of range. */
int theme_attr(enum theme_role role);

#endif
