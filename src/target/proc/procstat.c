#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"
#include "proc/procstat.h"

/* The last ')' of a stat line: the end of the comm field, which may hold
 * anything. NULL without one. */
static const char *
comm_end(const char *text, size_t len)
{
	for (size_t i = len; i > 0; i--)
		if (text[i - 1] == ')')
			return text + i - 1;
	return NULL;
}

enum run_state
procstat_parse_stat(const char *text, size_t len)
{
	const char *paren = comm_end(text, len);
	if (!paren || (size_t)(paren - text) + 2 >= len || paren[1] != ' ')
		return RUN_STATE_UNKNOWN;
	switch (paren[2]) {
	case 'R':
		return RUN_STATE_RUNNING;
	case 'S': case 'D': case 'T': case 't': case 'Z': case 'X': case 'I': case 'P': case 'W':
		return RUN_STATE_IDLE;
	default:
		return RUN_STATE_UNKNOWN;
	}
}

enum run_state
procstat_cpu_state(pid_t pid, long tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", (int)pid, tid);
	ssize_t n = read_small_file(path, buf, sizeof buf);
	if (n <= 0)
		return RUN_STATE_UNKNOWN;
	return procstat_parse_stat(buf, (size_t)n);
}

bool
procstat_parse_stat_cpu(const char *text, size_t len, int *cpu)
{
	const char *p = comm_end(text, len);
	if (!p)
		return false;
	const char *end = text + len;
	p++;
	/* Fields 3 (state) to 38 come first: skip 36 of them. */
	for (int field = 3; field < 39; field++) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			return false;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
	}
	while (p < end && *p == ' ')
		p++;
	long v = 0;
	const char *digits = p;
	for (; p < end && *p >= '0' && *p <= '9' && v < 1L << 24; p++)
		v = v * 10 + (*p - '0');
	if (p == digits || v >= 1L << 24 || (p < end && *p != ' ' && *p != '\n'))
		return false;
	*cpu = (int)v;
	return true;
}

int
procstat_last_cpu(pid_t pid, long tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", (int)pid, tid);
	ssize_t n = read_small_file(path, buf, sizeof buf);
	int cpu;
	return n > 0 && procstat_parse_stat_cpu(buf, (size_t)n, &cpu) ? cpu : -1;
}

void
procstat_comm(pid_t pid, long tid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/comm", (int)pid, tid);
	ssize_t n = read_small_file(path, buf, len);
	if (n <= 0) {
		buf[0] = '\0';
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
}

void
procstat_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	ssize_t n = read_small_file(path, buf, len);
	if (n <= 0) {
		buf[0] = '\0';
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
}

bool
procstat_process_exited(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	ssize_t n = read_small_file(path, buf, sizeof buf);
	if (n <= 0)
		return true;
	const char *paren = memrchr(buf, ')', (size_t)n);
	if (!paren || paren + 2 >= buf + n || (paren[2] != 'Z' && paren[2] != 'X'))
		return false;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return true;
	unsigned live = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atol(e->d_name) != (long)pid)
			live++;
	closedir(d);
	return live == 0;
}
