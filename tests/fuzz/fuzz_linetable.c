/* A code object's location table (co_linetable, 3.11+) as the walker
 * decodes it to a line: the first 12 bytes are the first line number and
 * the instruction asked about, the rest the table. *
 * parsers: src/target/python/linetable.c
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "python/linetable.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 12)
		return 0;
	int32_t first;
	int64_t addrq;
	memcpy(&first, data, 4);
	memcpy(&addrq, data + 4, 8);
	const uint8_t *table = data + 12;
	size_t len = size - 12;
	linetable_addr2line(table, len, first, addrq);
	/* each instruction in turn, as the walker asks for many */
	for (int64_t i = -1; i < 64 && (size_t)i < 2 * len; i++)
		linetable_addr2line(table, len, first, i);
	return 0;
}
