/* Shared command-line helpers for the verbs. */
#ifndef TT_CLI_H
#define TT_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* Parse a pid argument strictly (decimal, > 0). */
bool cli_parse_pid(const char *s, pid_t *out);

/* Before a parse of a command line with getopt: starts it over whatever an
 * earlier parse left (glibc keeps its place inside a cluster of short
 * options, such as "-Vb" left after -V, into the earlier argv). */
void cli_getopt_reset(void);

/* Parse a positive number of seconds up to max. */
bool cli_parse_seconds(const char *s, double max, double *out);

/* watch's thresholds, which the live view takes too: option is
 * "--stuck", "--loop-blocked" or "--spin", arg its value (seconds; for
 * --loop-blocked milliseconds). 0, or the usage exit code, reported. */
int cli_parse_threshold(const char *verb, const char *option, const char *arg, double *out);

/* Report an error once, on stderr, as one line, and return its exit code. */
int cli_report(const struct tt_error *err);

/* Report a usage problem and return the usage exit code. */
int cli_usage_error(const char *verb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* What a sampling verb runs on, after getopt ("+" mode) stopped at first:
 * -p PID (pid, 0 if not given) or a command after "--", never both. A bare
 * argument is refused as "<stray> 'ARG' (<hint>to start a program, put it
 * after --)", so that a typo is never run as a program. Returns 0 with
 * *command set (NULL with a pid), or the usage exit code, reported. */
int cli_pid_or_command(const char *verb, int argc, char **argv, int first, pid_t pid,
		       const char *stray, const char *hint, char ***command);

#endif
