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
	readall_image(data, size, READ_TASKS);
	return 0;
}
