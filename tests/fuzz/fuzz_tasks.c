/* asyncio tasks (3.14+: the task lists, coroutine chains, awaiter sets),
 * on memory images of real event loops.
 *
 * parsers: src/target/async/asynctasks.c src/target/python/codecache.c src/target/python/pystr.c
 */
#include "config.h"

#include "fuzz.h"
#include "memimage.h"
#include "readall.h"

MEMIMAGE_CUSTOM_MUTATOR

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memimage m;
	if (!memimage_load(&m, data, size))
		return 0;
	struct target t;
	struct tt_error err;
	if (memimage_attach(&m, &t, &err) == TT_OK)
		readall(&t, &(struct readall_at){m.asyncio_table, m.jit_descriptor}, READ_TASKS);
	memimage_free(&m);
	return 0;
}
