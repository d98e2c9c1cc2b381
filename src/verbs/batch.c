#include "config.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "batchtree.h"
#include "cli.h"
#include "clock.h"
#include "sanitize.h"

static volatile sig_atomic_t stop_requested;

static void
on_signal(int sig)
{
	stop_requested = sig;
}

static const char *const mode_names[] = {"wall", "cpu", "gil", "exception"};

static void
drain(struct session *s, struct aggregate *agg)
{
	static struct sample_record buf[4096];
	size_t n;
	while ((n = ring_pop(&s->sampler.ring, buf, 4096)) > 0)
		for (size_t i = 0; i < n; i++)
			agg_add(agg, &buf[i]);
}

static void
print_table(const struct live_options *o, struct session *s, struct aggregate *agg,
	    struct agg_table *t, enum agg_scope scope, double seconds, const char *title)
{
	struct engine_stats *st = &s->sampler.stats;
	uint64_t samples = atomic_load(&st->samples), errors = atomic_load(&st->errors);
	uint64_t missed = atomic_load(&st->missed);
	double elapsed = (double)atomic_load(&st->elapsed_ns) / 1e9;
	double rate = elapsed > 0 ? (double)samples / elapsed : 0;
	char cmd[600];
	sanitize_for_terminal(s->cmdline, cmd, sizeof cmd);
	printf("tachyon-top %s - pid %d - %s - Python %s\n", title, (int)s->target.pid, cmd,
	       s->target.layout.version_str);
	char req[32];
	if (s->rate_hz > 0)
		snprintf(req, sizeof req, "%.0f/s", s->rate_hz);
	else
		snprintf(req, sizeof req, "max");
	double expected = s->rate_hz > 0 ? elapsed * s->rate_hz : 0;
	printf("rate %.0f/s (requested %s), missed %.1f%%, errors %.2f%%, samples %llu; "
	       "%s %.2f s; mode %s; by %s\n",
	       rate, req, expected > 0 ? 100.0 * (double)missed / expected : 0.0,
	       samples ? 100.0 * (double)errors / (double)samples : 0.0,
	       (unsigned long long)samples, scope == AGG_WINDOW ? "window" : "session", seconds,
	       mode_names[o->mode], o->by_line ? "line" : "function");
	struct agg_query q = {.mode = o->mode, .scope = scope, .by_line = o->by_line, .slot = -1,
			      .sort = o->sort};
	if (o->tree) {
		batch_print_tree(o, agg, &q, stdout);
		printf("\n");
		fflush(stdout);
		return;
	}
	if (!agg_build_table(agg, &q, t)) {
		printf("(out of memory building the table)\n\n");
		return;
	}
	/* Time per sample: one sampling interval of the thread's life. */
	double per_sample = rate > 0 ? 1.0 / rate : 0;
	printf("%7s %7s %9s %9s  %-40s %s\n", "OWN%", "TOTAL%", "OWN(s)", "TOTAL(s)", "FUNCTION",
	       "FILE:LINE");
	uint32_t n = t->nrows < (uint32_t)o->limit ? t->nrows : (uint32_t)o->limit;
	for (uint32_t i = 0; i < n; i++) {
		const struct agg_row *r = &t->rows[i];
		const struct agg_func *f = &agg->funcs[r->func];
		char name[512], file[1024];
		sanitize_for_terminal(f->qualname, name, sizeof name);
		sanitize_for_terminal(f->filename, file, sizeof file);
		double d = t->denominator ? (double)t->denominator : 1;
		printf("%7.2f %7.2f %9.3f %9.3f  %-40s %s:%d\n", 100.0 * (double)r->own / d,
		       100.0 * (double)r->total / d, (double)r->own * per_sample,
		       (double)r->total * per_sample, name, file, r->line >= 0 ? r->line : f->firstlineno);
	}
	if (t->nrows == 0)
		printf("(no samples%s)\n", o->mode != AGG_WALL ? " in this mode" : "");
	printf("\n");
	fflush(stdout);
}

int
batch_run(const struct live_options *o)
{
	struct tt_error err = {0};
	struct session s;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (session_start(&s, &o->session, &err) != TT_OK)
		return cli_report(&err);
	struct aggregate agg;
	uint64_t start = clock_now_ns();
	agg_init(&agg, s.sampler.walk, start);
	struct agg_table table = {0};
	uint64_t delay = (uint64_t)(o->delay_s * 1e9), next = start + delay;
	long printed = 0;
	while (!stop_requested && sampler_end_state(&s.sampler) == SAMPLER_RUNNING) {
		struct pollfd pfd = {.fd = s.sampler.wake_fd, .events = POLLIN};
		poll(&pfd, 1, 20);
		drain(&s, &agg);
		session_poll_child(&s);
		uint64_t now = clock_now_ns();
		if (now >= next) {
			agg_roll_window(&agg, now);
			print_table(o, &s, &agg, &table, AGG_WINDOW, (double)agg.window_ns / 1e9, "window");
			next += delay;
			if (next < now)
				next = now + delay;
			if (o->iterations && ++printed >= o->iterations)
				break;
		}
	}
	enum sampler_end how = sampler_end_state(&s.sampler);
	sampler_stop(&s.sampler);
	drain(&s, &agg);
	agg_roll_window(&agg, clock_now_ns());
	print_table(o, &s, &agg, &table, AGG_SESSION, (double)(clock_now_ns() - start) / 1e9,
		    "session (final)");
	int rc = 0;
	/* The sampler may notice the end before the child is reapable: give
	 * it a moment, so the exit status is reported rather than guessed. */
	if (how == SAMPLER_TARGET_EXITED)
		session_wait_child(&s, 1000000000ull);
	else
		session_poll_child(&s);
	if (s.child && s.child_exited) {
		char how_s[96];
		session_describe_exit(&s, how_s, sizeof how_s);
		printf("process %d %s\n", (int)s.target.pid, how_s);
	} else if (how == SAMPLER_TARGET_EXITED) {
		printf("process %d exited\n", (int)s.target.pid);
	} else if (how == SAMPLER_FAILED) {
		rc = cli_report(&s.sampler.error);
	}
	agg_table_free(&table);
	batch_tree_free();
	agg_free(&agg);
	session_end(&s);
	return rc;
}
