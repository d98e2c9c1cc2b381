#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "sanitize.h"
#include "session.h"
#include "stucktasks.h"
#include "waits/tcpdiag.h"
#include "stuckwatch.h"
#include "watch.h"
#include "watchrecord.h"
#include "watchreport.h"
#include "order.h"

#define WATCH_RATE_HZ 20
#define WATCH_STUCK_S STUCKWATCH_STUCK_S
#define WATCH_LOOP_MS STUCKWATCH_LOOP_MS
#define WATCH_SPIN_S STUCKWATCH_SPIN_S
#define WATCH_LAST_S 60              /* a report's recording: the last seconds */
/* The flight recorder's cap (16 bytes each): a busy tree keeps fewer seconds. */
#define WATCH_LAST_MAX_RECORDS (2u << 20)
#define WATCH_MAX_REPORTS 6          /* an hour */
#define WATCH_MAX_SIZE (1ull << 30)  /* bytes of reports kept */
#define WATCH_MAX_IGNORE 32
#define WATCH_MAX_EXEC 8             /* --exec commands still running */
#define WATCH_LOOK_NS 250000000ull   /* how often stuck threads are looked for */
/* How often every process's asyncio tasks and greenlets are read. */
#define WATCH_TASKS_NS 1000000000ull
/* A thread not sampled this long has left (or stopped being read). */
#define WATCH_GONE_NS (5ull * 1000000000ull)

struct watch_args {
	pid_t pid;
	double rate_hz, duration_s, stuck_s, loop_ms, spin_s, last_s;
	const char *ignore[WATCH_MAX_IGNORE];
	int nignore;
	const char *exec_cmd;
	long max_reports;
	uint64_t max_bytes;
	struct watch_report_opts report;
};

static void
print_usage(FILE *f)
{
	fputs("Usage: tachyon-top watch -p PID [--stuck SECONDS] [-o DIR] [OPTION]...\n"
	      "Watch process PID (and its Python descendants) for good at a low rate, and\n"
	      "write a report when a thread is stuck: it has sat in one place, its Python\n"
	      "stack unchanged, waiting (off a CPU), for SECONDS. A thread in the place it\n"
	      "was first seen in (a pool's idle worker, a server's accept loop), or where\n"
	      "any other thread was first seen, is idle, not stuck. An asyncio task or\n"
	      "greenlet is stuck after SECONDS at one await point where none sat when its\n"
	      "process was first read; in a server (a process that listens or accepted\n"
	      "connections) only while one of its TCP connections has waited that long for\n"
	      "an answer, to a client or from a server (else it waits for its client: a\n"
	      "keep-alive connection). Also when an asyncio event loop is blocked (its\n"
	      "thread runs a callback blocked in a call: its stack unchanged, off a CPU,\n"
	      "not in its selector, for MS), and when a thread spins (on a CPU in one\n"
	      "function for SPIN seconds). A report is a directory, written whole under a\n"
	      "temporary name, then renamed: summary.txt names the thread, its stack and\n"
	      "what it waits for in the kernel; dump.txt and dump.json hold every thread of\n"
	      "every process, as `dump --tasks` prints them; recording.ttrec the samples of\n"
	      "the last seconds before it (`tachyon-top replay` makes a flame graph of it).\n"
	      "\n"
	      "  -p, --pid PID          process to watch (never stopped or written to)\n"
	      "      --stuck SECONDS    how long in one place is stuck (default 30)\n"
	      "      --loop-blocked MS  how long in one callback blocks an asyncio event\n"
	      "                         loop (default 500)\n"
	      "      --spin SPIN        how long on a CPU in one function is spinning\n"
	      "                         (default 60)\n"
	      "      --ignore PATTERN   never report a thread with a frame whose function,\n"
	      "                         file or file:line matches this shell pattern\n"
	      "                         (repeat for more)\n"
	      "  -o, --out DIR          where reports go (default tachyon-top-reports)\n"
	      "      --max-reports N    at most N reports an hour (default 6)\n"
	      "      --max-size SIZE    the oldest reports are removed to keep those in DIR\n"
	      "                         under SIZE bytes (K, M, G: KiB, MiB, GiB; default\n"
	      "                         1G)\n"
	      "      --exec CMD         run sh -c CMD after each report, its path as $1\n"
	      "      --last SECONDS     a report's recording holds the samples of the last\n"
	      "                         SECONDS (default 60; 0: no recording; at most 2 Mi\n"
	      "                         samples are kept, 32 MiB)\n"
	      "  -r, --rate RATE        samples per second and process (default 20)\n"
	      "  -d, --duration SECONDS stop watching after SECONDS (default: until stopped)\n"
	      "      --native           reports' dumps with native frames\n"
	      "      --locals           reports' dumps with each frame's locals (they may hold\n"
	      "                         secrets: the reports are readable by their owner only)\n"
	      "      --no-subprocesses  PID alone, not its descendants\n"
	      "  -h, --help             show this help\n"
	      "SIGINT, SIGTERM and SIGHUP end it; so does the process's exit.\n", f);
}

/* A size: bytes, or KiB, MiB, GiB with K, M, G; at least 1 KiB. */
static bool
parse_size(const char *s, uint64_t *out)
{
	static const struct { char suffix; uint64_t unit; } UNITS[] = {
		{'\0', 1}, {'K', 1ull << 10}, {'M', 1ull << 20}, {'G', 1ull << 30},
	};
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v > 0))
		return false;
	char suffix = (char)toupper((unsigned char)end[0]);
	if (suffix && end[1])
		return false;
	for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++) {
		if (suffix != UNITS[i].suffix)
			continue;
		double bytes = v * (double)UNITS[i].unit;
		if (bytes < 1024 || bytes > 1e18)
			return false;
		*out = (uint64_t)bytes;
		return true;
	}
	return false;
}

enum { OPT_STUCK = 256, OPT_LOOP, OPT_SPIN, OPT_IGNORE, OPT_MAX_REPORTS, OPT_EXEC, OPT_LAST, OPT_MAX_SIZE,
       OPT_NATIVE, OPT_LOCALS, OPT_NOSUB };

static int
parse_args(int argc, char **argv, struct watch_args *a)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"stuck", required_argument, NULL, OPT_STUCK},
		{"loop-blocked", required_argument, NULL, OPT_LOOP},
		{"spin", required_argument, NULL, OPT_SPIN},
		{"ignore", required_argument, NULL, OPT_IGNORE},
		{"out", required_argument, NULL, 'o'},
		{"max-reports", required_argument, NULL, OPT_MAX_REPORTS},
		{"max-size", required_argument, NULL, OPT_MAX_SIZE},
		{"exec", required_argument, NULL, OPT_EXEC},
		{"last", required_argument, NULL, OPT_LAST},
		{"rate", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 'd'},
		{"native", no_argument, NULL, OPT_NATIVE},
		{"locals", no_argument, NULL, OPT_LOCALS},
		{"no-subprocesses", no_argument, NULL, OPT_NOSUB},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	*a = (struct watch_args){.rate_hz = WATCH_RATE_HZ, .stuck_s = WATCH_STUCK_S,
				 .loop_ms = WATCH_LOOP_MS, .spin_s = WATCH_SPIN_S, .last_s = WATCH_LAST_S,
				 .max_reports = WATCH_MAX_REPORTS, .max_bytes = WATCH_MAX_SIZE,
				 .report = {.dir = "tachyon-top-reports", .tree = true}};
	cli_getopt_reset();
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "p:o:r:d:h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'p':
			if (!cli_parse_pid(optarg, &a->pid))
				return cli_usage_error("watch ", "invalid pid '%s'", optarg);
			break;
		case OPT_STUCK:
		case OPT_LOOP:
		case OPT_SPIN: {
			int bad = c == OPT_STUCK
				  ? cli_parse_threshold("watch ", "--stuck", optarg, &a->stuck_s)
				  : c == OPT_LOOP
				  ? cli_parse_threshold("watch ", "--loop-blocked", optarg, &a->loop_ms)
				  : cli_parse_threshold("watch ", "--spin", optarg, &a->spin_s);
			if (bad)
				return bad;
			break;
		}
		case OPT_IGNORE:
			if (a->nignore == WATCH_MAX_IGNORE)
				return cli_usage_error("watch ", "at most %d --ignore patterns",
						       WATCH_MAX_IGNORE);
			a->ignore[a->nignore++] = optarg;
			break;
		case 'o':
			if (!optarg[0])
				return cli_usage_error("watch ", "-o takes a directory");
			a->report.dir = optarg;
			break;
		case OPT_MAX_REPORTS:
			a->max_reports = strtol(optarg, &end, 10);
			if (end == optarg || *end || a->max_reports < 1 || a->max_reports > 3600)
				return cli_usage_error("watch ", "--max-reports takes a number from 1 "
								 "to 3600, not '%s'", optarg);
			break;
		case OPT_MAX_SIZE:
			if (!parse_size(optarg, &a->max_bytes))
				return cli_usage_error("watch ", "--max-size takes a size from 1K (a "
								 "number of bytes, or with K, M or G), "
								 "not '%s'", optarg);
			break;
		case OPT_EXEC:
			a->exec_cmd = optarg;
			break;
		case OPT_LAST:
			a->last_s = strtod(optarg, &end);
			if (end == optarg || *end || !(a->last_s >= 0 && a->last_s <= 3600))
				return cli_usage_error("watch ", "--last takes seconds, from 0 to "
								 "3600, not '%s'", optarg);
			break;
		case 'r':
			if (!sampler_parse_rate(optarg, &a->rate_hz) || a->rate_hz <= 0)
				return cli_usage_error("watch ", "invalid rate '%s' (a number of "
								 "samples per second: 20, 1k)", optarg);
			break;
		case 'd':
			if (!cli_parse_seconds(optarg, 1e9, &a->duration_s))
				return cli_usage_error("watch ", "invalid duration '%s'", optarg);
			break;
		case OPT_NATIVE:
			a->report.native = true;
			break;
		case OPT_LOCALS:
			a->report.locals = true;
			break;
		case OPT_NOSUB:
			a->report.tree = false;
			break;
		case 'h':
			print_usage(stdout);
			return -1;
		default:
			return cli_usage_error("watch ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("watch ", "unexpected argument '%s'", argv[optind]);
	if (!a->pid)
		return cli_usage_error("watch ", "missing -p PID");
	a->report.root = a->pid;
	return 0;
}

struct watcher {
	struct watch_args *args;
	struct session s;
	struct stuckwatch stuck;
	struct stucktasks stuck_tasks;
	uint32_t *named_tasks;               /* scratch: stucktasks_judge's answer */
	uint32_t named_cap;
	struct flightrec last;               /* the samples of the last --last seconds */
	struct waitwatch_snapshot *waits;    /* the newest look, owned */
	uint64_t *report_times;              /* the last max_reports reports (clock_now_ns) */
	uint32_t nreports;
	pid_t execs[WATCH_MAX_EXEC];
	char last_error[640];                /* said once until another comes */
	int write_errno;                     /* why the last report failed (-1: no errno) */
	bool memory_short;
};

static void
take(void *ctx, const struct sample_record *r, size_t n)
{
	struct watcher *w = ctx;
	if (!flightrec_add(&w->last, r, n) ||
	    !stuckwatch_take(&w->stuck, &w->s.sampler.procs, r, n))
		w->memory_short = true;
}

/* Does a frame match an --ignore pattern? */
static bool
frame_ignored(const struct watch_args *a, const struct interned_func *fn, int32_t line)
{
	char where[1100];
	snprintf(where, sizeof where, "%s:%d", fn->filename, (int)line);
	for (int i = 0; i < a->nignore; i++)
		if (fnmatch(a->ignore[i], fn->qualname, 0) == 0 ||
		    fnmatch(a->ignore[i], fn->filename, 0) == 0 ||
		    fnmatch(a->ignore[i], where, 0) == 0)
			return true;
	return false;
}

/* Does a frame of the stack match an --ignore pattern? */
static bool
ignored(const struct watch_args *a, const struct intern *in, uint32_t stack)
{
	for (uint32_t id = stack; id && a->nignore;) {
		const struct interned_stack *st = intern_stack_at(in, id);
		const struct interned_frame *fr = intern_frame_at(in, st->frame);
		if (frame_ignored(a, intern_func_at(in, fr->func_id), fr->line))
			return true;
		id = st->parent;
	}
	return false;
}

/* Does a frame of the task's await chain match an --ignore pattern? */
static bool
task_ignored(const struct watch_args *a, const struct task_snapshot *s, const struct tt_task *t)
{
	for (uint32_t f = t->first_frame; a->nignore && f < t->first_frame + t->nframes; f++)
		if (frame_ignored(a, intern_func_at(s->funcs, s->frame_func[f]),
				  s->tasks.frames[f].line))
			return true;
	return false;
}

/* "func (file:line)", or "func (file)" for line 0, sanitized. */
static void
where_text(const struct intern *in, uint32_t func, int32_t line, char *out, size_t len)
{
	const struct interned_func *fn = intern_func_at(in, func);
	char raw[1400];
	if (line > 0)
		snprintf(raw, sizeof raw, "%s (%s:%d)", fn->qualname, fn->filename, (int)line);
	else
		snprintf(raw, sizeof raw, "%s (%s)", fn->qualname, fn->filename);
	sanitize_for_terminal(raw, out, len);
}

/* A frame: its function and line. */
static void
frame_text(const struct intern *in, uint32_t frame, char *out, size_t len)
{
	const struct interned_frame *fr = intern_frame_at(in, frame);
	where_text(in, fr->func_id, fr->line, out, len);
}

/* A UTC time as ISO 8601 (2026-12-06T08:01:02Z), or compact for a file
 * name (20261206T080102Z). */
static void
utc(uint64_t wall_s, char *out, size_t len, bool compact)
{
	time_t t = (time_t)wall_s;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, len, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The end of a summary written to f, an open_memstream of *buf: when,
 * where the rest of the report is; the summary as a string (NULL when it
 * could not be written). */
static char *
summary_end(const struct watcher *w, FILE *f, char **buf, double stuck_s, const char *read_how,
	    const char *what_dumped)
{
	uint64_t wall = (uint64_t)time(NULL);
	char at[40], since[40];
	utc(wall, at, sizeof at, false);
	utc(wall - (uint64_t)stuck_s, since, sizeof since, false);
	fprintf(f, "reported at %s; there since about %s (%s)\n", at, since, read_how);
	fprintf(f, "dump.txt, dump.json: %s of %s, as `tachyon-top dump --tasks%s%s` prints "
		"them, taken right after this\n", what_dumped,
		w->args->report.tree ? "every process of the tree" : "the process",
		w->args->report.native ? " --native" : "", w->args->report.locals ? " --locals" : "");
	if (w->args->last_s > 0)
		fprintf(f, "recording.ttrec: the samples of the last %g s before this (`tachyon-top "
			"replay recording.ttrec -o flame.svg`)\n", w->args->last_s);
	if (fclose(f) != 0) {
		free(*buf);
		return NULL;
	}
	return *buf;
}

/* summary.txt of a stuck thread: what, where, since when. */
static char *
summary_of(struct watcher *w, uint32_t slot, uint64_t now_ns, const struct stuck_thread *t,
	   enum stuck_kind kind)
{
	const struct procset *ps = &w->s.sampler.procs;
	const struct thread_slot *ts = procset_slot(ps, slot);
	const struct proc_info *p = procset_at(ps, t->proc);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	char *raw_name = atomic_load_explicit(&((struct thread_slot *)ts)->name,
					      memory_order_acquire);
	char name[256], cmd[600];
	sanitize_for_terminal(raw_name ? raw_name : "?", name, sizeof name);
	sanitize_for_terminal(procset_cmdline(p), cmd, sizeof cmd);
	double stuck_s = (double)(now_ns - stuckwatch_since(t, kind)) / 1e9;
	if (kind == STUCK_LOOP) {
		char holder[1500], at[1500];
		where_text(&ps->in, stuckwatch_loop_holder(&w->stuck, t->stack), 0, holder,
			   sizeof holder);
		frame_text(&ps->in, intern_stack_at(&ps->in, t->stack)->frame, at, sizeof at);
		fprintf(f, "LOOP BLOCKED: the asyncio event loop of thread %llu \"%s\" of process "
			"%d has been blocked in a call of one callback for %.1f s, not waiting in "
			"its selector (--loop-blocked %g ms): at %s, in %s\n",
			(unsigned long long)ts->native_tid, name, (int)p->pid,
			stuck_s, w->args->loop_ms, at, holder);
	} else if (kind == STUCK_SPIN) {
		char func[1500];
		where_text(&ps->in, t->spin_func, 0, func, sizeof func);
		fprintf(f, "SPINNING: thread %llu \"%s\" of process %d has been on a CPU in one "
			"function for %.1f s (--spin %g): %s\n", (unsigned long long)ts->native_tid,
			name, (int)p->pid, stuck_s, w->args->spin_s,
			func);
	} else {
		fprintf(f, "STUCK: thread %llu \"%s\" of process %d has not moved for %.1f s "
			"(--stuck %g)\n", (unsigned long long)ts->native_tid, name, (int)p->pid,
			stuck_s, w->args->stuck_s);
	}
	if (ts->ns_tid && ts->ns_tid != ts->native_tid)
		fprintf(f, "  (thread %llu in its own PID namespace)\n",
			(unsigned long long)ts->ns_tid);
	fprintf(f, "process %d: %s\n", (int)p->pid, cmd);
	const struct waitwatch_entry *e = ts->tid_unknown ? NULL
					  : waitwatch_find(w->waits, ts->native_tid);
	char wait[2 * KWAIT_OBJECT_MAX], safe[4 * KWAIT_OBJECT_MAX];
	if (e) {
		kwait_format(&e->info, waitwatch_seconds(e, clock_now_ns()), wait, sizeof wait);
		sanitize_for_terminal(wait, safe, sizeof safe);
		fprintf(f, "in the kernel: %s\n", safe);
	} else {
		fprintf(f, "in the kernel: not waiting (running, or on its way)\n");
	}
	fprintf(f, "stack, innermost first:\n");
	const struct intern *in = &ps->in;
	for (uint32_t id = t->stack; id;) {
		const struct interned_stack *st = intern_stack_at(in, id);
		char frame[1500];
		frame_text(in, st->frame, frame, sizeof frame);
		fprintf(f, "    %s\n", frame);
		id = st->parent;
	}
	char how[64];
	snprintf(how, sizeof how, "sampled %g times a second", w->args->rate_hz);
	return summary_end(w, f, &buf, stuck_s, how, "every thread");
}

#define WATCH_CONNS_MAX 4096   /* TCP connections of a process looked at */

static int
by_owed(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;   /* {ms, index} pairs, longest first */
	return x[0] < y[0] ? 1 : x[0] > y[0] ? -1 : 0;
}

/* For a report: the process's TCP connections owed an answer about as
 * long as a task of it has waited (wait_ns), longest first. */
static void
peers_of(pid_t pid, uint64_t wait_ns, char *text, size_t len)
{
	text[0] = '\0';
	struct tcp_conn *c = malloc(WATCH_CONNS_MAX * sizeof *c);
	uint32_t (*owed)[2] = malloc(WATCH_CONNS_MAX * sizeof *owed);
	size_t n = c && owed ? tcpdiag_read(pid, c, WATCH_CONNS_MAX) : 0, nowed = 0;
	uint64_t want_ms = stucktasks_owed_ms(wait_ns);
	for (size_t i = 0; i < n; i++) {
		uint32_t ms;
		if (tcpdiag_owed(&c[i], &ms) != TCP_OWED_NOTHING && ms >= want_ms) {
			owed[nowed][0] = ms;
			owed[nowed++][1] = (uint32_t)i;
		}
	}
	order_sort(owed, nowed, sizeof *owed, by_owed);
	size_t at = 0;
	for (size_t k = 0; k < nowed && k < 4 && at < len; k++) {
		const struct tcp_conn *x = &c[owed[k][1]];
		uint32_t ms;
		bool client = tcpdiag_owed(x, &ms) == TCP_OWES_CLIENT;
		int w = snprintf(text + at, len - at, "%s%s %s for %.1f s (tcp %s -> %s)",
				 k ? "; " : "", client ? "owes an answer to its client"
						       : "awaits an answer from",
				 x->remote, ms / 1000.0, x->local, x->remote);
		at += w > 0 ? (size_t)w : 0;
	}
	if (nowed > 4 && at < len)
		snprintf(text + at, len - at, "; %zu more", nowed - 4);
	free(c);
	free(owed);
}

/* What a task is, for its lines: "asyncio task" or "greenlet". */
static const char *
task_kind_text(const struct tt_task *t)
{
	return t->kind == TASK_GREENLET ? "greenlet" : "asyncio task";
}

/* A task's name (sanitized) and its innermost frame ("?" for none). */
static void
task_names(const struct task_snapshot *s, const struct tt_task *t, char *name, size_t nlen,
	   char *at, size_t alen)
{
	sanitize_for_terminal(tt_task_name(&s->tasks, t), name, nlen);
	snprintf(at, alen, "?");
	if (t->nframes)
		where_text(s->funcs, s->frame_func[t->first_frame],
			   s->tasks.frames[t->first_frame].line, at, alen);
}

/* summary.txt of a stuck task or greenlet: what, where, since when, who
 * awaits it, how many more are stuck with it. */
static char *
task_summary_of(struct watcher *w, const struct task_snapshot *s, uint32_t i, const char *peers)
{
	const struct tt_task *t = &s->tasks.tasks[i];
	const struct task_proc *p = &s->procs[s->task_proc[i]];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	char name[4 * TASKS_NAME_MAX + 8], at[1500];
	task_names(s, t, name, sizeof name, at, sizeof at);
	double stuck_s = (double)s->stuck_ns[i] / 1e9;
	fprintf(f, "STUCK: %s \"%s\" of process %d has not moved for %.1f s (--stuck %g): "
		"at %s\n", task_kind_text(t), name, (int)p->pid, stuck_s, w->args->stuck_s, at);
	const struct proc_info *pi = procset_count(&w->s.sampler.procs) > p->proc_index
				     ? procset_at(&w->s.sampler.procs, p->proc_index) : NULL;
	char cmd[600];
	sanitize_for_terminal(pi && pi->pid == p->pid ? procset_cmdline(pi) : "?", cmd, sizeof cmd);
	fprintf(f, "process %d: %s\n", (int)p->pid, cmd);
	if (t->thread)
		fprintf(f, "%s: %llu\n", t->kind == TASK_GREENLET ? "its thread"
				: "the thread of its event loop", (unsigned long long)t->thread);
	/* who awaits it: tasks of its process with the awaited ids */
	uint32_t shown = 0;
	for (uint32_t a = 0; a < t->nawaiters && shown < 5; a++) {
		uint64_t id = s->tasks.awaiters[t->first_awaiter + a];
		for (uint32_t k = p->first_task; k < p->first_task + p->ntasks; k++) {
			if (s->tasks.tasks[k].id != id)
				continue;
			char other[4 * TASKS_NAME_MAX + 8];
			sanitize_for_terminal(tt_task_name(&s->tasks, &s->tasks.tasks[k]), other,
					      sizeof other);
			fprintf(f, "%s\"%s\"", shown++ ? ", " : "awaited by: ", other);
			break;
		}
	}
	if (shown)
		fprintf(f, "\n");
	if (peers[0])
		fprintf(f, "its process's connections: %s\n", peers);
	fprintf(f, "%s, innermost first:\n",
		t->kind == TASK_GREENLET ? "stack" : "await chain");
	for (uint32_t k = t->first_frame; k < t->first_frame + t->nframes; k++) {
		char frame[1500];
		where_text(s->funcs, s->frame_func[k], s->tasks.frames[k].line, frame, sizeof frame);
		fprintf(f, "    %s\n", frame);
	}
	/* the others there are the same thing: an upstream down holds them all */
	uint64_t point = stucktasks_point(s, t);
	uint32_t same = 0, procs = 0;
	pid_t last = 0;
	for (uint32_t k = 0; k < s->tasks.n; k++) {
		if (k == i || s->stuck_ns[k] < w->stuck_tasks.stuck_ns ||
		    stucktasks_point(s, &s->tasks.tasks[k]) != point)
			continue;
		same++;
		if (s->procs[s->task_proc[k]].pid != last) {
			procs++;
			last = s->procs[s->task_proc[k]].pid;
		}
	}
	if (same)
		fprintf(f, "%u more %s%s stuck at this point (in %u process%s): one report for "
			"them all\n", same, task_kind_text(t), same == 1 ? " is" : "s are", procs,
			procs == 1 ? "" : "es");
	return summary_end(w, f, &buf, stuck_s, "tasks read once a second",
			   "every thread and task");
}

/* Say a problem once, until another one comes. */
static void
say_once(struct watcher *w, const char *msg)
{
	if (strcmp(w->last_error, msg) == 0)
		return;
	snprintf(w->last_error, sizeof w->last_error, "%s", msg);
	printf("watch: %s\n", msg);
	fflush(stdout);
}

/* A report slot within the hour: false when --max-reports are used up. */
static bool
report_allowed(struct watcher *w, uint64_t now)
{
	uint64_t hour = 3600ull * 1000000000ull;
	uint32_t recent = 0;
	for (uint32_t i = 0; i < w->nreports; i++)
		recent += now - w->report_times[i] < hour;
	return recent < (uint32_t)w->args->max_reports;
}

/* Each kind of report: its directory's word, and what the thread did. */
static const char *const WHAT[] = {[STUCK_PLACE] = "stuck", [STUCK_LOOP] = "loop-blocked",
				   [STUCK_SPIN] = "spinning"};
static const char *const SAID[] = {[STUCK_PLACE] = "stuck",
				   [STUCK_LOOP] = "blocked its event loop",
				   [STUCK_SPIN] = "spun on a CPU in one function"};

static void
said_removed(void *ctx, const char *path)
{
	struct watcher *w = ctx;
	char safe[4200];
	sanitize_for_terminal(path, safe, sizeof safe);
	printf("watch: removed %s: the reports held more than --max-size %llu bytes\n", safe,
	       (unsigned long long)w->args->max_bytes);
	fflush(stdout);
}

static tt_status
write_recording(void *ctx, const char *path, struct tt_error *err)
{
	struct watcher *w = ctx;
	return watch_recording_write(path, &w->last, &w->s, w->args->rate_hz, w->args->report.tree,
				     err);
}

/* Over --max-reports: said (what, then why not), and true. */
static bool
over_limit(struct watcher *w, uint64_t now, const char *what)
{
	if (report_allowed(w, now))
		return false;
	printf("watch: %s; not reported: %ld reports in the last hour (--max-reports)\n", what,
	       w->args->max_reports);
	fflush(stdout);
	return true;
}

/* Write a report named after the time and tail, holding summary (freed);
 * then say so (what, then where), keep the directory under its size and
 * run --exec. */
static void
deliver(struct watcher *w, uint64_t now, const char *tail, char *summary, const char *what)
{
	if (!summary) {
		say_once(w, "out of memory for a report's summary");
		return;
	}
	char name[160], stamp[40];
	utc((uint64_t)time(NULL), stamp, sizeof stamp, true);
	snprintf(name, sizeof name, "%s-%s", stamp, tail);
	char path[4096];
	struct tt_error err = {0};
	tt_status st = watch_report_write(&w->args->report, name, summary,
					  w->args->last_s > 0 ? write_recording : NULL, w, path,
					  sizeof path, &err);
	free(summary);
	if (st != TT_OK) {
		/* once for each cause (a full disk), not once for each report */
		int cause = err.sys_errno ? err.sys_errno : -1;
		if (cause != w->write_errno) {
			char msg[600];
			snprintf(msg, sizeof msg, "cannot write a report (watching goes on): %s",
				 err.msg);
			say_once(w, msg);
			w->write_errno = cause;
		}
		return;
	}
	w->last_error[0] = '\0';
	w->write_errno = 0;
	memmove(w->report_times + 1, w->report_times,
		(size_t)(w->args->max_reports - 1) * sizeof *w->report_times);
	w->report_times[0] = now;
	if (w->nreports < (uint32_t)w->args->max_reports)
		w->nreports++;
	char safe_path[4200];
	sanitize_for_terminal(path, safe_path, sizeof safe_path);
	printf("watch: %s: %s\n", what, safe_path);
	fflush(stdout);
	const char *slash = strrchr(path, '/');
	watch_report_prune(w->args->report.dir, w->args->max_bytes, slash ? slash + 1 : path,
			   said_removed, w);
	if (w->args->exec_cmd) {
		watch_report_reap(w->execs, WATCH_MAX_EXEC);
		for (int i = 0; i < WATCH_MAX_EXEC; i++) {
			if (w->execs[i] <= 0) {
				w->execs[i] = watch_report_exec(w->args->exec_cmd, path);
				if (w->execs[i] < 0)
					say_once(w, "cannot run --exec's command");
				return;
			}
		}
		say_once(w, "--exec: 8 commands still running; this report's not run");
	}
}

static void
report(struct watcher *w, uint32_t slot, uint64_t sample_now, enum stuck_kind kind)
{
	const struct stuck_thread *t = &w->stuck.threads[slot];
	const struct procset *ps = &w->s.sampler.procs;
	if (ignored(w->args, &ps->in, t->stack))
		return;
	const struct thread_slot *ts = procset_slot(ps, slot);
	const struct proc_info *p = procset_at(ps, t->proc);
	char where[1500], what[1800], tail[100];
	frame_text(&ps->in, intern_stack_at(&ps->in, t->stack)->frame, where, sizeof where);
	snprintf(what, sizeof what, "thread %llu of process %d %s %.1f s at %s",
		 (unsigned long long)ts->native_tid, (int)p->pid, SAID[kind],
		 (double)(sample_now - stuckwatch_since(t, kind)) / 1e9, where);
	uint64_t now = clock_now_ns();
	if (over_limit(w, now, what))
		return;
	snprintf(tail, sizeof tail, "%s-%d-%llu", WHAT[kind], (int)p->pid,
		 (unsigned long long)ts->native_tid);
	deliver(w, now, tail, summary_of(w, slot, sample_now, t, kind), what);
}

static void
report_task(struct watcher *w, const struct task_snapshot *s, uint32_t i)
{
	const struct tt_task *t = &s->tasks.tasks[i];
	if (task_ignored(w->args, s, t))
		return;
	const struct task_proc *p = &s->procs[s->task_proc[i]];
	char name[4 * TASKS_NAME_MAX + 8], at[1500], what[2600], tail[100], peers[1200];
	task_names(s, t, name, sizeof name, at, sizeof at);
	snprintf(what, sizeof what, "%s \"%s\" of process %d stuck %.1f s at %s",
		 task_kind_text(t), name, (int)p->pid, (double)s->stuck_ns[i] / 1e9, at);
	uint64_t now = clock_now_ns();
	if (over_limit(w, now, what))
		return;
	snprintf(tail, sizeof tail, "stuck-%s-%d-%llx", t->kind == TASK_GREENLET ? "greenlet"
				     : "task", (int)p->pid, (unsigned long long)t->id);
	peers_of(p->pid, s->stuck_ns[i], peers, sizeof peers);
	deliver(w, now, tail, task_summary_of(w, s, i, peers), what);
}

/* The tasks' newest read, if one came: those stuck reported. */
static void
look_at_tasks(struct watcher *w)
{
	if (!w->s.watching_tasks)
		return;
	struct task_snapshot *s = taskwatch_take(&w->s.tasks);
	if (!s)
		return;
	uint32_t n = 0;
	if (!stucktasks_judge(&w->stuck_tasks, s, &w->named_tasks, &n, &w->named_cap))
		w->memory_short = true;
	for (uint32_t k = 0; k < n; k++)
		report_task(w, s, w->named_tasks[k]);
	task_snapshot_free(s);
}

/* Can reports be written in dir: it is a directory we may write, or it
 * does not exist yet and its parent is? errno says why not. */
static bool
writable_dir(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			return false;
		}
		return access(dir, W_OK | X_OK) == 0;
	}
	if (errno != ENOENT)
		return false;
	char parent[4096];
	snprintf(parent, sizeof parent, "%s", dir);
	char *slash = strrchr(parent, '/');
	while (slash && slash > parent && slash[1] == '\0') {   /* "dir/" */
		*slash = '\0';
		slash = strrchr(parent, '/');
	}
	if (!slash)
		snprintf(parent, sizeof parent, ".");
	else if (slash == parent)
		parent[1] = '\0';
	else
		*slash = '\0';
	return access(parent, W_OK | X_OK) == 0;
}

int
watch_main(int argc, char **argv)
{
	struct watch_args a;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	/* where reports go (made at the first), checked now rather than then */
	if (!writable_dir(a.report.dir)) {
		char dir[4200];
		sanitize_for_terminal(a.report.dir, dir, sizeof dir);
		fprintf(stderr, "tachyon-top: cannot write reports in %s: %s\n", dir,
			strerror(errno));
		return 1;
	}
	int cleaned = watch_report_clean(a.report.dir);
	struct watcher w = {.args = &a};
	w.report_times = calloc((size_t)a.max_reports, sizeof *w.report_times);
	if (!w.report_times) {
		fprintf(stderr, "tachyon-top: out of memory\n");
		return 1;
	}
	struct session_options so = {.pid = a.pid, .rate_hz = a.rate_hz,
				     .duration_s = a.duration_s,
				     .no_subprocesses = !a.report.tree, .kernel_waits = true,
				     .tasks_every_ns = WATCH_TASKS_NS};
	struct tt_error err = {0};
	if (session_catch_stop_signals(&err) != TT_OK || session_start(&w.s, &so, &err) != TT_OK) {
		free(w.report_times);
		return cli_report(&err);
	}
	flightrec_init(&w.last, (uint64_t)(a.last_s * 1e9), WATCH_LAST_MAX_RECORDS);
	stucktasks_init(&w.stuck_tasks, (uint64_t)(a.stuck_s * 1e9));
	/* a stuck task's process: who owes whom an answer (stucktasks.h) */
	if (w.s.watching_tasks)
		atomic_store(&w.s.tasks.peers_after_ns, (uint64_t)(a.stuck_s * 1e9));
	stuckwatch_init(&w.stuck, &w.s.sampler.procs.in, (uint64_t)(a.stuck_s * 1e9),
			(uint64_t)(a.loop_ms * 1e6), (uint64_t)(a.spin_s * 1e9), WATCH_GONE_NS);
	char cmd[600], dir[4200];
	sanitize_for_terminal(w.s.cmdline, cmd, sizeof cmd);
	sanitize_for_terminal(a.report.dir, dir, sizeof dir);
	printf("watch: process %d (%s)%s, %g samples a second: a thread %g s in one place, an "
	       "event loop %g ms in one callback, or a thread %g s on a CPU in one function is "
	       "reported in %s\n", (int)w.s.pid, cmd,
	       a.report.tree ? " and its Python descendants" : "", a.rate_hz, a.stuck_s,
	       a.loop_ms, a.spin_s, dir);
	if (cleaned)
		printf("watch: removed %d partial report%s left by a watch that was killed\n",
		       cleaned, cleaned == 1 ? "" : "s");
	fflush(stdout);
	uint64_t next_look = clock_now_ns() + WATCH_LOOK_NS;
	while (!session_stop_signal() && sampler_end_state(&w.s.sampler) == SAMPLER_RUNNING) {
		struct pollfd pfd[2] = {{.fd = w.s.sampler.wake_fd, .events = POLLIN},
					{.fd = session_signal_fd(), .events = POLLIN}};
		poll(pfd, 2, 100);
		sampler_drain(&w.s.sampler, take, &w);
		flightrec_mark(&w.last, clock_now_ns() - w.s.sampler.start_ns,
			       atomic_load(&w.s.sampler.stats.samples));
		if (w.memory_short)
			say_once(&w, "out of memory: some samples were left out");
		uint64_t now = clock_now_ns();
		if (now < next_look)
			continue;
		next_look = now + WATCH_LOOK_NS;
		struct waitwatch_snapshot *fresh = waitwatch_take(w.s.waitwatch);
		if (fresh) {
			free(w.waits);
			w.waits = fresh;
			stuckwatch_waits(&w.stuck, &w.s.sampler.procs, fresh, w.s.sampler.start_ns);
		}
		watch_report_reap(w.execs, WATCH_MAX_EXEC);
		uint64_t sample_now = now - w.s.sampler.start_ns;
		uint32_t cursor = 0;
		int64_t slot;
		enum stuck_kind kind;
		while ((slot = stuckwatch_next(&w.stuck, sample_now, &cursor, &kind)) >= 0)
			report(&w, (uint32_t)slot, sample_now, kind);
		look_at_tasks(&w);
	}
	enum sampler_end how = sampler_end_state(&w.s.sampler);
	sampler_stop(&w.s.sampler);
	rc = 0;
	if (how == SAMPLER_TARGET_EXITED) {
		printf("watch: process %d exited\n", (int)w.s.pid);
	} else if (how == SAMPLER_FAILED) {
		rc = cli_report(&w.s.sampler.error);
	} else if (how == SAMPLER_DURATION) {
		printf("watch: stopped: -d %g s passed\n", a.duration_s);
	} else {
		int sig = session_stop_signal();
		printf("watch: stopped%s%s\n", sig ? " by " : "", sig ? strsignal(sig) : "");
	}
	fflush(stdout);
	free(w.waits);
	free(w.report_times);
	stuckwatch_free(&w.stuck);
	stucktasks_free(&w.stuck_tasks);
	free(w.named_tasks);
	flightrec_free(&w.last);
	session_end(&w.s);
	return rc;
}
