#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "graceq.h"

bool
graceq_room(struct graceq *g)
{
	if (g->n < g->cap)
		return true;
	uint32_t cap = g->cap ? g->cap * 2 : 16;
	struct graceq_item *r = malloc(cap * sizeof *r);
	if (!r)
		return false;
	for (uint32_t i = 0; i < g->n; i++)
		r[i] = g->items[(g->head + i) % g->cap];
	free(g->items);
	g->items = r;
	g->cap = cap;
	g->head = 0;
	return true;
}

bool
graceq_push(struct graceq *g, void *p, uint64_t now)
{
	if (!graceq_room(g))
		return false;
	g->items[(g->head + g->n++) % g->cap] = (struct graceq_item){.p = p, .at = now};
	return true;
}

void
graceq_reap(struct graceq *g, uint64_t now, uint64_t grace, void (*free_fn)(void *))
{
	while (g->n && now - g->items[g->head].at >= grace) {
		free_fn(g->items[g->head].p);
		g->head = (g->head + 1) % g->cap;
		g->n--;
	}
}

void
graceq_free(struct graceq *g, void (*free_fn)(void *))
{
	while (g->n) {
		free_fn(g->items[g->head].p);
		g->head = (g->head + 1) % g->cap;
		g->n--;
	}
	free(g->items);
	memset(g, 0, sizeof *g);
}
