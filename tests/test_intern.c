/* Interning: the same content always gets the same ID and new content a
 * new one, through every growth of the indexes (idindex.h); and the index
 * itself finds every id of a table whose hashes all collide. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>

#include "idindex.h"
#include "intern.h"
#include "tap.h"

#define STACKS 100000u

/* Every record hashes alike: probing alone must tell them apart. */
static uint32_t
same_hash(const void *ctx, uint32_t id)
{
	(void)ctx;
	(void)id;
	return 7;
}

static void
index_with_collisions(void)
{
	struct idindex ix = {0};
	bool ok = true;
	for (uint32_t id = 1; id <= 2000 && ok; id++) {
		ok = idindex_reserve(&ix, 1, id, 16, same_hash, NULL);
		uint32_t i = idindex_start(&ix, 7);
		while (ok && ix.slots[i])
			i = idindex_next(&ix, i);
		if (ok)
			ix.slots[i] = id;
	}
	uint32_t found = 0;
	for (uint32_t want = 1; want <= 2000; want++) {
		for (uint32_t i = idindex_start(&ix, 7); ix.slots[i]; i = idindex_next(&ix, i)) {
			if (ix.slots[i] == want) {
				found++;
				break;
			}
		}
	}
	tap_ok(ok && found == 2000, "2,000 ids of one hash: each found (%u)", found);
	tap_ok(ix.nslots >= 4000 && (ix.nslots & (ix.nslots - 1)) == 0,
	       "the index at most half full, a power of two (%u slots)", ix.nslots);
	idindex_clear(&ix);
	uint32_t used = 0;
	for (uint32_t i = 0; i < ix.nslots; i++)
		used += ix.slots[i] != 0;
	tap_ok(used == 0, "cleared: no id left (%u)", used);
	idindex_free(&ix);
}

int
main(void)
{
	index_with_collisions();

	struct intern in;
	if (intern_init(&in) != 0) {
		tap_ok(false, "intern_init");
		return tap_done();
	}
	uint32_t f1 = intern_func(&in, "handler", "/srv/app.py", 10, FUNC_PYTHON);
	uint32_t f2 = intern_func(&in, "handler", "/srv/app.py", 12, FUNC_PYTHON);
	uint32_t f3 = intern_func(&in, "handler", "/srv/app.py", 10, FUNC_PYTHON);
	tap_ok(f1 && f2 && f1 != f2 && f3 == f1,
	       "a function is its name, file and first line (%u %u %u)", f1, f2, f3);

	/* A chain of STACKS stacks, each one frame deeper, over 1,000 lines of
	 * 100 functions: the three indexes grow many times over. */
	static uint32_t ids[STACKS];
	uint32_t parent = 0, distinct = 1;
	for (uint32_t i = 0; i < STACKS; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%u", i % 100);
		uint32_t fn = intern_func(&in, name, "/srv/app.py", 1, FUNC_PYTHON);
		uint32_t fr = intern_frame(&in, fn, (int32_t)(i % 1000));
		ids[i] = parent = intern_stack(&in, parent, fr);
		distinct &= parent == i + 1;
	}
	tap_ok(distinct, "%u new stacks: IDs 1 to %u in order", STACKS, STACKS);
	parent = 0;
	uint32_t same = 0;
	for (uint32_t i = 0; i < STACKS; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%u", i % 100);
		uint32_t fn = intern_func(&in, name, "/srv/app.py", 1, FUNC_PYTHON);
		parent = intern_stack(&in, parent, intern_frame(&in, fn, (int32_t)(i % 1000)));
		same += parent == ids[i];
	}
	tap_ok(same == STACKS && appendlog_count(in.stacks) == STACKS + 1 &&
		       appendlog_count(in.frames) == 1001 && appendlog_count(in.funcs) == 103,
	       "again: the same %u IDs, nothing new (%u stacks, %u frames, %u functions)", same,
	       appendlog_count(in.stacks) - 1, appendlog_count(in.frames) - 1,
	       appendlog_count(in.funcs) - 1);
	tap_ok(intern_stack(&in, 0, 0) == 0, "a stack of no frame: 0");
	intern_free(&in);
	return tap_done();
}
