/* The live profile behind the TUI and batch mode: sample records are added
 * in O(1) each (a counter per thread, stack and state class); tables of
 * functions or lines, per-thread figures and callers/callees are derived
 * from those counters when a screen is drawn, never per sample. Counts are
 * kept for the whole session and for the last completed refresh window. */
#ifndef TT_AGGREGATE_H
#define TT_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idindex.h"
#include "occupants.h"
#include "procset.h"
#include "ring.h"
#include "walk/stackwalk.h"

enum agg_mode {
	AGG_WALL,       /* every sample */
	AGG_CPU,        /* samples of threads on a CPU */
	AGG_GIL,        /* samples of threads holding the GIL */
	AGG_EXCEPTION,  /* samples of threads with an exception propagating */
	AGG_MODE_COUNT
};

enum agg_scope { AGG_WINDOW, AGG_SESSION };

enum agg_sort {
	SORT_OWN,       /* own samples (= own %, own time) */
	SORT_TOTAL,     /* total samples (= total %, total time) */
	SORT_NAME,      /* function name */
	SORT_FILE,      /* file, then line */
	SORT_COUNT
};

/* Counts for one (thread, stack, state class): 32 bytes, as a long
 * session keeps one for every distinct stack its exited processes ran. */
struct agg_entry {
	uint64_t session;
	uint32_t window, current;   /* window = last completed one; a window's
				       samples fit in 32 bits (saturating) */
	uint32_t stack_id;
	uint16_t slot;
	uint16_t proc;          /* process index (a query may show one process) */
	uint16_t tgen, pgen;    /* generations of its thread slot and process index
				   (occupants.h): older ones are about a thread or
				   process that left, counted as exited until folded */
	uint8_t cls;            /* AGG_CLS_* */
};

enum {
	AGG_CLS_CPU = 1, AGG_CLS_GIL = 2, AGG_CLS_EXC = 4,
};

/* One thread's figures (index = thread slot). */
struct agg_thread {
	bool seen;
	uint64_t samples[2];                 /* [AGG_WINDOW], [AGG_SESSION] */
	uint64_t gil[2], gil_wait[2], on_cpu[2], idle[2], gc[2];
	uint64_t cur_samples, cur_gil, cur_gil_wait, cur_on_cpu, cur_idle, cur_gc;
	uint32_t last_stack;
	uint8_t last_state;
	uint64_t last_time_ns;
	uint64_t born_ns;       /* which occupant of the slot this is (thread_slot.born_ns) */
	uint32_t proc;          /* its process (slots go from one process's threads to another's) */
};

/* Counts of threads that left the target long enough ago are folded into
 * one bucket under this slot: still in every total and table, no longer
 * one row each, so memory follows the live threads. */
#define AGG_EXITED_SLOT OCCUPANTS_EXITED
/* Entries of processes whose index went to a new process (procset.h) are
 * folded under this process index (and AGG_EXITED_SLOT). */
#define AGG_EXITED_PROC OCCUPANTS_EXITED
/* A gone thread is folded after this long (or sooner when many wait). */
#define AGG_FOLD_NS (10ull * 1000000000ull)

/* A function: code objects with the same name and file are one function. */
struct agg_func {
	const char *qualname;    /* owned by the process set's intern */
	const char *filename;
	int firstlineno;
	uint8_t kind;            /* enum func_kind */
};

struct agg_row {
	uint32_t func;           /* index into aggregate.funcs */
	int32_t line;            /* -1 when aggregating by function */
	uint64_t own, total;
	uint64_t stamp;          /* for counting recursion once per stack */
};

struct agg_query {
	enum agg_mode mode;
	enum agg_scope scope;
	bool by_line;
	int32_t slot;            /* -1: every thread */
	int32_t proc;            /* with slot -1: -1 every process, else a process index */
	const char *filter;      /* case-insensitive substring of function or file, or NULL */
	enum agg_sort sort;
	bool ascending;
};

struct agg_table {
	struct agg_row *rows;
	uint32_t nrows, cap;
	uint64_t denominator;    /* samples in scope passing thread and mode */
	struct idindex index;    /* (function, line) -> row + 1, while building */
};

/* Callers and callees of one function. */
struct agg_link {
	uint32_t func;           /* UINT32_MAX: "(self)" for callees, "(root)" for callers */
	uint64_t weight;
};

struct agg_links {
	struct agg_link *callers, *callees;
	uint32_t ncallers, ncallees;
	uint32_t callers_cap, callees_cap;
	uint64_t total;          /* samples with the function on the stack */
};

/* Interned functions -> function index + 1. */
struct agg_codemap {
	uint32_t *of_interned;
	uint32_t n;
};

struct aggregate {
	const struct procset *procs;
	/* The entries, dense (a sweep folds and compacts them in place), and
	 * their index (id = position + 1). */
	struct agg_entry *entries;
	uint32_t count, cap;
	struct idindex entry_index;
	struct agg_thread *threads;
	uint32_t nthreads;
	struct agg_thread exited;            /* threads folded away, together */
	uint64_t exited_threads;             /* how many */
	struct agg_thread *exited_procs;     /* the same per process index */
	uint32_t nexited_procs;
	struct occupants procs_at, slots_at; /* whom each process index and thread slot
						counts are about (a sweep folds the rest) */
	uint64_t exited_procs_folded;        /* processes folded under AGG_EXITED_PROC */
	uint64_t samples[2], cur_samples;    /* thread samples added */
	uint64_t window_ns, window_start_ns; /* last completed window's length, current start */
	uint64_t reset_at_ns;                /* sampler time of the last reset: older records
						are not counted */
	uint64_t records;
	/* functions, shared by every process: (qualname, filename) is one */
	struct agg_codemap funcmap;          /* interned function -> funcs index + 1 */
	struct agg_func *funcs;
	uint32_t nfuncs, funcs_cap;
	struct idindex func_index;           /* (qualname, filename) -> funcs index + 1 */
	uint64_t stamp;
};

int agg_init(struct aggregate *a, const struct procset *procs, uint64_t now_ns);
void agg_free(struct aggregate *a);
/* Forget every count (the `r` key), and records taken before now that are
 * still on their way. */
void agg_reset(struct aggregate *a, uint64_t now_ns);

/* O(1) per record. Returns false when memory is short (the record is lost). */
bool agg_add(struct aggregate *a, const struct sample_record *rec);
/* The same for a batch drained from the sampler (a sampler_take_fn:
 * ctx is the aggregate). */
void agg_take(void *ctx, const struct sample_record *rec, size_t n);

/* Close the current window: its counts become the "window" figures; threads
 * gone for AGG_FOLD_NS are folded into the exited bucket. */
void agg_roll_window(struct aggregate *a, uint64_t now_ns);

/* Bytes held by the entries and their index (what grows with a long
 * session's distinct stacks). */
size_t agg_entries_bytes(const struct aggregate *a);

/* Derive the function (or line) table for a query into t (reused between
 * calls; free with agg_table_free). */
bool agg_build_table(struct aggregate *a, const struct agg_query *q, struct agg_table *t);
void agg_table_free(struct agg_table *t);

/* The same for one line of it (line >= 0): stacks whose frame in func is
 * at that line; callees are what that line calls. */
bool agg_build_line_links(struct aggregate *a, const struct agg_query *q, uint32_t func,
			  int32_t line, struct agg_links *out);
void agg_links_free(struct agg_links *l);

/* Does an entry count under the query (thread, mode, scope, and whatever
 * else the query restricts)? Its weight goes to *w. The one place the
 * query's restrictions on entries are decided: tables, links and the call
 * tree all ask here. */
bool agg_entry_weight(const struct aggregate *a, const struct agg_query *q,
		      const struct agg_entry *e, uint64_t *w);

/* Does function `func` match a filter (case-insensitive substring of its
 * name or file; NULL or "" matches everything)? */
bool agg_func_matches(const struct aggregate *a, uint32_t func, const char *filter);

/* Where a function is, for a table: "file:line" (line, else its first
 * line when < 0); native code's library alone. Raw target text: sanitize
 * before display. */
void agg_func_where(const struct agg_func *f, int32_t line, char *buf, size_t len);
/* A function at a line: "qualname:line"; native code's name alone. */
void agg_func_at_line(const struct agg_func *f, int32_t line, char *buf, size_t len);

/* The function of a stack's innermost frame, or UINT32_MAX for none. */
uint32_t agg_innermost_func(struct aggregate *a, uint32_t stack_id, int32_t *line);
/* The innermost Python function (native frames above it passed over): where
 * a thread is in its program. */
uint32_t agg_innermost_python_func(struct aggregate *a, uint32_t stack_id, int32_t *line);
/* Where every process's stack, frame and function IDs resolve. */
const struct intern *agg_intern(const struct aggregate *a);
/* Process proc's share of the exited bucket (NULL if none of its threads was folded). */
const struct agg_thread *agg_exited_of(const struct aggregate *a, uint32_t proc);

/* A mode's name as the command line and the views say it ("wall", "cpu",
 * "gil", "exception"), and the mode of a name (false: none). */
const char *agg_mode_name(enum agg_mode mode);
bool agg_mode_parse(const char *name, enum agg_mode *mode);
/* The same for a table's sort ("own", "total", "name", "file"). */
const char *agg_sort_name(enum agg_sort sort);
bool agg_sort_parse(const char *name, enum agg_sort *sort);

/* Does a state byte count in a mode? */
bool agg_mode_matches(enum agg_mode mode, uint8_t cls);

/* All counted (thread, stack) weights of a scope, for export. */
struct profile;
bool agg_to_profile(const struct aggregate *a, enum agg_scope scope, enum agg_mode mode,
		    struct profile *p);

#endif
