/* Error values: every fallible engine function returns a tt_status and, when
 * it fails, fills a struct tt_error with the cause. The CLI reports it once. */
#ifndef TT_ERROR_H
#define TT_ERROR_H

#include <stddef.h>

typedef enum tt_status {
	TT_OK = 0,
	TT_ENOPROC,     /* the target process does not exist (or exited) */
	TT_EPERM,       /* not allowed to read the target's memory */
	TT_ENOTPY,      /* the target is not a Python process */
	TT_EVERSION,    /* a Python version we do not support */
	TT_EBADMEM,     /* memory read from the target is inconsistent (torn or garbage) */
	TT_EFAULT,      /* an address in the target is not mapped */
	TT_EIO,         /* another system error */
	TT_ENOMEM,      /* out of memory in tachyon-top itself */
	TT_EUSAGE,      /* bad command line */
} tt_status;

struct tt_error {
	tt_status status;
	int sys_errno;   /* errno of the failing call, 0 if none */
	char msg[384];
};

/* Record an error; returns status so callers can `return tt_fail(...)`. */
tt_status tt_fail(struct tt_error *err, tt_status status, int sys_errno,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Short stable name of a status, for statistics and JSON ("bad_memory"). */
const char *tt_status_name(tt_status status);

/* Process exit code for a status (0 for TT_OK). */
int tt_status_exit_code(tt_status status);

#endif
