/* tachyon-top: a live top for running Python processes. */
#include "config.h"

#include <errno.h>
#include <locale.h>
#ifdef HAVE_MALLOPT
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "cli.h"
#include "fdlimit.h"
#include "live.h"
#include "tui.h"
#include "verbs.h"

static int
run(int argc, char **argv)
{
	const struct verb *v = argc >= 2 ? verb_find(argv[1]) : NULL;
	if (v)
		return v->main(argc - 1, argv + 1);
	struct live_options o;
	int rc = live_parse(argc, argv, &o);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	struct tt_error e;
	if (o.batch)
		return tui_check_theme(&o, &e) == TT_OK ? batch_run(&o) : cli_report(&e);
	return tui_run(&o, &e) == TT_OK ? 0 : cli_report(&e);
}

/* Every verb writes its output through stdio; whether any of it failed (a
 * full disk, a closed descriptor) is checked here, once, for all of them.
 * When standard output is not a terminal (the live view needs one), it is
 * a stream of our own whose writes keep the first error's cause: stdio
 * itself forgets it, and later calls overwrite errno. */
static int stdout_errno;
static bool stdout_written;

static ssize_t
stdout_write(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	stdout_written = true;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(STDOUT_FILENO, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!stdout_errno)
				stdout_errno = n < 0 ? errno : EIO;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)len;
}

static int
stdout_close(void *cookie)
{
	(void)cookie;
	if (close(STDOUT_FILENO) != 0 && errno != EINTR && (errno != EBADF || stdout_written) &&
	    !stdout_errno)
		stdout_errno = errno;
	return stdout_errno ? -1 : 0;
}

static void
checked_stdout(void)
{
	if (isatty(STDOUT_FILENO))
		return;
	FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = stdout_write,
								   .close = stdout_close});
	if (f)
		stdout = f;
}

/* A stream never written to may sit on a closed descriptor: not an error. */
static int
close_stdout(int rc)
{
	bool pending = __fpending(stdout) != 0;
	bool failed_before = ferror(stdout) != 0;
	errno = 0;
	bool close_failed = fclose(stdout) != 0;
	int e = stdout_errno ? stdout_errno : errno;
	if (failed_before || (close_failed && (pending || e != EBADF))) {
		if (e)
			fprintf(stderr, "tachyon-top: writing standard output: %s\n", strerror(e));
		else
			fprintf(stderr, "tachyon-top: writing standard output failed\n");
		return rc ? rc : tt_status_exit_code(TT_EIO);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
#ifdef HAVE_MALLOPT
	/* Tables of a megabyte or more are rebuilt, at a new size, while the
	 * old one is still alive (the aggregate's sweep, every second under
	 * churn). glibc would raise its mmap threshold past them after the
	 * first free and put them on the heap, which keeps the pages of two
	 * of them: a fixed threshold maps each and gives it back when freed. */
	mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
#endif
	/* A process tree with thousands of threads, watched with --native,
	 * takes a descriptor per thread on a CPU (a perf event) beside the
	 * /proc files and libraries: the soft limit (often 1,024) is raised to
	 * the hard one, for this process (its commands get it as it was). */
	fdlimit_raise();
	checked_stdout();
	return close_stdout(run(argc, argv));
}
