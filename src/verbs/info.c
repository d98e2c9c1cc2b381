#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mem/corefile.h"
#include "info.h"
#include "sanitize.h"
#include "target.h"

/* --core: what the core holds, then its Python as for a live process. */
static int
info_core(const char *path, const char *root)
{
	struct tt_error err = {0};
	struct corefile c;
	if (corefile_open(&c, path, root, &err) != TT_OK)
		return cli_report(&err);
	char safe[2048];
	sanitize_for_terminal(c.psargs, safe, sizeof safe);
	printf("core_pid=%d\ncore_command=%s\ncore_threads=%zu\ncore_segments=%zu\n"
	       "core_missing_bytes=%llu\n", (int)c.pid, safe, c.nthreads, c.nloads,
	       (unsigned long long)c.missing_bytes);
	for (size_t i = 0; i < c.nmaps; i++) {
		if (i && strcmp(c.maps[i].path, c.maps[i - 1].path) == 0)
			continue;
		static const char *const words[] = {
			[CORE_FILE_SAME] = "same", [CORE_FILE_UNCHECKED] = "found",
			[CORE_FILE_DIFFERS] = "differs", [CORE_FILE_MISSING] = "missing",
		};
		sanitize_for_terminal(c.maps[i].path, safe, sizeof safe);
		printf("core_file=%s %s\n", words[corefile_check_map(&c, i)], safe);
	}
	struct target t;
	int rc = 0;
	if (target_attach_core(&t, &c, &err) != TT_OK) {
		rc = cli_report(&err);
	} else {
		sanitize_for_terminal(t.binary, safe, sizeof safe);
		printf("python=%s\nbinary=%s\nruntime=0x%llx\n", t.layout.version_str, safe,
		       (unsigned long long)t.runtime_addr);
		pylayout_print(stdout, &t.layout);
	}
	corefile_close(&c);
	return rc;
}

int
info_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"core", required_argument, NULL, 'c'},
		{"root", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	pid_t pid = 0;
	const char *core = NULL, *root = NULL;
	int c;
	cli_getopt_reset();
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_pid(optarg, &pid))
				return cli_usage_error("info ", "invalid pid '%s'", optarg);
			break;
		case 'c': core = optarg; break;
		case 'R': root = optarg; break;
		case 'h':
			puts("Usage: tachyon-top info -p PID\n"
			     "       tachyon-top info --core FILE [--root DIR]\n"
			     "Print the CPython version found in process PID (or in the process a\n"
			     "core was taken of), where its runtime lives, and the structure offsets\n"
			     "tachyon-top reads it with; for a core, also its threads and which of\n"
			     "the files it maps were found.\n"
			     "\n"
			     "  -p, --pid PID    process to inspect (read-only; it is never stopped)\n"
			     "      --core FILE  a core file instead (gcore, systemd-coredump)\n"
			     "      --root DIR   where the core's files are (a container's root)\n"
			     "  -h, --help       show this help");
			return 0;
		default:
			return cli_usage_error("info ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("info ", "unexpected argument '%s'", argv[optind]);
	if (core && pid)
		return cli_usage_error("info ", "-p or --core, not both");
	if (core)
		return info_core(core, root);
	if (pid == 0)
		return cli_usage_error("info ", "missing -p PID (or --core FILE)");
	struct tt_error err = {0};
	struct target t;
	if (target_attach(&t, pid, &err) != TT_OK)
		return cli_report(&err);
	char safe[1024];
	sanitize_for_terminal(t.binary, safe, sizeof safe);
	printf("python=%s\nbinary=%s\nruntime=0x%llx\n", t.layout.version_str, safe,
	       (unsigned long long)t.runtime_addr);
	pylayout_print(stdout, &t.layout);
	return 0;
}
