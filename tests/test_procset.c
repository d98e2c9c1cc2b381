/* A worker tree that recycles hard, through the process set: 100,000
 * processes born at 200/s, 8 alive at a time, each with two threads, each
 * sampled. The process table and the thread slots stay at what is alive
 * plus a bounded number of recently ended ones, every process is counted,
 * replaced entries are freed after their grace, and the live view's
 * aggregate and record's profile fold what they counted of a process
 * whose entry went to a new one, losing no sample. (Targets are empty: no
 * memory is read; the walker's part is played by taking thread slots.) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "procset.h"
#include "collapsed.h"
#include "profile.h"
#include "tap.h"

#define PROCS 100000u
#define ALIVE 8u
#define THREADS 2u
#define BIRTH_NS 5000000ull          /* 200 processes/s */
#define START_NS 1000000000000ull    /* the clock at the first birth */

struct alive {
	uint32_t index;
	uint32_t slots[THREADS];
};

/* The profile in the collapsed format, per process and thread (NULL when
 * it cannot be written); the caller frees it. */
static char *
collapsed(const struct profile *prof, const struct procset *ps)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	int rc = profile_write_collapsed(prof, ps, f, true, true);
	fclose(f);
	if (rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* A process set holding one process (a fake target: nothing is read from
 * /proc), at *index; false, said, when it cannot be made. */
static bool
one_process(struct procset *ps, uint32_t *index)
{
	if (procset_init(ps) != 0) {
		tap_ok(0, "procset_init");
		return false;
	}
	ps->epoch_ns = START_NS;
	struct stackwalk_options o;
	stackwalk_default_options(&o);
	struct target t;
	memset(&t, 0, sizeof t);
	struct tt_error err;
	if (procset_add(ps, &t, 0, false, &o, START_NS, index, &err) != TT_OK) {
		tap_ok(0, "procset_add: %s", err.msg);
		procset_free(ps);
		return false;
	}
	return true;
}

/* Thread churn in process index: the thread of *slot (if any) ends at
 * now_rel and thread tid takes a slot, into *slot. */
static bool
next_thread(struct procset *ps, uint32_t index, uint64_t tid, uint64_t now_rel, uint32_t *slot)
{
	if (*slot != UINT32_MAX)
		threadslots_gone(&ps->threads, *slot, now_rel);
	struct slot_owner who = {.native_tid = tid, .ns_tid = tid, .proc = index};
	bool revived;
	struct tt_error err;
	return threadslots_take(&ps->threads, &who, now_rel, slot, &revived, &err) == TT_OK;
}

/* One process whose threads come and go all day (1 ms each, 20,000 of
 * them): record's profile keeps the live thread, the 256 that ended last
 * by name, and the rest folded under "exited threads", losing no sample. */
static void
thread_churn_profile(void)
{
	enum { THREADS_BORN = 20000 };
	struct procset ps;
	uint32_t index;
	if (!one_process(&ps, &index))
		return;
	struct profile prof;
	profile_init(&prof);
	uint32_t frame = intern_frame(&ps.in, intern_func(&ps.in, "job", "pool.py", 1, FUNC_PYTHON), 7);
	uint32_t stack = intern_stack(&ps.in, 0, frame);
	bool ok = true;
	uint32_t prev = UINT32_MAX, most = 0, most_slots = 0;
	for (uint32_t i = 0; i < THREADS_BORN && ok; i++) {
		uint64_t now_rel = (uint64_t)(i + 1) * 1000000ull;
		ok = next_thread(&ps, index, 500000ull + i, now_rel, &prev);
		struct sample_record r = {.time_ns = now_rel + 1, .stack_id = stack,
					  .thread_slot = (uint16_t)prev, .weight = 1};
		ok &= profile_add(&prof, &ps, &r, PROFILE_WALL);
		if (prof.count > most)
			most = prof.count;
		if (prof.cap > most_slots)
			most_slots = prof.cap;
	}
	profile_settle(&prof, &ps);
	tap_ok(ok && prof.total == THREADS_BORN, "thread churn: every sample kept (%llu of %u)",
	       (unsigned long long)prof.total, (unsigned)THREADS_BORN);
	/* the live thread, the kept ended ones, the exited bucket, what ended
	 * since the last check (a second: 1,000 threads) and what was folded
	 * since the last sweep */
	uint32_t bound = 1 + PROFILE_KEEP_ENDED_THREADS + 1 + 1000 + OCCUPANTS_SWEEP_EVERY;
	tap_ok(most <= bound && prof.count <= PROFILE_KEEP_ENDED_THREADS + 2,
	       "thread churn: at most %u entries for %u threads (bound %u), %u at the end",
	       most, (unsigned)THREADS_BORN, bound, prof.count);
	/* What stays (the bound less the folded) fits 4,096 entries: full
	 * entries fold what left before they grow. */
	tap_ok(most_slots <= 4096, "thread churn: room for %u entries at most (at most 4096)",
	       most_slots);
	char *text = collapsed(&prof, &ps);
	uint32_t lines = 0, exited = 0;
	const char *exited_line = "process 0 (?);exited threads;job (pool.py:7) ";
	for (const char *c = text; c && *c; c = strchr(c, '\n') ? strchr(c, '\n') + 1 : "") {
		lines++;
		if (strncmp(c, exited_line, strlen(exited_line)) == 0)
			exited = (uint32_t)strtoul(c + strlen(exited_line), NULL, 10);
	}
	tap_ok(lines == PROFILE_KEEP_ENDED_THREADS + 2 &&
	       exited == THREADS_BORN - PROFILE_KEEP_ENDED_THREADS - 1,
	       "thread churn: %u lines: the live thread, the %u that ended last, and "
	       "\"exited threads\" with %u samples", lines, PROFILE_KEEP_ENDED_THREADS, exited);
	free(text);
	profile_free(&prof);
	procset_free(&ps);
}

/* A table's most slots per entry seen (once it holds 4,096 entries). */
struct fullest {
	double ratio;
	uint32_t count, slots;
};

static void
note_fullest(struct fullest *f, uint32_t count, uint32_t slots)
{
	double ratio = (double)slots / (count ? count : 1);
	if (count >= 4096 && ratio > f->ratio)
		*f = (struct fullest){ratio, count, slots};
}

/* The live view's aggregate and record's profile under thread churn, the
 * distinct stacks growing for a minute (500 new ones a second, to 30,000):
 * after every window each table is sized for the entries it holds, a third
 * full, not doubled past a power of two that the count wandered across. */
static void
aggregate_table_follows_count(void)
{
	enum { THREADS_BORN = 60000, PER_WINDOW = 1000 };
	struct procset ps;
	uint32_t index;
	if (!one_process(&ps, &index))
		return;
	uint32_t func = intern_func(&ps.in, "handle", "app.py", 1, FUNC_PYTHON);
	struct aggregate agg;
	agg_init(&agg, &ps, START_NS);
	struct profile prof;
	profile_init(&prof);
	bool ok = true;
	uint32_t prev = UINT32_MAX, windows = 0;
	struct fullest at_agg = {0}, at_prof = {0};
	for (uint32_t i = 0; i < THREADS_BORN && ok; i++) {
		uint64_t now_rel = (uint64_t)(i + 1) * 1000000ull;
		ok = next_thread(&ps, index, 700000ull + i, now_rel, &prev);
		uint32_t stack = intern_stack(&ps.in, 0, intern_frame(&ps.in, func, (int32_t)(i / 2 + 1)));
		struct sample_record r = {.time_ns = now_rel + 1, .stack_id = stack,
					  .thread_slot = (uint16_t)prev, .weight = 1};
		ok &= stack != 0 && agg_add(&agg, &r) && profile_add(&prof, &ps, &r, PROFILE_WALL);
		if ((i + 1) % PER_WINDOW == 0) {
			agg_roll_window(&agg, START_NS + now_rel);
			profile_settle(&prof, &ps);
			windows++;
			note_fullest(&at_agg, agg.count, (uint32_t)agg_entries_bytes(&agg));
			note_fullest(&at_prof, prof.count, (uint32_t)profile_entries_bytes(&prof));
		}
	}
	tap_ok(ok && agg.samples[AGG_SESSION] == THREADS_BORN,
	       "aggregate, stacks growing under thread churn: every sample kept (%llu of %u)",
	       (unsigned long long)agg.samples[AGG_SESSION], (unsigned)THREADS_BORN);
	/* Entries of 32 bytes at most half again their count before a sweep
	 * gives back (48), an index of 4-byte ids at least an eighth full (32):
	 * 80. The table of 40-byte slots a third full this replaced took 128. */
	tap_ok(agg.count >= THREADS_BORN / 2 && at_agg.ratio <= 80,
	       "aggregate: after each of %u windows its memory follows its entries: at worst "
	       "%u bytes for %u entries (%.1f per entry, at most 80); %u entries at the end",
	       windows, at_agg.slots, at_agg.count, at_agg.ratio, agg.count);
	/* The same for 24-byte entries: 36 + 32. The table this replaced:
	 * 3.22 slots of 24 bytes (77). */
	tap_ok(ok && prof.total == THREADS_BORN && prof.count >= THREADS_BORN / 2 &&
	       at_prof.ratio <= 68,
	       "profile, the same: at worst %u bytes for %u entries (%.1f per entry, at most "
	       "68); %u entries at the end", at_prof.slots, at_prof.count, at_prof.ratio,
	       prof.count);
	profile_free(&prof);
	agg_free(&agg);
	procset_free(&ps);
}

/* The r key: samples taken before it, drained after it, are not counted. */
static void
aggregate_reset_drops_older(void)
{
	struct procset ps;
	if (procset_init(&ps) != 0) {
		tap_ok(0, "procset_init");
		return;
	}
	ps.epoch_ns = START_NS;
	struct aggregate agg;
	agg_init(&agg, &ps, START_NS);
	uint32_t stack = intern_stack(&ps.in, 0, intern_frame(&ps.in, intern_func(&ps.in, "f",
				      "a.py", 1, FUNC_PYTHON), 2));
	struct sample_record r = {.time_ns = 1000, .stack_id = stack, .weight = 1};
	bool ok = agg_add(&agg, &r);
	agg_reset(&agg, START_NS + 5000);
	r.time_ns = 4999;          /* taken before the reset, drained after it */
	ok &= agg_add(&agg, &r);
	r.time_ns = 5001;
	r.weight = 2;
	ok &= agg_add(&agg, &r);
	tap_ok(ok && agg.samples[AGG_SESSION] == 2,
	       "aggregate: after a reset only samples taken since count (%llu, expected 2)",
	       (unsigned long long)agg.samples[AGG_SESSION]);
	agg_free(&agg);
	procset_free(&ps);
}

int
main(void)
{
	aggregate_reset_drops_older();
	thread_churn_profile();
	aggregate_table_follows_count();
	struct procset ps;
	if (procset_init(&ps) != 0) {
		tap_ok(0, "procset_init");
		return tap_done();
	}
	ps.epoch_ns = START_NS;
	struct aggregate agg;
	agg_init(&agg, &ps, START_NS);
	struct profile prof;
	profile_init(&prof);
	uint32_t frame = intern_frame(&ps.in, intern_func(&ps.in, "work", "app.py", 1, FUNC_PYTHON), 3);
	uint32_t stack = intern_stack(&ps.in, 0, frame);

	struct stackwalk_options o;
	stackwalk_default_options(&o);
	struct target t;
	memset(&t, 0, sizeof t);
	struct alive alive[ALIVE];
	uint32_t nalive = 0, most_procs = 0, most_slots = 0, most_retired = 0;
	uint64_t records = 0;
	bool ok_add = true, ok_index = true, ok_counts = true, ok_start = true;
	for (uint32_t i = 0; i < PROCS && ok_add; i++) {
		uint64_t now = START_NS + (uint64_t)i * BIRTH_NS;
		struct tt_error err;
		if (nalive == ALIVE) { /* the oldest exits */
			struct alive *a = &alive[0];
			struct proc_info *p = procset_at(&ps, a->index);
			stackwalk_retire(p->walk, now);
			for (uint32_t k = 0; k < THREADS; k++)
				threadslots_gone(&ps.threads, a->slots[k], now - START_NS);
			procset_end(&ps, a->index, PROC_EXITED, "exited", now);
			memmove(alive, alive + 1, (ALIVE - 1) * sizeof *alive);
			nalive--;
		}
		/* pid 0: a fake target, nothing read from /proc */
		struct alive *a = &alive[nalive];
		if (procset_add(&ps, &t, 0, false, &o, now, &a->index, &err) != TT_OK) {
			ok_add = false;
			break;
		}
		for (uint32_t k = 0; k + 1 <= nalive; k++)
			ok_index &= alive[k].index != a->index;
		ok_start &= procset_at(&ps, a->index)->start_ns == now;
		for (uint32_t k = 0; k < THREADS; k++) {
			struct slot_owner who = {.native_tid = 1000000ull + i * THREADS + k,
						 .ns_tid = 1000000ull + i * THREADS + k,
						 .proc = a->index};
			bool revived;
			if (threadslots_take(&ps.threads, &who, now - START_NS, &a->slots[k], &revived,
					     &err) != TT_OK) {
				ok_add = false;
				break;
			}
		}
		nalive++;
		/* every live thread sampled once per birth, into both consumers */
		for (uint32_t k = 0; k < nalive; k++) {
			for (uint32_t j = 0; j < THREADS; j++) {
				struct sample_record r = {.time_ns = now - START_NS + 1, .stack_id = stack,
							  .thread_slot = (uint16_t)alive[k].slots[j],
							  .state = 0, .weight = 1};
				agg_add(&agg, &r);
				profile_add(&prof, &ps, &r, PROFILE_WALL);
				records++;
			}
		}
		if (i % 200 == 0)
			agg_roll_window(&agg, now);
		uint32_t live;
		uint64_t ended;
		procset_counts(&ps, &live, &ended);
		ok_counts &= live == nalive && live + ended == i + 1;
		if (procset_count(&ps) > most_procs)
			most_procs = procset_count(&ps);
		if (appendlog_count(ps.threads.log) > most_slots)
			most_slots = appendlog_count(ps.threads.log);
		if (ps.retired.n > most_retired)
			most_retired = ps.retired.n;
	}
	tap_ok(ok_add, "%u processes added, each with %u threads", PROCS, THREADS);
	tap_ok(ok_index, "no two live processes ever shared an index");
	tap_ok(ok_start, "an index given to a new process says so (start_ns)");
	tap_ok(ok_counts, "every process counted: live + ended = processes seen, all along");
	/* ended ones kept: PROCSET_KEEP_ENDED, or those ended less than
	 * PROCSET_MIN_ENDED_NS ago (400 at 200/s) */
	uint32_t kept = (uint32_t)(PROCSET_MIN_ENDED_NS / BIRTH_NS) + 1;
	if (kept < PROCSET_KEEP_ENDED + 1)
		kept = PROCSET_KEEP_ENDED + 1;
	tap_ok(most_procs <= ALIVE + kept, "the process table stays at %u entries at most "
	       "(bound: %u alive + %u ended)", most_procs, ALIVE, kept);
	tap_ok(most_slots <= ALIVE * THREADS + THREADSLOTS_KEEP_GONE + 1,
	       "the thread slots stay at %u at most for %u threads", most_slots, PROCS * THREADS);
	uint32_t grace = (uint32_t)(PROCSET_GRACE_NS / BIRTH_NS) + 1;
	tap_ok(most_retired <= grace, "replaced entries are freed after their grace: %u waiting "
	       "at most (bound %u)", most_retired, grace);
	tap_ok(atomic_load(&ps.recycled) >= PROCS - most_procs,
	       "%llu processes gave their entry to a new one",
	       (unsigned long long)atomic_load(&ps.recycled));
	double life = procset_lifetime_s(&ps, START_NS + (uint64_t)PROCS * BIRTH_NS);
	double want = (double)(PROCS - ALIVE) * ALIVE * BIRTH_NS / 1e9;
	tap_ok(life > want * 0.99 && life < want * 1.01,
	       "sampled lives summed over every process: %.0f s (expected about %.0f s)", life, want);

	/* The newest process took an index and slots that others had; what
	 * those counted waits for the next sweep, yet a query of the index or
	 * a slot counts only the newest's samples: one per thread. */
	const struct alive *last = &alive[nalive - 1];
	struct agg_query q = {.mode = AGG_WALL, .scope = AGG_SESSION, .slot = -1,
			      .proc = (int32_t)last->index, .sort = SORT_OWN};
	struct agg_table tab;
	memset(&tab, 0, sizeof tab);
	bool built = agg_build_table(&agg, &q, &tab);
	uint64_t of_proc = tab.denominator;
	q.slot = (int32_t)last->slots[0];
	built &= agg_build_table(&agg, &q, &tab);
	tap_ok(built && of_proc == THREADS && tab.denominator == 1,
	       "aggregate: a reused index counts its new process's samples only (%llu), a "
	       "reused slot its new thread's (%llu)", (unsigned long long)of_proc,
	       (unsigned long long)tab.denominator);
	agg_table_free(&tab);

	agg_roll_window(&agg, START_NS + (uint64_t)PROCS * BIRTH_NS);
	tap_ok(agg.samples[AGG_SESSION] == records, "aggregate: every sample kept (%llu of %llu)",
	       (unsigned long long)agg.samples[AGG_SESSION], (unsigned long long)records);
	tap_ok(agg.count <= 2 * (most_procs + most_slots),
	       "aggregate: %u entries for %u processes (folded: %llu)", agg.count, PROCS,
	       (unsigned long long)agg.exited_procs_folded);
	tap_ok(agg.exited_procs_folded >= PROCS - most_procs,
	       "aggregate: processes whose entry went away are folded (%llu)",
	       (unsigned long long)agg.exited_procs_folded);

	profile_settle(&prof, &ps);
	tap_ok(prof.total == records, "profile: every sample kept (%llu of %llu)",
	       (unsigned long long)prof.total, (unsigned long long)records);
	tap_ok(prof.count <= 2 * (most_procs + most_slots) && prof.procs_folded >= PROCS - most_procs,
	       "profile: %u entries for %u processes (folded: %llu)", prof.count, PROCS,
	       (unsigned long long)prof.procs_folded);
	char *text = collapsed(&prof, &ps);
	tap_ok(text && strstr(text, "exited processes;exited threads;work (app.py:3) ") &&
	       strstr(text, "\nprocess 0 (?);thread "),
	       "collapsed output: folded processes under \"exited processes\", live ones by pid");
	free(text);

	profile_free(&prof);
	agg_free(&agg);
	procset_free(&ps);
	return tap_done();
}
