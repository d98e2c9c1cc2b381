/* tachyon-top: a live top for running Python processes. */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>

#include "batch.h"
#include "bench.h"
#include "cli.h"
#include "dump.h"
#include "info.h"
#include "live.h"
#include "record.h"
#include "tui.h"

static int
run(int argc, char **argv)
{
	if (argc >= 2) {
		const char *verb = argv[1];
		if (strcmp(verb, "dump") == 0)
			return dump_main(argc - 1, argv + 1);
		if (strcmp(verb, "record") == 0)
			return record_main(argc - 1, argv + 1);
		if (strcmp(verb, "bench") == 0)
			return bench_main(argc - 1, argv + 1);
		if (strcmp(verb, "info") == 0)
			return info_main(argc - 1, argv + 1);
	}
	struct live_options o;
	int rc = live_parse(argc, argv, &o);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (o.batch && (rc = tui_check_theme(&o)) != 0)
		return rc;
	return o.batch ? batch_run(&o) : tui_run(&o);
}

/* Every verb writes its output through stdio; whether any of it failed
 * (a full disk, a closed descriptor) is known for sure only once the
 * stream is flushed and closed: checked here, once, for all of them. A
 * stream never written to may sit on a closed descriptor: not an error. */
static int
close_stdout(int rc)
{
	bool pending = __fpending(stdout) != 0;
	bool failed_before = ferror(stdout) != 0;
	errno = 0;
	bool close_failed = fclose(stdout) != 0;
	int e = errno;
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
	return close_stdout(run(argc, argv));
}
