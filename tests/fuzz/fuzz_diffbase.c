/* Baselines of a differential flame graph (`--diff-base`): folded stacks
 * from any tool, `frame;frame COUNT` per line. (A recording given as a
 * baseline is the recording target's input.) *
 * parsers: src/export/diffbase.c
 */
#include "config.h"

#include <unistd.h>

#include "diffbase.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file(data, size, path, sizeof path);
	struct diff_base b;
	struct tt_error err;
	if (diffbase_load(&b, path, &err) == TT_OK) {
		fuzz_check(diffbase_samples(&b, DIFFBASE_ROOT) == b.total);
		diffbase_free(&b);
	}
	close(fd);
	return 0;
}
