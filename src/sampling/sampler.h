/* The sampler thread: samples the target at a requested rate (or as fast as
 * it can), folds runs of identical samples, and pushes compact records into
 * the ring for a consumer. It never blocks on the consumer. */
#ifndef TT_SAMPLER_H
#define TT_SAMPLER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "guard.h"
#include "procset.h"
#include "ring.h"
#include "walk/stackwalk.h"
#include "target.h"

#define TT_STATUS_COUNT (TT_EUSAGE + 1)

/* Figures the engine keeps about itself, readable from any thread at any
 * time (each field is atomic; a snapshot is not one instant). */
struct engine_stats {
	_Atomic uint64_t samples;            /* sampling passes over all threads */
	_Atomic uint64_t thread_samples;     /* per-thread samples produced */
	_Atomic uint64_t errors;             /* failed passes */
	_Atomic uint64_t errors_by_status[TT_STATUS_COUNT];
	_Atomic uint64_t retried;            /* passes read again after a torn read */
	_Atomic uint64_t late;               /* passes that started after their deadline */
	_Atomic uint64_t missed;             /* deadlines skipped entirely */
	_Atomic uint64_t busy_ns;            /* time spent sampling */
	_Atomic uint64_t elapsed_ns;         /* since the sampler started */
	_Atomic uint64_t records;            /* ring records pushed (after folding) */
	/* the sampler thread as the scheduler saw it (/proc/thread-self/schedstat,
	 * read every SCHED_READ_NS; 0 when the kernel does not say) */
	_Atomic uint64_t sched_cpu_ns;       /* on a CPU */
	_Atomic uint64_t sched_wait_ns;      /* runnable, waiting for a CPU */
	_Atomic uint64_t sched_idle_ns;      /* under SCHED_IDLE (gentle.h) */
	_Atomic uint64_t sched_fallbacks;    /* times it left SCHED_IDLE: the machine was busy */
	/* the machine, over the guard's last half second (guard.h; 0 until
	 * known): its CPUs, tasks wanting one (per mille of a task), time
	 * stolen by the host (per mille of CPU time), time some task waited
	 * for a CPU (per mille of wall time) */
	_Atomic uint64_t host_cpus, host_runnable_milli, host_steal_pm, host_pressure_pm;
	/* from the walker */
	_Atomic uint64_t full_hits, partial_hits, misses;
	_Atomic uint64_t frames_reused, frames_read;
	_Atomic uint64_t code_hits, code_misses, code_rechecks;
	_Atomic uint64_t batch_attempts, batch_successes;
	_Atomic uint64_t single_reads, proc_reads, list_rebuilds;
	_Atomic uint64_t remote_reads, remote_bytes;
	_Atomic uint64_t stacks, frames, codes, threads;   /* distinct interned; threads seen */
	_Atomic uint64_t threads_gone, thread_slots;       /* threads that left; slots in use */
	_Atomic uint64_t threads_skipped;   /* thread samples left out: ended while read */
	_Atomic uint64_t threads_revived;                  /* dropped by a torn list read, back */
	/* --verify: each cached sample checked against an independent walk */
	_Atomic uint64_t verified, mismatched;
	/* --native: thread samples asked about, given native frames, of which
	 * in their true order with the Python ones; native walks and their time */
	_Atomic uint64_t native_threads, native_given, native_merged;
	_Atomic uint64_t native_walks, native_walk_ns;
	_Atomic uint64_t native_moved;   /* ... not given them: taken in another frame */
	_Atomic uint64_t native_unverified; /* ... given them, not checked (native/unwind.h) */
	/* sampler_pause: perf samples the kernel took while paused (none when
	 * it stopped as asked) */
	_Atomic uint64_t native_paused_samples;
};

struct sampler_config {
	uint64_t interval_ns;         /* 0: as fast as possible */
	uint64_t duration_ns;         /* 0: until stopped */
	uint32_t ring_capacity;
	bool verify;                  /* compare each sample with the plain walker (first Python process only) */
	bool follow;                  /* follow the root's descendants (see follow.h) */
	bool async_aware;             /* re-root task stacks on their await chains (awaitstack.h) */
	bool native;                  /* native frames with the Python ones (nativestack.h) */
	/* The process the user named when it is not Python itself (a shell,
	 * tini): shown as the root (PROC_OTHER), never sampled; the target
	 * is then its first Python descendant, and the session ends when
	 * the root does. 0: the target is the root. */
	pid_t other_root;
	struct stackwalk_options walk;
};

enum sampler_end {
	SAMPLER_RUNNING = 0,
	SAMPLER_STOPPED,      /* asked to stop */
	SAMPLER_DURATION,     /* the requested duration passed */
	SAMPLER_TARGET_EXITED,
	SAMPLER_FAILED,       /* a fatal error (see error) */
};

struct proc_run;
struct follow;

/* Counters added up over processes (sampler thread). */
struct proc_totals {
	struct walk_counters c;
	uint64_t code_hits, code_misses, code_rechecks, codes, reads, bytes;
};

struct sampler {
	struct procset procs;         /* every process shown; index 0 is the root */
	/* The first Python process: the root's (procs entry 0), or under a
	 * root that is not Python (cfg.other_root) entry 1's. */
	struct target *target;
	struct stackwalk *walk;
	struct follow *follow;        /* the discovery thread, when following a tree */
	struct ring ring;
	struct sampler_config cfg;
	struct engine_stats stats;
	pthread_t thread;
	bool started;
	_Atomic bool stop;
	_Atomic bool duration_over;   /* the guard stopped it: the duration passed */
	_Atomic pid_t tid;            /* the sampler thread's, once it runs */
	struct guard guard;
	_Atomic bool pause;           /* sampler_pause */
	_Atomic bool paused;          /* as the sampler thread last applied it */
	_Atomic bool passed;          /* a first pass ended, its samples in the ring */
	_Atomic int end;              /* enum sampler_end once the thread is done */
	struct tt_error error;        /* valid when end == SAMPLER_FAILED */
	int wake_fd;                  /* readable when the sampler ends (for poll) */
	int wake_write;
	uint64_t start_ns;
	/* processes being sampled, round-robin (sampler thread only) */
	struct proc_run *run;
	uint32_t nrun, run_cap, cursor;
	uint64_t adds_seen;           /* procs.adds when last looked */
	uint64_t next_root_check;     /* cfg.other_root: when to look whether it still runs */
	struct proc_totals retired;   /* what the processes dropped so far had counted */
	/* folding, sampler thread only */
	struct pending_record *pending;
	uint32_t npending;
	uint64_t last_flush_ns;
	char mismatch_example[512];
	char error_example[384];      /* first sample error's message */
	/* --native: why running threads have no native frames (perf_event_open
	 * refused), written once before native_refused is set */
	char native_refusal[512];
	_Atomic bool native_refused;
};

void sampler_default_config(struct sampler_config *cfg);

/* Start sampling an attached target (the root, or the first Python
 * descendant of cfg->other_root), and with cfg->follow its (the root's)
 * descendants as they appear. -r is a rate per process: each process has
 * its own schedule; at max rate the processes take turns. */
tt_status sampler_start(struct sampler *s, struct target *t, const struct sampler_config *cfg,
			struct tt_error *err);

/* Pause or resume sampling, within a pass: while paused nothing of the
 * target is read and --native's perf events are disabled, so the target
 * pays nothing (bench measures what it pays by pausing). */
void sampler_pause(struct sampler *s, bool paused);
/* Whether the sampler thread has applied a pause (true) or a resumption:
 * from then on the last asked for holds. */
bool sampler_paused(struct sampler *s);
/* May a consumer that started elapsed_ns ago, refreshing every delay_ns,
 * roll its window once it has drained? Not before a first pass over the
 * target has ended (its samples then in the ring: asked before the drain,
 * the drain takes them), but for 5 s past its time at most: a table of no
 * samples says nothing a table a little later would not. A first pass
 * reads every library's symbols and call frame information and walks every
 * thread: long on a big process, longer on a busy machine. */
bool sampler_window_may_roll(struct sampler *s, uint64_t elapsed_ns, uint64_t delay_ns);

/* Ask the thread to stop and wait for it; safe to call more than once. */
void sampler_stop(struct sampler *s);

/* Free everything (after sampler_stop). */
void sampler_free(struct sampler *s);

static inline enum sampler_end
sampler_end_state(struct sampler *s)
{
	return (enum sampler_end)atomic_load_explicit(&s->end, memory_order_acquire);
}

/* The one drain loop of a sampler's consumer: hand every record waiting
 * in the ring to take(ctx, records, n), in batches, oldest first, until it
 * is empty (a batch lets the consumer look at the sampler's tables once,
 * after the records it holds were made). Consumer thread only. */
typedef void sampler_take_fn(void *ctx, const struct sample_record *r, size_t n);
void sampler_drain(struct sampler *s, sampler_take_fn *take, void *ctx);


/* The live view's rate when none is given: the highest whose reads cost a
 * busy target at most 1% of its work (the README's cost table: reading a
 * running thread's frames costs it about 0.2% per 1,000 samples a second,
 * whoever reads them). */
#define SAMPLER_LIVE_RATE_HZ 2000

/* --native's rate when none is given: each native sample's stack copy is
 * the target's to pay (the README's cost table: none measurable at 100/s,
 * 2.9% at 1 kHz). */
#define SAMPLER_NATIVE_RATE_HZ 100

/* --native, so far: the share of thread samples given native frames, of
 * those the share whose native and Python frames did not pair up, and why
 * running threads have none (perf_event_open refused) or NULL. */
struct native_shares {
	double native_pct, unmerged_pct;
	double moved_pct;      /* left out: the perf sample was of another Python frame */
	double unverified_pct; /* given, from a perf sample not checked against its frame */
	const char *refusal;
};
void sampler_native_shares(const struct sampler *s, struct native_shares *out);

/* Why deadlines were missed, in a few words for a header ("" when too few
 * were): the sampler waited for a CPU, or a pass takes longer than the
 * rate leaves it (rate_hz per process, `procs` processes sampled); then
 * what the machine is doing when that is a cause (more tasks wanting a
 * CPU than it has, time stolen by the host). From the session's figures
 * so far and the guard's last half second. SAMPLER_REASON_MAX bytes do. */
#define SAMPLER_REASON_MAX 192
void sampler_missed_reason(struct engine_stats *st, double rate_hz, uint32_t procs, char *buf,
			   size_t len);

/* Parse a rate: "1000", "10k", "2.5k", "1m", "max" (0 = max). */
bool sampler_parse_rate(const char *text, double *hz);

#endif
