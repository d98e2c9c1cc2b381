/* One `watch` report: a directory holding summary.txt (what was found,
 * first), and the dump of every process of the watched tree as `dump`
 * prints it, text and JSON (dump.txt, dump.json), taken by running this
 * program's own dump verb, and the samples of the last seconds before it
 * as a recording (recording.ttrec). It is written under a temporary name and
 * renamed once whole: a reader never sees half a report. */
#ifndef TT_WATCHREPORT_H
#define TT_WATCHREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct watch_report_opts {
	const char *dir;          /* where reports go (made when missing) */
	pid_t root;               /* the process dumped, */
	bool tree;                /* with its Python descendants */
	bool native, locals;      /* dump's --native, --locals */
};

/* How long a report's dumps may take before they are given up. */
#define WATCH_DUMP_TIMEOUT_NS (60ull * 1000000000ull)

/* Writes the recording of the last seconds to path (inside the report
 * being made). */
typedef tt_status watch_recording_fn(void *ctx, const char *path, struct tt_error *err);

/* Write a report named name (a directory name) holding summary and, with
 * recording, recording.ttrec, into o->dir; its final path into path. A
 * report that cannot be written whole leaves nothing behind and says why. */
tt_status watch_report_write(const struct watch_report_opts *o, const char *name,
			     const char *summary, watch_recording_fn *recording, void *ctx,
			     char *path, size_t len, struct tt_error *err);

/* A report removed to keep the directory under its size: its path. */
typedef void watch_removed_fn(void *ctx, const char *path);

/* Remove the oldest reports in dir (by their names' time) until those left
 * hold max_bytes at most, never the one named keep: how many went, each
 * told to removed. Files others put there are left alone. */
int watch_report_prune(const char *dir, uint64_t max_bytes, const char *keep,
		       watch_removed_fn *removed, void *ctx);

/* Remove partial reports in dir left by a watcher that is gone (killed
 * while writing one): how many. */
int watch_report_clean(const char *dir);

/* Start sh -c cmd with the report's path as $1 (not waited for: reap with
 * watch_report_reap). Its pid, or -1. */
pid_t watch_report_exec(const char *cmd, const char *path);
/* Reap those of pids[0..n) that ended (their slots set to 0). */
void watch_report_reap(pid_t *pids, size_t n);

#endif
