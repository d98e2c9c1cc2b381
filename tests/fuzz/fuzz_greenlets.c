/* greenlets (greenlet's C++ objects found by their vtable words, their
 * parents, saved stacks and frames), on memory images of real gevent,
 * eventlet and plain greenlet processes.
 *
 * parsers: src/target/async/greenlets.c src/target/async/greenletlayout.c src/target/python/codecache.c src/target/python/pystr.c
 */
#include "config.h"

#include "fuzz.h"
#include "memimage.h"
#include "readall.h"

MEMIMAGE_CUSTOM_MUTATOR

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	readall_image(data, size, READ_GREENLETS);
	return 0;
}
