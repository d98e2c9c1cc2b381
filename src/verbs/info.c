#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "info.h"
#include "sanitize.h"
#include "target.h"

int
info_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	pid_t pid = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_pid(optarg, &pid))
				return cli_usage_error("info ", "invalid pid '%s'", optarg);
			break;
		case 'h':
			puts("Usage: tachyon-top info -p PID\n"
			     "Print the CPython version found in process PID, where its runtime\n"
			     "lives, and the structure offsets tachyon-top reads it with.");
			return 0;
		default:
			return cli_usage_error("info ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("info ", "unexpected argument '%s'", argv[optind]);
	if (pid == 0)
		return cli_usage_error("info ", "missing -p PID");
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
