/* The JIT's list of in-memory ELF objects (gdb's JIT interface: 3.15's JIT
 * lists its executors' code there), read from the target's memory as the
 * native unwinder names JIT code, on memory images of a real 3.15 with the
 * JIT on.
 *
 * parsers: src/target/native/jitreg.c src/target/native/perfmap.c
 */
#include "config.h"

#include "fuzz.h"
#include "memimage.h"
#include "readall.h"

MEMIMAGE_CUSTOM_MUTATOR

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	readall_image(data, size, READ_JIT);
	return 0;
}
