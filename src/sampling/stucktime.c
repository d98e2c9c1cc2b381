#include "config.h"

#include "hash.h"
#include "stucktime.h"

struct point_entry {
	uint64_t id;               /* task address */
	uint64_t who;              /* which task it is: a new one at the same address
				      (tasks come and go) differs here */
	uint64_t point;            /* its frames and lines */
	uint64_t since_ns;
	bool before;               /* there since the first read: since_ns is a lower bound */
};

void
stuck_time_init(struct stuck_time *st)
{
	keytab_init(&st->points, sizeof(struct point_entry));
	st->reads = 0;
}

void
stuck_time_free(struct stuck_time *st)
{
	keytab_free(&st->points);
}

static uint64_t
point_of(const struct tt_tasks *ts, const struct tt_task *t)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ t->nframes;
	for (uint32_t i = 0; i < t->nframes; i++) {
		const struct tt_frame *f = &ts->frames[t->first_frame + i];
		h = (h ^ hash_mix64(((uint64_t)f->code_id << 32) | (uint32_t)f->line)) *
		    0x100000001B3ull;
	}
	return h;
}

/* Which task an address holds: its coroutine object (a greenlet's own
 * identity, greenlets.c) and its name (by default "Task-N", from a
 * counter). Under churn a finished task's address soon holds a new one at
 * the same point: without this, the new task would inherit the old one's
 * stuck time. */
static uint64_t
who_of(const struct tt_tasks *ts, const struct tt_task *t)
{
	return hash_mix64(t->coro) ^ hash_fnv(HASH_FNV_SEED, tt_task_name(ts, t));
}

bool
stuck_time_update(struct stuck_time *st, const struct tt_tasks *ts, uint64_t now_ns,
		  uint64_t *stuck_ns, bool *before)
{
	struct keytab tab;
	keytab_init(&tab, sizeof(struct point_entry));
	st->reads++;
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct tt_task *t = &ts->tasks[i];
		uint64_t point = point_of(ts, t), who = who_of(ts, t);
		const struct point_entry *was = keytab_find(&st->points, t->id);
		bool same = was && was->point == point && was->who == who;
		uint64_t since = same ? was->since_ns : now_ns;
		/* On the first read every task has been where it is for an
		 * unknown time already: what we measure is a lower bound. */
		bool at_least = same ? was->before : !was && st->reads == 1;
		stuck_ns[i] = now_ns - since;
		before[i] = at_least;
		bool added;
		struct point_entry *e = keytab_put(&tab, t->id, &added);
		if (!e) {
			keytab_free(&tab);
			return false;
		}
		*e = (struct point_entry){.id = t->id, .who = who, .point = point, .since_ns = since,
					  .before = at_least};
	}
	keytab_free(&st->points);
	st->points = tab;
	return true;
}
