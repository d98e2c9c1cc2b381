#include "config.h"

#include <stdlib.h>

#include "baseline.h"
#include "order.h"

struct base_row {
	uint32_t func;
	int32_t line;
	double pct;
};

struct baseline {
	enum agg_mode mode;
	int32_t slot, proc;
	uint64_t wall_s;
	struct base_row *rows[2];   /* by function, by line; sorted by (func, line) */
	uint32_t n[2];
};

static int
cmp_rows(const void *a, const void *b)
{
	const struct base_row *x = a, *y = b;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* One granularity's table, copied as shares. */
static bool
take_one(struct baseline *b, struct aggregate *a, const struct agg_query *q, bool by_line)
{
	struct agg_query all = *q;
	all.by_line = by_line;
	all.filter = NULL;
	struct agg_table t = {0};
	if (!agg_build_table(a, &all, &t))
		return false;
	int k = by_line;
	b->rows[k] = malloc((t.nrows + 1) * sizeof *b->rows[k]);
	if (!b->rows[k]) {
		agg_table_free(&t);
		return false;
	}
	for (uint32_t i = 0; i < t.nrows; i++)
		b->rows[k][i] = (struct base_row){
			t.rows[i].func, t.rows[i].line,
			t.denominator ? 100.0 * (double)t.rows[i].total / (double)t.denominator : 0};
	b->n[k] = t.nrows;
	order_sort(b->rows[k], b->n[k], sizeof *b->rows[k], cmp_rows);
	agg_table_free(&t);
	return true;
}

struct baseline *
baseline_take(struct aggregate *a, const struct agg_query *q, uint64_t wall_s)
{
	struct baseline *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->mode = q->mode;
	b->slot = q->slot;
	b->proc = q->proc;
	b->wall_s = wall_s;
	if (!take_one(b, a, q, false) || !take_one(b, a, q, true)) {
		baseline_free(b);
		return NULL;
	}
	return b;
}

void
baseline_free(struct baseline *b)
{
	if (!b)
		return;
	free(b->rows[0]);
	free(b->rows[1]);
	free(b);
}

bool
baseline_applies(const struct baseline *b, const struct agg_query *q)
{
	return b && b->mode == q->mode && b->slot == q->slot && b->proc == q->proc;
}

uint64_t
baseline_when(const struct baseline *b)
{
	return b->wall_s;
}

bool
baseline_share(const struct baseline *b, bool by_line, uint32_t func, int32_t line, double *pct)
{
	int k = by_line;
	struct base_row key = {func, by_line ? line : -1, 0};
	const struct base_row *r = bsearch(&key, b->rows[k], b->n[k], sizeof key, cmp_rows);
	if (!r)
		return false;
	*pct = r->pct;
	return true;
}
