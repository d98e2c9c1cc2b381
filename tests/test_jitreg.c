/* Unit tests for jitreg: gdb's JIT interface read from a fake target
 * memory: objects' function symbols named; a list that loops, a bad
 * version, unreadable and malformed objects: no crash, no hang. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakemem.h"
#include "native/jitreg.h"
#include "tap.h"

/* An ELF object to list: this test's own file (its .symtab has main). */
static uint8_t *
own_file(size_t *len)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	if (!f)
		return NULL;
	uint8_t *buf = malloc(JITREG_OBJECT_MAX);
	*len = buf ? fread(buf, 1, JITREG_OBJECT_MAX, f) : 0;
	fclose(f);
	return buf;
}

static void
put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof v);
}

/* A descriptor at 0x1000 and entries at 0x2000 + 0x100 * i, the i-th
 * naming the object at objects[i] (0: none) and linking to next[i]. */
static void
list(struct fakemem *m, uint32_t version, const uint64_t *objects, const uint64_t *sizes,
     const uint64_t *next, int n)
{
	uint8_t *d = fakemem_add(m, 0x1000, 24);
	memcpy(d, &version, 4);
	put64(d + 16, n ? 0x2000 : 0);
	for (int i = 0; i < n; i++) {
		uint8_t *e = fakemem_add(m, 0x2000 + 0x100 * (uint64_t)i, 32);
		put64(e, next[i]);
		put64(e + 16, objects[i]);
		put64(e + 24, sizes[i]);
	}
}

int
main(void)
{
	size_t len = 0;
	uint8_t *object = own_file(&len);
	tap_ok(object && len > 64 && len < JITREG_OBJECT_MAX, "this test's own file to list: %zu bytes",
	       len);
	if (!object)
		return tap_done();

	struct perfmap names;
	perfmap_init(&names);
	bool parsed = jitreg_parse_object(object, len, &names);
	tap_ok(parsed && names.n > 10, "an ELF object's function symbols: %u", names.n);
	bool has_main = false;
	for (uint32_t i = 0; i < names.n && !has_main; i++)
		has_main = strcmp(names.names + names.v[i].name, "main") == 0;
	tap_ok(has_main, "main among them");
	perfmap_free(&names);

	perfmap_init(&names);
	tap_ok(!jitreg_parse_object(object, 100, &names) && names.n == 0, "cut to 100 bytes: nothing");
	uint8_t noise[4096];
	for (size_t i = 0; i < sizeof noise; i++)
		noise[i] = (uint8_t)(i * 2654435761u >> 13);
	memcpy(noise, "\x7f" "ELF\x02\x01\x01", 7);
	tap_ok(!jitreg_parse_object(noise, sizeof noise, &names), "an ELF header then noise: nothing");
	perfmap_free(&names);

	/* Three entries, the last linking back to the first: each read once. */
	struct fakemem m = {0};
	uint64_t objects[3] = {0x100000, 0x300000, 0}, sizes[3] = {len, 0x10, 0},
		 next[3] = {0x2100, 0x2200, 0x2000};
	list(&m, 1, objects, sizes, next, 3);
	memcpy(fakemem_add(&m, 0x100000, len), object, len);
	memset(fakemem_add(&m, 0x300000, 0x10), 0xab, 0x10);
	struct remote r;
	remote_open_backend(&r, fakemem_backend(&m));
	perfmap_init(&names);
	tap_ok(jitreg_read(&r, 0x1000, &names), "a descriptor of version 1, a looping list: read");
	uint32_t per_object = 0;
	struct perfmap one;
	perfmap_init(&one);
	jitreg_parse_object(object, len, &one);
	per_object = one.n;
	perfmap_free(&one);
	tap_ok(names.n > 0 && names.n == per_object,
	       "the object's functions once, the loop left: %u (%u in the object)", names.n,
	       per_object);
	perfmap_free(&names);
	fakemem_free(&m);

	struct fakemem bad = {0};
	list(&bad, 2, objects, sizes, next, 1);
	struct remote rb;
	remote_open_backend(&rb, fakemem_backend(&bad));
	perfmap_init(&names);
	tap_ok(!jitreg_read(&rb, 0x1000, &names) && names.n == 0, "version 2: not read");
	tap_ok(!jitreg_read(&rb, 0x5000, &names) && !jitreg_read(&rb, 0, &names),
	       "an unreadable descriptor, none: not read");
	perfmap_free(&names);
	fakemem_free(&bad);
	free(object);
	return tap_done();
}
