/* The files a run writes (`record -o`, `replay -o`): each output's format
 * chosen by -f or by its name, checked before any work, then written whole
 * or not at all (outfile.h). A recording (.ttrec) is the exception: it is
 * written as the run goes, so that a killed run keeps it. */
#ifndef TT_OUTPUTS_H
#define TT_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>

#include "binrec.h"
#include "error.h"
#include "export.h"
#include "outfile.h"

/* -o may be given several times: one run, several files. */
#define OUTPUTS_MAX 8

struct output {
	const char *path;
	bool recording;               /* tachyon-top's recording format */
	enum export_format format;    /* else this one */
	struct outfile of;            /* open from the check until written */
	struct binrec_writer *rec;    /* the recording's, likewise */
};

struct outputs {
	struct output o[OUTPUTS_MAX];
	int n;
	bool have_format, recording_format, recordings_allowed;
	enum export_format format;    /* -f, when have_format and not a recording */
};

/* -o PATH. -1, or the usage exit code (reported) when too many. */
int outputs_add(struct outputs *os, const char *verb, const char *path);
/* -f NAME ("binary" for a recording, when allowed). -1 or the usage exit code. */
int outputs_set_format(struct outputs *os, const char *verb, const char *name);
/* After the options: the usage exit code when there is no -o, or more than
 * one recording; -1 when fine. Formats are chosen here. */
int outputs_check(struct outputs *os, const char *verb);
/* Some output is of format f. */
bool outputs_have(const struct outputs *os, enum export_format f);
/* Help text for -o and -f. */
const char *outputs_help(bool recordings);

/* The metadata of a run's profile from what the run is of, the command
 * line at its end and how far it got; mirror: the processes it held. The
 * per-thread, baseline and sources fields are left for the caller. */
void outputs_meta(struct export_meta *m, const struct binrec_header *run, const char *command,
		  const struct binrec_progress *p, const struct procset *mirror);

/* After writing: say once if the timeline (gecko) could not keep every
 * sample. */
void outputs_timeline_note(const struct timeline *t);

/* Check every output and open it (its temporary file; a recording's file
 * itself). */
tt_status outputs_open(struct outputs *os, struct tt_error *err);
/* The recording's writer, NULL if none was asked for. */
struct binrec_writer *outputs_recording(struct outputs *os);
/* Drop every output not yet written. */
void outputs_abort(struct outputs *os);
/* Write the profile to every output (a recording: its end, with the
 * command and progress given), each committed whole or not at all;
 * `written` lists those written. false on a failure: the first in *err. */
bool outputs_write(struct outputs *os, const struct profile *prof, const struct procset *procs,
		   const struct export_meta *meta, const char *end_command,
		   const struct binrec_progress *progress, char *written, size_t len,
		   struct tt_error *err);

#endif
