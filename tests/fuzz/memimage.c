#include "config.h"

#include <string.h>

#include "memimage.h"

static bool
take(const uint8_t **p, const uint8_t *end, void *out, size_t n)
{
	if ((size_t)(end - *p) < n)
		return false;
	memcpy(out, *p, n);
	*p += n;
	return true;
}

bool
memimage_load(struct memimage *m, const uint8_t *data, size_t size)
{
	memset(m, 0, sizeof *m);
	const uint8_t *p = data, *end = data + size;
	char magic[8];
	uint32_t n;
	if (!take(&p, end, magic, 8) || memcmp(magic, MEMIMAGE_MAGIC, 8) != 0 ||
	    !take(&p, end, &m->runtime, 8) || !take(&p, end, &m->version_hex, 8) ||
	    !take(&p, end, &m->asyncio_table, 8) || !take(&p, end, &n, 4) ||
	    n > MEMIMAGE_MAX_REGIONS)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr;
		uint32_t len;
		if (!take(&p, end, &addr, 8) || !take(&p, end, &len, 4) || (size_t)(end - p) < len) {
			memimage_free(m);
			return false;
		}
		memcpy(fakemem_add(&m->mem, addr, len), p, len);
		p += len;
	}
	return true;
}

tt_status
memimage_attach(struct memimage *m, struct target *t, struct tt_error *err)
{
	if (m->version_hex)
		return target_attach_memory_compiled(t, fakemem_backend(&m->mem), m->runtime,
						     m->version_hex, err);
	return target_attach_memory(t, fakemem_backend(&m->mem), m->runtime, err);
}

void
memimage_free(struct memimage *m)
{
	fakemem_free(&m->mem);
}
