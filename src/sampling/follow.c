#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "proc/discover.h"
#include "follow.h"
#include "grow.h"
#include "workers.h"

#define FAST_NS 100000000ull        /* children files of followed processes */
#define FAST_THREADS 64u            /* a pass reads the main thread's and this many
				       other threads' (a big pool's in turn: the full
				       scan below finds what a turn has not come to) */
#define FULL_NS 1000000000ull       /* the full scan of parent pids, at least this far apart */
#define FULL_SHARE 400              /* and 1/400 of a core at most: further apart on a host
				       where /proc is long to read (5,000 processes: ~3 s) */
#define EXE_CHECK_NS 1000000000ull  /* has a skipped process exec'ed? */
#define CMDLINE_LATE_NS 1000000000ull   /* a new process may rename itself meanwhile */
#define RETRIES 3                   /* attach attempts while a process starts or re-execs */

enum known_kind { K_PYTHON, K_OTHER, K_GONE };

struct known {
	pid_t pid, ppid;
	enum known_kind kind;
	uint32_t proc;              /* K_PYTHON: procset index */
	uint64_t exe;               /* K_OTHER: program identity when last tried */
	uint64_t next_try;          /* K_OTHER and lost K_PYTHON: when to look again */
	int attempts;
	bool cmd_refreshed;
	uint32_t children_from;     /* the thread whose children the next pass reads first */
};

struct follow {
	struct procset *procs;
	struct stackwalk_options o;
	struct worker worker;
	struct known *known;
	size_t nknown;
	uint32_t cap;
	pid_t *found;
	uint32_t foundcap;
	struct discover_scan scan;
	struct follow_stats stats;
};

pid_t
follow_ppid(pid_t pid)
{
	return discover_ppid(pid);
}

const struct follow_stats *
follow_stats(const struct follow *f)
{
	return &f->stats;
}

static struct known *
find(struct follow *f, pid_t pid)
{
	/* Newest first: a reused pid's current entry is the last one. */
	for (size_t i = f->nknown; i-- > 0;)
		if (f->known[i].pid == pid && f->known[i].kind != K_GONE)
			return &f->known[i];
	return NULL;
}

static bool
is_followed_parent(void *ctx, pid_t ppid)
{
	return find(ctx, ppid) != NULL;
}

static void
publish_failure(struct follow *f, struct known *k, const struct tt_error *err)
{
	/* Reported once, in the process table, never fatal. */
	uint32_t idx;
	struct tt_error e;
	if (procset_add_unsampled(f->procs, k->pid, k->ppid, false, PROC_LOST, err->msg,
				  clock_now_ns(), &idx, &e) ==
	    TT_OK) {
		k->kind = K_PYTHON;
		k->proc = idx;
		k->attempts = RETRIES + 1;   /* no re-attach loop on a permission error */
	}
}

static void
try_attach(struct follow *f, struct known *k, uint64_t now)
{
	struct tt_error err = {0};
	struct target t;
	const struct known *parent = find(f, k->ppid);
	tt_status st;
	k->attempts++;
	if (parent && parent->kind == K_PYTHON &&
	    procset_at(f->procs, parent->proc)->target)
		st = target_attach_like(&t, k->pid, procset_at(f->procs, parent->proc)->target, &err);
	else
		st = target_attach(&t, k->pid, &err);
	if (st == TT_OK) {
		uint32_t idx;
		if (procset_add(f->procs, &t, k->ppid, false, &f->o, now, &idx, &err) == TT_OK) {
			k->kind = K_PYTHON;
			k->proc = idx;
			atomic_fetch_add_explicit(&f->stats.attaches, 1, memory_order_relaxed);
			return;
		}
		publish_failure(f, k, &err);
		return;
	}
	if (st == TT_ENOPROC) {
		k->kind = K_GONE;
		return;
	}
	if (st == TT_EPERM) {
		publish_failure(f, k, &err);
		return;
	}
	/* Not Python (or not yet: it may be about to exec one). */
	if (k->kind != K_OTHER)
		atomic_fetch_add_explicit(&f->stats.skipped, 1, memory_order_relaxed);
	k->kind = K_OTHER;
	if (!discover_exe_id(k->pid, &k->exe))
		k->kind = K_GONE;
	k->next_try = now + (k->attempts < RETRIES ? FAST_NS : EXE_CHECK_NS);
}

static void
consider(struct follow *f, pid_t pid, pid_t ppid, uint64_t now)
{
	if (find(f, pid))
		return;
	if (!grow_array((void **)&f->known, &f->cap, (uint32_t)f->nknown + 1, sizeof *f->known))
		return;
	struct known *k = &f->known[f->nknown++];
	*k = (struct known){.pid = pid, .ppid = ppid, .kind = K_OTHER};
	try_attach(f, k, now);
}

/* Look again at what we know: ended processes, skipped ones that exec'ed,
 * Python ones the sampler gave up on while they still run (an exec). */
static void
revisit(struct follow *f, uint64_t now)
{
	for (size_t i = 0; i < f->nknown; i++) {
		struct known *k = &f->known[i];
		if (k->kind == K_PYTHON) {
			const struct proc_info *p = procset_at(f->procs, k->proc);
			enum proc_state st = procset_state(p);
			if (st == PROC_LIVE && !k->cmd_refreshed && now - p->start_ns > CMDLINE_LATE_NS) {
				procset_refresh_cmdline(f->procs, k->proc);
				k->cmd_refreshed = true;
			}
			if (st == PROC_EXITED) {
				k->kind = K_GONE;
			} else if (st == PROC_LOST) {
				if (!remote_pid_alive(k->pid))
					k->kind = K_GONE;
			} else if (st == PROC_STALE && now >= k->next_try) {
				/* The sampler gave up reading it: an exec, most likely. */
				uint32_t old = k->proc;
				if (!remote_pid_alive(k->pid)) {
					procset_settle(f->procs, old, PROC_EXITED);
					k->kind = K_GONE;
					continue;
				}
				k->attempts = 0;
				try_attach(f, k, now);
				if (k->kind == K_PYTHON && k->proc != old) {
					procset_settle(f->procs, old, PROC_EXITED);   /* a new entry runs on */
				} else if (k->kind != K_PYTHON) {
					procset_settle(f->procs, old, PROC_EXITED);   /* now not Python, or gone */
				} else if (k->proc == old) {
					procset_settle(f->procs, old, PROC_LOST);     /* cannot be read */
				}
			}
		} else if (k->kind == K_OTHER && now >= k->next_try) {
			uint64_t exe;
			if (!discover_exe_id(k->pid, &exe)) {
				k->kind = K_GONE;
			} else if (exe != k->exe || k->attempts < RETRIES) {
				try_attach(f, k, now);
			} else {
				k->next_try = now + EXE_CHECK_NS;
			}
		}
	}
	/* Forget the gone, now and then, so the list stays short. */
	if (f->nknown > 64) {
		size_t w = 0;
		for (size_t i = 0; i < f->nknown; i++)
			if (f->known[i].kind != K_GONE)
				f->known[w++] = f->known[i];
		f->nknown = w;
	}
}

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
pass(struct follow *f, uint64_t now, bool full)
{
	size_t n = 0;
	/* Children of every followed process, Python or not. */
	size_t count = f->nknown;
	for (size_t i = 0; i < count; i++) {
		if (f->known[i].kind == K_GONE)
			continue;
		n = discover_children_some(f->known[i].pid, FAST_THREADS, &f->known[i].children_from,
					   &f->found, &f->foundcap, n);
		if (n == (size_t)-1)
			return;
		for (size_t j = 0; j < n; j++)
			consider(f, f->found[j], f->known[i].pid, now);
		n = 0;
	}
	atomic_fetch_add_explicit(&f->stats.passes, 1, memory_order_relaxed);
	if (full) {
		uint64_t before = f->scan.stat_reads;
		n = discover_scan(&f->scan, is_followed_parent, f, &f->found, &f->foundcap, 0);
		if (n != (size_t)-1)
			for (size_t j = 0; j < n; j++)
				consider(f, f->found[j], discover_ppid(f->found[j]), now);
		atomic_fetch_add_explicit(&f->stats.scans, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&f->stats.stat_reads, f->scan.stat_reads - before,
					  memory_order_relaxed);
	}
	revisit(f, now);
}

static void *
follow_main(void *arg)
{
	struct follow *f = arg;
	uint64_t next_full = 0;
	pthread_mutex_lock(&f->worker.lock);
	while (!atomic_load(&f->worker.stop)) {
		pthread_mutex_unlock(&f->worker.lock);
		uint64_t c0 = thread_cpu_ns(), now = clock_now_ns();
		bool full = now >= next_full;
		pass(f, now, full);
		uint64_t cost = thread_cpu_ns() - c0;
		if (full)
			next_full = now + (cost * FULL_SHARE > FULL_NS ? cost * FULL_SHARE : FULL_NS);
		atomic_fetch_add_explicit(&f->stats.busy_ns, cost, memory_order_relaxed);
		pthread_mutex_lock(&f->worker.lock);
		worker_sleep_until(&f->worker, clock_now_ns() + FAST_NS);
	}
	pthread_mutex_unlock(&f->worker.lock);
	return NULL;
}

struct follow *
follow_start(struct procset *procs, const struct stackwalk_options *o)
{
	struct follow *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->procs = procs;
	f->o = *o;
	/* What the session published before: the root, and under a root that
	 * is not Python the first Python descendant it found. */
	uint32_t n = procset_count(procs);
	f->cap = n > 32 ? n : 32;
	f->known = calloc(f->cap, sizeof *f->known);
	if (!f->known) {
		free(f);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct proc_info *p = procset_at(procs, i);
		f->known[f->nknown++] = (struct known){.pid = p->pid, .ppid = p->ppid,
						      .kind = K_PYTHON, .proc = i};
	}
	if (worker_run(&f->worker, "tt-follow", follow_main, f) != 0) {
		free(f->known);
		free(f);
		return NULL;
	}
	return f;
}

void
follow_stop(struct follow *f)
{
	if (!f)
		return;
	worker_stop(&f->worker);
	discover_scan_free(&f->scan);
	free(f->known);
	free(f->found);
	free(f);
}
