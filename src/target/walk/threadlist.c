/* The walker's interpreters and their thread lists, re-read when they
 * change; each thread's slot, kernel task, on-CPU state and name. */
#include "config.h"

#include "hostload.h"
#include "walk/walkstate.h"

/* ---------------------------------------------------------------------
 * Kernel-side thread facts: on-CPU state and names
 * ------------------------------------------------------------------- */

static void
refresh_name(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	char name[64];
	if (tc->tid_unknown)
		return;
	w->c.proc_reads++;
	procstat_comm(w->t->pid, (long)tc->native_tid, name, sizeof name);
	if (!name[0])
		return;
	threadslots_set_name(w->slots, tc->slot, name, now - w->epoch_ns);
}

static void resolve_tid(struct stackwalk *w, struct tcache *tc, bool only_thread);

/* Python's names: the registry is read again this long after the last
 * read for renames, and no sooner than NAMES_MIN_GAP_NS for new threads;
 * both stretched so that reading it takes at most 1% of the sampler's
 * time (10,000 threads' names take milliseconds). */
#define NAMES_RENAME_NS 1000000000ull
#define NAMES_MIN_GAP_NS 100000000ull
#define NAMES_COST_SHARE 100

void
sw_refresh_names(struct stackwalk *w, uint64_t now)
{
	uint64_t since = now - w->names_read_ns;
	if (w->names_read_ns && (since < w->names_gap_ns ||
				 (!w->names_due && since < NAMES_RENAME_NS)))
		return;
	uint64_t started = clock_now_ns();
	threadnames_read(w->t, &w->names);
	uint64_t cost = clock_now_ns() - started;
	w->names_read_ns = now;
	w->names_gap_ns = cost * NAMES_COST_SHARE > NAMES_MIN_GAP_NS ? cost * NAMES_COST_SHARE
								  : NAMES_MIN_GAP_NS;
	w->names_due -= w->names_due > 0;
	w->c.name_reads++;
	for (uint32_t i = 0; i < w->ninterps; i++) {
		const struct interp *iv = &w->interps[i];
		for (uint32_t k = 0; k < iv->nthreads; k++) {
			const struct tcache *tc = &iv->threads[k];
			const char *name;
			if (tc->slot != UINT32_MAX && (name = threadnames_find(&w->names, tc->ident)))
				threadslots_set_pyname(w->slots, tc->slot, name, now - w->epoch_ns);
		}
	}
}

/* File NAME of the thread's task into buf (NUL-terminated), through a
 * descriptor kept in *fd while the walker may hold that many open, else
 * opened for this read: its length, or -1. */
static ssize_t
read_task_file(struct stackwalk *w, const struct tcache *tc, int *fd, const char *name,
	       char *buf, size_t len)
{
	char path[80];
	snprintf(path, sizeof path, "/proc/%d/task/%llu/%s", (int)w->t->pid,
		 (unsigned long long)tc->native_tid, name);
	bool kept = *fd >= 0;
	if (!kept && w->open_fds < w->max_open_fds) {
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		kept = *fd >= 0;
		w->open_fds += kept;
	}
	int use = kept ? *fd : open(path, O_RDONLY | O_CLOEXEC);
	if (use < 0)
		return -1;
	ssize_t n = pread(use, buf, len - 1, 0);
	if (!kept)
		close(use);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* The kernel's state R is running or runnable: on a busy machine a thread
 * may wait for a CPU much of the time it is R. A check finds a thread R on
 * a CPU in the share of its checks that its time on a CPU makes up of the
 * time they stand for: each check is owed its share (schedstat is read at
 * the checks that find it R only, so the time since the last read is
 * shared among the checks since), and a check is on a CPU while a whole
 * state is owed. Its on-CPU states then add up to its CPU time, however
 * long it waited. Without schedstat, R is on a CPU. */
#define RAN_OWED_MAX 40.0   /* states owed at most: a running thread's time
			       moves only at the scheduler's ticks */

static bool
ran_by_time(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	char buf[128];
	uint64_t on, wait;
	w->c.proc_reads++;
	if (read_task_file(w, tc, &tc->schedstat_fd, "schedstat", buf, sizeof buf) <= 0 ||
	    !hostload_parse_schedstat(buf, &on, &wait, NULL))
		return true;
	bool first = !tc->ran_read_ns || on < tc->ran_ns || now <= tc->ran_read_ns;
	double share = first ? 0 : (double)(on - tc->ran_ns) / (double)(now - tc->ran_read_ns);
	uint32_t checks = tc->ran_checks;
	tc->ran_ns = on;
	tc->ran_read_ns = now;
	tc->ran_checks = 0;
	if (first)
		return true;
	double owed = tc->ran_owed + share * checks;
	if (owed > RAN_OWED_MAX)
		owed = RAN_OWED_MAX;
	bool on_cpu = owed >= 0.5;
	tc->ran_owed = on_cpu ? owed - 1.0 : owed;
	return on_cpu;
}

void
sw_refresh_cpu(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	if (!w->o.cpu_period_ns || w->t->pid <= 0)
		return;
	/* Names: right away, then twice more while the thread is young. */
	uint64_t age = now - tc->born_ns;
	if ((tc->name_reads == 1 && age > 20000000ull) || (tc->name_reads == 2 && age > 500000000ull)) {
		tc->name_reads++;
		refresh_name(w, tc, now);
	}
	if (now - tc->cpu_checked_ns < w->o.cpu_period_ns && tc->cpu_checked_ns)
		return;
	tc->cpu_checked_ns = now;
	tc->ran_checks++;
	w->cpu_reads_left -= w->cpu_reads_left > 0;
	if (tc->tid_retry) {
		resolve_tid(w, tc, false);
		if (!tc->tid_unknown) {
			/* Its slot learns the task: ids first, then the flag the
			 * readers test before they use them. */
			struct thread_slot *s = threadslots_at(w->slots, tc->slot);
			s->native_tid = tc->native_tid;
			s->ns_tid = tc->ns_tid;
			atomic_store_explicit(&s->tid_unknown, false, memory_order_release);
			refresh_name(w, tc, now);
		}
	}
	if (tc->tid_unknown) {
		/* Never another task's state: unknown. */
		tc->sticky = (tc->sticky & ~(uint32_t)(TT_THREAD_ON_CPU | TT_THREAD_RUNNABLE)) |
			     TT_THREAD_CPU_UNKNOWN;
		return;
	}
	w->c.proc_reads++;
	char buf[1024];
	ssize_t n = read_task_file(w, tc, &tc->stat_fd, "stat", buf, sizeof buf);
	enum run_state cpu = n > 0 ? procstat_parse_stat(buf, (size_t)n) : RUN_STATE_UNKNOWN;
	tc->sticky &= ~(uint32_t)(TT_THREAD_ON_CPU | TT_THREAD_RUNNABLE | TT_THREAD_CPU_UNKNOWN);
	if (cpu == RUN_STATE_RUNNING) {
		tc->sticky |= TT_THREAD_RUNNABLE;
		if (ran_by_time(w, tc, now))
			tc->sticky |= TT_THREAD_ON_CPU;
	} else if (cpu == RUN_STATE_UNKNOWN) {
		tc->sticky |= TT_THREAD_CPU_UNKNOWN;
	}
}

/* Every due on-CPU state of an interpreter's threads, in turn from where
 * the last sample left off, up to the sample's budget: a thousand idle
 * threads then cost a few /proc reads a sample, not a thousand (their
 * states refresh less often instead; the GIL holder's is refreshed as it
 * is walked). */
void
sw_refresh_cpu_states(struct stackwalk *w, struct interp *iv, uint64_t now)
{
	uint32_t n = iv->nthreads;
	bool limited = w->o.cpu_reads_per_sample > 0;
	if (limited && iv->cpu_scan_ns && now - iv->cpu_scan_ns < DUE_SCAN_NS)
		return;
	iv->cpu_scan_ns = now;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t k = (iv->cpu_cursor + j) % n;
		if (limited && !w->cpu_reads_left) {
			iv->cpu_cursor = k;
			return;
		}
		sw_refresh_cpu(w, &iv->threads[k], now);
	}
}

/* ---------------------------------------------------------------------
 * Interpreters and their thread lists
 * ------------------------------------------------------------------- */

void
sw_parse_block(const struct py_layout *l, struct interp *iv, const uint8_t *block)
{
	/* The block starts at is_block_start; fields are at interpreter offsets. */
	uint64_t o = l->is_block_start;
	iv->id = (int64_t)load_u64(block, l->is_id - o);
	iv->next = load_u64(block, l->is_next - o);
	iv->head = load_u64(block, l->is_threads_head - o);
	iv->main = l->has_threads_main ? load_u64(block, l->is_threads_main - o) : 0;
	iv->unique_id = load_u64(block, l->is_threads_unique_id - o);
	iv->count = load_u64(block, l->is_threads_count - o);
	if (l->gil_place == PY_GIL_IN_INTERP) {
		iv->holder = load_u64(block, l->is_gil_holder - o);
		iv->switch_no = load_u64(block, l->is_gil_switch - o);
		iv->locked = load_i32(block, l->is_gil_locked - o);
	} else if (iv->gilbuf) {
		iv->holder = load_u64(iv->gilbuf, l->gil_holder);
		iv->switch_no = load_u64(iv->gilbuf, l->gil_switch);
		iv->locked = load_i32(iv->gilbuf, l->gil_locked);
	}
	iv->code_gen = l->has_code_generation ? load_u64(block, l->is_code_generation - o) : 0;
	iv->gc = load_i32(block, l->is_gc_collecting - o);
	iv->have = true;
}

/* A thread left the target: its slot waits, then goes to a new thread. */
static void
slot_gone(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	if (tc->slot == UINT32_MAX)
		return;
	threadslots_gone(w->slots, tc->slot, now - w->epoch_ns);
	w->c.threads_gone++;
	tc->slot = UINT32_MAX;
}

void
sw_release_gone(struct stackwalk *w, struct tcache *tc, uint64_t now)
{
	slot_gone(w, tc, now);
	sw_tcache_release(w, tc);
}

static tt_status
new_slot(struct stackwalk *w, struct tcache *tc, int64_t interp_id, uint64_t now,
	 struct tt_error *err)
{
	struct slot_owner who = {.native_tid = tc->native_tid, .ns_tid = tc->ns_tid,
				 .tid_unknown = tc->tid_unknown, .interp_id = interp_id,
				 .proc = w->proc};
	bool revived;
	tt_status st = threadslots_take(w->slots, &who, now - w->epoch_ns, &tc->slot, &revived, err);
	if (st != TT_OK) {
		tc->slot = UINT32_MAX;
		return st;
	}
	tc->born_ns = now;
	tc->name_reads = 1;
	if (revived) {
		w->c.threads_gone--;
		w->c.slots_revived++;
		return TT_OK;
	}
	w->c.threads_seen++;
	refresh_name(w, tc, now);
	/* threading registers a thread as it starts: look now and once more */
	w->names_due = 2;
	return TT_OK;
}

/* 3.11 gives a thread state made for a new thread its creator's thread ids
 * until the new thread runs (3.12+ leave them 0): such a state shares its
 * native id with a live thread and sits at its root cframe with no frame.
 * It is not a thread yet; the new thread bumps threads.count when it starts,
 * which makes us read the list again. */
static bool
unstarted(const struct py_layout *l, const struct tcache *tc)
{
	uint64_t cf = load_u64(tc->tsbuf, l->ts_cframe);
	return cf == 0 || (cf == tc->tstate + l->ts_root_cframe &&
			   load_u64(tc->tsbuf, l->ts_root_cframe + l->cf_current_frame) == 0);
}

/* Which of the process's tasks a new thread is (tidmap.h). A fake target
 * (pid 0: fuzzing) keeps the recorded ids. */
static void
resolve_tid(struct stackwalk *w, struct tcache *tc, bool only_thread)
{
	if (w->t->pid <= 0) {
		tc->tid_unknown = false;
		tc->ns_tid = tc->native_tid;
		return;
	}
	w->c.proc_reads++;
	bool in_ns;
	uint64_t ours = tidmap_resolve(&w->tids, tc->recorded_tid, tc->was_main, only_thread, &in_ns,
				       &tc->tid_retry);
	tc->tid_unknown = ours == 0;
	tc->native_tid = ours ? ours : tc->recorded_tid;
	tc->ns_tid = in_ns ? tc->recorded_tid : tc->native_tid;
}

static uint32_t
drop_unstarted(struct stackwalk *w, struct tcache *fresh, uint32_t *moved_from, uint32_t n)
{
	uint32_t kept = 0;
	for (uint32_t k = 0; k < n; k++) {
		bool drop = false;
		for (uint32_t j = 0; j < n && !drop && unstarted(w->l, &fresh[k]); j++)
			drop = j != k && fresh[j].recorded_tid == fresh[k].recorded_tid;
		if (drop && fresh[k].slot == UINT32_MAX) {
			sw_tcache_release(w, &fresh[k]);
		} else {
			moved_from[kept] = moved_from[k];
			fresh[kept++] = fresh[k];
		}
	}
	return kept;
}

void
stackwalk_set_epoch(struct stackwalk *w, uint64_t epoch_ns)
{
	w->epoch_ns = epoch_ns;
}

uint64_t
stackwalk_epoch(const struct stackwalk *w)
{
	return w->epoch_ns;
}


/* The old list's entries by thread-state address, for a rebuild: IDs are
 * their indices + 1. */
static uint32_t
old_hash(const void *old, uint32_t id)
{
	return hash_mix64(((const struct tcache *)old)[id - 1].tstate);
}

static bool
old_index_build(struct idindex *x, const struct tcache *old, uint32_t nold)
{
	return idindex_reserve(x, 1, nold + 1, 16, old_hash, old);
}

/* The old entry at thread state ts not yet moved to the new list, or -1. */
static int64_t
old_index_find(const struct idindex *x, const struct tcache *old, uint64_t ts)
{
	for (uint32_t h = idindex_start(x, hash_mix64(ts)); x->slots[h]; h = idindex_next(x, h))
		if (old[x->slots[h] - 1].tstate == ts)
			return x->slots[h] - 1;
	return -1;
}

/* The thread list being read: the caches kept or made, and for each where
 * it came from in the old list. */
struct fresh_list {
	struct tcache *v;
	uint32_t *moved_from;    /* per entry: its old index, or UINT32_MAX */
	uint32_t n, cap, moved_cap;
};

/* The old list's states this sample has not read yet, in one batch, into
 * oldbuf (NULL where a read did not arrive). A thread that may have run
 * was read with the interpreter's block: that read is as fresh, and under
 * thread churn it is most of them. */
static tt_status
read_old_states(struct stackwalk *w, const struct tcache *old, uint32_t nold, uint8_t **oldbuf,
		struct tt_error *err)
{
	tt_status st = TT_OK;
	w->nsegs = 0;
	for (uint32_t k = 0; k < nold; k++) {
		if (old[k].tsbuf) {
			oldbuf[k] = (uint8_t *)old[k].tsbuf;
			continue;
		}
		uint8_t *b = sw_arena_take(w, w->ts_len);
		if (!b || !sw_add_seg(w, old[k].tstate, b, w->ts_len))
			break;
		oldbuf[k] = b;
	}
	size_t done = 0;
	if (w->nsegs) {
		w->c.batch_attempts++;
		st = remote_readv(&w->t->mem, w->segs, w->nsegs, &done, err);
		if (done == w->nsegs)
			w->c.batch_successes++;
	}
	/* This batch's segments are the states read here, in list order. */
	for (uint32_t k = 0, seg = 0; k < nold; k++)
		if (!old[k].tsbuf && oldbuf[k] && seg++ >= done)
			oldbuf[k] = NULL;
	w->nsegs = 0;
	return st;
}

/* A started thread's node (state at ts read into buf, native id tid) joins
 * the fresh list: its old cache moves over when old[was] is the same
 * thread, else a new cache is made. */
static tt_status
take_thread(struct stackwalk *w, struct interp *iv, struct fresh_list *f, struct tcache *old,
	    int64_t was, uint64_t ts, const uint8_t *buf, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	uint64_t tid = load_u64(buf, l->ts_native_thread_id);
	if (!grow_array((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v) ||
	    !grow_array((void **)&f->moved_from, &f->moved_cap, f->n + 1, sizeof *f->moved_from))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for threads");
	f->moved_from[f->n] = UINT32_MAX;
	struct tcache *tc = &f->v[f->n++];
	if (was >= 0 && old[was].recorded_tid == tid) {
		*tc = old[was];
		old[was].tstate = 0; /* moved */
		f->moved_from[f->n - 1] = (uint32_t)was;
	} else {
		memset(tc, 0, sizeof *tc);
		tc->tstate = ts;
		tc->recorded_tid = tc->native_tid = tid;
		/* which task it is: once the whole list is known */
		tc->tid_unknown = true;
		tc->was_main = l->has_threads_main ? ts == iv->main : load_u64(buf, l->ts_next) == 0;
		tc->stat_fd = tc->schedstat_fd = -1;
		tc->slot = UINT32_MAX; /* given once the whole list has been read */
	}
	/* A state read with the block keeps the frames read with it. */
	if (buf != tc->tsbuf) {
		tc->cfbuf = NULL;
		tc->span_lo = tc->span_hi = 0;
		tc->planned_full = false;
	}
	tc->tsbuf = buf;
	tc->ts_seg = UINT32_MAX;
	tc->ident = load_u64(buf, l->ts_thread_id);
	return TT_OK;
}

/* Walks the list from its head into f, each state from oldbuf when the
 * batch read it, else read singly; *visited counts the nodes. */
static tt_status
read_list(struct stackwalk *w, struct interp *iv, struct fresh_list *f, struct tcache *old,
	  uint8_t **oldbuf, const struct idindex *index, uint64_t *visited, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	struct cycle_guard guard;
	cycle_guard_init(&guard);
	tt_status st = TT_OK;
	/* Every node counts towards the cap, started OS thread or not. */
	for (uint64_t ts = iv->head; ts != 0; (*visited)++) {
		if (*visited >= TARGET_MAX_THREADS || (ts & 7) || cycle_guard_seen(&guard, ts))
			return tt_fail(err, TT_EBADMEM, 0, "thread list is corrupt (changing?)");
		int64_t was = old_index_find(index, old, ts);
		uint8_t *buf = was >= 0 ? oldbuf[was] : NULL;
		if (!buf) {
			if (!(buf = sw_arena_take(w, w->ts_len)))
				return sw_arena_exhausted(w, err);
			w->c.single_reads++;
			if ((st = remote_read(&w->t->mem, ts, buf, w->ts_len, err)) != TT_OK)
				return st;
		}
		if (load_u64(buf, l->ts_interp) != iv->addr)
			return tt_fail(err, TT_EBADMEM, 0, "thread state 0x%llx changed while read",
				       (unsigned long long)ts);
		/* A native id of 0: its OS thread has not started. */
		if (load_u64(buf, l->ts_native_thread_id) != 0 &&
		    (st = take_thread(w, iv, f, old, was, ts, buf, err)) != TT_OK)
			return st;
		ts = load_u64(buf, l->ts_next);
	}
	return TT_OK;
}

/* Re-read an interpreter's thread list, keeping caches of threads that are
 * still there. A list that changed mostly keeps its nodes (new threads come
 * in at the head): the old list's states are read in one batch first, and
 * the walk reads one by one only the nodes it has not seen. */
tt_status
sw_rebuild_threads(struct stackwalk *w, struct interp *iv, uint64_t now, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	struct tcache *old = iv->threads;
	uint32_t nold = iv->nthreads;
	struct fresh_list f = {0};
	w->c.list_rebuilds++;
	struct idindex index = {0};
	uint8_t **oldbuf = calloc(nold ? nold : 1, sizeof *oldbuf);
	if (!oldbuf || !old_index_build(&index, old, nold)) {
		free(oldbuf);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for threads");
	}
	uint64_t visited = 0;
	tt_status st = read_old_states(w, old, nold, oldbuf, err);
	if (st == TT_OK)
		st = read_list(w, iv, &f, old, oldbuf, &index, &visited, err);
	/* A node read after its thread ended can still name our interpreter
	 * and end the list (next 0): the walk then stops short, and taking it
	 * would drop every thread behind it, to be found again as new ones
	 * (a 500-thread pool lost and re-found some 40 times a second under
	 * thread churn). The interpreter's thread count, read with the head,
	 * tells: it counts the threads the threading module started, so a
	 * whole list has at least that many nodes, but for the few that end
	 * while it is read. */
	if (st == TT_OK && visited + 8 + iv->count / 32 < iv->count)
		st = tt_fail(err, TT_EBADMEM, 0, "thread list read torn (%llu of %llu threads)",
			     (unsigned long long)visited, (unsigned long long)iv->count);
	if (st == TT_OK && l->has_cframe)
		f.n = drop_unstarted(w, f.v, f.moved_from, f.n);
	/* New threads' tasks, now that the whole list is known. */
	for (uint32_t k = 0; k < f.n && st == TT_OK; k++)
		if (f.v[k].slot == UINT32_MAX)
			resolve_tid(w, &f.v[k], f.n == 1 && w->ninterps == 1);
	/* Slots are for good: only threads of a list read whole get one, or a
	 * list torn into a loop would use them up sample after sample. */
	for (uint32_t k = 0; k < f.n && st == TT_OK; k++)
		if (f.v[k].slot == UINT32_MAX)
			st = new_slot(w, &f.v[k], iv->id, now, err);
	idindex_free(&index);
	free(oldbuf);
	if (st != TT_OK) {
		/* Keep the old list; the caller retries next sample. Caches moved
		 * into the fresh list go back to their owners; the others are
		 * released. */
		for (uint32_t k = 0; k < f.n; k++) {
			if (f.moved_from[k] != UINT32_MAX)
				old[f.moved_from[k]] = f.v[k];
			else
				sw_tcache_release(w, &f.v[k]);
		}
		free(f.v);
		free(f.moved_from);
		return st;
	}
	free(f.moved_from);
	for (uint32_t k = 0; k < nold; k++)
		if (old[k].tstate != 0)
			sw_release_gone(w, &old[k], now);
	free(old);
	iv->threads = f.v;
	iv->nthreads = f.n;
	iv->cap = f.cap;
	return TT_OK;
}

/* Find the interpreters (rarely more than one). */
tt_status
sw_refresh_interps(struct stackwalk *w, uint64_t now, struct tt_error *err)
{
	const struct py_layout *l = w->l;
	uint64_t addrs[MAX_INTERPS];
	uint32_t n = 0;
	uint64_t addr;
	w->c.single_reads++;
	tt_status st = remote_read_u64(&w->t->mem, w->t->runtime_addr + l->rt_interpreters_head,
				       &addr, err);
	if (st != TT_OK)
		return st;
	if (addr == 0)
		return tt_fail(err, TT_EBADMEM, 0, "the runtime has no interpreter (starting or exiting)");
	while (addr != 0 && n < MAX_INTERPS) {
		for (uint32_t i = 0; i < n; i++)
			if (addrs[i] == addr)
				return tt_fail(err, TT_EBADMEM, 0,
					       "interpreter list loops back on itself (changing?)");
		addrs[n++] = addr;
		w->c.single_reads++;
		if ((st = remote_read_u64(&w->t->mem, addr + l->is_next, &addr, err)) != TT_OK)
			return st;
	}
	bool same = n == w->ninterps;
	for (uint32_t i = 0; same && i < n; i++)
		same = w->interps[i].addr == addrs[i];
	if (same)
		return TT_OK;
	/* Keep state of interpreters that remain. */
	struct interp next[MAX_INTERPS];
	memset(next, 0, sizeof next);
	for (uint32_t i = 0; i < n; i++) {
		next[i].addr = addrs[i];
		for (uint32_t k = 0; k < w->ninterps; k++) {
			if (w->interps[k].addr == addrs[i]) {
				next[i] = w->interps[k];
				w->interps[k].addr = 0;   /* taken: its threads move */
				break;
			}
		}
	}
	for (uint32_t k = 0; k < w->ninterps; k++) {
		if (w->interps[k].addr != 0) {
			for (uint32_t j = 0; j < w->interps[k].nthreads; j++)
				sw_release_gone(w, &w->interps[k].threads[j], now);
			free(w->interps[k].threads);
		}
	}
	memcpy(w->interps, next, MAX_INTERPS * sizeof *w->interps);
	w->ninterps = n;
	return TT_OK;
}
