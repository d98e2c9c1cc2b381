#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "grow.h"
#include "waits/owners.h"
#include "order.h"

struct held {
	unsigned long inode;
	pid_t pid;
	int fd;
	uint8_t kind;
};

struct owners {
	struct held *held;     /* sorted by (kind, inode, pid, fd) */
	uint32_t n, cap;
	uint64_t scanned_ns;   /* 0: never */
	uint64_t scans, last_scan_ns;
};

struct owners *
owners_new(void)
{
	return calloc(1, sizeof(struct owners));
}

void
owners_free(struct owners *o)
{
	if (!o)
		return;
	free(o->held);
	free(o);
}

bool
owners_parse_link(const char *link, enum owner_kind *kind, unsigned long *inode)
{
	const char *p;
	if (strncmp(link, "socket:[", 8) == 0) {
		*kind = OWNER_SOCKET;
		p = link + 8;
	} else if (strncmp(link, "pipe:[", 6) == 0) {
		*kind = OWNER_PIPE;
		p = link + 6;
	} else {
		return false;
	}
	unsigned long v = 0;
	const char *digits = p;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (~0ul - 9) / 10)
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (p == digits || p[0] != ']' || p[1] != '\0')
		return false;
	*inode = v;
	return true;
}

static int
cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

static bool
all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Every socket and pipe descriptor of every process we may look at. */
static void
scan(struct owners *o)
{
	uint64_t t0 = clock_now_ns();
	o->n = 0;
	DIR *proc = opendir("/proc");
	if (!proc)
		return;
	struct dirent *pe;
	while ((pe = readdir(proc)) != NULL) {
		if (!all_digits(pe->d_name))
			continue;
		char path[300];
		snprintf(path, sizeof path, "/proc/%s/fd", pe->d_name);
		int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue; /* gone, or not ours to read */
		DIR *fds = fdopendir(dfd);
		if (!fds) {
			close(dfd);
			continue;
		}
		pid_t pid = (pid_t)atol(pe->d_name);
		struct dirent *fe;
		while ((fe = readdir(fds)) != NULL) {
			if (!all_digits(fe->d_name))
				continue;
			char link[64];
			ssize_t k = readlinkat(dirfd(fds), fe->d_name, link, sizeof link - 1);
			if (k <= 0)
				continue;
			link[k] = '\0';
			enum owner_kind kind;
			unsigned long inode;
			if (!owners_parse_link(link, &kind, &inode))
				continue;
			if (!grow_array((void **)&o->held, &o->cap, o->n + 1, sizeof o->held[0]))
				break;
			o->held[o->n++] = (struct held){inode, pid, atoi(fe->d_name), (uint8_t)kind};
		}
		closedir(fds);
	}
	closedir(proc);
	order_sort(o->held, o->n, sizeof o->held[0], cmp_held);
	o->scans++;
	o->scanned_ns = clock_now_ns();
	o->last_scan_ns = o->scanned_ns - t0;
}

bool
owners_fd_inode(pid_t pid, int fd, enum owner_kind *kind, unsigned long *inode)
{
	char path[64], link[64];
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
	ssize_t k = readlink(path, link, sizeof link - 1);
	if (k <= 0)
		return false;
	link[k] = '\0';
	return owners_parse_link(link, kind, inode);
}

/* Does (pid, fd) still hold inode of kind? */
static bool
still_held(pid_t pid, int fd, enum owner_kind kind, unsigned long inode)
{
	enum owner_kind got;
	unsigned long ino;
	return owners_fd_inode(pid, fd, &got, &ino) && got == kind && ino == inode;
}

bool
owners_open_for_writing(pid_t pid, int fd)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)pid, fd);
	int f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return false;
	ssize_t n = read(f, buf, sizeof buf - 1);
	close(f);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return owners_parse_fdinfo_writes(buf);
}

bool
owners_parse_fdinfo_writes(const char *text)
{
	const char *p = strstr(text, "flags:");
	if (!p)
		return false;
	unsigned long flags = strtoul(p + 6, NULL, 8);
	return (flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR;
}

static size_t
lookup(struct owners *o, enum owner_kind kind, unsigned long inode, pid_t not_pid, int not_fd,
       int writes, struct owner *out, size_t max)
{
	struct held key = {inode, 0, -1, (uint8_t)kind};
	size_t lo = 0, hi = o->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_held(&o->held[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t found = 0;
	for (size_t i = lo; i < o->n && o->held[i].kind == kind && o->held[i].inode == inode; i++) {
		const struct held *h = &o->held[i];
		if ((h->pid == not_pid && h->fd == not_fd) || !still_held(h->pid, h->fd, kind, inode))
			continue;
		bool w = kind == OWNER_PIPE && owners_open_for_writing(h->pid, h->fd);
		if (writes >= 0 && w != (writes > 0))
			continue;
		if (found < max)
			out[found] = (struct owner){h->pid, h->fd, w};
		found++;
	}
	return found < max ? found : max;
}

size_t
owners_find(struct owners *o, enum owner_kind kind, unsigned long inode, pid_t not_pid,
	    int not_fd, int writes, struct owner *out, size_t max)
{
	size_t n = o->scanned_ns ? lookup(o, kind, inode, not_pid, not_fd, writes, out, max) : 0;
	/* A scan costs about 6 us per descriptor of the machine: space them
	 * so that scanning takes at most 2% of this thread's time. */
	uint64_t gap = o->last_scan_ns * 50 > OWNERS_RESCAN_NS ? o->last_scan_ns * 50
								 : OWNERS_RESCAN_NS;
	if (n == 0 && (!o->scanned_ns || clock_now_ns() - o->scanned_ns >= gap)) {
		scan(o);
		n = lookup(o, kind, inode, not_pid, not_fd, writes, out, max);
	}
	return n;
}
