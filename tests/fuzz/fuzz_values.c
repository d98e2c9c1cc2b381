/* Every frame's locals and the repr() of their values (dump --locals), on
 * memory images of real interpreters with locals of every kind.
 *
 * parsers: src/target/python/pyvalue.c src/target/python/pystr.c src/target/python/pyint.c src/target/python/codecache.c
 */
#include "config.h"

#include "fuzz.h"
#include "memimage.h"
#include "readall.h"

MEMIMAGE_CUSTOM_MUTATOR

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	readall_image(data, size, READ_VALUES);
	return 0;
}
