/* A line heatmap: one self-contained HTML page (no script, nothing
 * fetched) with an index of the source files by samples and each file's
 * source, every line shaded by the samples on it (own: the line running;
 * total: the line anywhere on the stack, once per stack) with both counts
 * in the margin. Sources are read from the target's root and working
 * directory (file descriptors opened while it ran), never by a host path. */
#ifndef TT_HEATMAP_H
#define TT_HEATMAP_H

#include <stdbool.h>
#include <stdio.h>

#include "export.h"

/* Files shown with their source (the rest are in the index); a file
 * larger than this is listed by line only. */
#define HEATMAP_MAX_FILES 100
#define HEATMAP_MAX_FILE_BYTES (4u << 20)

/* The files whose source the page shows, in its order (a recording keeps
 * them for replay). false when memory is short. */
bool heatmap_sources(const struct profile *p, const struct procset *ps,
		     void (*each)(void *ctx, const char *name), void *ctx);

int heatmap_write(const struct profile *p, const struct procset *ps,
		  const struct export_meta *meta, FILE *f);

#endif
