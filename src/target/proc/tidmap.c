#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "grow.h"
#include "readfile.h"
#include "proc/tidmap.h"

/* Listings of a process's tasks at most this often. */
#define TIDMAP_RELIST_NS 100000000ull

void
tidmap_init(struct tidmap *m, pid_t pid)
{
	memset(m, 0, sizeof *m);
	m->pid = pid;
	m->same_ns = -1;
}

void
tidmap_free(struct tidmap *m)
{
	free(m->e);
	memset(m, 0, sizeof *m);
}

bool
tidmap_parse_nspid(const char *status, uint64_t *ours, uint64_t *inner)
{
	const char *p = status;
	while (p && strncmp(p, "NSpid:", 6) != 0) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return false;
	p += 6;
	int fields = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		uint64_t v = 0;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (v > (UINT64_MAX - 9) / 10)
				return false;
			v = v * 10 + (uint64_t)(*p - '0');
		}
		if (fields++ == 0)
			*ours = v;
		*inner = v;
	}
	return fields > 0 && (*p == '\n' || *p == '\0');
}

static bool
read_status(pid_t pid, const char *task, char *buf, size_t len)
{
	char path[300];
	if (task)
		snprintf(path, sizeof path, "/proc/%d/task/%s/status", (int)pid, task);
	else
		snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	return read_small_file(path, buf, len) > 0;
}

/* The process's id in ours and in its own PID namespace: false when its
 * status cannot be read or says neither. */
static bool
process_nspid(pid_t pid, uint64_t *ours, uint64_t *inner)
{
	char buf[4096];
	return read_status(pid, NULL, buf, sizeof buf) && tidmap_parse_nspid(buf, ours, inner);
}

bool
tidmap_process_ns_pid(pid_t pid, uint64_t *inner)
{
	uint64_t ours;
	return process_nspid(pid, &ours, inner) && ours != *inner;
}

static void
list_tasks(struct tidmap *m)
{
	m->n = 0;
	m->listed_ns = clock_now_ns();
	m->listings++;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)m->pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char buf[4096];
		uint64_t ours, inner;
		if (!read_status(m->pid, de->d_name, buf, sizeof buf) ||
		    !tidmap_parse_nspid(buf, &ours, &inner))
			continue;
		if (!grow_array((void **)&m->e, &m->cap, m->n + 1, sizeof m->e[0]))
			break;
		m->e[m->n++] = (struct tidmap_entry){inner, ours};
	}
	closedir(d);
}

uint64_t
tidmap_resolve(struct tidmap *m, uint64_t recorded, bool is_main, bool only_thread,
	       bool *in_namespace, bool *retry)
{
	*in_namespace = false;
	*retry = false;
	if (m->pid <= 0 || recorded == 0)
		return 0;
	/* Ours already: the task of that id in this process has it innermost. */
	char name[24], buf[4096];
	uint64_t ours, inner;
	snprintf(name, sizeof name, "%llu", (unsigned long long)recorded);
	if (read_status(m->pid, name, buf, sizeof buf) && tidmap_parse_nspid(buf, &ours, &inner) &&
	    inner == recorded && ours == recorded)
		return recorded;
	if (m->same_ns < 0 && process_nspid(m->pid, &ours, &inner))
		m->same_ns = ours == inner;
	/* Our namespace: the listing would hold no other id than the read
	 * above found (a pool ending a thousand threads a second made a
	 * listing of thousands of tasks every 100 ms). */
	if (m->same_ns == 1 && !only_thread)
		return is_main ? (uint64_t)m->pid : 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 || !m->listed_ns) {
			if (m->listed_ns && clock_now_ns() - m->listed_ns < TIDMAP_RELIST_NS) {
				/* Listed too recently to list again: a thread born since
				 * is not in it yet, so ask again later. A main thread or a
				 * process's only thread had its task then already. */
				*retry = !is_main && !only_thread;
				break;
			}
			list_tasks(m);
		}
		for (uint32_t i = 0; i < m->n; i++)
			if (m->e[i].inner == recorded) {
				*in_namespace = m->e[i].inner != m->e[i].host;
				return m->e[i].host;
			}
	}
	if (*retry)
		return 0;
	/* Not one of its tasks: a fork that kept the parent's id. */
	if (only_thread && m->n == 1)
		return m->e[0].host;
	if (is_main)
		return (uint64_t)m->pid;
	return 0;
}
