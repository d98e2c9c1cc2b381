/* dump --locals (dumplocals.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "dumplocals.h"
#include "sanitize.h"

static const char *const KIND_NAMES[] = {
	[PYLOCAL_ARG] = "arg", [PYLOCAL_LOCAL] = "local", [PYLOCAL_CELL] = "cell",
	[PYLOCAL_FREE] = "free",
};

/* One frame's locals with their values, or a count < 0 and why. The frame
 * must still run the same code when they have been read: a running
 * thread's frame may have returned meanwhile, its memory another's. */
struct frame_locals {
	struct pylocal locals[PYLOCALS_MAX];
	char text[PYLOCALS_MAX][PYVALUE_TEXT_MAX];
	char type[PYLOCALS_MAX][96];
	int n;
	struct tt_error err;
};

static struct frame_locals *
read_locals(struct pyvalue *v, const struct unwinder *u, const struct tt_frame *fr)
{
	struct frame_locals *fl = v ? calloc(1, sizeof *fl) : NULL;
	if (!fl)
		return NULL;
	uint64_t code = codecache_get(&u->codes, fr->code_id)->addr;
	fl->n = pylocals_read(v, fr->addr, code, fl->locals, PYLOCALS_MAX, &fl->err);
	for (int i = 0; i < fl->n; i++)
		pylocal_value(v, fr->addr, &fl->locals[i], fl->text[i], fl->type[i],
			      sizeof fl->type[i]);
	if (fl->n >= 0 && !pylocals_frame_runs(v, fr->addr, code)) {
		fl->n = -1;
		tt_fail(&fl->err, TT_EBADMEM, 0, "the frame returned while its locals were read");
	}
	return fl;
}

void
dumplocals_text(FILE *f, struct pyvalue *v, const struct unwinder *u, const struct tt_frame *fr)
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
		sanitize_for_terminal(fl->text[i], safe, sizeof safe);
		fprintf(f, "        %s = %s\n", name, safe);
	}
	free(fl);
}

void
dumplocals_json(FILE *f, struct pyvalue *v, const struct unwinder *u, const struct tt_frame *fr)
{
	struct frame_locals *fl = read_locals(v, u, fr);
	if (!fl || fl->n < 0) {
		fprintf(f, ", \"locals\": null, \"locals_error\": ");
		json_put_string(f, fl ? fl->err.msg : "out of memory");
		free(fl);
		return;
	}
	fprintf(f, ", \"locals\": [");
	for (int i = 0; i < fl->n; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		json_put_string(f, fl->locals[i].name);
		fprintf(f, ", \"kind\": \"%s\", \"type\": ", KIND_NAMES[fl->locals[i].kind]);
		if (fl->type[i][0])
			json_put_string(f, fl->type[i]);
		else
			fprintf(f, "null");
		fprintf(f, ", \"repr\": ");
		json_put_string(f, fl->text[i]);
		fprintf(f, "}");
	}
	fprintf(f, "]");
	free(fl);
}
