#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "procset.h"
#include "proc/tidmap.h"
#include "proc/procstat.h"
#include "order.h"

/* Most processes one session follows at once (ended ones give their entry
 * to new ones: see procset.h); records carry 16 bits, and 0xffff is the
 * consumers' "exited processes". */
#define PROCSET_MAX 65535

static void
free_proc(struct proc_info *p)
{
	if (!p)
		return;
	stackwalk_free(p->walk);
	free(p->target);
	free(p);
}

static void
free_retired(void *p)
{
	free_proc(p);
}

/* Free replaced entries whose grace has passed. */
static void
reap(struct procset *ps, uint64_t now)
{
	graceq_reap(&ps->retired, now, PROCSET_GRACE_NS, free_retired);
}

/* The index a new process gets: the oldest ended process's when it may be
 * given away (procset.h), else a new one (UINT32_MAX: none left). */
static uint32_t
choose_index(struct procset *ps, uint64_t now, bool *reuse)
{
	uint32_t n = procset_count(ps), ended = 0, oldest = UINT32_MAX;
	uint64_t oldest_end = UINT64_MAX;
	for (uint32_t i = ps->pinned; i < n; i++) {
		const struct proc_info *p = procset_at(ps, i);
		uint64_t end = atomic_load_explicit(&((struct proc_info *)p)->end_ns,
						    memory_order_relaxed);
		if (p->root || procset_state(p) != PROC_EXITED || !end)
			continue;
		ended++;
		if (end < oldest_end) {
			oldest_end = end;
			oldest = i;
		}
	}
	*reuse = oldest != UINT32_MAX && now >= oldest_end + PROCSET_MIN_ENDED_NS &&
		 (ended > PROCSET_KEEP_ENDED || now >= oldest_end + PROCSET_KEEP_ENDED_NS ||
		  n >= PROCSET_MAX) &&
		 graceq_room(&ps->retired);
	if (*reuse)
		return oldest;
	return n < PROCSET_MAX ? n : UINT32_MAX;
}

/* Publish a filled entry at the index choose_index gave. */
static tt_status
publish(struct procset *ps, struct proc_info *p, bool reuse, uint64_t now, struct tt_error *err)
{
	if (reuse) {
		_Atomic(struct proc_info *) *ref = appendlog_at(ps->procs, p->index);
		struct proc_info *old = atomic_load_explicit(ref, memory_order_relaxed);
		graceq_push(&ps->retired, old, now);   /* choose_index made room */
		uint64_t end = atomic_load_explicit(&old->end_ns, memory_order_relaxed);
		if (old->walk && end > old->start_ns)
			atomic_fetch_add_explicit(&ps->recycled_life_ns, end - old->start_ns,
						  memory_order_relaxed);
		atomic_store_explicit(ref, p, memory_order_release);
		atomic_fetch_add_explicit(&ps->recycled, 1, memory_order_relaxed);
	} else {
		_Atomic(struct proc_info *) *ref = appendlog_reserve(ps->procs);
		if (!ref)
			return tt_fail(err, TT_ENOMEM, ENOMEM, "too many processes followed");
		atomic_init(ref, p);
		appendlog_publish(ps->procs);
	}
	atomic_fetch_add_explicit(&ps->adds, 1, memory_order_release);
	return TT_OK;
}

int
procset_init(struct procset *ps)
{
	memset(ps, 0, sizeof *ps);
	ps->procs = appendlog_new(sizeof(_Atomic(struct proc_info *)), PROCSET_MAX);
	if (!ps->procs || threadslots_init(&ps->threads) != 0 || intern_init(&ps->in) != 0) {
		procset_free(ps);
		return -1;
	}
	return 0;
}

void
procset_free(struct procset *ps)
{
	if (ps->procs) {
		uint32_t n = appendlog_count(ps->procs);
		for (uint32_t i = 0; i < n; i++)
			free_proc(procset_at(ps, i));
		appendlog_free(ps->procs);
	}
	graceq_free(&ps->retired, free_retired);
	threadslots_free(&ps->threads);
	ps->procs = NULL;
	intern_free(&ps->in);
}

tt_status
procset_add(struct procset *ps, const struct target *t, pid_t ppid, bool root,
	    const struct stackwalk_options *o, uint64_t now, uint32_t *index, struct tt_error *err)
{
	struct target *copy = malloc(sizeof *copy);
	if (!copy)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for a process");
	*copy = *t;
	/* A pid backend reads through its own struct remote: follow the move. */
	if (copy->mem.backend.ctx == &t->mem)
		copy->mem.backend.ctx = &copy->mem;
	struct proc_info *p = calloc(1, sizeof *p);
	if (!p) {
		free(copy);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for a process");
	}
	p->target = copy;
	reap(ps, now);
	bool reuse;
	uint32_t i = choose_index(ps, now, &reuse);
	if (i == UINT32_MAX) {
		free_proc(p);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "too many processes followed");
	}
	tt_status st = stackwalk_new_shared(copy, o, &ps->threads, &ps->in, i, &p->walk, err);
	if (st != TT_OK) {
		free_proc(p);
		return st;
	}
	stackwalk_set_epoch(p->walk, ps->epoch_ns);
	p->index = i;
	p->sampled = true;
	p->pid = t->pid;
	p->ppid = ppid;
	p->root = root;
	if (t->pid <= 0 || !tidmap_process_ns_pid(t->pid, &p->ns_pid))
		p->ns_pid = 0;
	snprintf(p->version, sizeof p->version, "%s", t->layout.version_str);
	if (t->pid > 0)
		procstat_cmdline(t->pid, p->cmdline, sizeof p->cmdline);
	atomic_init(&p->cmd, p->cmdline);
	atomic_init(&p->state, PROC_LIVE);
	p->start_ns = now;
	atomic_init(&p->samples, 0);
	atomic_init(&p->errors, 0);
	atomic_init(&p->end_ns, 0);
	if ((st = publish(ps, p, reuse, now, err)) != TT_OK)
		free_proc(p);
	*index = i;
	return st;
}

tt_status
procset_put_copy(struct procset *ps, uint32_t index, pid_t pid, uint64_t start_ns, bool sampled,
		 const char *cmdline, struct tt_error *err)
{
	uint32_t n = procset_count(ps);
	if (index > n || index >= PROCSET_MAX)
		return tt_fail(err, TT_EUSAGE, 0, "process entry %u out of order", index);
	struct proc_info *p = calloc(1, sizeof *p);
	if (!p)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for a process");
	p->index = index;
	p->pid = pid;
	p->sampled = sampled;
	snprintf(p->cmdline, sizeof p->cmdline, "%s", cmdline);
	atomic_init(&p->cmd, p->cmdline);
	atomic_init(&p->state, PROC_LIVE);
	p->start_ns = start_ns;
	if (index < n) {
		_Atomic(struct proc_info *) *ref = appendlog_at(ps->procs, index);
		free_proc(atomic_load_explicit(ref, memory_order_relaxed));
		atomic_store_explicit(ref, p, memory_order_relaxed);
		return TT_OK;
	}
	_Atomic(struct proc_info *) *ref = appendlog_reserve(ps->procs);
	if (!ref) {
		free(p);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "too many processes");
	}
	atomic_init(ref, p);
	appendlog_publish(ps->procs);
	return TT_OK;
}

tt_status
procset_add_unsampled(struct procset *ps, pid_t pid, pid_t ppid, bool root, enum proc_state how,
		      const char *why, uint64_t now, uint32_t *index, struct tt_error *err)
{
	struct proc_info *p = calloc(1, sizeof *p);
	if (!p)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for a process");
	reap(ps, now);
	bool reuse;
	p->index = choose_index(ps, now, &reuse);
	if (p->index == UINT32_MAX) {
		free(p);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "too many processes followed");
	}
	p->pid = pid;
	p->ppid = ppid;
	p->root = root;
	if (!tidmap_process_ns_pid(pid, &p->ns_pid))
		p->ns_pid = 0;
	snprintf(p->version, sizeof p->version, how == PROC_OTHER ? "-" : "?");
	snprintf(p->note, sizeof p->note, "%s", why);
	if (pid > 0)
		procstat_cmdline(pid, p->cmdline, sizeof p->cmdline);
	atomic_init(&p->cmd, p->cmdline);
	atomic_init(&p->state, how);
	p->start_ns = now;
	tt_status st = publish(ps, p, reuse, now, err);
	if (st != TT_OK)
		free_proc(p);
	*index = p->index;
	return st;
}

void
procset_end(struct procset *ps, uint32_t index, enum proc_state how, const char *note,
	    uint64_t now_ns)
{
	struct proc_info *p = procset_at(ps, index);
	int st = atomic_load_explicit(&p->state, memory_order_relaxed);
	if (st != PROC_LIVE && st != PROC_OTHER)
		return;
	snprintf(p->note, sizeof p->note, "%s", note ? note : "");
	atomic_store_explicit(&p->end_ns, now_ns, memory_order_relaxed);
	atomic_store_explicit(&p->state, how, memory_order_release);
}

void
procset_settle(struct procset *ps, uint32_t index, enum proc_state how)
{
	struct proc_info *p = procset_at(ps, index);
	if (atomic_load_explicit(&p->state, memory_order_relaxed) == PROC_STALE)
		atomic_store_explicit(&p->state, how, memory_order_release);
}

struct table_key {
	bool ended;
	uint64_t when;           /* running: its start; ended: its end */
	uint32_t index;
};

static int
cmp_table(const void *a, const void *b)
{
	const struct table_key *x = a, *y = b;
	if (x->ended != y->ended)
		return x->ended ? 1 : -1;
	if (x->when != y->when)
		return (x->when < y->when) == !x->ended ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

uint32_t *
procset_table_order(const struct procset *ps, uint32_t n)
{
	struct table_key *v = malloc((n ? n : 1) * sizeof *v);
	uint32_t *out = malloc((n ? n : 1) * sizeof *out);
	if (!v || !out) {
		free(v);
		free(out);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct proc_info *p = procset_at(ps, i);
		enum proc_state st = procset_state(p);
		bool ended = st == PROC_EXITED || st == PROC_LOST;
		v[i] = (struct table_key){
			.ended = ended, .index = i,
			.when = ended ? atomic_load_explicit(&p->end_ns, memory_order_relaxed)
				      : p->start_ns};
	}
	order_sort(v, n, sizeof *v, cmp_table);
	for (uint32_t i = 0; i < n; i++)
		out[i] = v[i].index;
	free(v);
	return out;
}

void
procset_counts(const struct procset *ps, uint32_t *live, uint64_t *ended)
{
	uint32_t n = procset_count(ps), l = 0;
	for (uint32_t i = 0; i < n; i++) {
		enum proc_state st = procset_state(procset_at(ps, i));
		l += st == PROC_LIVE || st == PROC_STALE || st == PROC_OTHER;
	}
	*live = l;
	*ended = n - l + atomic_load_explicit(&((struct procset *)ps)->recycled, memory_order_relaxed);
}

double
procset_lifetime_s(const struct procset *ps, uint64_t now_ns)
{
	uint32_t n = procset_count(ps);
	double total = (double)atomic_load_explicit(&((struct procset *)ps)->recycled_life_ns,
						    memory_order_relaxed) / 1e9;
	for (uint32_t i = 0; i < n; i++) {
		const struct proc_info *p = procset_at(ps, i);
		if (!p->walk)
			continue;
		uint64_t end = procset_state(p) == PROC_LIVE
				       ? now_ns
				       : atomic_load_explicit(&((struct proc_info *)p)->end_ns,
							      memory_order_relaxed);
		if (end > p->start_ns)
			total += (double)(end - p->start_ns) / 1e9;
	}
	return total;
}

void
procset_refresh_cmdline(struct procset *ps, uint32_t index)
{
	struct proc_info *p = procset_at(ps, index);
	if (atomic_load_explicit(&p->cmd, memory_order_relaxed) != p->cmdline)
		return;
	procstat_cmdline(p->pid, p->cmdline_late, sizeof p->cmdline_late);
	if (p->cmdline_late[0] && strcmp(p->cmdline_late, p->cmdline) != 0)
		atomic_store_explicit(&p->cmd, p->cmdline_late, memory_order_release);
}
