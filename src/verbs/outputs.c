#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "outputs.h"

static bool
is_recording_name(const char *path)
{
	size_t n = strlen(path), e = strlen(BINREC_EXTENSION);
	return n > e && strcmp(path + n - e, BINREC_EXTENSION) == 0;
}

int
outputs_add(struct outputs *os, const char *verb, const char *path)
{
	if (os->n == OUTPUTS_MAX)
		return cli_usage_error(verb, "at most %d -o files", OUTPUTS_MAX);
	os->o[os->n++] = (struct output){.path = path};
	return -1;
}

int
outputs_set_format(struct outputs *os, const char *verb, const char *name)
{
	os->have_format = true;
	os->recording_format = os->recordings_allowed && strcmp(name, "binary") == 0;
	if (!os->recording_format && !export_parse_format(name, &os->format))
		return cli_usage_error(verb, "unknown format '%s' (%s%s)", name,
				       export_format_list(),
				       os->recordings_allowed ? ", or binary" : "");
	return -1;
}

int
outputs_check(struct outputs *os, const char *verb)
{
	if (!os->n)
		return cli_usage_error(verb, "missing -o FILE");
	int recordings = 0;
	for (int i = 0; i < os->n; i++) {
		struct output *o = &os->o[i];
		o->recording = os->have_format ? os->recording_format
					       : os->recordings_allowed && is_recording_name(o->path);
		o->format = os->have_format && !o->recording ? os->format
							     : export_format_for_path(o->path);
		recordings += o->recording;
		if (!os->recordings_allowed && !os->have_format && is_recording_name(o->path))
			return cli_usage_error(verb, "%s: this writes profiles, not recordings (%s)",
					       o->path, BINREC_EXTENSION);
	}
	if (recordings > 1)
		return cli_usage_error(verb, "one recording (%s) per run", BINREC_EXTENSION);
	return -1;
}

bool
outputs_have(const struct outputs *os, enum export_format f)
{
	for (int i = 0; i < os->n; i++)
		if (!os->o[i].recording && os->o[i].format == f)
			return true;
	return false;
}

const char *
outputs_help(bool recordings)
{
	/* made once per kind, from the format table */
	static char texts[2][2048];
	char *text = texts[recordings];
	if (text[0])
		return text;
	struct textbuf t;
	textbuf_init(&t, text, sizeof texts[0]);
	textbuf_printf(&t,
		       "  -o, --output FILE      where to write the profile; repeat it to write several\n"
		       "                         formats%s (-o p.svg -o p.pb.gz)\n"
		       "  -f, --format FORMAT    the format, else the one the file's name asks for:\n",
		       recordings ? " from one session" : "");
	export_formats_help(&t, "                           ");
	if (recordings)
		textbuf_printf(&t,
			       "                           binary (%s): every sample, written as it goes,\n"
			       "                             for `tachyon-top replay`\n", BINREC_EXTENSION);
	return text;
}

void
outputs_meta(struct export_meta *m, const struct binrec_header *run, const char *command,
	     const struct binrec_progress *p, const struct procset *mirror)
{
	*m = (struct export_meta){
		.pid = run->pid, .command = command, .python_version = run->python_version,
		.mode = run->mode, .rate_hz = run->rate_hz, .duration_ns = p->duration_ns,
		.start_unix_ns = run->start_unix_ns,
		/* A sample stands for the mean time between passes actually made
		 * (deadlines missed on a busy machine make it longer than asked). */
		.period_ns = p->passes ? p->duration_ns / p->passes
			     : run->rate_hz > 1e-9 ? (uint64_t)(1e9 / run->rate_hz) : 1,
		/* Process frames only when there is more than one to tell apart. */
		.per_process = run->subprocesses && procset_count(mirror) > 1,
		.sources = {.root_fd = -1, .cwd_fd = -1},
	};
}

void
outputs_timeline_note(const struct timeline *t)
{
	if (t && t->dropped)
		fprintf(stderr, "tachyon-top: the gecko file holds the first %u runs of samples; "
			"%llu samples after them were counted, not kept in time\n", t->count,
			(unsigned long long)t->dropped);
}

tt_status
outputs_open(struct outputs *os, struct tt_error *err)
{
	/* the recording last: it is created at once, and nothing fails after it */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < os->n; i++) {
			struct output *o = &os->o[i];
			if (o->recording != (pass == 1))
				continue;
			tt_status st = o->recording ? binrec_open(&o->rec, o->path, err)
						    : outfile_open(&o->of, o->path, err);
			if (st != TT_OK) {
				o->rec = NULL;
				memset(&o->of, 0, sizeof o->of);
				outputs_abort(os);
				return st;
			}
		}
	return TT_OK;
}

struct binrec_writer *
outputs_recording(struct outputs *os)
{
	for (int i = 0; i < os->n; i++)
		if (os->o[i].rec)
			return os->o[i].rec;
	return NULL;
}

void
outputs_abort(struct outputs *os)
{
	for (int i = 0; i < os->n; i++) {
		struct output *o = &os->o[i];
		if (o->rec)
			binrec_abort(o->rec);
		else if (o->of.f)
			outfile_abort(&o->of);
		o->rec = NULL;
		o->of.f = NULL;
	}
}

bool
outputs_write(struct outputs *os, const struct profile *prof, const struct procset *procs,
	      const struct export_meta *meta, const char *end_command,
	      const struct binrec_progress *progress, char *written, size_t len,
	      struct tt_error *err)
{
	bool ok_all = true;
	written[0] = '\0';
	for (int i = 0; i < os->n; i++) {
		struct output *o = &os->o[i];
		struct tt_error e = {0};
		bool ok;
		if (o->recording) {
			ok = binrec_finish(o->rec, end_command, progress, &e) == TT_OK;
			o->rec = NULL;
		} else {
			ok = export_commit(o->format, prof, procs, meta, &o->of, o->path, &e) == TT_OK;
		}
		if (!ok) {
			if (ok_all)
				*err = e;
			ok_all = false;
		} else {
			size_t used = strlen(written);
			snprintf(written + used, len - used, "%s%s", used ? ", " : "", o->path);
		}
	}
	return ok_all;
}
