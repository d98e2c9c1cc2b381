#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "profile.h"
#include "record.h"
#include "sampler.h"

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
	interrupted = sig;
}

static void
print_usage(FILE *f)
{
	fputs("Usage: tachyon-top record -p PID -o FILE [options]\n"
	      "Sample process PID and write a profile when the duration ends, the process\n"
	      "exits, or on Ctrl-C.\n"
	      "\n"
	      "  -p, --pid PID          process to sample (read-only; it is never stopped)\n"
	      "  -o, --output FILE      where to write the profile\n"
	      "  -f, --format FORMAT    collapsed (folded stacks, for flamegraph.pl, inferno,\n"
	      "                         speedscope) or speedscope (JSON); default: speedscope\n"
	      "                         for a .json file, else collapsed\n"
	      "  -r, --rate RATE        samples per second: 1000, 10k, max (default 1000)\n"
	      "  -d, --duration SECS    stop after SECS seconds (default: until Ctrl-C or exit)\n"
	      "  -m, --mode MODE        wall (every sample, default), cpu (threads on CPU only),\n"
	      "                         gil (threads holding the GIL only)\n"
	      "  -t, --threads          collapsed: start each stack with its thread\n"
	      "      --subprocesses     also sample PID's descendants (Python ones), found as\n"
	      "                         they appear; stacks start with \"process PID (command)\"\n"
	      "                         and speedscope gets a profile per process and thread\n"
	      "  -h, --help             show this help\n", f);
}

static void
drain(struct sampler *s, struct profile *p, enum profile_filter filter, bool *oom)
{
	static struct sample_record buf[4096];
	size_t n;
	while ((n = ring_pop(&s->ring, buf, 4096)) > 0)
		for (size_t i = 0; i < n; i++)
			if (!profile_add(p, &buf[i], filter))
				*oom = true;
}

int
record_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'},
		{"rate", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 'd'},
		{"mode", required_argument, NULL, 'm'},
		{"threads", no_argument, NULL, 't'},
		{"subprocesses", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	pid_t pid = 0;
	const char *out = NULL, *format = NULL;
	double hz = 1000, seconds = 0;
	bool per_thread = false, subprocesses = false;
	enum profile_filter filter = PROFILE_WALL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:o:f:r:d:m:th", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_pid(optarg, &pid))
				return cli_usage_error("record ", "invalid pid '%s'", optarg);
			break;
		case 'o': out = optarg; break;
		case 'f':
			if (strcmp(optarg, "collapsed") != 0 && strcmp(optarg, "speedscope") != 0)
				return cli_usage_error("record ", "unknown format '%s' (collapsed or speedscope)",
						       optarg);
			format = optarg;
			break;
		case 'r':
			if (!sampler_parse_rate(optarg, &hz))
				return cli_usage_error("record ", "invalid rate '%s'", optarg);
			break;
		case 'd':
			if (!cli_parse_seconds(optarg, 7 * 86400.0, &seconds))
				return cli_usage_error("record ", "invalid duration '%s'", optarg);
			break;
		case 'm':
			if (strcmp(optarg, "wall") == 0)
				filter = PROFILE_WALL;
			else if (strcmp(optarg, "cpu") == 0)
				filter = PROFILE_CPU;
			else if (strcmp(optarg, "gil") == 0)
				filter = PROFILE_GIL;
			else
				return cli_usage_error("record ", "unknown mode '%s' (wall, cpu or gil)", optarg);
			break;
		case 't': per_thread = true; break;
		case 'S': subprocesses = true; break;
		case 'h': print_usage(stdout); return 0;
		default:
			return cli_usage_error("record ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("record ", "unexpected argument '%s'", argv[optind]);
	if (pid == 0)
		return cli_usage_error("record ", "missing -p PID");
	if (!out)
		return cli_usage_error("record ", "missing -o FILE");
	if (!format) {
		size_t len = strlen(out);
		format = len > 5 && strcmp(out + len - 5, ".json") == 0 ? "speedscope" : "collapsed";
	}
	/* Open the output first: a bad path should fail before any sampling. */
	FILE *f = fopen(out, "w");
	if (!f) {
		struct tt_error e;
		tt_fail(&e, TT_EIO, errno, "cannot write %s: %s", out, strerror(errno));
		return cli_report(&e);
	}

	struct tt_error err = {0};
	struct target t;
	if (target_attach(&t, pid, &err) != TT_OK) {
		fclose(f);
		remove(out);
		return cli_report(&err);
	}
	struct sampler_config cfg;
	sampler_default_config(&cfg);
	cfg.interval_ns = hz > 0 ? (uint64_t)(1e9 / hz) : 0;
	cfg.duration_ns = (uint64_t)(seconds * 1e9);
	cfg.ring_capacity = 1u << 18;
	cfg.follow = subprocesses;
	if (filter == PROFILE_CPU && hz > 0 && cfg.interval_ns < cfg.walk.cpu_period_ns)
		cfg.walk.cpu_period_ns = cfg.interval_ns; /* on-CPU state per sample */

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct sampler s;
	if (sampler_start(&s, &t, &cfg, &err) != TT_OK) {
		fclose(f);
		remove(out);
		return cli_report(&err);
	}
	struct profile prof;
	profile_init(&prof);
	bool oom = false;
	while (sampler_end_state(&s) == SAMPLER_RUNNING && !interrupted) {
		struct pollfd pfd = {.fd = s.wake_fd, .events = POLLIN};
		poll(&pfd, 1, 20);
		drain(&s, &prof, filter, &oom);
	}
	sampler_stop(&s);
	drain(&s, &prof, filter, &oom);
	enum sampler_end how = sampler_end_state(&s);

	int rc = 0;
	char name[64];
	snprintf(name, sizeof name, "tachyon-top pid %d%s", (int)pid,
		 subprocesses ? " and descendants" : "");
	int wrc = strcmp(format, "speedscope") == 0
			  ? profile_write_speedscope(&prof, &s.procs, f, name, hz > 0 ? 1.0 / hz : 1e-6, subprocesses)
			  : profile_write_collapsed(&prof, &s.procs, f, per_thread, subprocesses);
	if (fclose(f) != 0 || wrc != 0) {
		tt_fail(&err, TT_EIO, errno, "writing %s failed", out);
		rc = cli_report(&err);
	}
	uint64_t samples = atomic_load(&s.stats.samples), errors = atomic_load(&s.stats.errors);
	double secs = (double)atomic_load(&s.stats.elapsed_ns) / 1e9;
	fprintf(stderr, "tachyon-top: %llu samples in %.2f s (%.0f/s), %.2f%% errors, %llu missed, "
		"%llu distinct stacks%s; wrote %s\n",
		(unsigned long long)samples, secs, secs > 0 ? (double)samples / secs : 0.0,
		samples ? 100.0 * (double)errors / (double)samples : 0.0,
		(unsigned long long)atomic_load(&s.stats.missed), (unsigned long long)prof.count,
		how == SAMPLER_TARGET_EXITED ? ", target exited" : interrupted ? ", interrupted" : "",
		out);
	if (oom)
		fprintf(stderr, "tachyon-top: out of memory: some samples were not recorded\n");
	if (how == SAMPLER_FAILED && rc == 0)
		rc = cli_report(&s.error);
	profile_free(&prof);
	sampler_free(&s);
	return rc;
}
