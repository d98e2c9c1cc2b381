/* Parsing /proc/PID/maps. */
#ifndef TT_PROCMAPS_H
#define TT_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct map_entry {
	uint64_t start, end, offset;
	char perms[5];
	bool deleted;          /* the path carried a " (deleted)" suffix */
	char path[512];        /* empty for anonymous mappings */
};

struct proc_maps {
	struct map_entry *entries;
	size_t count;
};

/* Parse one line of a maps file. Returns false for malformed lines. */
bool procmaps_parse_line(const char *line, struct map_entry *out);

/* Read /proc/PID/maps. */
tt_status procmaps_read(pid_t pid, struct proc_maps *maps, struct tt_error *err);

/* Parse a whole maps text (used by procmaps_read and the unit tests). */
tt_status procmaps_parse(const char *text, struct proc_maps *maps, struct tt_error *err);

void procmaps_free(struct proc_maps *maps);

/* Pointer to the path's last component. */
const char *procmaps_basename(const char *path);

#endif
