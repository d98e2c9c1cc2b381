#include "config.h"

#include "grow.h"
#include "hash.h"
#include "stucktasks.h"

struct point_rec {
	uint64_t key;            /* the point, or a process */
	bool occupied;           /* named: a task is there in the snapshot being judged */
};

void
stucktasks_init(struct stucktasks *j, uint64_t stuck_ns)
{
	keytab_init(&j->idle, sizeof(struct point_rec));
	keytab_init(&j->procs, sizeof(struct point_rec));
	keytab_init(&j->named, sizeof(struct point_rec));
	keytab_init(&j->waiting, sizeof(struct point_rec));
	j->stuck_ns = stuck_ns;
}

void
stucktasks_free(struct stucktasks *j)
{
	keytab_free(&j->idle);
	keytab_free(&j->procs);
	keytab_free(&j->named);
	keytab_free(&j->waiting);
}

/* Its frames' functions (interned by content across processes) and lines:
 * the same code at the same lines in two workers is one point. */
uint64_t
stucktasks_point(const struct task_snapshot *s, const struct tt_task *t)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ t->nframes;
	for (uint32_t i = 0; i < t->nframes; i++) {
		uint32_t f = t->first_frame + i;
		h = (h ^ hash_mix64(((uint64_t)s->frame_func[f] << 32) |
				    (uint32_t)s->tasks.frames[f].line)) * 0x100000001B3ull;
	}
	return h;
}

/* Its thread's rather than its own: running now, or a greenlet that is
 * its thread's main one or gevent's hub. */
static bool
threads_own(const struct tt_task *t)
{
	return t->running || (t->kind == TASK_GREENLET && (t->main_greenlet || t->hub));
}

/* The processes of s read for the first time: their tasks' points idle. */
static bool
first_snapshots(struct stucktasks *j, const struct task_snapshot *s)
{
	bool ok = true;
	for (uint32_t p = 0; p < s->nprocs; p++) {
		const struct task_proc *tp = &s->procs[p];
		if (tp->state != TASKS_READ)
			continue;   /* not read yet: its first snapshot is still to come */
		uint64_t key = hash_fnv_bytes(HASH_FNV_SEED, &tp->pid, sizeof tp->pid);
		key = hash_fnv_bytes(key, &tp->proc_start_ns, sizeof tp->proc_start_ns);
		bool first, added;
		if (!keytab_put(&j->procs, key, &first)) {
			ok = false;
			continue;
		}
		for (uint32_t i = tp->first_task; first && i < tp->first_task + tp->ntasks; i++)
			if (!keytab_put(&j->idle, stucktasks_point(s, &s->tasks.tasks[i]), &added))
				ok = false;
	}
	return ok;
}

/* A task of process proc, by its address. */
static uint64_t
task_in(uint32_t proc, uint64_t id)
{
	return hash_mix64(id) ^ ((uint64_t)proc << 40) ^ id;
}

/* The tasks that await another task: they wait for it, not for their own
 * sake (a connection's task awaiting its request's handler). */
static bool
awaiting(const struct task_snapshot *s, struct keytab *out)
{
	bool ok = true;
	for (uint32_t i = 0; i < s->tasks.n; i++) {
		const struct tt_task *t = &s->tasks.tasks[i];
		for (uint32_t a = 0; a < t->nawaiters; a++) {
			bool added;
			if (!keytab_put(out, task_in(s->task_proc[i],
						     s->tasks.awaiters[t->first_awaiter + a]),
					&added))
				ok = false;
		}
	}
	return ok;
}

bool
stucktasks_learn(struct stucktasks *j, const struct task_snapshot *s)
{
	bool ok = first_snapshots(j, s);
	keytab_clear(&j->waiting);
	if (!awaiting(s, &j->waiting))
		ok = false;
	return ok;
}

uint64_t
stucktasks_owed_ms(uint64_t wait_ns)
{
	/* it got to where it waits just after the request came or went out,
	 * and its wait counts from the first read that saw it there: the
	 * answer has been owed at least about as long */
	uint64_t ms = wait_ns / 1000000;
	return ms - (ms / 2 < STUCKTASKS_BLUR_MS ? ms / 2 : STUCKTASKS_BLUR_MS);
}

bool
stucktasks_peers_idle(const struct task_proc *p, uint64_t wait_ns)
{
	return p->peers_read && p->serving && (!p->owes || p->owed_ms < stucktasks_owed_ms(wait_ns));
}

bool
stucktasks_stuck(const struct stucktasks *j, const struct task_snapshot *s, uint32_t i)
{
	const struct tt_task *t = &s->tasks.tasks[i];
	return !threads_own(t) && s->stuck_ns[i] >= j->stuck_ns &&
	       !keytab_find(&j->idle, stucktasks_point(s, t)) &&
	       !keytab_find(&j->waiting, task_in(s->task_proc[i], t->id)) &&
	       !stucktasks_peers_idle(&s->procs[s->task_proc[i]], s->stuck_ns[i]);
}

bool
stucktasks_judge(struct stucktasks *j, const struct task_snapshot *s, uint32_t **named,
		 uint32_t *n, uint32_t *cap)
{
	bool ok = stucktasks_learn(j, s);
	for (uint32_t k = 0; k < j->named.count; k++)
		((struct point_rec *)keytab_at(&j->named, k))->occupied = false;
	for (uint32_t i = 0; i < s->tasks.n; i++) {
		const struct tt_task *t = &s->tasks.tasks[i];
		if (threads_own(t))
			continue;
		uint64_t point = stucktasks_point(s, t);
		struct point_rec *was = keytab_find(&j->named, point);
		if (was) {
			was->occupied = true;
			continue;
		}
		if (!stucktasks_stuck(j, s, i))
			continue;
		bool added;
		struct point_rec *r = keytab_put(&j->named, point, &added);
		if (!r || !grow_array((void **)named, cap, *n + 1, sizeof **named)) {
			ok = false;
			continue;
		}
		r->occupied = true;
		(*named)[(*n)++] = i;
	}
	/* points left empty can be named again */
	struct keytab still;
	keytab_init(&still, sizeof(struct point_rec));
	for (uint32_t k = 0; k < j->named.count; k++) {
		const struct point_rec *r = keytab_at(&j->named, k);
		bool added;
		if (r->occupied && !keytab_put(&still, r->key, &added))
			ok = false;
	}
	keytab_free(&j->named);
	j->named = still;
	return ok;
}
