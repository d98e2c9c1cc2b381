#include "config.h"

#include <stdlib.h>
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
	if (!take(&p, end, magic, 8))
		return false;
	unsigned version = memcmp(magic, MEMIMAGE_MAGIC, 8) == 0      ? 3
			   : memcmp(magic, MEMIMAGE_MAGIC_V2, 8) == 0 ? 2
			   : memcmp(magic, MEMIMAGE_MAGIC_V1, 8) == 0 ? 1
								       : 0;
	if (!version || !take(&p, end, &m->runtime, 8) || !take(&p, end, &m->version_hex, 8) ||
	    !take(&p, end, &m->asyncio_table, 8) ||
	    (version >= 2 && !take(&p, end, &m->jit_descriptor, 8)) ||
	    (version >= 3 && (!take(&p, end, m->greenlet_vtables, 24) ||
			      !take(&p, end, m->greenlet_version, MEMIMAGE_VERSION_LEN))) ||
	    !take(&p, end, &n, 4) || n > MEMIMAGE_MAX_REGIONS)
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
	uint32_t np;
	if (version < 3 || !take(&p, end, &np, 4))
		return true;
	if (np > MEMIMAGE_MAX_REGIONS || !(m->patches = calloc(np ? np : 1, sizeof *m->patches))) {
		memimage_free(m);
		return false;
	}
	for (uint32_t i = 0; i < np; i++) {
		struct memimage_patch *q = &m->patches[i];
		if (!take(&p, end, &q->addr, 8) || !take(&p, end, &q->len, 4) ||
		    (size_t)(end - p) < q->len) {
			memimage_free(m);
			return false;
		}
		q->bytes = p;
		p += q->len;
		m->npatches++;
	}
	return true;
}

void
memimage_apply_patches(struct memimage *m)
{
	for (uint32_t i = 0; i < m->npatches; i++) {
		const struct memimage_patch *q = &m->patches[i];
		for (size_t k = 0; k < m->mem.nregions; k++) {
			const struct fakemem_region *r = &m->mem.regions[k];
			uint64_t lo = q->addr > r->addr ? q->addr : r->addr;
			uint64_t qend = q->addr + q->len, rend = r->addr + r->len;
			if (qend < q->addr || rend < r->addr)
				continue;    /* wraps: nothing a read reaches */
			uint64_t hi = qend < rend ? qend : rend;
			if (lo < hi)
				memcpy(r->data + (lo - r->addr), q->bytes + (lo - q->addr), hi - lo);
		}
	}
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
	free(m->patches);
	m->patches = NULL;
	m->npatches = 0;
}

/* Where each region's bytes are in an image: its address and length, and
 * their offset in the input. */
struct region_at {
	uint64_t addr;
	uint32_t len;
	size_t at;
};

static size_t
regions_of(const uint8_t *data, size_t size, struct region_at *out, size_t max)
{
	/* the magic and three addresses, a fourth in version 2, greenlet's
	 * fields in version 3, the count */
	size_t header = 8 + 3 * 8 + 4;
	if (size >= 8 && memcmp(data, MEMIMAGE_MAGIC, 8) == 0)
		header += 8 + 24 + MEMIMAGE_VERSION_LEN;
	else if (size >= 8 && memcmp(data, MEMIMAGE_MAGIC_V2, 8) == 0)
		header += 8;
	else if (size < 8 || memcmp(data, MEMIMAGE_MAGIC_V1, 8) != 0)
		return 0;
	if (size < header)
		return 0;
	uint32_t n;
	memcpy(&n, data + header - 4, 4);
	size_t p = header, k = 0;
	/* the regions, then (version 3) the patches, laid out alike */
	for (int part = 0; part < 2; part++) {
		if (part == 1) {
			if (memcmp(data, MEMIMAGE_MAGIC, 8) != 0 || size - p < 4)
				break;
			memcpy(&n, data + p, 4);
			p += 4;
		}
		for (uint32_t i = 0; i < n && k < max; i++) {
			if (size - p < 12)
				return k;
			memcpy(&out[k].addr, data + p, 8);
			memcpy(&out[k].len, data + p + 8, 4);
			p += 12;
			if (size - p < out[k].len)
				return k;
			out[k].at = p;
			p += out[k].len;
			if (out[k].len)
				k++;
		}
	}
	return k;
}

static uint64_t
next_rand(uint64_t *s)
{
	/* splitmix64: reproducible from libFuzzer's seed */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

size_t
memimage_mutate(uint8_t *data, size_t size, size_t max, unsigned seed,
		size_t (*mutate)(uint8_t *buf, size_t size, size_t max))
{
	static struct region_at regions[2 * MEMIMAGE_MAX_REGIONS];
	size_t n = regions_of(data, size, regions, 2 * MEMIMAGE_MAX_REGIONS);
	uint64_t s = seed;
	unsigned how = (unsigned)(next_rand(&s) % 10);
	if (n == 0 || how == 0)
		return mutate(data, size, max);
	const struct region_at *r = &regions[next_rand(&s) % n];
	if (how <= 4) {
		/* a few bytes of one region, as libFuzzer would mutate them */
		size_t off = (size_t)(next_rand(&s) % r->len);
		size_t len = r->len - off < 16 ? r->len - off : 16;
		uint8_t piece[16];
		memcpy(piece, data + r->at + off, len);
		size_t got = mutate(piece, len, len);
		memcpy(data + r->at + off, piece, got < len ? got : len);
		return size;
	}
	if (r->len < 8)
		return size;
	size_t word = r->at + 8 * (size_t)(next_rand(&s) % (r->len / 8));
	uint64_t v;
	if (how <= 8) {
		/* an address inside some region: a pointer that leads elsewhere */
		const struct region_at *to = &regions[next_rand(&s) % n];
		v = to->addr + 8 * (next_rand(&s) % (to->len / 8 + 1));
	} else {
		static const uint64_t small[] = {0, 1, 2, 0xff, 0xffff, 0x7fffffff, 0xffffffff,
						 UINT64_MAX, 0x8000000000000000ull};
		v = small[next_rand(&s) % (sizeof small / sizeof small[0])];
	}
	memcpy(data + word, &v, 8);
	return size;
}
