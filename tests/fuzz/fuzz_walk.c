/* Both walkers (the plain one and the sampler's caching one) and the threads'
 * names, on memory images of real interpreters (3.11 to 3.15) that the
 * fuzzer mutates.
 *
 * parsers: src/target/walk/plainwalk.c src/target/walk/stackwalk.c src/target/walk/framewalk.c src/target/walk/threadlist.c src/target/walk/threadnames.c src/target/python/codecache.c src/target/python/pylayout.c src/target/python/pystr.c src/target/target.c
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
		readall(&t, &(struct readall_at){m.asyncio_table, m.jit_descriptor}, READ_WALK);
	memimage_free(&m);
	return 0;
}
