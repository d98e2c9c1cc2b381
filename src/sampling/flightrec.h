/* A flight recorder: the last few seconds of sample records, kept in
 * memory so that when something goes wrong the samples that led to it can
 * be written out (as a recording `replay` reads). Records older than the
 * window before the newest are dropped; so are the oldest when the record
 * cap is reached (a big, busy tree then keeps a shorter window). Marks of
 * the sampler's pass count give the window's passes, so a recording of it
 * has the period it was sampled at. Consumer thread only; no I/O. */
#ifndef TT_FLIGHTREC_H
#define TT_FLIGHTREC_H

#include <stdbool.h>
#include <stdint.h>

#include "ring.h"

#define FLIGHTREC_MARKS 4096

struct flightrec_mark {
	uint64_t time_ns;     /* the sampler's clock */
	uint64_t passes;      /* sampling passes made by then */
};

struct flightrec {
	uint64_t window_ns;
	uint32_t max_records;
	struct sample_record *buf;   /* circular: len records from head */
	uint32_t cap, head, len;
	struct flightrec_mark marks[FLIGHTREC_MARKS];   /* circular likewise */
	uint32_t mhead, mlen;
	uint64_t dropped;            /* records dropped for the cap or short memory */
};

void flightrec_init(struct flightrec *f, uint64_t window_ns, uint32_t max_records);
void flightrec_free(struct flightrec *f);

/* Keep n records (in the order the sampler made them). false when memory
 * was short for some (the oldest make room for them then). */
bool flightrec_add(struct flightrec *f, const struct sample_record *r, size_t n);

/* The sampler had made passes passes by time_ns (after each drain). */
void flightrec_mark(struct flightrec *f, uint64_t time_ns, uint64_t passes);

uint32_t flightrec_count(const struct flightrec *f);
/* Record i, oldest first. */
const struct sample_record *flightrec_at(const struct flightrec *f, uint32_t i);

/* The span the window covers, from its oldest mark to its newest, and the
 * passes made in it: false when fewer than two marks are kept. */
bool flightrec_span(const struct flightrec *f, uint64_t *from_ns, uint64_t *to_ns,
		    uint64_t *passes);

#endif
