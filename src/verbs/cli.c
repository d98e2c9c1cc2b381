#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sanitize.h"

bool
cli_parse_pid(const char *s, pid_t *out)
{
	if (!s || !*s)
		return false;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 0x7fffffffL)
		return false;
	*out = (pid_t)v;
	return true;
}

bool
cli_parse_seconds(const char *s, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > max)
		return false;
	*out = v;
	return true;
}

void
cli_getopt_reset(void)
{
	optind = 0;   /* 0, not 1: glibc then forgets its place as well */
}

int
cli_parse_threshold(const char *verb, const char *option, const char *arg, double *out)
{
	if (strcmp(option, "--loop-blocked") == 0) {
		char *end;
		double v = strtod(arg, &end);
		if (end == arg || *end || !(v >= 1 && v <= 86400000))
			return cli_usage_error(verb, "--loop-blocked takes milliseconds, from 1, "
					       "not '%s'", arg);
		*out = v;
		return 0;
	}
	if (!cli_parse_seconds(arg, 86400, out))
		return cli_usage_error(verb, "%s takes seconds, more than 0 and at most 86400, "
				       "not '%s'", option, arg);
	return 0;
}

int
cli_report(const struct tt_error *err)
{
	fflush(stdout);
	fprintf(stderr, "tachyon-top: %s\n", err->msg[0] ? err->msg : tt_status_name(err->status));
	return tt_status_exit_code(err->status);
}

int
cli_pid_or_command(const char *verb, int argc, char **argv, int first, pid_t pid,
		   const char *stray, const char *hint, char ***command)
{
	*command = NULL;
	if (first < argc) {
		if (strcmp(argv[first - 1], "--") != 0) {
			char shown[128];
			sanitize_for_terminal(argv[first], shown, sizeof shown);
			return cli_usage_error(verb, "%s '%s' (%sto start a program, put it after --)",
					       stray, shown, hint);
		}
		*command = &argv[first];
	}
	if (*command && pid)
		return cli_usage_error(verb, "give either -p PID or a command, not both");
	if (!*command && pid == 0)
		return cli_usage_error(verb, "missing -p PID or -- COMMAND");
	return 0;
}

int
cli_usage_error(const char *verb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tachyon-top: ", stderr);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see 'tachyon-top %s--help')\n", verb ? verb : "");
	va_end(ap);
	return tt_status_exit_code(TT_EUSAGE);
}
