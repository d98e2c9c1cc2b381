#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "flightrec.h"

void
flightrec_init(struct flightrec *f, uint64_t window_ns, uint32_t max_records)
{
	memset(f, 0, sizeof *f);
	f->window_ns = window_ns;
	f->max_records = max_records;
}

void
flightrec_free(struct flightrec *f)
{
	free(f->buf);
	f->buf = NULL;
	f->cap = f->head = f->len = 0;
}

/* Room for one more record: a bigger buffer (its records laid out from 0)
 * up to the cap, else the oldest dropped. false when there is none (no
 * buffer at all); *short_memory when a bigger one was wanted but not had. */
static bool
make_room(struct flightrec *f, bool *short_memory)
{
	if (f->len < f->cap)
		return true;
	if (f->cap < f->max_records) {
		uint64_t want = f->cap ? (uint64_t)f->cap * 2 : 1024;
		uint32_t n = want > f->max_records ? f->max_records : (uint32_t)want;
		struct sample_record *b = malloc((size_t)n * sizeof *b);
		if (b) {
			uint32_t first = f->cap - f->head;   /* from head to the buffer's end */
			if (first > f->len)
				first = f->len;
			if (f->len) {
				memcpy(b, f->buf + f->head, (size_t)first * sizeof *b);
				memcpy(b + first, f->buf, (size_t)(f->len - first) * sizeof *b);
			}
			free(f->buf);
			f->buf = b;
			f->cap = n;
			f->head = 0;
			return true;
		}
		*short_memory = true;
	}
	if (!f->len)
		return false;
	f->head = (f->head + 1) % f->cap;
	f->len--;
	f->dropped++;
	return true;
}

bool
flightrec_add(struct flightrec *f, const struct sample_record *r, size_t n)
{
	if (!f->window_ns || !f->max_records)
		return true;
	bool short_memory = false;
	for (size_t i = 0; i < n; i++) {
		if (!make_room(f, &short_memory)) {
			f->dropped++;
			continue;
		}
		f->buf[(f->head + f->len) % f->cap] = r[i];
		f->len++;
	}
	if (f->len) {
		uint64_t newest = f->buf[(f->head + f->len - 1) % f->cap].time_ns;
		while (f->len && f->buf[f->head].time_ns + f->window_ns < newest) {
			f->head = (f->head + 1) % f->cap;
			f->len--;
		}
	}
	return !short_memory;
}

void
flightrec_mark(struct flightrec *f, uint64_t time_ns, uint64_t passes)
{
	if (!f->window_ns)
		return;
	if (f->mlen == FLIGHTREC_MARKS) {
		f->mhead = (f->mhead + 1) % FLIGHTREC_MARKS;
		f->mlen--;
	}
	f->marks[(f->mhead + f->mlen) % FLIGHTREC_MARKS] =
		(struct flightrec_mark){.time_ns = time_ns, .passes = passes};
	f->mlen++;
	/* the oldest kept is the last at or before the window's start */
	while (f->mlen > 2 &&
	       f->marks[(f->mhead + 1) % FLIGHTREC_MARKS].time_ns + f->window_ns <= time_ns) {
		f->mhead = (f->mhead + 1) % FLIGHTREC_MARKS;
		f->mlen--;
	}
}

uint32_t
flightrec_count(const struct flightrec *f)
{
	return f->len;
}

const struct sample_record *
flightrec_at(const struct flightrec *f, uint32_t i)
{
	return &f->buf[(f->head + i) % f->cap];
}

bool
flightrec_span(const struct flightrec *f, uint64_t *from_ns, uint64_t *to_ns, uint64_t *passes)
{
	if (f->mlen < 2)
		return false;
	const struct flightrec_mark *a = &f->marks[f->mhead];
	const struct flightrec_mark *b = &f->marks[(f->mhead + f->mlen - 1) % FLIGHTREC_MARKS];
	*from_ns = a->time_ns;
	*to_ns = b->time_ns;
	*passes = b->passes - a->passes;
	return true;
}
