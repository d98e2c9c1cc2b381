#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "walk/threadslots.h"

/* A reader (the UI drawing a screen) holds a name pointer for
 * milliseconds: a replaced name is freed this long after. */
#define NAME_GRACE_NS (10ull * 1000000000ull)
/* How far back among the slots given up a returning thread is looked for. */
#define REVIVE_WINDOW 64

int
threadslots_init(struct thread_slots *s)
{
	memset(s, 0, sizeof *s);
	s->log = appendlog_new(sizeof(struct thread_slot), THREADSLOTS_MAX);
	return s->log ? 0 : -1;
}

void
threadslots_free(struct thread_slots *s)
{
	if (s->log) {
		uint32_t n = appendlog_count(s->log);
		for (uint32_t i = 0; i < n; i++)
			free(atomic_load_explicit(&threadslots_at(s, i)->name, memory_order_relaxed));
		appendlog_free(s->log);
	}
	graceq_free(&s->retired, free);
	free(s->gone);
	memset(s, 0, sizeof *s);
}

/* Free names whose grace has passed, and queue `name`. */
static bool
retire_name(struct thread_slots *s, char *name, uint64_t now)
{
	graceq_reap(&s->retired, now, NAME_GRACE_NS, free);
	return graceq_push(&s->retired, name, now);
}

static bool
replace_name(struct thread_slots *s, struct thread_slot *t, const char *name, uint64_t now_rel)
{
	char *old = atomic_load_explicit(&t->name, memory_order_relaxed);
	if (old && strcmp(old, name) == 0)
		return true;
	char *copy = strdup(name);
	if (!copy)
		return false;
	if (old && !retire_name(s, old, now_rel)) {
		free(copy);
		return false;
	}
	atomic_store_explicit(&t->name, copy, memory_order_release);
	return true;
}

bool
threadslots_set_name(struct thread_slots *s, uint32_t slot, const char *name, uint64_t now_rel)
{
	struct thread_slot *t = threadslots_at(s, slot);
	return t->py_named || replace_name(s, t, name, now_rel);
}

bool
threadslots_set_pyname(struct thread_slots *s, uint32_t slot, const char *name,
		       uint64_t now_rel)
{
	struct thread_slot *t = threadslots_at(s, slot);
	if (!replace_name(s, t, name, now_rel))
		return false;
	t->py_named = true;
	return true;
}

void
threadslots_gone(struct thread_slots *s, uint32_t slot, uint64_t now_rel)
{
	struct thread_slot *t = threadslots_at(s, slot);
	atomic_store_explicit(&t->gone_ns, now_rel ? now_rel : 1, memory_order_release);
	if (s->ngone == s->gone_cap) {
		uint32_t cap = s->gone_cap ? s->gone_cap * 2 : 256;
		uint32_t *g = malloc(cap * sizeof *g);
		if (!g)
			return; /* the slot is simply not reused */
		for (uint32_t i = 0; i < s->ngone; i++)
			g[i] = s->gone[(s->gone_head + i) % s->gone_cap];
		free(s->gone);
		s->gone = g;
		s->gone_cap = cap;
		s->gone_head = 0;
	}
	s->gone[(s->gone_head + s->ngone++) % s->gone_cap] = slot;
}

/* A thread list read while threads come and go can skip a live thread (a
 * freed thread state reused by a new thread links past it): the thread
 * seems gone, and is back at the next read. */
static bool
revive(struct thread_slots *s, const struct slot_owner *who, uint32_t *slot)
{
	for (uint32_t k = 0; k < s->ngone && k < REVIVE_WINDOW; k++) {
		uint32_t *e = &s->gone[(s->gone_head + s->ngone - 1 - k) % s->gone_cap];
		if (*e == UINT32_MAX)
			continue;
		struct thread_slot *t = threadslots_at(s, *e);
		if (t->native_tid != who->native_tid || t->proc != who->proc)
			continue;
		*slot = *e;
		*e = UINT32_MAX;
		atomic_store_explicit(&t->gone_ns, 0, memory_order_release);
		s->revived++;
		return true;
	}
	return false;
}

/* The oldest gone thread's slot, if it has waited long enough (or too many
 * wait, or no slot is left). */
static struct thread_slot *
reuse(struct thread_slots *s, uint64_t now_rel, uint32_t *slot)
{
	while (s->ngone && s->gone[s->gone_head] == UINT32_MAX) { /* revived */
		s->gone_head = (s->gone_head + 1) % s->gone_cap;
		s->ngone--;
	}
	if (!s->ngone)
		return NULL;
	uint32_t i = s->gone[s->gone_head];
	struct thread_slot *t = threadslots_at(s, i);
	uint64_t gone = atomic_load_explicit(&t->gone_ns, memory_order_relaxed);
	if (s->ngone <= THREADSLOTS_KEEP_GONE && now_rel - gone < THREADSLOTS_GONE_NS &&
	    appendlog_count(s->log) < THREADSLOTS_MAX)
		return NULL;
	char *name = atomic_load_explicit(&t->name, memory_order_relaxed);
	if (name && !retire_name(s, name, now_rel))
		return NULL;
	s->gone_head = (s->gone_head + 1) % s->gone_cap;
	s->ngone--;
	s->reused++;
	*slot = i;
	return t;
}

tt_status
threadslots_take(struct thread_slots *s, const struct slot_owner *who, uint64_t now_rel,
		 uint32_t *slot, bool *revived, struct tt_error *err)
{
	*revived = revive(s, who, slot);
	if (*revived)
		return TT_OK;
	struct thread_slot *t = reuse(s, now_rel, slot);
	if (t) {
		atomic_store_explicit(&t->name, NULL, memory_order_relaxed);
		t->py_named = false;
		t->native_tid = who->native_tid;
		t->ns_tid = who->ns_tid;
		atomic_store_explicit(&t->tid_unknown, who->tid_unknown, memory_order_relaxed);
		t->interp_id = who->interp_id;
		t->prev_proc = t->proc;
		t->proc = who->proc;
		atomic_store_explicit(&t->gone_ns, 0, memory_order_relaxed);
		/* Last: a consumer that sees the new birth sees the new thread. */
		atomic_store_explicit(&t->born_ns, now_rel, memory_order_release);
		return TT_OK;
	}
	t = appendlog_reserve(s->log);
	if (!t)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "too many threads alive at once");
	t->native_tid = who->native_tid;
	t->ns_tid = who->ns_tid;
	atomic_init(&t->tid_unknown, who->tid_unknown);
	t->interp_id = who->interp_id;
	t->proc = t->prev_proc = who->proc;
	atomic_init(&t->name, NULL);
	t->py_named = false;
	atomic_init(&t->born_ns, now_rel);
	atomic_init(&t->gone_ns, 0);
	*slot = appendlog_publish(s->log);
	return TT_OK;
}

tt_status
threadslots_put(struct thread_slots *s, uint32_t slot, const struct thread_slot *v,
		const char *name, struct tt_error *err)
{
	uint32_t n = appendlog_count(s->log);
	if (slot > n)
		return tt_fail(err, TT_EUSAGE, 0, "thread slot %u out of order", slot);
	char *copy = name ? strdup(name) : NULL;
	if (name && !copy)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for a thread name");
	struct thread_slot *t;
	if (slot == n) {
		t = appendlog_reserve(s->log);
		if (!t) {
			free(copy);
			return tt_fail(err, TT_ENOMEM, ENOMEM, "too many threads");
		}
		atomic_init(&t->name, NULL);
		t->py_named = false;
		appendlog_publish(s->log);
	} else {
		t = threadslots_at(s, slot);
	}
	free(atomic_load_explicit(&t->name, memory_order_relaxed));
	t->native_tid = v->native_tid;
	t->ns_tid = v->ns_tid;
	atomic_store_explicit(&t->tid_unknown, false, memory_order_relaxed);
	t->interp_id = v->interp_id;
	t->proc = v->proc;
	t->prev_proc = v->prev_proc;
	atomic_store_explicit(&t->name, copy, memory_order_relaxed);
	atomic_store_explicit(&t->born_ns, atomic_load_explicit(&((struct thread_slot *)v)->born_ns,
								memory_order_relaxed), memory_order_relaxed);
	atomic_store_explicit(&t->gone_ns, atomic_load_explicit(&((struct thread_slot *)v)->gone_ns,
								memory_order_relaxed), memory_order_relaxed);
	return TT_OK;
}
