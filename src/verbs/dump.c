#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "proc/discover.h"
#include "dump.h"
#include "dumptasks.h"
#include "grow.h"
#include "jsonw.h"
#include "waits/kwait.h"
#include "native/mixedstack.h"
#include "mem/corefile.h"
#include "dumplocals.h"
#include "native/unwind.h"
#include "waits/owners.h"
#include "sanitize.h"
#include "proc/schedclock.h"
#include "proc/procstat.h"
#include "walk/threadnames.h"
#include "target.h"
#include "proc/tidmap.h"
#include "walk/plainwalk.h"

/* A live target can be caught mid-update; retry torn samples this often. */
#define DUMP_ATTEMPTS 50

static void
print_usage(FILE *f)
{
	fputs("Usage: tachyon-top dump -p PID [--json] [--tasks [--watch SECONDS]] [--native]\n"
	      "                        [--locals] [--subprocesses]\n"
	      "       tachyon-top dump --core FILE [--root DIR] [--exe PATH] [--json] [--tasks]\n"
	      "                        [--locals] [--native]\n"
	      "Print the Python stack of every thread of process PID, innermost frame first,\n"
	      "then those of its Python descendants (a server's workers), grouped by process.\n"
	      "\n"	      "  -p, --pid PID       process to inspect (read-only; it is never stopped)\n"
	      "  -j, --json          print one JSON object instead of text\n"
	      "  -t, --tasks         also every asyncio task: what it awaits, who awaits it\n"
	      "                      (Python 3.14+), and every greenlet (gevent's): where it\n"
	      "                      waits, under its parent (each process's)\n"
	      "      --watch SECONDS with --tasks: read them four times a second for that\n"
	      "                      long, and say how long each has not moved\n"
	      "  -n, --native        also each thread's native (C) frames, in order with its\n"
	      "                      Python ones (C calling back into Python too): registers\n"
	      "                      from the kernel (a blocked thread's system call, a\n"
	      "                      running one's perf sample), unwound by the libraries'\n"
	      "                      CFI (libdw); no thread is stopped\n"
	      "  -l, --locals        also each Python frame's arguments and local variables,\n"
	      "                      as repr() shows them (within limits); they may hold\n"
	      "                      secrets: handle the output like a core file\n"
	      "      --core FILE     the threads of the process a core file was taken of\n"
	      "                      (gcore, systemd-coredump); pages the core left out\n"
	      "                      come from the files it names\n"
	      "      --root DIR      where those files are (a container's root)\n"
	      "      --exe PATH      the executable, when it is no longer where it ran from\n"
	      "  -s, --subprocesses  group by process even when PID has no Python descendant:\n"
	      "                      --json prints {\"processes\": [...]}, one object each (the\n"
	      "                      default prints that shape only for several processes)\n"
	      "      --no-subprocesses  PID alone, not its Python descendants\n"
	      "  -h, --help          show this help\n", f);
}

static bool
is_torn(tt_status st)
{
	return st == TT_EBADMEM || st == TT_EFAULT;
}

/* One line on stderr when a core lost threads' outer frames. */
static void
warn_core_zeros(const struct tt_sample *s, const struct corefile *core)
{
	uint32_t lost = 0;
	for (uint32_t i = 0; core && i < s->nthreads; i++)
		lost += (s->threads[i].status & TT_THREAD_CORE_ZEROS) != 0;
	if (lost)
		fprintf(stderr, "tachyon-top: warning: the core holds zeros where %u of %u threads' "
			"outer frames were or began (gdb's gcore writes zeros for thread stacks it cannot "
			"read, such as those with guard regions; a kernel core holds them): their "
			"innermost frames are shown\n", lost, s->nthreads);
}

static tt_status
take_sample(struct plainwalk *u, struct tt_sample *s, struct tt_error *err)
{
	tt_status st = TT_OK;
	/* a core does not change: reading it again gives the same */
	bool core = u->target->core != NULL;
	for (int attempt = 0; attempt < (core ? 1 : DUMP_ATTEMPTS); attempt++) {
		st = plainwalk_sample(u, s, err);
		if (st == TT_OK || !is_torn(st))
			break;
		if (!remote_pid_alive(u->target->pid))
			return tt_fail(err, TT_ENOPROC, 0, "process %d has exited",
				       (int)u->target->pid);
		/* Give the target a moment to finish what it was changing. */
		struct timespec ts = {0, 1000000L * (attempt < 10 ? 1 : 5)};
		nanosleep(&ts, NULL);
	}
	if (is_torn(st)) {
		char cause[sizeof err->msg];
		snprintf(cause, sizeof cause, "%s", err->msg);
		if (core)
			return tt_fail(err, st, 0, "the core does not hold a whole stack: %s "
					  "(gdb's gcore writes zeros where it cannot read, such as "
					  "thread stacks with guard regions; a kernel core holds them)",
					  cause);
		return tt_fail(err, st, 0, "no consistent stack after %d attempts: %s",
			       DUMP_ATTEMPTS, cause);
	}
	return st;
}

/* The kernel's view of one process: what its threads wait for, and a
 * clock for how long (NULL members: left out, not an error). */
struct kernel_view {
	struct kwait_reader *reader;
	struct schedclock *clock;
	struct owners *owners;
	bool want_native;
	const struct corefile *core;      /* --core: the process is this core's */
	const char *core_path;
	bool want_locals;                 /* --locals */
	struct pyvalue *values;           /* their reader, or NULL (out of memory) */
	struct native_unwinder *native;   /* --native: the process's unwinder, or NULL */
	char native_error[400];           /* why there is none */
	struct thread_names names;        /* the names Python gives the threads */
};

/* What was asked of the dump. */
struct dump_opts {
	bool json, tasks, native, locals;
	double watch_s;                /* --watch: read the tasks this long */
	struct corefile *core;         /* --core: the process is this core's */
	const char *core_path;
};

static void
kernel_view_open(struct kernel_view *kv, struct target *t, const struct dump_opts *o)
{
	pid_t pid = t->pid;
	struct remote *mem = &t->mem;
	bool native = o->native;
	memset(kv, 0, sizeof *kv);
	kv->want_locals = o->locals;
	if (o->locals && (kv->values = malloc(sizeof *kv->values)) != NULL) {
		struct pyvalue_limits lim = PYVALUE_LIMITS_DEFAULT;
		pyvalue_init(kv->values, mem, &t->layout, &lim);
	}
	kv->core = o->core;
	kv->core_path = o->core_path;
	kv->want_native = native;
	threadnames_read(t, &kv->names);
	if (o->core) {
		/* the kernel's view is of live processes; the registers are in the core */
		struct tt_error nerr = {0};
		if (native && native_open_core(&kv->native, o->core, &nerr) != TT_OK)
			snprintf(kv->native_error, sizeof kv->native_error, "%s", nerr.msg);
		return;
	}
	kv->owners = owners_new();
	kv->reader = kwait_reader_new(pid, mem, kv->owners);
	kv->clock = schedclock_new();
	kv->want_native = native;
	struct tt_error err = {0};
	if (native && native_open(&kv->native, pid, &err) != TT_OK)
		snprintf(kv->native_error, sizeof kv->native_error, "%s", err.msg);
}

static void
kernel_view_close(struct kernel_view *kv)
{
	kwait_reader_free(kv->reader);
	schedclock_free(kv->clock);
	owners_free(kv->owners);
	native_close(kv->native);
	threadnames_free(&kv->names);
	if (kv->values)
		pyvalue_free(kv->values);
	free(kv->values);
}

/* --native: the thread's native frames, innermost first, and why they end;
 * a running thread's only from a perf sample taken in the innermost Python
 * frame of sample s (native_expect_frame). */
static size_t
thread_native(const struct kernel_view *kv, const struct tt_sample *s, const struct tt_thread *th,
	      struct native_frame *out, char *why, size_t wlen)
{
	if (!kv->native) {
		snprintf(why, wlen, "%s", kv->native_error);
		return 0;
	}
	if (th->tid_unknown && !kv->core) {   /* a core's ids are its own */
		snprintf(why, wlen, "the thread's kernel id is not known");
		return 0;
	}
	if (th->nframes) {
		const struct tt_frame *f = &s->frames[th->first_frame];
		native_expect_frame(kv->native, f->addr, f->instr);
	}
	return native_thread_frames(kv->native, (pid_t)th->native_tid, out, NATIVE_MAX_FRAMES, why,
				    wlen);
}

/* --native: a thread's native frames and their order with its Python ones. */
struct thread_stacks {
	struct native_frame nf[NATIVE_MAX_FRAMES];
	size_t n;
	char why[512];                /* why the native frames end; "" at the thread's start */
	struct mixed_stack ms;
	struct mixed_frame *order;    /* ms.count entries; NULL when out of memory */
};

static void
thread_stacks_free(struct thread_stacks *ts)
{
	if (ts)
		free(ts->order);
	free(ts);
}

/* The thread's native frames read and put in order with its Python ones;
 * NULL when out of memory. */
static struct thread_stacks *
thread_stacks_read(const struct kernel_view *kv, const struct tt_sample *s,
		   const struct tt_thread *th)
{
	struct thread_stacks *ts = calloc(1, sizeof *ts);
	bool *entry = malloc((th->nframes + 1) * sizeof *entry);
	if (ts)
		ts->n = thread_native(kv, s, th, ts->nf, ts->why, sizeof ts->why);
	if (ts && entry && (ts->order = malloc((ts->n + th->nframes + 1) * sizeof *ts->order))) {
		bool evaluator[NATIVE_MAX_FRAMES];
		for (size_t k = 0; k < ts->n; k++)
			evaluator[k] = mixed_is_evaluator(&ts->nf[k]);
		for (uint32_t k = 0; k < th->nframes; k++)
			entry[k] = s->frames[th->first_frame + k].entry;
		mixed_stack_build(evaluator, ts->n, ts->why[0] == '\0', entry, th->nframes,
				  ts->order, &ts->ms);
	} else {
		thread_stacks_free(ts);
		ts = NULL;
	}
	free(entry);
	return ts;
}

/* --native: the threads on a CPU sampled together, not one after another. */
static void
sample_running(const struct kernel_view *kv, const struct tt_sample *s)
{
	pid_t *tids = malloc((s->nthreads ? s->nthreads : 1) * sizeof *tids);
	if (!tids)
		return;
	size_t n = 0;
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (!s->threads[i].tid_unknown)
			tids[n++] = (pid_t)s->threads[i].native_tid;
	native_prepare(kv->native, tids, n);
	free(tids);
}

/* "symbol+0xOFF (library)", "0xADDR (library)" without a symbol. */
static void
format_native(const struct native_frame *f, char *buf, size_t len)
{
	char sym[sizeof f->symbol + 24];
	if (f->symbol[0])
		snprintf(sym, sizeof sym, "%s+0x%llx", f->symbol, (unsigned long long)f->offset);
	else
		snprintf(sym, sizeof sym, "0x%llx", (unsigned long long)f->pc);
	snprintf(buf, len, "%s (%s)", sym, f->library[0] ? f->library : "?");
}

/* What thread tid waits for in the kernel, seen once: how long is "since
 * it last ran" (the scheduler's word), not "since it entered the call". */
static bool
thread_blocked(const struct kernel_view *kv, pid_t pid, uint64_t tid, struct kwait_info *ki)
{
	if (!kv->reader || !kwait_read_thread(kv->reader, (long)tid, ki))
		return false;
	ki->seconds_why = "out of memory for the scheduler clocks";
	ki->seconds = kv->clock ? schedclock_since_last_ran(kv->clock, pid, (long)tid,
							    &ki->seconds_why) : -1;
	return true;
}

/* "peer": {"kind", "path"|"addr" (and "accepted"), "pid": N|null, "cmd": ...|null,
 * "more": N} or null. */
static void
print_peer_json(struct jsonw *w, const struct kwait_peer *p)
{
	if (p->kind == KWAIT_PEER_NONE) {
		jsonw_null(w, "peer");
		return;
	}
	jsonw_object(w, "peer");
	jsonw_string(w, "kind", p->kind == KWAIT_PEER_UNIX ? "unix"
				: p->kind == KWAIT_PEER_INET ? "inet" : "pipe");
	if (p->kind == KWAIT_PEER_UNIX) {
		if (p->name[0])
			jsonw_string(w, "path", p->name);
		else
			jsonw_null(w, "path");
	} else if (p->kind == KWAIT_PEER_INET) {
		jsonw_string(w, "addr", p->name);
		jsonw_bool(w, "accepted", !p->unaccepted);
	}
	if (p->pid) {
		jsonw_i64(w, "pid", p->pid);
		jsonw_string(w, "cmd", p->cmd);
		jsonw_u64(w, "more", p->more);
	} else {
		jsonw_null(w, "pid");
		jsonw_null(w, "cmd");
		jsonw_u64(w, "more", 0);
	}
	jsonw_end(w);
}

static void
print_python_text(const struct plainwalk *u, const struct kernel_view *kv,
		  const struct tt_frame *fr)
{
	char safe[4096], safe2[4096];
	const struct code_entry *c = codecache_get(&u->codes, fr->code_id);
	sanitize_for_terminal(c->qualname, safe, sizeof safe);
	sanitize_for_terminal(c->filename, safe2, sizeof safe2);
	printf("    %s (%s:%d)\n", safe, safe2, fr->line);
	if (kv->want_locals)
		dumplocals_text(stdout, kv->values, u, fr);
}

/* Innermost first: native frames, each evaluator call replaced by the
 * Python frames it runs; where the native walk ended, why. */
static void
print_mixed_text(const struct plainwalk *u, const struct tt_sample *s,
		 const struct kernel_view *kv, const struct tt_thread *th)
{
	struct thread_stacks *ts = thread_stacks_read(kv, s, th);
	if (!ts) {
		printf("    (native frames none: out of memory)\n");
		for (uint32_t f = 0; f < th->nframes; f++)
			print_python_text(u, kv, &s->frames[th->first_frame + f]);
		return;
	}
	char line[600], safe[1200];
	for (size_t k = 0; k <= ts->ms.count; k++) {
		if (k == ts->ms.after_native) {
			if (ts->why[0]) {
				sanitize_for_terminal(ts->why, safe, sizeof safe);
				printf("    (native frames %s: %s)\n", ts->n ? "end" : "none", safe);
			}
			if (ts->n && !ts->ms.merged && ts->ms.evaluators)
				printf("    (native and Python frames not merged: %zu evaluator calls, "
				       "%zu runs of Python frames)\n", ts->ms.evaluators, ts->ms.runs);
		}
		if (k == ts->ms.count)
			break;
		const struct mixed_frame *m = &ts->order[k];
		if (m->python) {
			print_python_text(u, kv, &s->frames[th->first_frame + m->index]);
			continue;
		}
		format_native(&ts->nf[m->index], line, sizeof line);
		sanitize_for_terminal(line, safe, sizeof safe);
		printf("    %s\n", safe);
	}
	thread_stacks_free(ts);
}

/* A thread's name: the kernel's for a live process; a core keeps its
 * process's command name (NT_PRPSINFO), which is its main thread's. */
static void
core_or_live_name(const struct kernel_view *kv, const struct target *t,
		  const struct tt_thread *th, char *comm, size_t len)
{
	if (kv->core) {
		if (th->status & TT_THREAD_MAIN)
			snprintf(comm, len, "%s", kv->core->fname);
	} else if (!th->tid_unknown) {
		procstat_comm(t->pid, (long)th->native_tid, comm, len);
	}
}

/* ppid >= 0: one process of a tree (say its parent). */
static void
print_text(const struct plainwalk *u, const struct tt_sample *s, const struct kernel_view *kv,
	   pid_t ppid)
{
	const struct target *t = u->target;
	char cmd[1024], safe[4096];
	if (kv->core) {
		char path[2048];
		sanitize_for_terminal(kv->core->psargs, safe, sizeof safe);
		sanitize_for_terminal(kv->core_path, path, sizeof path);
		printf("Core %s of process %d: %s\nPython %s (%s)\n", path, (int)kv->core->pid, safe,
		       t->layout.version_str, t->binary);
	}
	procstat_cmdline(t->pid, cmd, sizeof cmd);
	sanitize_for_terminal(cmd, safe, sizeof safe);
	/* In a container, its pid there too: what its own logs say. */
	uint64_t ns_pid;
	char ns[48] = "";
	if (tidmap_process_ns_pid(t->pid, &ns_pid))
		snprintf(ns, sizeof ns, " (pid %llu in its PID namespace)", (unsigned long long)ns_pid);
	if (kv->core)
		;   /* said above */
	else if (ppid >= 0)
		printf("Process %d%s (parent %d): %s\nPython %s (%s)\n", (int)t->pid, ns, (int)ppid,
		       safe, t->layout.version_str, t->binary);
	else
		printf("Process %d%s: %s\nPython %s (%s)\n", (int)t->pid, ns, safe,
		       t->layout.version_str, t->binary);
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct tt_thread *th = &s->threads[i];
		char comm[64] = "";
		core_or_live_name(kv, t, th, comm, sizeof comm);
		const char *pyname = threadnames_of(u->target, &kv->names, th->tstate);
		printf("\nThread %llu", (unsigned long long)th->native_tid);
		/* Logs print the id in the thread's own namespace: say it too. */
		if (th->ns_tid != th->native_tid)
			printf(" (ns %llu)", (unsigned long long)th->ns_tid);
		/* Python's name first; the kernel's beside it where it differs */
		sanitize_for_terminal(pyname ? pyname : comm, safe, sizeof safe);
		printf(" \"%s\"", safe);
		if (pyname && comm[0] && strcmp(pyname, comm) != 0) {
			sanitize_for_terminal(comm, safe, sizeof safe);
			printf(", OS name \"%s\"", safe);
		}
		if (th->interp_id != 0)
			printf(" interpreter %lld", (long long)th->interp_id);
		const char *sep = " (";
		struct { uint32_t bit; const char *word; } words[] = {
			{TT_THREAD_MAIN, "main"},
			{TT_THREAD_GIL, "holds GIL"},
			{TT_THREAD_GIL_WAIT, "waiting for GIL"},
			{TT_THREAD_RUNNABLE, "on CPU"},
			{TT_THREAD_GC, "collecting garbage"},
			{TT_THREAD_EXCEPTION, "exception propagating"},
		};
		for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
			if (th->status & words[w].bit) {
				printf("%s%s", sep, words[w].word);
				sep = ", ";
			}
		}
		/* a core's threads were on no CPU of ours: no word on it */
		if (!(th->status & (TT_THREAD_RUNNABLE | TT_THREAD_CPU_UNKNOWN)) && !kv->core) {
			printf("%sidle", sep);
			sep = ", ";
		}
		struct kwait_info ki;
		if (!th->tid_unknown && thread_blocked(kv, t->pid, th->native_tid, &ki)) {
			char raw[2 * KWAIT_OBJECT_MAX];
			kwait_format(&ki, ki.seconds, raw, sizeof raw);
			sanitize_for_terminal(raw, safe, sizeof safe);
			printf("%s%s", sep, safe);
			sep = ", ";
		}
		printf("%s\n", *sep == ',' ? ")" : "");
		if (kv->want_native)
			print_mixed_text(u, s, kv, th);
		else
			for (uint32_t f = 0; f < th->nframes; f++)
				print_python_text(u, kv, &s->frames[th->first_frame + f]);
		if (th->nframes == 0)
			printf("    (no Python frames)\n");
		if (th->status & TT_THREAD_TRUNCATED)
			printf("    ... (stack deeper than %d frames, outer frames omitted)\n",
			       WALK_MAX_FRAMES);
		if (th->status & TT_THREAD_CORE_ZEROS)
			printf("    ... (outer frames, if any: the core holds zeros where they "
			       "were)\n");
	}
}

static void
print_python_json(struct jsonw *w, const struct plainwalk *u, const struct kernel_view *kv,
		  const struct tt_frame *fr, bool kind)
{
	const struct code_entry *c = codecache_get(&u->codes, fr->code_id);
	jsonw_object(w, NULL);
	if (kind)
		jsonw_string(w, "kind", "python");
	jsonw_string(w, "func", c->qualname);
	jsonw_string(w, "file", c->filename);
	jsonw_i64(w, "line", fr->line);
	if (kv->want_locals)
		dumplocals_json(w, kv->values, u, fr);
	jsonw_end(w);
}

static void
print_native_json(struct jsonw *w, const struct native_frame *f, bool kind)
{
	jsonw_object(w, NULL);
	if (kind)
		jsonw_string(w, "kind", "native");
	char pc[24];
	snprintf(pc, sizeof pc, "0x%llx", (unsigned long long)f->pc);
	jsonw_string(w, "pc", pc);
	if (f->symbol[0])
		jsonw_string(w, "symbol", f->symbol);
	else
		jsonw_null(w, "symbol");
	jsonw_u64(w, "offset", f->offset);
	if (f->library[0])
		jsonw_string(w, "library", f->library);
	else
		jsonw_null(w, "library");
	jsonw_end(w);
}

/* "native": its native frames, "native_end": why they end (null at the
 * thread's start), "stack": native and Python frames in one order, each
 * with its "kind", "merged": whether that order is the true one (false:
 * the native frames, then the Python ones). */
static void
print_mixed_json(struct jsonw *w, const struct plainwalk *u, const struct tt_sample *s,
		 const struct kernel_view *kv, const struct tt_thread *th)
{
	struct thread_stacks *ts = thread_stacks_read(kv, s, th);
	if (!ts) {
		jsonw_array(w, "native");
		jsonw_end(w);
		jsonw_string(w, "native_end", "out of memory");
		jsonw_bool(w, "merged", false);
		jsonw_array(w, "stack");
		jsonw_end(w);
		return;
	}
	jsonw_array(w, "native");
	jsonw_style(w, true, "\n    ");
	for (size_t k = 0; k < ts->n; k++)
		print_native_json(w, &ts->nf[k], false);
	jsonw_end(w);
	if (ts->why[0])
		jsonw_string(w, "native_end", ts->why);
	else
		jsonw_null(w, "native_end");
	jsonw_bool(w, "merged", ts->ms.merged);
	jsonw_break(w, "\n   ");
	jsonw_array(w, "stack");
	jsonw_style(w, true, "\n    ");
	for (size_t k = 0; k < ts->ms.count; k++) {
		const struct mixed_frame *m = &ts->order[k];
		if (m->python)
			print_python_json(w, u, kv, &s->frames[th->first_frame + m->index], true);
		else
			print_native_json(w, &ts->nf[m->index], true);
	}
	jsonw_end(w);
	thread_stacks_free(ts);
}

/* "blocked": what thread th waits for in the kernel, or null. */
static void
print_blocked_json(struct jsonw *w, const struct kernel_view *kv, const struct target *t,
		   const struct tt_thread *th)
{
	struct kwait_info ki;
	if (th->tid_unknown || !thread_blocked(kv, t->pid, th->native_tid, &ki)) {
		jsonw_null(w, "blocked");
		return;
	}
	jsonw_object(w, "blocked");
	jsonw_string(w, "syscall", ki.name);
	if (ki.fd >= 0)
		jsonw_i64(w, "fd", ki.fd);
	else
		jsonw_null(w, "fd");
	if (ki.object[0])
		jsonw_string(w, "object", ki.object);
	else
		jsonw_null(w, "object");
	if (ki.seconds >= 0) {
		jsonw_double(w, "seconds", 3, ki.seconds);
	} else {
		jsonw_null(w, "seconds");
		jsonw_string(w, "seconds_unknown", ki.seconds_why ? ki.seconds_why : "unknown");
	}
	print_peer_json(w, &ki.peer);
	jsonw_end(w);
}

/* ppid >= 0: one process of a tree, with its parent and command line.
 * tasks: its asyncio tasks, or NULL; tasks_error: why they were asked for
 * and not read (one process of a tree), or NULL. */
static void
print_json(const struct plainwalk *u, const struct tt_sample *s, const struct kernel_view *kv,
	   pid_t ppid, const struct tt_tasks *tasks, const struct greenlet_reader *gr,
	   const struct dump_unmoved *unmoved, const char *tasks_error, struct jsonw *tree)
{
	const struct target *t = u->target;
	struct jsonw own, *w = tree;
	if (!w) {
		jsonw_init(&own, stdout);
		w = &own;
	}
	jsonw_object(w, NULL);
	jsonw_i64(w, "pid", kv->core ? kv->core->pid : t->pid);
	jsonw_string(w, "python", t->layout.version_str);
	uint64_t ns_pid;
	if (tidmap_process_ns_pid(t->pid, &ns_pid))
		jsonw_u64(w, "ns_pid", ns_pid);
	else
		jsonw_null(w, "ns_pid");
	if (kv->core) {
		jsonw_string(w, "core", kv->core_path);
		jsonw_string(w, "cmdline", kv->core->psargs);
	}
	if (ppid >= 0) {
		char cmd[4096];
		procstat_cmdline(t->pid, cmd, sizeof cmd);
		jsonw_i64(w, "ppid", ppid);
		jsonw_string(w, "cmdline", cmd);
	}
	jsonw_break(w, "\n ");
	jsonw_array(w, "threads");
	jsonw_style(w, true, "\n  ");
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct tt_thread *th = &s->threads[i];
		char comm[64] = "";
		core_or_live_name(kv, t, th, comm, sizeof comm);
		const char *pyname = threadnames_of(u->target, &kv->names, th->tstate);
		jsonw_object(w, NULL);
		jsonw_u64(w, "tid", th->native_tid);
		jsonw_u64(w, "ns_tid", th->ns_tid);
		jsonw_bool(w, "tid_known", !th->tid_unknown);
		/* Python's name (threading's), else the kernel's; the kernel's as
		 * os_name either way */
		jsonw_string(w, "name", pyname ? pyname : comm);
		jsonw_string(w, "os_name", comm);
		/* One OS thread running a subinterpreter has a thread state in
		 * each interpreter: (tid, interpreter) names an entry. */
		jsonw_i64(w, "interpreter", th->interp_id);
		jsonw_bool(w, "main", th->status & TT_THREAD_MAIN);
		jsonw_bool(w, "gil", th->status & TT_THREAD_GIL);
		/* null: this version does not say who waits (before 3.15) */
		if (!t->layout.has_tstate_gil)
			jsonw_null(w, "gil_wait");
		else
			jsonw_bool(w, "gil_wait", th->status & TT_THREAD_GIL_WAIT);
		if (kv->core)
			jsonw_null(w, "on_cpu");
		else
			jsonw_bool(w, "on_cpu", th->status & TT_THREAD_RUNNABLE);
		jsonw_bool(w, "truncated", th->status & TT_THREAD_TRUNCATED);
		if (kv->core)
			jsonw_bool(w, "core_zeros", th->status & TT_THREAD_CORE_ZEROS);
		jsonw_break(w, "\n   ");
		print_blocked_json(w, kv, t, th);
		jsonw_break(w, "\n   ");
		if (kv->want_native) {
			print_mixed_json(w, u, s, kv, th);
			jsonw_break(w, "\n   ");
		}
		jsonw_array(w, "frames");
		jsonw_style(w, true, "\n    ");
		for (uint32_t f = 0; f < th->nframes; f++)
			print_python_json(w, u, kv, &s->frames[th->first_frame + f], false);
		jsonw_end(w);
		jsonw_end(w);
	}
	jsonw_end(w);
	if (tasks) {
		jsonw_break(w, "\n ");
		dumptasks_json(w, tasks, &u->codes, gr, unmoved);
	} else if (tasks_error) {
		jsonw_break(w, "\n ");
		jsonw_array(w, "tasks");
		jsonw_end(w);
		jsonw_string(w, "tasks_note", tasks_error);
	}
	jsonw_end(w);
	if (!tree)
		putchar('\n');
}

/* The processes of a tree printed so far; with --json, the writer of the
 * tree's {"processes": [...]}, begun with the first. */
struct dump_tree_out {
	bool printed;
	struct jsonw w;
};

/* An attached process, sampled and printed with its asyncio tasks when
 * want_tasks. Alone (tree NULL), a tasks read that fails fails the dump;
 * as one process of a tree (ppid >= 0) it is printed with a note saying
 * why, and the JSON goes into the tree's {"processes": [...]}. */
static tt_status
dump_process(struct target *t, pid_t ppid, const struct dump_opts *o, struct dump_tree_out *tree,
	     struct tt_error *err)
{
	bool json = o->json, want_tasks = o->tasks;
	struct plainwalk u;
	/* a core's threads are on no CPU of this machine */
	tt_status st = plainwalk_init(&u, t, o->core ? 0 : PLAINWALK_CPU_STATE, err);
	if (st != TT_OK)
		return st;
	struct tt_sample s = {0};
	st = take_sample(&u, &s, err);
	struct task_reader tr = {0};
	struct greenlet_reader gr = {0};
	struct tt_tasks tasks = {0};
	struct dump_unmoved unmoved = {.watch_s = o->watch_s};
	struct tt_error terr = {0};
	bool have_tasks = false;
	if (st == TT_OK && want_tasks) {
		have_tasks = task_reader_init(&tr, t, &u.codes, 0, &terr) == TT_OK &&
			     greenlet_reader_init(&gr, t, &u.codes, 0, 0, &terr) == TT_OK &&
			     dumptasks_read(&tr, &gr, &tasks, &unmoved, &terr) == TT_OK;
		if (!have_tasks && !tree) {
			*err = terr;
			st = terr.status;
		}
	}
	const char *tasks_error = want_tasks && !have_tasks ? terr.msg : NULL;
	if (st == TT_OK) {
		/* Right after the stacks: the kernel's view of the same moment
		 * (NULL without memory: it is then left out, not an error). */
		struct kernel_view kv;
		kernel_view_open(&kv, t, o);
		if (kv.native)
			sample_running(&kv, &s);
		if (tree && json && !tree->printed) {
			jsonw_init(&tree->w, stdout);
			jsonw_object(&tree->w, NULL);
			jsonw_array(&tree->w, "processes");
			jsonw_style(&tree->w, true, "\n");
		} else if (tree && tree->printed && !json) {
			putchar('\n');
		}
		if (json) {
			print_json(&u, &s, &kv, ppid, have_tasks ? &tasks : NULL, &gr, &unmoved,
				   tasks_error, tree ? &tree->w : NULL);
		} else {
			print_text(&u, &s, &kv, ppid);
			if (have_tasks) {
				dumptasks_text(stdout, &tasks, &u.codes, &gr, &unmoved);
			} else if (tasks_error) {
				char safe[sizeof terr.msg];
				sanitize_for_terminal(tasks_error, safe, sizeof safe);
				printf("\nasyncio tasks: not read (%s)\n", safe);
			}
		}
		kernel_view_close(&kv);
		if (tree)
			tree->printed = true;
		warn_core_zeros(&s, o->core);
	}
	tt_tasks_free(&tasks);
	task_reader_free(&tr);
	greenlet_reader_free(&gr);
	dump_unmoved_free(&unmoved);
	tt_sample_free(&s);
	plainwalk_free(&u);
	return st;
}

/* A process of a tree, attached (st TT_OK) or the reason it was not. */
struct dump_member {
	pid_t pid, ppid;
	tt_status st;
	struct tt_error err;
	struct target t;
};

/* The process and its descendants, parents before children, each
 * attached; root's own attachment given (root_st, *root_t) or made here.
 * NULL when memory is short. */
static struct dump_member *
tree_members(pid_t root, tt_status root_st, const struct target *root_t, uint32_t *count)
{
	struct dump_member *m = NULL;
	uint32_t n = 0, cap = 0;
	pid_t *kids = NULL;
	uint32_t kcap = 0;
	if (!grow_array((void **)&m, &cap, 1, sizeof *m))
		return NULL;
	memset(&m[0], 0, sizeof m[0]);
	m[0].pid = root;
	m[0].ppid = discover_ppid(root);
	m[0].st = root_st;
	if (root_t)
		m[0].t = *root_t;
	else
		m[0].st = target_attach(&m[0].t, root, &m[0].err);
	n = 1;
	for (uint32_t i = 0; i < n; i++) {
		size_t k = discover_children(m[i].pid, &kids, &kcap, 0);
		for (size_t j = 0; k != (size_t)-1 && j < k; j++) {
			bool seen = false;
			for (uint32_t q = 0; q < n && !seen; q++)
				seen = m[q].pid == kids[j];
			if (seen)
				continue;
			if (!grow_array((void **)&m, &cap, n + 1, sizeof *m))
				break;
			memset(&m[n], 0, sizeof m[n]);
			m[n].pid = kids[j];
			m[n].ppid = m[i].pid;
			m[n].st = target_attach(&m[n].t, kids[j], &m[n].err);
			n++;
		}
	}
	free(kids);
	*count = n;
	return m;
}

/* Python processes among a tree's descendants (the root not counted). */
static uint32_t
python_descendants(const struct dump_member *m, uint32_t n)
{
	uint32_t py = 0;
	for (uint32_t i = 1; i < n; i++)
		py += m[i].st == TT_OK;
	return py;
}

/* The members printed, parents before children. The root's failure is the
 * command's error (unless other_root: a root known not to be Python,
 * whose descendants are what is asked); a descendant that is not Python
 * is skipped, one that cannot be read or ends meanwhile is noted on
 * stderr. */
static int
dump_tree(struct dump_member *m, uint32_t n, const struct dump_opts *o, bool other_root)
{
	int rc = 0;
	struct dump_tree_out tree = {0};
	for (uint32_t i = 0; i < n; i++) {
		struct tt_error *err = &m[i].err;
		tt_status st = m[i].st;
		if (st == TT_OK)
			st = dump_process(&m[i].t, m[i].ppid, o, &tree, err);
		if (st != TT_OK && i == 0 && !(other_root && st == TT_ENOTPY)) {
			rc = cli_report(err);
			break;
		}
		if (st != TT_OK && st != TT_ENOTPY && st != TT_EVERSION && st != TT_ENOPROC) {
			fflush(stdout);
			fprintf(stderr, "tachyon-top: process %d: %s\n", (int)m[i].pid, err->msg);
		}
	}
	if (o->json && tree.printed) {
		putchar('\n');
		jsonw_end(&tree.w);
		jsonw_end(&tree.w);
		putchar('\n');
	}
	fflush(stdout);
	return rc;
}

/* PID's tree from scratch (--subprocesses, or a root that is not Python). */
static int
dump_whole_tree(pid_t root, const struct dump_opts *o, bool other_root)
{
	uint32_t n;
	struct dump_member *m = tree_members(root, TT_OK, NULL, &n);
	if (!m) {
		struct tt_error e;
		tt_fail(&e, TT_ENOMEM, 0, "out of memory");
		return cli_report(&e);
	}
	int rc = dump_tree(m, n, o, other_root);
	free(m);
	return rc;
}

/* --core FILE: the threads of the process the core was taken of. */
static int
dump_core(const char *path, const char *root, const char *exe, pid_t pid, bool tree,
	  struct dump_opts *o)
{
	if (pid || tree)
		return cli_usage_error("dump ", "--core reads one process's core: not with %s",
				       pid ? "-p" : "--subprocesses");
	struct tt_error err = {0};
	struct corefile core;
	if (corefile_open(&core, path, root, &err) != TT_OK)
		return cli_report(&err);
	if (exe && !corefile_set_exe(&core, exe)) {
		corefile_close(&core);
		return cli_usage_error("dump ", "--exe: the core does not say which of its files is "
						"the executable (no NT_AUXV entry point)");
	}
	if (core.missing_bytes)
		fprintf(stderr, "tachyon-top: warning: the core is cut short: %llu bytes of its "
				"memory are missing; what is there is read\n",
			(unsigned long long)core.missing_bytes);
	/* files here (under the root) that are other builds than the
	 * process had: one line naming them */
	char names[600] = "";
	size_t differ = 0;
	for (size_t i = 0; i < core.nmaps; i++) {
		if ((i && strcmp(core.maps[i].path, core.maps[i - 1].path) == 0) ||
		    corefile_check_map(&core, i) != CORE_FILE_DIFFERS)
			continue;
		const char *base = strrchr(core.maps[i].path, '/');
		size_t used = strlen(names);
		if (differ++ < 4 && used + 80 < sizeof names)
			snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
				 base ? base + 1 : core.maps[i].path);
	}
	if (differ) {
		char safe[1300];
		sanitize_for_terminal(names, safe, sizeof safe);
		fprintf(stderr, "tachyon-top: warning: %zu of the core's files %s are other builds "
				"than the process had (%s%s): what is read from them may be wrong%s\n",
			differ, core.root[0] ? "under --root" : "here", safe, differ > 4 ? ", ..." : "",
			core.root[0] ? "" : "; --root DIR names where the process's files are");
	}
	o->core = &core;
	o->core_path = path;
	struct target t;
	tt_status st = target_attach_core(&t, &core, &err);
	if (st == TT_OK)
		st = dump_process(&t, -1, o, NULL, &err);
	fflush(stdout);
	corefile_close(&core);
	return st == TT_OK ? 0 : cli_report(&err);
}

int
dump_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"tasks", no_argument, NULL, 't'},
		{"subprocesses", no_argument, NULL, 's'},
		{"no-subprocesses", no_argument, NULL, 'N'},
		{"native", no_argument, NULL, 'n'},
		{"locals", no_argument, NULL, 'l'},
		{"core", required_argument, NULL, 'c'},
		{"root", required_argument, NULL, 'R'},
		{"exe", required_argument, NULL, 'E'},
		{"watch", required_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	pid_t pid = 0;
	struct dump_opts o = {0};
	bool tree = false, one = false;
	int c;
	cli_getopt_reset();
	opterr = 0;
	const char *core_path = NULL, *root = NULL, *exe = NULL;
	while ((c = getopt_long(argc, argv, "p:jtnlsh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_pid(optarg, &pid))
				return cli_usage_error("dump ", "invalid pid '%s'", optarg);
			break;
		case 'j':
			o.json = true;
			break;
		case 't':
			o.tasks = true;
			break;
		case 'n':
			o.native = true;
			break;
		case 'l':
			o.locals = true;
			break;
		case 'c':
			core_path = optarg;
			break;
		case 'R':
			root = optarg;
			break;
		case 'E':
			exe = optarg;
			break;
		case 'W': {
			char *end;
			o.watch_s = strtod(optarg, &end);
			if (end == optarg || *end || !(o.watch_s > 0 && o.watch_s <= 3600))
				return cli_usage_error("dump ", "--watch takes seconds, more than 0 "
							       "and at most 3600, not '%s'", optarg);
			break;
		}
		case 's':
			tree = true;
			break;
		case 'N':
			tree = false;
			one = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			return cli_usage_error("dump ", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("dump ", "unexpected argument '%s'", argv[optind]);
	if (o.watch_s > 0 && !o.tasks)
		return cli_usage_error("dump ", "--watch is for --tasks: how long each has not moved");
	if (o.watch_s > 0 && core_path)
		return cli_usage_error("dump ", "--watch reads a live process: a core does not move");
	if (core_path)
		return dump_core(core_path, root, exe, pid, tree, &o);
	if (root || exe)
		return cli_usage_error("dump ", "%s is for --core: a core's files",
				       root ? "--root" : "--exe");
	if (pid == 0)
		return cli_usage_error("dump ", "missing -p PID (or --core FILE)");

	if (tree)
		return dump_whole_tree(pid, &o, false);
	struct tt_error err = {0};
	struct target t;
	bool other = false;
	tt_status st = one ? target_attach(&t, pid, &err)
			   : target_attach_root(&t, pid, TARGET_DESCENDANT_WAIT_NS, &other, &err);
	if (other) {
		/* A root that is not Python (a shell, tini, a wrapper): what is
		 * asked is its Python descendants, as with --subprocesses. */
		return dump_whole_tree(pid, &o, true);
	}
	if (st == TT_OK && !one) {
		/* A server's master: the worker that is stuck is what the
		 * user wants to see, so its Python descendants come too, as
		 * the live view and record follow them. */
		uint32_t n;
		struct dump_member *m = tree_members(pid, st, &t, &n);
		if (m && python_descendants(m, n) > 0) {
			int rc = dump_tree(m, n, &o, false);
			free(m);
			return rc;
		}
		free(m);
	}
	if (st == TT_OK)
		st = dump_process(&t, -1, &o, NULL, &err);
	fflush(stdout);
	return st == TT_OK ? 0 : cli_report(&err);
}
