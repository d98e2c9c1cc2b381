/* Names of code no file holds: a runtime's perf map text
 * (/tmp/perf-PID.map) and the in-memory ELF objects a JIT lists for
 * debuggers. Input: a perf map, or (starting with ELF's magic) an object. *
 * parsers: src/target/native/perfmap.c src/target/native/jitreg.c
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "native/jitreg.h"
#include "native/perfmap.h"

static void
look_up_all(struct perfmap *m)
{
	for (uint32_t i = 0; i < m->n && i < 64; i++) {
		uint64_t start;
		const char *name = perfmap_lookup(m, m->v[i].start, &start);
		fuzz_check(name != NULL);
		fuzz_check(strlen(name) <= PERFMAP_NAME_MAX);
		perfmap_lookup(m, m->v[i].start + m->v[i].size - 1, NULL);
	}
	perfmap_lookup(m, 0, NULL);
	perfmap_lookup(m, UINT64_MAX, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap m;
	perfmap_init(&m);
	if (size >= 4 && memcmp(data, "\177ELF", 4) == 0) {
		/* the reader copies an object before parsing it: alignment is malloc's */
		void *object = malloc(size);
		if (!object)
			abort();
		memcpy(object, data, size);
		jitreg_parse_object(object, size, &m);
		free(object);
	} else {
		/* a map read as it grows: in two parts, cut in the middle */
		size_t used = perfmap_parse(&m, (const char *)data, size / 2);
		fuzz_check(used <= size / 2);
		used += perfmap_parse(&m, (const char *)data + used, size - used);
		fuzz_check(used <= size);
	}
	look_up_all(&m);
	perfmap_free(&m);
	return 0;
}
