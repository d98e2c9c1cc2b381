/* dump --locals: each Python frame's arguments and locals, text or JSON. */
#ifndef TT_DUMPLOCALS_H
#define TT_DUMPLOCALS_H

#include <stdio.h>

#include "python/pyvalue.h"
#include "walk/plainwalk.h"

/* Under a frame's line: "        name = value", one a line, arguments
 * first, sanitized; "(locals not read: ...)" when they cannot be (v NULL:
 * out of memory). */
void dumplocals_text(FILE *f, struct pyvalue *v, const struct plainwalk *u,
		     const struct tt_frame *fr);

/* "locals": [{"name", "kind", "type", "repr"}, ...] inside a frame's
 * object (null when they cannot be read, with "locals_error"). */
struct jsonw;
void dumplocals_json(struct jsonw *w, struct pyvalue *v, const struct plainwalk *u,
		     const struct tt_frame *fr);

#endif
