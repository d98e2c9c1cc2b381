/* Memory that other threads may still be reading when it is replaced (a
 * process's entry, a thread's name): queued when replaced and freed only
 * once a grace period has passed, oldest first. One thread owns a queue. */
#ifndef TT_GRACEQ_H
#define TT_GRACEQ_H

#include <stdbool.h>
#include <stdint.h>

struct graceq_item {
	void *p;
	uint64_t at;             /* when it was replaced */
};

struct graceq {
	struct graceq_item *items;   /* a ring: n items from head */
	uint32_t head, n, cap;
};

/* Room for one more item, so that the next graceq_push cannot fail; false
 * when memory is short. */
bool graceq_room(struct graceq *g);
/* Queue p, replaced at `now`; false when memory is short (p not queued). */
bool graceq_push(struct graceq *g, void *p, uint64_t now);
/* Free, with free_fn, the items replaced at least `grace` before now. */
void graceq_reap(struct graceq *g, uint64_t now, uint64_t grace, void (*free_fn)(void *));
/* Free every item and the queue. */
void graceq_free(struct graceq *g, void (*free_fn)(void *));

#endif
