#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "procset.h"
#include "tidmap.h"
#include "taskinfo.h"

/* Most processes one session follows (a respawning pool adds one per worker
 * it ever had). */
#define PROCSET_MAX 65536

int
procset_init(struct procset *ps)
{
	memset(ps, 0, sizeof *ps);
	ps->procs = appendlog_new(sizeof(struct proc_info), PROCSET_MAX);
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
		for (uint32_t i = 0; i < n; i++) {
			struct proc_info *p = appendlog_at(ps->procs, i);
			stackwalk_free(p->walk);
			free(p->target);
		}
		appendlog_free(ps->procs);
	}
	threadslots_free(&ps->threads);
	ps->procs = NULL;
	intern_free(&ps->in);
}

tt_status
procset_add(struct procset *ps, const struct target *t, pid_t ppid, bool root,
	    const struct stackwalk_options *o, uint32_t *index, struct tt_error *err)
{
	struct target *copy = malloc(sizeof *copy);
	if (!copy)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for a process");
	*copy = *t;
	/* A pid backend reads through its own struct remote: follow the move. */
	if (copy->mem.backend.ctx == &t->mem)
		copy->mem.backend.ctx = &copy->mem;
	struct proc_info *p = appendlog_reserve(ps->procs);
	if (!p) {
		free(copy);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "too many processes followed");
	}
	memset(p, 0, sizeof *p);   /* an earlier failed add may have used it */
	uint32_t i = appendlog_count(ps->procs);
	tt_status st = stackwalk_new_shared(copy, o, &ps->threads, &ps->in, i, &p->walk, err);
	if (st != TT_OK) {
		free(copy);
		return st;
	}
	stackwalk_set_epoch(p->walk, ps->epoch_ns);
	p->index = i;
	p->pid = t->pid;
	p->ppid = ppid;
	p->root = root;
	p->target = copy;
	if (!tidmap_process_ns_pid(t->pid, &p->ns_pid))
		p->ns_pid = 0;
	snprintf(p->version, sizeof p->version, "%s", t->layout.version_str);
	if (t->pid > 0)
		taskinfo_cmdline(t->pid, p->cmdline, sizeof p->cmdline);
	atomic_init(&p->cmd, p->cmdline);
	atomic_init(&p->state, PROC_LIVE);
	p->start_ns = clock_now_ns();
	atomic_init(&p->samples, 0);
	atomic_init(&p->errors, 0);
	atomic_init(&p->end_ns, 0);
	*index = appendlog_publish(ps->procs);
	return TT_OK;
}

tt_status
procset_add_unsampled(struct procset *ps, pid_t pid, pid_t ppid, bool root, enum proc_state how,
		      const char *why, uint32_t *index, struct tt_error *err)
{
	struct proc_info *p = appendlog_reserve(ps->procs);
	if (!p)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "too many processes followed");
	memset(p, 0, sizeof *p);
	p->index = appendlog_count(ps->procs);
	p->pid = pid;
	p->ppid = ppid;
	p->root = root;
	if (!tidmap_process_ns_pid(pid, &p->ns_pid))
		p->ns_pid = 0;
	snprintf(p->version, sizeof p->version, how == PROC_OTHER ? "-" : "?");
	snprintf(p->note, sizeof p->note, "%s", why);
	if (pid > 0)
		taskinfo_cmdline(pid, p->cmdline, sizeof p->cmdline);
	atomic_init(&p->cmd, p->cmdline);
	atomic_init(&p->state, how);
	p->start_ns = clock_now_ns();
	*index = appendlog_publish(ps->procs);
	return TT_OK;
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

void
procset_counts(const struct procset *ps, uint32_t *live, uint32_t *ended)
{
	uint32_t n = procset_count(ps), l = 0;
	for (uint32_t i = 0; i < n; i++) {
		enum proc_state st = procset_state(procset_at(ps, i));
		l += st == PROC_LIVE || st == PROC_STALE || st == PROC_OTHER;
	}
	*live = l;
	*ended = n - l;
}

double
procset_lifetime_s(const struct procset *ps, uint64_t now_ns)
{
	uint32_t n = procset_count(ps);
	double total = 0;
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
	taskinfo_cmdline(p->pid, p->cmdline_late, sizeof p->cmdline_late);
	if (p->cmdline_late[0] && strcmp(p->cmdline_late, p->cmdline) != 0)
		atomic_store_explicit(&p->cmd, p->cmdline_late, memory_order_release);
}
