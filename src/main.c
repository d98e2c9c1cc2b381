/* tachyon-top: a live top for running Python processes. */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "dump.h"
#include "info.h"
#include "record.h"

static void
print_help(void)
{
	printf("Usage: tachyon-top VERB [OPTIONS]\n"
	       "Inspect a running CPython 3.13-3.15 process from the outside, without\n"
	       "stopping it or writing to it.\n"
	       "\n"
	       "Verbs:\n"
	       "  dump -p PID [--json]   print the Python stack of every thread once\n"
	       "  record -p PID -o FILE  sample into a profile (collapsed stacks or speedscope)\n"
	       "  bench -p PID [-d S]    sample as fast as possible and report engine figures\n"
	       "  info -p PID            print the interpreter found in PID and the\n"
	       "                         structure offsets tachyon-top reads it with\n"
	       "\n"
	       "Options:\n"
	       "  -h, --help       show this help and exit\n"
	       "  -V, --version    show the version and exit\n"
	       "\n"
	       "Reading another process needs root, CAP_SYS_PTRACE, or\n"
	       "kernel.yama.ptrace_scope=0 for processes of the same user.\n"
	       "Report bugs to the project's issue tracker.\n");
}

int
main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	if (argc < 2)
		return cli_usage_error(NULL, "missing verb");
	const char *verb = argv[1];
	if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		print_help();
		return 0;
	}
	if (strcmp(verb, "--version") == 0 || strcmp(verb, "-V") == 0) {
		printf("tachyon-top %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(verb, "dump") == 0)
		return dump_main(argc - 1, argv + 1);
	if (strcmp(verb, "bench") == 0)
		return bench_main(argc - 1, argv + 1);
	if (strcmp(verb, "record") == 0)
		return record_main(argc - 1, argv + 1);
	if (strcmp(verb, "info") == 0)
		return info_main(argc - 1, argv + 1);
	return cli_usage_error(NULL, "unknown verb '%s'", verb);
}
