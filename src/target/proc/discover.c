#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proc/discover.h"
#include "proc/procstat.h"
#include "grow.h"
#include "readfile.h"
#include "order.h"

pid_t
discover_ppid(pid_t pid)
{
	struct stat_fields f;
	return procstat_read_fields(pid, 0, &f) ? f.ppid : 0;
}

bool
discover_running(pid_t pid)
{
	struct stat_fields f;
	return procstat_read_fields(pid, 0, &f) && f.state != 'Z' && f.state != 'X';
}

static size_t
push(pid_t **out, uint32_t *cap, size_t n, pid_t v)
{
	if (n >= UINT32_MAX || !grow_array((void **)out, cap, (uint32_t)n + 1, sizeof **out))
		return (size_t)-1;
	(*out)[n++] = v;
	return n;
}

size_t
discover_children_some(pid_t pid, uint32_t budget, uint32_t *from, pid_t **out, uint32_t *cap,
		       size_t n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return n;
	uint32_t start = from ? *from : 0, at = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		/* The main thread each time, the others in turn. */
		uint32_t k = at++;
		if (atol(e->d_name) != (long)pid && (k < start || k - start >= budget))
			continue;
		char cpath[320], buf[4096];
		snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", (int)pid, e->d_name);
		if (read_small_file(cpath, buf, sizeof buf) <= 0)
			continue;
		/* "123 456 " (a longer list is cut: the full scan catches the rest) */
		for (char *p = buf; *p;) {
			char *end;
			long v = strtol(p, &end, 10);
			if (end == p)
				break;
			if (v > 0 && (n = push(out, cap, n, (pid_t)v)) == (size_t)-1) {
				closedir(d);
				return n;
			}
			p = end;
		}
	}
	closedir(d);
	if (from)
		*from = budget < at - start && start < at ? start + budget : 0;
	return n;
}

size_t
discover_children(pid_t pid, pid_t **out, uint32_t *cap, size_t n)
{
	return discover_children_some(pid, UINT32_MAX, NULL, out, cap, n);
}

bool
discover_exe_id(pid_t pid, uint64_t *id)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	if (stat(path, &st) != 0)
		return false;
	*id = ((uint64_t)st.st_dev << 40) ^ (uint64_t)st.st_ino;
	return true;
}

static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static bool
was_seen(const struct discover_scan *sc, pid_t pid)
{
	return sc->nseen && bsearch(&pid, sc->seen, sc->nseen, sizeof pid, cmp_pid) != NULL;
}

size_t
discover_scan(struct discover_scan *sc, bool (*is_parent)(void *ctx, pid_t ppid), void *ctx,
	      pid_t **out, uint32_t *cap, size_t n)
{
	DIR *d = opendir("/proc");
	if (!d)
		return n;
	pid_t *now = NULL;
	size_t nnow = 0;
	uint32_t capnow = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid_t pid = (pid_t)atoi(e->d_name);
		sc->entries++;
		if ((nnow = push(&now, &capnow, nnow, pid)) == (size_t)-1) {
			closedir(d);
			free(now);
			return (size_t)-1;
		}
		if (!sc->seen || was_seen(sc, pid))
			continue;
		sc->stat_reads++;
		pid_t ppid = discover_ppid(pid);
		if (ppid > 0 && is_parent(ctx, ppid) && (n = push(out, cap, n, pid)) == (size_t)-1)
			break;
	}
	closedir(d);
	if (n != (size_t)-1) {
		order_sort(now, nnow, sizeof *now, cmp_pid);
		free(sc->seen);
		sc->seen = now;
		sc->nseen = nnow;
		sc->cap = capnow;
	} else {
		free(now);
	}
	return n;
}

void
discover_scan_free(struct discover_scan *sc)
{
	free(sc->seen);
	memset(sc, 0, sizeof *sc);
}
