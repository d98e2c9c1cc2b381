/* Thread slots shared by every process of a tree: 100,000 short-lived
 * processes keep the table at what is alive plus the bounded wait of gone
 * threads, a slot never names two live threads, a reused slot remembers
 * whose it was, a gone thread's slot waits before it is given away, and a
 * thread a torn list read dropped gets its own slot back. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "walk/threadslots.h"

#define PROCS 100000u
#define THREADS 3u     /* per process */
#define ALIVE 8u       /* processes alive at once */
#define BIRTH_NS 5000000ull  /* one birth every 5 ms: 200 processes/s */

static struct slot_owner
owner(uint32_t proc, uint32_t k)
{
	return (struct slot_owner){.native_tid = 1000000ull + proc * THREADS + k,
				   .ns_tid = 1000000ull + proc * THREADS + k,
				   .interp_id = 0, .proc = proc};
}

static void
churn(void)
{
	struct thread_slots s;
	struct tt_error err;
	if (threadslots_init(&s) != 0) {
		tap_ok(0, "threadslots_init");
		return;
	}
	/* which live thread holds each slot (0: none), and each process's slots */
	uint64_t *holder = calloc(THREADSLOTS_MAX, sizeof *holder);
	uint32_t (*mine)[THREADS] = calloc(ALIVE, sizeof *mine);
	uint32_t *last_proc = calloc(THREADSLOTS_MAX, sizeof *last_proc);
	bool ok_take = true, ok_unique = true, ok_prev = true, ok_fields = true;
	uint32_t most = 0, at_warm = 0;
	for (uint32_t p = 0; p < PROCS && ok_take; p++) {
		uint64_t now = (uint64_t)p * BIRTH_NS + 1;
		uint32_t *row = mine[p % ALIVE];
		if (p >= ALIVE) { /* the process born ALIVE births ago exits */
			for (uint32_t k = 0; k < THREADS; k++) {
				threadslots_gone(&s, row[k], now);
				holder[row[k]] = 0;
			}
		}
		for (uint32_t k = 0; k < THREADS; k++) {
			struct slot_owner who = owner(p, k);
			bool revived;
			if (threadslots_take(&s, &who, now, &row[k], &revived, &err) != TT_OK || revived) {
				ok_take = false;
				break;
			}
			const struct thread_slot *t = threadslots_at(&s, row[k]);
			ok_unique &= holder[row[k]] == 0;
			holder[row[k]] = who.native_tid;
			ok_prev &= t->prev_proc == last_proc[row[k]] || t->prev_proc == p;
			ok_fields &= t->proc == p && t->native_tid == who.native_tid &&
				     atomic_load(&((struct thread_slot *)t)->born_ns) == now &&
				     atomic_load(&((struct thread_slot *)t)->gone_ns) == 0;
			last_proc[row[k]] = p;
			char name[32];
			snprintf(name, sizeof name, "worker-%u", p);
			ok_fields &= threadslots_set_name(&s, row[k], name, now);
		}
		uint32_t n = appendlog_count(s.log);
		if (n > most)
			most = n;
		if (p == 2 * THREADSLOTS_KEEP_GONE)
			at_warm = n;
	}
	uint32_t bound = ALIVE * THREADS + THREADSLOTS_KEEP_GONE + 1;
	tap_ok(ok_take, "%u processes of %u threads each got slots", PROCS, THREADS);
	tap_ok(most <= bound, "the table stays at the threads alive plus the gone ones kept "
	       "waiting: %u slots at most for %u threads (bound %u)", most, PROCS * THREADS, bound);
	tap_ok(appendlog_count(s.log) == at_warm,
	       "no growth after warm-up: %u slots then, %u at the end", at_warm,
	       appendlog_count(s.log));
	tap_ok(s.reused >= (PROCS - ALIVE) * THREADS - bound,
	       "slots went from exited processes' threads to others': %llu reuses",
	       (unsigned long long)s.reused);
	tap_ok(ok_unique, "no slot ever named two live threads");
	tap_ok(ok_prev, "a reused slot names its previous occupant's process");
	tap_ok(ok_fields, "a taken slot describes its new thread (process, ids, birth, name)");
	free(holder);
	free(mine);
	free(last_proc);
	threadslots_free(&s);
}

static void
waiting_and_revival(void)
{
	struct thread_slots s;
	struct tt_error err;
	if (threadslots_init(&s) != 0) {
		tap_ok(0, "threadslots_init");
		return;
	}
	uint32_t a, b, c, d, e;
	bool rv;
	struct slot_owner wa = owner(1, 0), wb = owner(2, 0), wc = owner(3, 0);
	threadslots_take(&s, &wa, 1000, &a, &rv, &err);
	threadslots_take(&s, &wb, 1000, &b, &rv, &err);
	threadslots_gone(&s, a, 2000);
	/* few gone, just now: a new thread gets a new slot */
	threadslots_take(&s, &wc, 1000000000ull, &c, &rv, &err);
	tap_ok(c != a && c != b && !rv, "a slot gone a second ago is not given away (%u)", c);
	/* the same thread of the same process, back after a torn list read */
	threadslots_take(&s, &wa, 1000000001ull, &d, &rv, &err);
	tap_ok(d == a && rv, "a thread back after a torn read gets its own slot (%u)", d);
	threadslots_gone(&s, a, 2000000000ull);
	/* the same thread id in another process is another thread */
	struct slot_owner other = wa;
	other.proc = 9;
	threadslots_take(&s, &other, 2000000001ull, &e, &rv, &err);
	tap_ok(e != a && !rv, "a thread id of another process does not revive the slot (%u)", e);
	/* after THREADSLOTS_GONE_NS the slot goes to anyone, its name retired */
	threadslots_set_name(&s, b, "old", 3000);
	threadslots_gone(&s, b, 4000);
	struct slot_owner late = owner(4, 0);
	uint32_t f;
	threadslots_take(&s, &late, 2000000000ull + THREADSLOTS_GONE_NS, &f, &rv, &err);
	const struct thread_slot *t = threadslots_at(&s, f);
	tap_ok(f == a && t->proc == 4 && t->prev_proc == 1 &&
	       atomic_load(&((struct thread_slot *)t)->name) == NULL,
	       "after %llu s the oldest gone slot goes to another process's thread (slot %u, "
	       "previous process %u)", THREADSLOTS_GONE_NS / 1000000000ull, f, t->prev_proc);
	threadslots_free(&s);
}

int
main(void)
{
	churn();
	waiting_and_revival();
	return tap_done();
}
