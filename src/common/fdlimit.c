/* The open-file limit (fdlimit.h). */
#include "config.h"

#include <stdbool.h>
#include <sys/resource.h>

#include "fdlimit.h"

static struct rlimit given;
static bool raised;

void
fdlimit_raise(void)
{
	if (getrlimit(RLIMIT_NOFILE, &given) != 0 || given.rlim_cur >= given.rlim_max)
		return;
	struct rlimit more = {given.rlim_max, given.rlim_max};
	raised = setrlimit(RLIMIT_NOFILE, &more) == 0;
}

void
fdlimit_restore(void)
{
	if (raised)
		setrlimit(RLIMIT_NOFILE, &given);
}
