/* An interactive flame graph: one self-contained SVG file (inline CSS and
 * script, nothing fetched) that also reads as a static picture where
 * scripts do not run (an <img> tag). */
#ifndef TT_FLAMEGRAPH_H
#define TT_FLAMEGRAPH_H

#include <stdio.h>

#include "export.h"

/* Frames narrower than this many pixels are not drawn (their parent covers
 * them), as flamegraph.pl does; more are left out when a profile would
 * otherwise draw more than FLAMEGRAPH_MAX_FRAMES rectangles, which keeps
 * big profiles quick to open. */
#define FLAMEGRAPH_MIN_WIDTH_PX 0.1
#define FLAMEGRAPH_MAX_FRAMES 30000

int flamegraph_write(const struct profile *p, const struct procset *ps,
		     const struct export_meta *meta, FILE *f);

#endif
