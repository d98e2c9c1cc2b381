/* The live views' command line: `tachyon-top [OPTIONS] -p PID` and
 * `tachyon-top [OPTIONS] -- COMMAND ARGS...`, shared by the TUI and batch
 * mode. */
#ifndef TT_LIVE_H
#define TT_LIVE_H

#include <stdbool.h>

#include "aggregate.h"
#include "session.h"

struct live_options {
	struct session_options session;
	enum agg_mode mode;
	enum agg_sort sort;
	bool by_line;
	bool batch;
	double delay_s;        /* refresh interval */
	long iterations;       /* batch: tables to print (0: until the end) */
	int limit;             /* batch: rows per table */
	bool tree;             /* batch: the call tree instead of the table */
	double tree_threshold; /* batch --tree: fold children below this % */
	const char *theme;     /* NAME or PATH */
	bool monochrome;
	const char *export_dir; /* where `e` writes (default: the working directory) */
};

/* Parse; returns -1 when the caller should exit 0 (help, version), 0 to
 * run, or a positive exit status after printing a usage error. */
int live_parse(int argc, char **argv, struct live_options *o);

void live_print_help(void);

/* Formatting shared by the views. */
void live_format_count(double v, char *buf, size_t len);     /* 1234 -> "1.2k" */
void live_format_duration(double seconds, char *buf, size_t len); /* "1:02:03", "12.5s" */

#endif
