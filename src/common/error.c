#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "error.h"

tt_status
tt_fail(struct tt_error *err, tt_status status, int sys_errno, const char *fmt, ...)
{
	if (err == NULL)
		return status;
	err->status = status;
	err->sys_errno = sys_errno;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return status;
}

const char *
tt_status_name(tt_status status)
{
	switch (status) {
	case TT_OK: return "ok";
	case TT_ENOPROC: return "no_process";
	case TT_EPERM: return "permission";
	case TT_ENOTPY: return "not_python";
	case TT_EVERSION: return "unsupported_version";
	case TT_EBADMEM: return "bad_memory";
	case TT_EFAULT: return "unmapped_address";
	case TT_EIO: return "io";
	case TT_ENOMEM: return "out_of_memory";
	case TT_EUSAGE: return "usage";
	}
	return "unknown";
}

int
tt_status_exit_code(tt_status status)
{
	switch (status) {
	case TT_OK: return 0;
	case TT_EUSAGE: return 2;
	case TT_ENOPROC: return 3;
	case TT_EPERM: return 4;
	case TT_ENOTPY:
	case TT_EVERSION: return 5;
	default: return 1;
	}
}
