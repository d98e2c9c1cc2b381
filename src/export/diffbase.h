/* The baseline of a differential flame graph: an earlier profile read back
 * from folded stacks (tachyon-top's collapsed output, or any
 * `frame;frame;frame COUNT` file), kept as the samples under each call
 * path (every prefix of every stack) by a hash of its frames' labels. A
 * path's key chains its parent's with its last label, so the flame graph
 * finds a frame's baseline by the same chain over its own labels.
 *
 * Process and thread frames ("process 123 (cmd)", "thread 456 name") are
 * keyed without their numbers: two runs of one program have other pids;
 * Python frames without their line ("name (file)"): code edited between
 * the runs has its lines moved. */
#ifndef TT_DIFFBASE_H
#define TT_DIFFBASE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "keytab.h"

struct diff_path {
	uint64_t key;
	uint64_t samples;
};

struct diff_base {
	struct keytab paths;       /* struct diff_path by key */
	uint64_t total;            /* samples of every stack */
	uint64_t stacks;           /* lines read */
};

/* The key of the empty path (the flame graph's "all"). */
#define DIFFBASE_ROOT 0x84222325cbf29ce4ull

/* Read a folded-stacks file, or a recording (binrec.h). A line that is not `STACK COUNT` fails with
 * its number; so does a file with no samples. */
tt_status diffbase_load(struct diff_base *b, const char *path, struct tt_error *err);
/* An empty baseline (to add to); free it with diffbase_free. */
void diffbase_init(struct diff_base *b);
void diffbase_free(struct diff_base *b);

/* The key of path `parent` followed by a frame labelled as the collapsed
 * format labels it (escaped, "name (file:line)"). */
uint64_t diffbase_key(uint64_t parent, const char *label);
/* Add samples under the path `key` (the flame graph keys its own run's
 * paths the same way: two frames of one function at two lines are one
 * path). false when memory is short. */
bool diffbase_add(struct diff_base *b, uint64_t key, uint64_t samples);
/* Samples the baseline had under the path `key` (0: it never went there). */
uint64_t diffbase_samples(const struct diff_base *b, uint64_t key);

#endif
