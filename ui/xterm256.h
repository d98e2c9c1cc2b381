/* The xterm 256-colour palette: the 16 basic colours (xterm's defaults),
 * the 6x6x6 cube and the grey ramp, and the nearest entry to a colour. */
#ifndef TT_XTERM256_H
#define TT_XTERM256_H

/* Palette entry idx (0..255) as RGB. */
void xterm_rgb(int idx, int rgb[3]);
/* Squared RGB distance between a and (r, g, b). */
int xterm_dist2(const int a[3], int r, int g, int b);
/* #RRGGBB -> the nearest of 16..255 (ties to the cube). */
int xterm_from_rgb(int r, int g, int b);

#endif
