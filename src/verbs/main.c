/* tachyon-top: a live top for running Python processes. */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "batch.h"
#include "bench.h"
#include "cli.h"
#include "dump.h"
#include "info.h"
#include "live.h"
#include "record.h"
#include "tui.h"

int
main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
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
	return o.batch ? batch_run(&o) : tui_run(&o);
}
