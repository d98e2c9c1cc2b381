/* The samples in the order they were taken, per thread: what a timeline
 * view (the Firefox Profiler's) needs and a profile sums away. Filled by
 * the sample log (record, replay) only when an output asks for it. Each
 * run of identical samples is one moment (24 bytes); past TIMELINE_MAX
 * moments the rest are counted, not kept. */
#ifndef TT_TIMELINE_H
#define TT_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "procset.h"
#include "ring.h"

#define TIMELINE_MAX (1u << 22)

struct timeline_moment {
	uint64_t time_ns;        /* since the run's start */
	uint32_t stack;          /* the sample log's (mirror's) stack id */
	uint32_t track;
	uint8_t weight;
};

/* One thread of one process, as long as it had its slot. */
struct timeline_track {
	uint32_t proc, slot;     /* where the mirror held it */
	uint64_t proc_start, born_ns;   /* whom */
	bool earlier;            /* samples taken before the slot's occupant was born:
				    its previous thread's (exited), known by process alone */
	int32_t pid;
	uint64_t tid;
	bool main;               /* the interpreter's main thread (TT_THREAD_MAIN seen) */
	char *name;              /* the thread's name, the process's command line */
	char *cmdline;
};

struct timeline {
	struct timeline_moment *moments;
	uint32_t count, cap;
	struct timeline_track *tracks;
	uint32_t ntracks, tracks_cap;
	uint32_t *slot_track;    /* slot -> track + 1 of its occupant (a cache) */
	uint32_t nslots;
	uint64_t dropped;        /* samples not kept (TIMELINE_MAX, or memory) */
};

void timeline_init(struct timeline *t);
void timeline_free(struct timeline *t);
/* A sample (already counted by the profile's mode) of mirror's thread. */
void timeline_add(struct timeline *t, const struct procset *mirror, const struct sample_record *r);
/* Tracks' names and command lines as the mirror has them now, for those
 * still there. */
void timeline_settle(struct timeline *t, const struct procset *mirror);

#endif
