#include "config.h"

#include <dirent.h>
#include <limits.h>
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

/* The decimal number at *p (before end), a '-' allowed when sign; false
 * when there is none, it ends in anything but a space or a newline, or it
 * reaches max. *p moves past it. */
static bool
take_number(const char **p, const char *end, bool sign, unsigned long max, long *out)
{
	const char *q = *p;
	bool neg = sign && q < end && *q == '-';
	if (neg)
		q++;
	const char *digits = q;
	unsigned long v = 0;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		v = v * 10 + (unsigned long)(*q - '0');
		if (v >= max)
			return false;
	}
	if (q == digits || (q < end && *q != ' ' && *q != '\n'))
		return false;
	*p = q;
	*out = neg ? -(long)v : (long)v;
	return true;
}

/* Move *p to the start of the next field; false at the end. */
static bool
next_field(const char **p, const char *end)
{
	while (*p < end && **p != ' ' && **p != '\n')
		(*p)++;
	while (*p < end && **p == ' ')
		(*p)++;
	return *p < end && **p != '\n';
}

bool
procstat_parse_fields(const char *text, size_t len, struct stat_fields *out)
{
	*out = (struct stat_fields){.cpu = -1};
	const char *paren = comm_end(text, len);
	if (!paren || (size_t)(paren - text) + 2 >= len || paren[1] != ' ' ||
	    !((paren[2] >= 'A' && paren[2] <= 'Z') || (paren[2] >= 'a' && paren[2] <= 'z')))
		return false;   /* a state is a letter */
	out->state = paren[2];
	const char *p = paren + 2, *end = text + len;
	long v;
	/* field 3 is the state: 4, 9 and 39 follow */
	if (!next_field(&p, end) || !take_number(&p, end, true, 1ul << 31, &v))
		return true;
	out->ppid = (pid_t)v;
	for (int field = 4; field < 9; field++)
		if (!next_field(&p, end))
			return true;
	if (!take_number(&p, end, false, ULONG_MAX / 10, &v))
		return true;
	out->flags = (unsigned long)v;
	for (int field = 9; field < 39; field++)
		if (!next_field(&p, end))
			return true;
	if (take_number(&p, end, false, 1ul << 24, &v))
		out->cpu = (int)v;
	return true;
}

bool
procstat_read_fields(pid_t pid, long tid, struct stat_fields *out)
{
	char path[64], buf[1024];
	if (tid)
		snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", (int)pid, tid);
	else
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	ssize_t n = read_small_file(path, buf, sizeof buf);
	return n > 0 && procstat_parse_fields(buf, (size_t)n, out);
}

static enum run_state
run_state_of(const struct stat_fields *f)
{
	switch (f->state) {
	case 'R':
		return RUN_STATE_RUNNING;
	case 'S': case 'D': case 'T': case 't': case 'Z': case 'X': case 'I': case 'P': case 'W':
		return RUN_STATE_IDLE;
	default:
		return RUN_STATE_UNKNOWN;
	}
}

enum run_state
procstat_parse_stat(const char *text, size_t len)
{
	struct stat_fields f;
	return procstat_parse_fields(text, len, &f) ? run_state_of(&f) : RUN_STATE_UNKNOWN;
}

enum run_state
procstat_cpu_state(pid_t pid, long tid)
{
	struct stat_fields f;
	return procstat_read_fields(pid, tid, &f) ? run_state_of(&f) : RUN_STATE_UNKNOWN;
}

int
procstat_last_cpu(pid_t pid, long tid)
{
	struct stat_fields f;
	return procstat_read_fields(pid, tid, &f) ? f.cpu : -1;
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
	struct stat_fields f;
	if (!procstat_parse_fields(buf, (size_t)n, &f) || (f.state != 'Z' && f.state != 'X'))
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
