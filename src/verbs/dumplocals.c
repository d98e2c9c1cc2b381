/* dump --locals (dumplocals.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "dumplocals.h"
#include "jsonw.h"
#include "sanitize.h"

static const char *const KIND_NAMES[] = {
	[PYLOCAL_ARG] = "arg", [PYLOCAL_LOCAL] = "local", [PYLOCAL_CELL] = "cell",
	[PYLOCAL_FREE] = "free",
};

/* One frame's locals with their values, or a count < 0 and why. */
struct frame_locals {
	struct pylocal locals[PYLOCALS_MAX];
	int n;
	struct tt_error err;
};

static struct frame_locals *
read_locals(struct pyvalue *v, const struct plainwalk *u, const struct tt_frame *fr)
{
	struct frame_locals *fl = v ? calloc(1, sizeof *fl) : NULL;
	if (fl)
		fl->n = pylocals_read(v, fr->addr, codecache_get(&u->codes, fr->code_id)->addr,
				      fl->locals, PYLOCALS_MAX, &fl->err);
	return fl;
}

void
dumplocals_text(FILE *f, struct pyvalue *v, const struct plainwalk *u, const struct tt_frame *fr)
{
	struct frame_locals *fl = read_locals(v, u, fr);
	if (!fl) {
		fprintf(f, "        (locals not read: out of memory)\n");
		return;
	}
	static char safe[4 * PYVALUE_TEXT_MAX], name[512];
	if (fl->n < 0) {
		sanitize_for_terminal(fl->err.msg, safe, sizeof safe);
		fprintf(f, "        (locals not read: %s)\n", safe);
	}
	for (int i = 0; i < fl->n; i++) {
		sanitize_for_terminal(fl->locals[i].name, name, sizeof name);
		sanitize_for_terminal(fl->locals[i].repr, safe, sizeof safe);
		fprintf(f, "        %s = %s\n", name, safe);
	}
	free(fl);
}

void
dumplocals_json(struct jsonw *w, struct pyvalue *v, const struct plainwalk *u,
		const struct tt_frame *fr)
{
	struct frame_locals *fl = read_locals(v, u, fr);
	if (!fl || fl->n < 0) {
		jsonw_null(w, "locals");
		jsonw_string(w, "locals_error", fl ? fl->err.msg : "out of memory");
		free(fl);
		return;
	}
	jsonw_array(w, "locals");
	for (int i = 0; i < fl->n; i++) {
		jsonw_object(w, NULL);
		jsonw_string(w, "name", fl->locals[i].name);
		jsonw_string(w, "kind", KIND_NAMES[fl->locals[i].kind]);
		if (fl->locals[i].type[0])
			jsonw_string(w, "type", fl->locals[i].type);
		else
			jsonw_null(w, "type");
		jsonw_string(w, "repr", fl->locals[i].repr);
		jsonw_end(w);
	}
	jsonw_end(w);
	free(fl);
}
