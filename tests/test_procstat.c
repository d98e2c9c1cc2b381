/* Unit tests for procstat: /proc/PID/task/TID/stat parsing, live states
 * and thread names. */
#include "config.h"

#include <sched.h>

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/procstat.h"
#include "proc/tidmap.h"
#include "tap.h"

static const char *
state_name(enum run_state s)
{
	return s == RUN_STATE_RUNNING ? "running" : s == RUN_STATE_IDLE ? "idle" : "unknown";
}

/* Parse an exactly sized, unterminated heap copy: the parser gets a length
 * and must not need (or read) anything past it. */
static enum run_state
parse_exact(const char *text, size_t len)
{
	char *p = malloc(len ? len : 1);
	if (!p)
		abort();
	memcpy(p, text, len);
	enum run_state s = procstat_parse_stat(p, len);
	free(p);
	return s;
}

static void
check_stat(const char *text, enum run_state want, const char *what)
{
	enum run_state got = parse_exact(text, strlen(text));
	if (got != want)
		tap_diag("%s: got %s, want %s", what, state_name(got), state_name(want));
	tap_ok(got == want, "parse_stat: %s is %s", what, state_name(want));
}

#define TAIL " 1 2 3 4 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 12345 1000000 200\n"

static void
test_parse(void)
{
	check_stat("4321 (python3.15) R" TAIL, RUN_STATE_RUNNING, "a running python3.15");
	check_stat("123 (a) b) R" TAIL, RUN_STATE_RUNNING, "comm \"a) b\" with ')' and a space");
	check_stat("123 (evil) S 1 (x) R) R" TAIL, RUN_STATE_RUNNING,
		   "comm \"evil) S 1 (x) R\" faking a state");
	check_stat("123 (x) R) S" TAIL, RUN_STATE_IDLE, "comm \"x) R\" that would read as running");
	check_stat("123 ()) D" TAIL, RUN_STATE_IDLE, "comm \")\"");
	check_stat("123 (() R" TAIL, RUN_STATE_RUNNING, "comm \"(\"");
	check_stat("123 () R" TAIL, RUN_STATE_RUNNING, "empty comm");
	check_stat("123 (a  b   c) R" TAIL, RUN_STATE_RUNNING, "comm with runs of spaces");
	check_stat("123 (x) R", RUN_STATE_RUNNING, "a line ending right after the state");
	static const char states_idle[] = "SDTtZXIPW";
	for (const char *c = states_idle; *c; c++) {
		char line[128];
		snprintf(line, sizeof line, "77 (worker) %c" TAIL, *c);
		char what[32];
		snprintf(what, sizeof what, "state '%c'", *c);
		check_stat(line, RUN_STATE_IDLE, what);
	}

	check_stat("", RUN_STATE_UNKNOWN, "empty text");
	check_stat("garbage", RUN_STATE_UNKNOWN, "garbage");
	check_stat("123 python3 R 1 2 3", RUN_STATE_UNKNOWN, "a line without parentheses");
	check_stat("123 (python3", RUN_STATE_UNKNOWN, "a line cut inside comm");
	check_stat("123 (x)", RUN_STATE_UNKNOWN, "a line cut after comm");
	check_stat("123 (x) ", RUN_STATE_UNKNOWN, "a line cut before the state");
	check_stat("123 (x)R 1 2", RUN_STATE_UNKNOWN, "no space before the state");
	check_stat("123 (x)  R 1 2", RUN_STATE_UNKNOWN, "two spaces before the state");
	check_stat("123 (x)_R 1 2", RUN_STATE_UNKNOWN, "another byte where the space belongs");
	check_stat("123 (x) Q 1 2", RUN_STATE_UNKNOWN, "an unknown state letter");
	check_stat("123 (x) r 1 2", RUN_STATE_UNKNOWN, "lower-case 'r'");
	check_stat(")", RUN_STATE_UNKNOWN, "a lone ')'");
	check_stat(") ", RUN_STATE_UNKNOWN, "a lone ') '");
	check_stat(") R", RUN_STATE_RUNNING, "the shortest parsable text ') R'");

	/* The length bounds the scan: a later ')' past len is not seen. */
	static const char two[] = "9 (a) R 1 2 (b) S 3";
	tap_ok(procstat_parse_stat(two, 6) == RUN_STATE_UNKNOWN &&
	       procstat_parse_stat(two, 7) == RUN_STATE_RUNNING &&
	       procstat_parse_stat(two, sizeof two - 1) == RUN_STATE_IDLE,
	       "parse_stat honours len (cut before the state, at it, whole text)");
	tap_ok(procstat_parse_stat("", 0) == RUN_STATE_UNKNOWN && parse_exact("x", 0) == RUN_STATE_UNKNOWN,
	       "parse_stat of zero bytes is unknown");

	/* Every prefix of a real-looking line parses without reading past it. */
	static const char line[] = "123 (a) b) R" TAIL;
	bool ok = true;
	for (size_t k = 0; k < sizeof line; k++) {
		enum run_state s = parse_exact(line, k);
		/* "123 (a) b) R" is 12 bytes; shorter prefixes cannot be sure. */
		if (k >= 12 ? s != RUN_STATE_RUNNING : s == RUN_STATE_RUNNING)
			ok = false;
	}
	tap_ok(ok, "every prefix of a stat line: unknown (or idle) until the state is in");
}

/* A stat line whose fields 38 (exit_signal) and 39 (processor) are 17 and
 * `cpu`, after a comm that fakes fields of its own. */
#define STAT_HEAD "4321 (a) 1 2 3 17 9) S 1 1 1 0 -1 4194304 98 0 1 0 0 0 0 0 20 0 1 0 18797 " \
	"3133440 361 18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 "

/* Field 39 as procstat_parse_fields reads it: false when missing. */
static bool
parse_cpu(const char *text, size_t len, int *cpu)
{
	struct stat_fields f;
	if (!procstat_parse_fields(text, len, &f) || f.cpu < 0)
		return false;
	*cpu = f.cpu;
	return true;
}

static void
test_parse_fields(void)
{
	struct stat_fields f = {0};
	const char *line = STAT_HEAD "5 0 0 0 0 0\n";
	tap_ok(procstat_parse_fields(line, strlen(line), &f) && f.state == 'S' && f.ppid == 1 &&
		       f.flags == 4194304 && f.cpu == 5,
	       "parse_fields: state, parent, flags and CPU after a comm faking fields (%c %d %lu %d)",
	       f.state ? f.state : '?', (int)f.ppid, f.flags, f.cpu);
	line = "77 (kworker/0:1) I 2 0 0 0 -1 69238880 0 0\n";
	tap_ok(procstat_parse_fields(line, strlen(line), &f) && f.state == 'I' && f.ppid == 2 &&
		       f.flags == 69238880 && f.cpu == -1,
	       "parse_fields: a kernel thread's flags; a line that stops early has no CPU");
	line = "9 (x) Z x1 0 0 0 0 7\n";
	tap_ok(procstat_parse_fields(line, strlen(line), &f) && f.state == 'Z' && f.ppid == 0 &&
		       f.flags == 0,
	       "parse_fields: a malformed parent leaves it and the fields after it missing");
	tap_ok(!procstat_parse_fields("9 (x) ", 6, &f) && !procstat_parse_fields("9 (x)", 5, &f) &&
		       !procstat_parse_fields("9 x R 1", 7, &f),
	       "parse_fields: no state after the comm, or no comm: refused");
}

static void
test_parse_cpu(void)
{
	int cpu = -1;
	bool parsed = parse_cpu(STAT_HEAD "5 0 0 0 0 0\n",
					      strlen(STAT_HEAD "5 0 0 0 0 0\n"), &cpu);
	tap_ok(parsed && cpu == 5,
	       "parse_stat_cpu: field 39 after a comm holding ')' and numbers (%d)", cpu);
	cpu = -1;
	parsed = parse_cpu(STAT_HEAD "127\n", strlen(STAT_HEAD "127\n"), &cpu);
	tap_ok(parsed && cpu == 127, "parse_stat_cpu: the field last on its line (%d)", cpu);
	bool ok = true;
	const char *full = STAT_HEAD "12 0\n";
	size_t head = strlen(STAT_HEAD);
	for (size_t k = 0; k < head; k++) {
		cpu = -1;
		char *p = malloc(k ? k : 1);
		memcpy(p, full, k);
		if (parse_cpu(p, k, &cpu))
			ok = false;
		free(p);
	}
	tap_ok(ok, "parse_stat_cpu: every cut before field 39 has no CPU");
	tap_ok(!parse_cpu(STAT_HEAD "x1 0\n", strlen(STAT_HEAD "x1 0\n"), &cpu) &&
		       !parse_cpu(STAT_HEAD "99999999999 0\n",
						strlen(STAT_HEAD "99999999999 0\n"), &cpu),
	       "parse_stat_cpu: a malformed or absurd field 39 is refused");
}

static void
test_nspid(void)
{
	uint64_t ours = 0, inner = 0;
	bool parsed = tidmap_parse_nspid(
		"Name:\tpython3\nTgid:\t16475\nNSpid:\t16475\t5\nNSpgid:\t1\n", &ours, &inner);
	tap_ok(parsed && ours == 16475 && inner == 5,
	       "NSpid: ours first, the innermost namespace's last (%llu, %llu)",
	       (unsigned long long)ours, (unsigned long long)inner);
	tap_ok(tidmap_parse_nspid("NSpid:\t900\t40\t3\n", &ours, &inner) && ours == 900 &&
		       inner == 3, "NSpid: a nested namespace");
	tap_ok(tidmap_parse_nspid("Pid:\t77\nNSpid:\t77\n", &ours, &inner) && ours == 77 &&
		       inner == 77, "NSpid: outside any namespace, one id");
	tap_ok(!tidmap_parse_nspid("Pid:\t77\n", &ours, &inner) &&
		       !tidmap_parse_nspid("NSpid:\t\n", &ours, &inner) &&
		       !tidmap_parse_nspid("NSpid:\t12x\n", &ours, &inner) &&
		       !tidmap_parse_nspid("NSpid:\t99999999999999999999999\n", &ours, &inner),
	       "NSpid: missing, empty, malformed or absurd is refused");
	/* This process: its own id maps to itself, and nothing maps a stranger. */
	struct tidmap m;
	tidmap_init(&m, getpid());
	bool in_ns, retry;
	uint64_t self = tidmap_resolve(&m, (uint64_t)getpid(), true, false, &in_ns, &retry);
	tap_ok(self == (uint64_t)getpid() && !in_ns, "tidmap: our own main thread is itself");
	tap_ok(tidmap_resolve(&m, 0x3ffffff0, false, false, &in_ns, &retry) == 0,
	       "tidmap: an id that is none of our tasks, not main, not alone: unknown");
	tap_ok(tidmap_resolve(&m, 0x3ffffff0, true, false, &in_ns, &retry) == (uint64_t)getpid(),
	       "tidmap: the main thread's stale id: the main task");
	tap_ok(m.listings == 0,
	       "tidmap: in our own PID namespace no id is looked for in a listing of the tasks "
	       "(%llu listings)", (unsigned long long)m.listings);
	tap_ok(tidmap_resolve(&m, 0x3ffffff0, false, true, &in_ns, &retry) == (uint64_t)getpid() &&
		       m.listings == 1,
	       "tidmap: a fork's only thread state, its parent's id: the tasks are listed, and "
	       "the only one is it");
	tidmap_free(&m);
}

static volatile sig_atomic_t spin_sink;

/* Spin for about ms milliseconds of wall time. */
static void
spin(int ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			spin_sink = spin_sink + 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static void
test_live(void)
{
	pid_t pid = getpid();
	long tid = (long)gettid();

	spin(20);
	enum run_state s = procstat_cpu_state(pid, tid);
	tap_ok(s == RUN_STATE_RUNNING, "this thread, while spinning, is running (%s)", state_name(s));

	tap_ok(procstat_cpu_state(pid, 0x3ffffff0) == RUN_STATE_UNKNOWN,
	       "a thread that does not exist is unknown");
	tap_ok(procstat_cpu_state(0x3ffffff0, 0x3ffffff0) == RUN_STATE_UNKNOWN,
	       "a process that does not exist is unknown");

	/* A thread name with the characters that trip naive parsers. */
	char old[32] = "";
	prctl(PR_GET_NAME, old, 0, 0, 0);
	const char *name = "t) S (x) Z y";
	tap_ok(prctl(PR_SET_NAME, name, 0, 0, 0) == 0, "prctl(PR_SET_NAME) works");
	char buf[64];
	memset(buf, 'Z', sizeof buf);
	procstat_comm(pid, tid, buf, sizeof buf);
	tap_ok(strcmp(buf, name) == 0, "procstat_comm reads back \"%s\" (got \"%s\")", name, buf);
	spin(5);
	s = procstat_cpu_state(pid, tid);
	tap_ok(s == RUN_STATE_RUNNING, "with that name, this thread still reads as running (%s)",
	       state_name(s));

	prctl(PR_SET_NAME, "tt-unit-\xc3\xa9t\xc3\xa9", 0, 0, 0);
	procstat_comm(pid, tid, buf, sizeof buf);
	tap_ok(strcmp(buf, "tt-unit-\xc3\xa9t\xc3\xa9") == 0, "a UTF-8 thread name reads back");

	prctl(PR_SET_NAME, "0123456789abcdefghij", 0, 0, 0);
	procstat_comm(pid, tid, buf, sizeof buf);
	tap_ok(strcmp(buf, "0123456789abcde") == 0,
	       "a 20-byte name reads back as the kernel's 15 bytes (got \"%s\")", buf);

	char small[5];
	memset(small, 'Z', sizeof small);
	procstat_comm(pid, tid, small, sizeof small);
	tap_ok(strcmp(small, "0123") == 0, "a 5-byte buffer gets 4 bytes and a NUL (\"%s\")", small);
	char one[1] = {'Z'};
	procstat_comm(pid, tid, one, sizeof one);
	tap_ok(one[0] == '\0', "a 1-byte buffer gets an empty string");

	memset(buf, 'Z', sizeof buf);
	procstat_comm(pid, 0x3ffffff0, buf, sizeof buf);
	tap_ok(buf[0] == '\0', "the name of a thread that does not exist is \"\"");
	prctl(PR_SET_NAME, old, 0, 0, 0);

	/* A child blocked in read() is idle; spinning, it is running. */
	int fds[2];
	if (pipe(fds) != 0)
		abort();
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(fds[1]);
		while (read(fds[0], &c, 1) == 1) {
			struct timespec t0, t;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			do
				clock_gettime(CLOCK_MONOTONIC, &t);
			while (t.tv_sec - t0.tv_sec < 30);
		}
		_exit(0);
	}
	close(fds[0]);
	enum run_state cs = RUN_STATE_UNKNOWN;
	for (int i = 0; i < 200 && cs != RUN_STATE_IDLE; i++) {
		sleep_ms(10);
		cs = procstat_cpu_state(child, child);
	}
	tap_ok(cs == RUN_STATE_IDLE, "a child blocked in read() is idle (%s)", state_name(cs));
	if (write(fds[1], "x", 1) != 1)
		abort();
	int running = 0;
	for (int i = 0; i < 20; i++) {
		sleep_ms(10);
		if (procstat_cpu_state(child, child) == RUN_STATE_RUNNING)
			running++;
	}
	tap_ok(running >= 10, "a spinning child reads as running (%d of 20 samples)", running);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(fds[1]);
	cs = procstat_cpu_state(child, child);
	tap_ok(cs == RUN_STATE_UNKNOWN, "a reaped child is unknown (%s)", state_name(cs));
}

/* A child that pins itself to each allowed CPU in turn and blocks there:
 * procstat_last_cpu names that CPU. */
static void
test_last_cpu(void)
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		abort();
	int checked = 0, right = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && checked < 4; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		checked++;
		int fds[2];
		if (pipe(fds) != 0)
			abort();
		pid_t child = fork();
		if (child == 0) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			char c;
			close(fds[1]);
			if (sched_setaffinity(0, sizeof one, &one) == 0)
				(void)!read(fds[0], &c, 1);
			_exit(0);
		}
		close(fds[0]);
		int got = -1;
		for (int i = 0; i < 200; i++) {
			sleep_ms(5);
			if (procstat_cpu_state(child, child) == RUN_STATE_IDLE &&
			    (got = procstat_last_cpu(child, child)) == cpu)
				break;
		}
		if (got == cpu)
			right++;
		else
			tap_diag("a child blocked on CPU %d: last CPU read as %d", cpu, got);
		close(fds[1]);
		waitpid(child, NULL, 0);
	}
	tap_ok(checked > 0 && right == checked,
	       "last_cpu: a child blocked on each CPU (%d of %d) is seen there", right, checked);
	tap_ok(procstat_last_cpu(getpid(), 0x3ffffff0) == -1, "last_cpu of no such thread is -1");
}

int
main(void)
{
	test_parse();
	test_last_cpu();
	test_parse_cpu();
	test_parse_fields();
	test_nspid();
	test_live();
	return tap_done();
}
