#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fakemem.h"
#include "grow.h"

uint8_t *
fakemem_add(struct fakemem *m, uint64_t addr, size_t len)
{
	if (m->nregions >= UINT32_MAX ||
	    !grow_array((void **)&m->regions, &m->cap, (uint32_t)m->nregions + 1, sizeof *m->regions))
		abort();
	uint8_t *data = calloc(1, len ? len : 1);
	if (!data)
		abort();
	if (m->nregions == 0)
		m->ascending = true;
	else if (addr <= m->regions[m->nregions - 1].addr)
		m->ascending = false;
	m->regions[m->nregions].addr = addr;
	m->regions[m->nregions].data = data;
	m->regions[m->nregions].len = len;
	m->nregions++;
	return data;
}

void
fakemem_copy(struct fakemem *m, const struct fakemem *src)
{
	for (size_t i = 0; i < src->nregions; i++)
		memcpy(fakemem_add(m, src->regions[i].addr, src->regions[i].len),
		       src->regions[i].data, src->regions[i].len);
}

void
fakemem_restore(struct fakemem *m, const struct fakemem *src)
{
	for (size_t i = 0; i < m->nregions; i++)
		memcpy(m->regions[i].data, src->regions[i].data, m->regions[i].len);
}

void
fakemem_free(struct fakemem *m)
{
	for (size_t i = 0; i < m->nregions; i++)
		free(m->regions[i].data);
	free(m->regions);
	m->regions = NULL;
	m->nregions = 0;
	m->cap = 0;
}

static int
copy_seg(struct fakemem *m, const struct remote_seg *s)
{
	size_t from = 0;
	if (m->ascending) {
		/* the last region starting at or below the address */
		size_t lo = 0, hi = m->nregions;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (m->regions[mid].addr <= s->addr)
				lo = mid;
			else
				hi = mid;
		}
		from = lo;
	}
	for (size_t i = from; i < m->nregions; i++) {
		uint64_t a = m->regions[i].addr, len = m->regions[i].len;
		if (m->ascending && a > s->addr)
			break;
		if (s->addr >= a && s->addr - a <= len && s->len <= len - (s->addr - a)) {
			memcpy(s->buf, m->regions[i].data + (s->addr - a), s->len);
			return 0;
		}
	}
	return -1;
}

static ssize_t
fake_readv(void *ctx, const struct remote_seg *segs, size_t nsegs)
{
	struct fakemem *m = ctx;
	m->reads++;
	ssize_t total = 0;
	for (size_t i = 0; i < nsegs; i++) {
		if (copy_seg(m, &segs[i]) != 0) {
			if (i == 0) {
				errno = EFAULT;
				return -1;
			}
			break;
		}
		total += (ssize_t)segs[i].len;
	}
	return total;
}

struct remote_backend
fakemem_backend(struct fakemem *m)
{
	return (struct remote_backend){.readv = fake_readv, .ctx = m};
}
