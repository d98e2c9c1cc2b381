/* What the live views are asked to show: the options `tachyon-top -p PID`
 * and `tachyon-top -- COMMAND` were given (parsed by src/verbs/live.c),
 * read by the live screen and batch mode alike. */
#ifndef TT_LIVEOPTS_H
#define TT_LIVEOPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "aggregate.h"
#include "session.h"

struct live_options {
	struct session_options session;
	bool rate_given;       /* -r: not the default rate */
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
	double stuck_s, loop_ms, spin_s;  /* the threads view marks what `watch` would report */
};

/* Formatting shared by the views. */
void live_format_count(double v, char *buf, size_t len);     /* 1234 -> "1.2k" */
void live_format_duration(double seconds, char *buf, size_t len); /* "1:02:03", "12.5s" */

#endif
