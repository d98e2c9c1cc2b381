/* A theme on the terminal: each role's style mapped onto what the terminal
 * can show (colour pairs, the nearest colours, attributes it supports). */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "theme.h"
#include "xterm256.h"

/* Direct-colour terminals (xterm-direct: COLORS = 2^24) take RGB values,
 * which do not fit init_pair()'s shorts. */
#if defined(NCURSES_EXT_COLORS) && defined(NCURSES_VERSION_PATCH) && \
	NCURSES_VERSION_PATCH >= 20170401
#define THEME_HAVE_EXT_PAIRS 1
#endif

static int role_attr[ROLE_COUNT];

int
theme_attr(enum theme_role role)
{
	if ((unsigned)role >= ROLE_COUNT)
		return 0;
	return role_attr[role];
}

static attr_t
curses_attrs(unsigned a)
{
	attr_t r = A_NORMAL;
	if (a & THEME_ATTR_BOLD)
		r |= A_BOLD;
	if (a & THEME_ATTR_DIM)
		r |= A_DIM;
	if (a & THEME_ATTR_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & THEME_ATTR_REVERSE)
		r |= A_REVERSE;
#ifdef A_ITALIC
	if (a & THEME_ATTR_ITALIC)
		r |= A_ITALIC;
#endif
	if (a & THEME_ATTR_STANDOUT)
		r |= A_STANDOUT;
	return r;
}

/* What keeps a role recognisable once it looks like ordinary text (no
 * colours, or colours that collapsed on a small palette). `always`: in
 * monochrome it is added even if the theme gave other attributes, because
 * the role must stand out (a selection you cannot see is a bug). */
static attr_t
fallback_attrs(int role, bool *always)
{
	*always = false;
	switch (role) {
	case ROLE_SELECTED:
		*always = true;
		return A_REVERSE;
	case ROLE_PERCENT_HOT:
	case ROLE_WARNING:
	case ROLE_ERROR:
		*always = true;
		return A_BOLD;
	case ROLE_TITLE:
	case ROLE_HEADER_VALUE:
	case ROLE_BORDER:
	case ROLE_FILTER:
	case ROLE_GIL:
		return A_BOLD;
	case ROLE_TABLE_HEADER:
		return A_UNDERLINE;
	case ROLE_SORTED_HEADER:
		return A_BOLD | A_UNDERLINE;
	case ROLE_STATUS:
		return A_REVERSE;
	case ROLE_IDLE:
	case ROLE_DIM:
	case ROLE_TREE_GUIDE:
	case ROLE_TREE_FOLD:
		return A_DIM;
	case ROLE_FLAME_HOT:
	case ROLE_FLAME_WARM:
	case ROLE_FLAME_COLD:
		/* without colours, frames are blocks of reverse video */
		*always = true;
		return A_REVERSE;
	case ROLE_FLAME_SELECTED:
		*always = true;
		return A_BOLD | A_UNDERLINE;
	default:
		return A_NORMAL;
	}
}

/* The wanted attributes this terminal has; none of them -> standout, which
 * every terminal with any highlighting maps to something visible. */
static attr_t
usable(attr_t want, attr_t have)
{
	attr_t got = want & have;
	if (want && !got)
		got = have & A_STANDOUT;
	return got;
}

enum cmode { CM_MONO, CM_8, CM_16, CM_256, CM_DIRECT };

static int
nearest_basic(int idx, int n)
{
	int rgb[3], best = 0, bestd = INT_MAX;
	xterm_rgb(idx, rgb);
	for (int i = 0; i < n; i++) {
		int c[3];
		xterm_rgb(i, c);
		int d = xterm_dist2(c, rgb[0], rgb[1], rgb[2]);
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

/* A theme colour (-1..255) as this terminal takes it. With 8 colours a bright
 * foreground becomes its normal colour plus bold (how such terminals show
 * bright text) and grey becomes dim white; backgrounds just take the nearest. */
static int
map_colour(int c, enum cmode m, bool fg, attr_t *extra)
{
	int rgb[3], v;

	if (c < 0)
		return -1;
	switch (m) {
	case CM_256:
		return c;
	case CM_DIRECT:
		/* Direct-colour terminfo sends values below 8 as ANSI colours; keep
		 * other values clear of 0..255 so no variant reads them as an index. */
		if (c < 8)
			return c;
		xterm_rgb(c, rgb);
		v = rgb[0] << 16 | rgb[1] << 8 | rgb[2];
		return v < 256 ? v | 0x100 : v;
	case CM_16:
		return c < 16 ? c : nearest_basic(c, 16);
	case CM_8:
		if (!fg)
			return c < 8 ? c : nearest_basic(c, 8);
		v = c < 16 ? c : nearest_basic(c, 16);
		if (v < 8)
			return v;
		if (v == 8) {
			*extra |= A_DIM;
			return COLOR_WHITE;
		}
		*extra |= A_BOLD;
		return v - 8;
	case CM_MONO:
	default:
		return -1;
	}
}

static bool
is_light(int c)
{
	int rgb[3];
	xterm_rgb(c, rgb);
	return 299 * rgb[0] + 587 * rgb[1] + 114 * rgb[2] > 128 * 1000;
}

static bool
no_color_env(void)
{
	const char *v = getenv("NO_COLOR");
	return v && v[0];
}

static bool
init_role_pair(int pair, int fg, int bg, enum cmode m)
{
#ifdef THEME_HAVE_EXT_PAIRS
	if (m == CM_DIRECT)
		return init_extended_pair(pair, fg, bg) != ERR;
#else
	(void)m;
#endif
	return init_pair((short)pair, (short)fg, (short)bg) != ERR;
}

void
theme_apply(const struct theme *t, bool monochrome)
{
	struct theme th;
	enum cmode m = CM_MONO;
	bool default_colours = true;
	attr_t have = (attr_t)~(attr_t)0;
	attr_t a[ROLE_COUNT];
	int pair_fg[ROLE_COUNT + 1], pair_bg[ROLE_COUNT + 1], npairs = 0, max_pairs = 0;

	if (t)
		th = *t;
	else
		theme_default(&th);
	if (stdscr) {
		have = termattrs();
		if (!monochrome && !no_color_env() && has_colors() && start_color() != ERR &&
		    COLORS >= 8) {
			if (COLORS >= 0x1000000) {
#ifdef THEME_HAVE_EXT_PAIRS
				m = CM_DIRECT;
#else
				m = CM_8;
#endif
			} else if (COLORS >= 256) {
				m = CM_256;
			} else if (COLORS >= 16) {
				m = CM_16;
			} else {
				m = CM_8;
			}
			default_colours = use_default_colors() != ERR;
			max_pairs = COLOR_PAIRS - 1;
			if (max_pairs > ROLE_COUNT)
				max_pairs = ROLE_COUNT;
		}
	}

	const struct theme_style *def = &th.styles[ROLE_DEFAULT];
	for (int r = 0; r < ROLE_COUNT; r++) {
		const struct theme_style *st = &th.styles[r];
		attr_t extra = A_NORMAL;
		int pair = 0;

		if (m != CM_MONO) {
			/* "default" in a role means the default role's colour. */
			int ofg = st->fg >= 0 ? st->fg : def->fg;
			int obg = st->bg >= 0 ? st->bg : def->bg;
			int fg = map_colour(ofg, m, true, &extra);
			int bg = map_colour(obg, m, false, &extra);

			/* Distinct colours that collapsed into one: keep text readable. */
			if (fg >= 0 && fg == bg && ofg != obg) {
				fg = is_light(obg) ? COLOR_BLACK : COLOR_WHITE;
				extra &= ~(attr_t)(A_BOLD | A_DIM);
			}
			if (!default_colours) {
				if (fg < 0)
					fg = COLOR_WHITE;
				if (bg < 0)
					bg = COLOR_BLACK;
			}
			if (fg >= 0 || bg >= 0) {
				int i;
				for (i = 0; i < npairs; i++)
					if (pair_fg[i] == fg && pair_bg[i] == bg)
						break;
				if (i < npairs) {
					pair = i + 1;
				} else if (npairs < max_pairs &&
					   init_role_pair(npairs + 1, fg, bg, m)) {
					pair_fg[npairs] = fg;
					pair_bg[npairs] = bg;
					pair = ++npairs;
				}
			}
		}
		a[r] = COLOR_PAIR(pair) | curses_attrs(st->attrs) | extra;
	}

	for (int r = 1; r < ROLE_COUNT; r++) {
		bool always;
		attr_t fb = fallback_attrs(r, &always);
		if (fb && ((m == CM_MONO && always) || a[r] == a[ROLE_DEFAULT]))
			a[r] |= usable(fb, have);
	}
	/* The sort column must be findable among the headings. */
	if (a[ROLE_SORTED_HEADER] == a[ROLE_TABLE_HEADER])
		a[ROLE_SORTED_HEADER] |= usable(A_BOLD, have);
	if (a[ROLE_SORTED_HEADER] == a[ROLE_TABLE_HEADER])
		a[ROLE_SORTED_HEADER] |= usable(A_REVERSE, have);

	for (int r = 0; r < ROLE_COUNT; r++)
		role_attr[r] = (int)a[r];
}
