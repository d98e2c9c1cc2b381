#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proc/access.h"
#include "clock.h"
#include "mem/remote.h"
#include "sanitize.h"
#include "proc/procstat.h"

/* The iovec arrays live in thread-local storage rather than in a 32 KB
 * stack frame: every call would otherwise touch stack pages far from the
 * caller's, and after a syscall on these VMs each cold page is a TLB miss. */
static _Thread_local struct iovec iov_local[REMOTE_MAX_SEGS], iov_remote[REMOTE_MAX_SEGS];

static ssize_t
pid_readv(void *ctx, const struct remote_seg *segs, size_t nsegs)
{
	pid_t pid = ((const struct remote *)ctx)->read_pid;
	if (nsegs > REMOTE_MAX_SEGS)
		nsegs = REMOTE_MAX_SEGS;
	for (size_t i = 0; i < nsegs; i++) {
		iov_local[i].iov_base = segs[i].buf;
		iov_local[i].iov_len = segs[i].len;
		iov_remote[i].iov_base = (void *)(uintptr_t)segs[i].addr;
		iov_remote[i].iov_len = segs[i].len;
	}
	return process_vm_readv(pid, iov_local, nsegs, iov_remote, nsegs, 0);
}

tt_status
remote_permission_error(pid_t pid, int e, struct tt_error *err)
{
	char why[900], raw[64], comm[256];
	access_explain(pid, why, sizeof why);
	procstat_comm(pid, pid, raw, sizeof raw);
	sanitize_for_terminal(raw, comm, sizeof comm);
	return tt_fail(err, TT_EPERM, e, "permission denied reading process %d (%s): %s", (int)pid,
		       comm, why);
}

tt_status
remote_errno_error(const struct remote *r, int e, uint64_t addr, struct tt_error *err)
{
	switch (e) {
	case ESRCH:
		return tt_fail(err, TT_ENOPROC, e, "process %d has exited", (int)r->pid);
	case EPERM:
	case EACCES:
		return remote_permission_error(r->pid, e, err);
	case EFAULT:
	case ENOMEM:
		return tt_fail(err, TT_EFAULT, e, "address 0x%llx is not mapped in process %d",
			       (unsigned long long)addr, (int)r->pid);
	default:
		return tt_fail(err, TT_EIO, e, "reading process %d: %s", (int)r->pid, strerror(e));
	}
}

bool
remote_pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

tt_status
remote_open_pid(struct remote *r, pid_t pid, struct tt_error *err)
{
	memset(r, 0, sizeof *r);
	r->pid = pid;
	r->read_pid = pid;
	r->backend.readv = pid_readv;
	r->backend.ctx = r;
	if (pid <= 0)
		return tt_fail(err, TT_EUSAGE, 0, "invalid pid %d", (int)pid);
	if (!remote_pid_alive(pid))
		return tt_fail(err, TT_ENOPROC, ESRCH, "no such process: %d", (int)pid);
	return TT_OK;
}

void
remote_open_backend(struct remote *r, struct remote_backend backend)
{
	memset(r, 0, sizeof *r);
	r->backend = backend;
}

/* When a process's main thread exits (pthread_exit) while others run, its
 * pid names a zombie without memory: process_vm_readv says ESRCH although
 * the process lives. Any live thread shares the memory: read through it. */
static bool
retarget(struct remote *r)
{
	if (r->pid <= 0 || r->backend.readv != pid_readv)
		return false;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)r->pid);
	DIR *d = opendir(path);
	if (!d)
		return false;
	pid_t found = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && !found) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0 || tid == r->read_pid)
			continue;
		/* Is it a live task (not a zombie)? Its stat says. */
		struct stat_fields f;
		if (procstat_read_fields(r->pid, tid, &f) && f.state != 'Z' && f.state != 'X')
			found = (pid_t)tid;
	}
	closedir(d);
	if (!found)
		return false;
	r->read_pid = found;
	return true;
}

/* One backend call, counted; again through another thread of the process
 * when its main thread has gone (retarget). */
static ssize_t
backend_readv(struct remote *r, const struct remote_seg *segs, size_t nsegs)
{
	r->counters.reads++;
	ssize_t got = r->backend.readv(r->backend.ctx, segs, nsegs);
	if (got < 0 && errno == ESRCH) {
		if (retarget(r)) {
			r->counters.reads++;
			got = r->backend.readv(r->backend.ctx, segs, nsegs);
		} else {
			errno = ESRCH; /* retarget's own calls may have changed it */
		}
	}
	return got;
}

size_t
remote_read_upto(struct remote *r, uint64_t addr, void *buf, size_t len)
{
	struct remote_seg seg = {addr, buf, len};
	ssize_t got = len ? backend_readv(r, &seg, 1) : 0;
	if (got < 0 || (size_t)got < len)
		r->counters.failures++;
	if (got > 0)
		r->counters.bytes += (uint64_t)got;
	return got > 0 ? (size_t)got : 0;
}

tt_status
remote_readv(struct remote *r, struct remote_seg *segs, size_t nsegs, size_t *ncomplete,
	     struct tt_error *err)
{
	size_t done = 0;
	*ncomplete = 0;
	while (done < nsegs) {
		size_t batch = nsegs - done;
		if (batch > REMOTE_MAX_SEGS)
			batch = REMOTE_MAX_SEGS;
		size_t want = 0;
		for (size_t i = 0; i < batch; i++)
			want += segs[done + i].len;
		ssize_t got = backend_readv(r, segs + done, batch);
		if (got < 0) {
			int e = errno;
			r->counters.failures++;
			if (e == EFAULT || e == ENOMEM)
				return TT_OK; /* first segment unmapped: a short read */
			return remote_errno_error(r, e, segs[done].addr, err);
		}
		r->counters.bytes += (uint64_t)got;
		size_t left = (size_t)got;
		size_t i = 0;
		while (i < batch && left >= segs[done + i].len) {
			left -= segs[done + i].len;
			i++;
		}
		done += i;
		*ncomplete = done;
		if ((size_t)got < want) {
			r->counters.failures++;
			return TT_OK;
		}
	}
	return TT_OK;
}

tt_status
remote_read(struct remote *r, uint64_t addr, void *buf, size_t len, struct tt_error *err)
{
	if (len == 0)
		return TT_OK;
	if (addr == 0)
		return tt_fail(err, TT_EFAULT, 0, "NULL pointer read from process %d", (int)r->pid);
	struct remote_seg seg = {.addr = addr, .buf = buf, .len = len};
	size_t ncomplete;
	tt_status st = remote_readv(r, &seg, 1, &ncomplete, err);
	if (st != TT_OK)
		return st;
	if (ncomplete != 1)
		return tt_fail(err, TT_EFAULT, EFAULT, "cannot read %zu bytes at 0x%llx in process %d",
			       len, (unsigned long long)addr, (int)r->pid);
	return TT_OK;
}

tt_status
remote_read_u64(struct remote *r, uint64_t addr, uint64_t *out, struct tt_error *err)
{
	return remote_read(r, addr, out, sizeof *out, err);
}

enum floor_kind { FLOOR_SYSCALL, FLOOR_READV, FLOOR_READV2, FLOOR_PROC_MEM };

/* Microseconds per call over `calls` calls of one kind. */
static double
floor_batch(enum floor_kind kind, pid_t pid, int fd, uint64_t addr, unsigned calls, bool *ok)
{
	uint64_t v[2];
	struct iovec l = {v, sizeof v[0]}, rm = {(void *)(uintptr_t)addr, sizeof v[0]};
	struct iovec l2 = {v, sizeof v};
	struct iovec rm2[2] = {{(void *)(uintptr_t)addr, sizeof v[0]},
			       {(void *)(uintptr_t)(addr + 4096), sizeof v[0]}};
	uint64_t t0 = clock_now_ns();
	for (unsigned i = 0; i < calls; i++) {
		ssize_t n;
		switch (kind) {
		case FLOOR_SYSCALL: n = syscall(SYS_getppid); break;
		case FLOOR_READV: n = process_vm_readv(pid, &l, 1, &rm, 1, 0); break;
		case FLOOR_READV2:
			n = process_vm_readv(pid, &l2, 1, rm2, 2, 0) == sizeof v ? (ssize_t)sizeof v[0] : -1;
			break;
		default: n = pread(fd, v, sizeof v[0], (off_t)addr); break;
		}
		if (n < 0 || (kind != FLOOR_SYSCALL && n != (ssize_t)sizeof v[0])) {
			*ok = false;
			return 0;
		}
	}
	return (double)(clock_now_ns() - t0) / 1e3 / calls;
}

/* The kinds take turns, batch by batch, and each keeps its best batch: a
 * noisy spell on this shared machine then hits all of them alike, and a
 * preempted batch does not count. */
tt_status
remote_measure_floor(struct remote *r, uint64_t addr, double seconds, struct remote_floor *out,
		     struct tt_error *err)
{
	memset(out, 0, sizeof *out);
	if (r->pid <= 0 || r->backend.readv != pid_readv)
		return tt_fail(err, TT_EUSAGE, 0, "the read floor needs a live process");
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)r->read_pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	double *best[] = {&out->syscall_us, &out->readv_us, &out->readv2_us, &out->proc_mem_us};
	bool usable[] = {true, true, true, fd >= 0};
	uint64_t end = clock_now_ns() + (uint64_t)(seconds * 1e9);
	do {
		for (int k = FLOOR_SYSCALL; k <= FLOOR_PROC_MEM; k++) {
			if (!usable[k])
				continue;
			bool ok = true;
			errno = 0;
			double us = floor_batch((enum floor_kind)k, r->read_pid, fd, addr, 1000, &ok);
			if (!ok) {
				if (k == FLOOR_READV) {
					int e = errno;
					if (fd >= 0)
						close(fd);
					return remote_errno_error(r, e, addr, err);
				}
				usable[k] = false; /* addr + 4096 unmapped, or no /proc */
				*best[k] = 0;
				continue;
			}
			if (*best[k] == 0 || us < *best[k])
				*best[k] = us;
		}
	} while (clock_now_ns() < end);
	if (fd >= 0)
		close(fd);
	return TT_OK;
}
