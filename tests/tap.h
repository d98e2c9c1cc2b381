/* A minimal TAP producer for the C unit tests. */
#ifndef TT_TAP_H
#define TT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

static void __attribute__((format(printf, 2, 3)))
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_count);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!cond)
		tap_failed++;
	fflush(stdout);
}

static void __attribute__((format(printf, 1, 2), unused))
tap_diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static int
tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
