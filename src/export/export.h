/* Profile output formats: one place that knows their names, their usual
 * file extensions and which writer makes each, so `record` and the live
 * view's export key offer the same set. Writers write to a FILE* and never
 * open, rename or close it. */
#ifndef TT_EXPORT_H
#define TT_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "diffbase.h"
#include "error.h"
#include "outfile.h"
#include "profile.h"
#include "timeline.h"
#include "textbuf.h"

enum export_format {
	EXPORT_COLLAPSED,
	EXPORT_SPEEDSCOPE,
	EXPORT_FLAMEGRAPH,
	EXPORT_PPROF,
	EXPORT_PSTATS,
	EXPORT_HEATMAP,
	EXPORT_GECKO,       /* from the run's timeline (meta->timeline): record and replay */
	EXPORT_FORMAT_COUNT
};

/* The formats written from a profile alone (the live view offers these). */
#define EXPORT_PROFILE_FORMATS EXPORT_GECKO

/* A source file as a recording kept it: its bytes, or why there are none. */
struct export_source_text {
	char *name;
	char *bytes;                  /* NULL: not available, why says so */
	size_t len;
	char *why;
};

/* Where the heatmap reads the target's source files: its root and working
 * directory (/proc/PID/root and cwd), kept open as directory descriptors,
 * which outlive the process; or, replaying, the texts the recording kept. */
struct export_sources {
	bool have;                    /* false: not allowed, or gone: lines listed alone */
	int root_fd, cwd_fd;
	bool recorded;                /* replaying: the texts below are the only sources */
	const struct export_source_text *texts;
	uint32_t ntexts;
};

/* What a profile is of, for titles and metadata. Strings may come from the
 * target (command): writers sanitize them. */
struct export_meta {
	pid_t pid;
	const char *command;          /* the target's command line, or NULL */
	const char *python_version;   /* "3.14.0", or NULL */
	enum profile_filter mode;
	double rate_hz;               /* requested rate, 0 = as fast as possible */
	uint64_t period_ns;           /* time one sample stands for */
	uint64_t duration_ns;         /* how long sampling ran */
	uint64_t start_unix_ns;       /* when it started (wall clock) */
	bool per_thread;              /* collapsed and flame graph: a root frame per thread */
	bool per_process;             /* following subprocesses: a root frame "process PID
				       * (command)", speedscope profiles and pprof labels by pid */
	/* flame graph: colour each frame by the change of its share against
	 * this baseline (NULL: by function); its name for the subtitle */
	const struct diff_base *diff_base;
	const char *diff_base_name;
	struct export_sources sources;   /* heatmap: where the source files are read */
	const struct timeline *timeline; /* gecko: every sample in time, over the same
					    procset's stacks (NULL: none kept) */
};

/* "collapsed", "speedscope", "flamegraph", "pprof", "pstats", "heatmap", "gecko" (and
 * aliases "svg", "folded", "firefox"): true and *out set when known. */
bool export_parse_format(const char *name, enum export_format *out);
/* The accepted names, for error messages ("collapsed, ..., pprof or pstats"). */
const char *export_format_list(void);
/* For --help, one line per format, each after indent: "name (.ext, ...):
 * what it is"; the one a file name of no known extension gets says so. */
void export_formats_help(struct textbuf *t, const char *indent);
/* The format a file name asks for by its extension (.svg, .gecko.json,
 * .json, .pb.gz, .pprof, .prof, .pstats, .html), else collapsed. */
enum export_format export_format_for_path(const char *path);
/* The extension the live view gives files of a format (".svg"). */
const char *export_format_extension(enum export_format f);
const char *export_mode_name(enum profile_filter mode);
/* "wall", "cpu" or "gil": true and *out set. */
bool export_parse_mode(const char *name, enum profile_filter *out);

/* Open process pid's root and working directory for the heatmap (while
 * it runs: they stay good after it exits); close them when done. */
void export_sources_open(struct export_sources *s, pid_t pid);
void export_sources_close(struct export_sources *s);

/* Write p in format fmt into the output file o (outfile.h) and commit it,
 * whole or not at all (o is done with either way); name: o's path for
 * messages. A write error is the commit's, with its cause. */
tt_status export_commit(enum export_format fmt, const struct profile *p, const struct procset *ps,
			const struct export_meta *meta, struct outfile *o, const char *name,
			struct tt_error *err);

/* A source file's bytes (NUL-terminated, *len without the NUL; free them),
 * as the target saw it: an absolute name under its root, a relative one
 * under its working directory, never escaping them; at most max bytes. NULL
 * with why ("source not available (...)") when there are none. */
char *export_source_read(const struct export_sources *s, const char *name, size_t max,
			 size_t *len, char *why, size_t wlen);

/* Write p in format fmt to f. 0 on success, -1 on a write or memory error
 * (gecko without meta->timeline: -1). */
int export_write(enum export_format fmt, const struct profile *p, const struct procset *ps,
		 const struct export_meta *meta, FILE *f);

#endif
