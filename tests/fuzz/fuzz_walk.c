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
	readall_image(data, size, READ_WALK);
	return 0;
}
