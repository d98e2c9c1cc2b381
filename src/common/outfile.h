/* Output files that are all-or-nothing: a profile is written to a temporary
 * file in the destination's directory and rename()d over the destination only
 * once every byte is written and flushed. A failed or interrupted run leaves
 * an existing file untouched; nothing but the temporary file this run created
 * is ever removed.
 *
 * A destination that exists and is not a regular file (a FIFO, a terminal,
 * /dev/null, /dev/stdout) cannot be replaced: it is opened and written in
 * place, at commit time, and never unlinked. */
#ifndef TT_OUTFILE_H
#define TT_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"

struct outfile {
	FILE *f;            /* write here between outfile_open and commit/abort */
	char *name;         /* the path as given, for messages */
	char *dest;         /* where the data goes (a symlink's resolved target) */
	char *tmp;          /* the temporary file's name, NULL if not named yet */
	bool in_place;      /* dest is not a regular file: written directly */
};

/* Prepare to write `path`: checks it can be written and creates the
 * temporary file, so a bad path fails before any work. `path` itself is not
 * touched. */
tt_status outfile_open(struct outfile *o, const char *path, struct tt_error *err);

/* Flush, close and move the data into place; on failure the destination
 * keeps its old content and the error names the cause. Frees `o` either way. */
tt_status outfile_commit(struct outfile *o, struct tt_error *err);

/* Drop what was written: removes the temporary file only. Frees `o`. */
void outfile_abort(struct outfile *o);

#endif
