/* tachyon-top's own recording format (`record -o run.ttrec`, docs/recording.md):
 * the sample log's events (samplelog.h) and the run's metadata, as varints
 * in one zlib stream, flushed to the file each second so that a record
 * that is killed leaves a file that replays up to its last second. `replay`
 * applies the events to a sample log of its own: the profile it builds is
 * the one record built, so every output is written byte for byte the same. */
#ifndef TT_BINREC_H
#define TT_BINREC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "export.h"
#include "profile.h"
#include "samplelog.h"

#define BINREC_VERSION 1
#define BINREC_EXTENSION ".ttrec"

/* What the run is of, written first. Strings are the target's bytes. */
struct binrec_header {
	pid_t pid;
	const char *python_version;
	const char *command;          /* the command line at the start */
	enum profile_filter mode;
	double rate_hz;
	uint64_t start_unix_ns;
	bool subprocesses;            /* a tree was followed: per-process outputs when
					 it held more than one process */
	bool async_aware;
};

/* How far the run got: written each second and at the end. */
struct binrec_progress {
	uint64_t duration_ns;         /* how long sampling ran */
	uint64_t passes;              /* sampling passes made */
	uint64_t errors, missed;
};

struct binrec_writer;

/* Open (create or truncate) path for a recording: at the start, so a bad
 * path fails before any sampling. */
tt_status binrec_open(struct binrec_writer **w, const char *path, struct tt_error *err);
/* Write the header; from here on, events (binrec_put: a samplelog sink)
 * and progress go to the file. */
tt_status binrec_begin(struct binrec_writer *w, const struct binrec_header *h,
		       struct tt_error *err);
void binrec_put(void *w, const struct samplelog_event *ev);
/* The run's progress at now_ns (clock_now_ns): written, and everything so
 * far flushed to the file, when a second has passed since the last (or
 * always, with force). */
void binrec_progress(struct binrec_writer *w, uint64_t now_ns, const struct binrec_progress *p,
		     bool force);
/* The source files the heatmap of prof would show, read through src now,
 * so that a replay's heatmap is record's (before binrec_finish). */
void binrec_put_sources(struct binrec_writer *w, const struct profile *prof,
			const struct procset *mirror, const struct export_sources *src);
/* The end: the command line as read at the end, the final progress; the
 * stream is closed. Frees w. Fails with the first write error since open. */
tt_status binrec_finish(struct binrec_writer *w, const char *command,
			const struct binrec_progress *p, struct tt_error *err);
/* Sampling never started: remove the file. Frees w. */
void binrec_abort(struct binrec_writer *w);

/* Does the file start as a recording does? */
bool binrec_is_recording(const char *path);

/* A recording read back. */
struct binrec_replay {
	struct binrec_header h;       /* its strings owned here */
	struct binrec_progress progress;
	char *end_command;            /* NULL when the recording has no end */
	bool complete;                /* it ended as record ends it (else it was cut short) */
	struct export_source_text *sources;   /* the heatmap's sources, as record read them */
	uint32_t nsources, sources_cap;
	struct profile prof;
	struct timeline timeline;     /* kept when asked for (log.timeline then points here) */
	struct samplelog log;         /* its mirror labels the profile */
};

/* Read path into r, counting samples by the mode it was recorded in (or
 * by *mode when given), keeping them in time too when timeline. A file
 * cut short is read up to where it ends
 * (r->complete false); not a recording, of a newer version, or damaged: an
 * error naming the file. Free r either way. */
tt_status binrec_replay(const char *path, const enum profile_filter *mode, bool timeline,
			struct binrec_replay *r, struct tt_error *err);
void binrec_replay_free(struct binrec_replay *r);

#endif
