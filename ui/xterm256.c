#include "config.h"

#include <stdlib.h>

#include "xterm256.h"

/* xterm's own defaults for the 16 basic colours; other terminals differ a
 * little, which only matters for picking the nearest one. */
static const unsigned char base16_rgb[16][3] = {
	{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0},
	{0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
	{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0},
	{92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
};
static const int cube_level[6] = {0, 95, 135, 175, 215, 255};

void
xterm_rgb(int idx, int rgb[3])
{
	if (idx < 16) {
		for (int i = 0; i < 3; i++)
			rgb[i] = base16_rgb[idx][i];
	} else if (idx < 232) {
		idx -= 16;
		rgb[0] = cube_level[idx / 36];
		rgb[1] = cube_level[idx / 6 % 6];
		rgb[2] = cube_level[idx % 6];
	} else {
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (idx - 232);
	}
}

int
xterm_dist2(const int a[3], int r, int g, int b)
{
	int dr = a[0] - r, dg = a[1] - g, db = a[2] - b;
	return dr * dr + dg * dg + db * db;
}

static int
nearest_cube_level(int v)
{
	int best = 0;
	for (int i = 1; i < 6; i++)
		if (abs(cube_level[i] - v) < abs(cube_level[best] - v))
			best = i;
	return best;
}

/* #RRGGBB -> the nearest of 16..255 by plain RGB distance (the cube and the
 * grey ramp; never 0..15, whose look depends on the terminal's palette).
 * Ties go to the cube, so #000000 -> 16, #ffffff -> 231. */
int
xterm_from_rgb(int r, int g, int b)
{
	int ci = 16 + 36 * nearest_cube_level(r) + 6 * nearest_cube_level(g) +
		 nearest_cube_level(b);
	int c[3], best = ci, bestd;
	xterm_rgb(ci, c);
	bestd = xterm_dist2(c, r, g, b);
	for (int i = 232; i < 256; i++) {
		xterm_rgb(i, c);
		int d = xterm_dist2(c, r, g, b);
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}
