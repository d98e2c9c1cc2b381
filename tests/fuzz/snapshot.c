/* Write a memory image (memimage.h) of a live Python process: the bytes
 * that reading it as the memory fuzz targets do (readall.c) takes, with
 * the process stopped meanwhile so that they are of one moment. Seeds of
 * the memory fuzz targets come from it (make-seeds.py).
 *
 *     snapshot PID OUT [walk] [values] [tasks] [jit] [greenlets] [moving]
 *
 * (what to read: all by default). moving: the process runs on for 10 ms
 * between the sampler's first and second samples, and the image keeps
 * what the later reads found changed as patches (memimage.h).
 *
 * greenlets: the live scan of the process's memory finds its greenlets;
 * the image holds the pages they are on, not all it scanned. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "grow.h"
#include "mem/procmaps.h"
#include "memimage.h"
#include "order.h"
#include "readall.h"

struct piece {
	uint64_t addr;
	uint32_t len;
	uint8_t *bytes;
	bool later;     /* read after the process ran on (the second sample on) */
};

struct recorder {
	struct remote_backend inner;
	struct piece *v;
	uint32_t n, cap;
	bool later;
	pid_t pid;
};

static ssize_t
recording_readv(void *ctx, const struct remote_seg *segs, size_t nsegs)
{
	struct recorder *r = ctx;
	ssize_t got = r->inner.readv(r->inner.ctx, segs, nsegs);
	size_t left = got > 0 ? (size_t)got : 0;
	for (size_t i = 0; i < nsegs && segs[i].len <= left; i++) {
		left -= segs[i].len;
		if (segs[i].len == 0 || segs[i].len > UINT32_MAX)
			continue;
		if (!grow_array((void **)&r->v, &r->cap, r->n + 1, sizeof *r->v))
			abort();
		struct piece *p = &r->v[r->n++];
		p->addr = segs[i].addr;
		p->len = (uint32_t)segs[i].len;
		p->bytes = malloc(p->len);
		if (!p->bytes)
			abort();
		memcpy(p->bytes, segs[i].buf, p->len);
		p->later = r->later;
	}
	return got;
}

static int
by_addr(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

static void
put(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n) {
		perror("snapshot: write");
		exit(1);
	}
}

/* The pieces read, overlapping and touching ones merged into regions,
 * each holding what the first sample read (the later ones' bytes where it
 * read nothing); then the later pieces that differ from that: the
 * patches. Returns the number of regions, *npatches the patches'; f NULL:
 * counts only. */
static uint32_t
write_regions(FILE *f, struct recorder *r, uint32_t *npatches)
{
	bool count_only = f == NULL;
	uint32_t regions = 0, counted = *npatches;
	*npatches = 0;
	for (int part = 0; part < 2; part++) {
		if (part == 1 && !count_only)
			put(f, &counted, 4);
		for (uint32_t i = 0; i < r->n;) {
			uint64_t lo = r->v[i].addr, hi = lo + r->v[i].len;
			uint32_t j = i + 1;
			while (j < r->n && r->v[j].addr <= hi) {
				if (r->v[j].addr + r->v[j].len > hi)
					hi = r->v[j].addr + r->v[j].len;
				j++;
			}
			uint8_t *buf = calloc(1, (size_t)(hi - lo));
			if (!buf)
				abort();
			for (int later = 1; later >= 0; later--)
				for (uint32_t k = i; k < j; k++)
					if (r->v[k].later == (bool)later)
						memcpy(buf + (r->v[k].addr - lo), r->v[k].bytes, r->v[k].len);
			uint32_t len = (uint32_t)(hi - lo);
			if (part == 0 && !count_only) {
				put(f, &lo, 8);
				put(f, &len, 4);
				put(f, buf, len);
			}
			for (uint32_t k = i; k < j && part == 1; k++) {
				const struct piece *q = &r->v[k];
				if (!q->later || memcmp(buf + (q->addr - lo), q->bytes, q->len) == 0)
					continue;
				(*npatches)++;
				if (!count_only) {
					put(f, &q->addr, 8);
					put(f, &q->len, 4);
					put(f, q->bytes, q->len);
				}
			}
			free(buf);
			regions += part == 0;
			i = j;
		}
	}
	return regions;
}

/* Between the sampler's samples: the process runs on for a moment, and
 * what is read from then on is read later. */
static void
run_on(void *ctx)
{
	struct recorder *r = ctx;
	kill(r->pid, SIGCONT);
	usleep(10000);
	kill(r->pid, SIGSTOP);
	usleep(20000);
	r->later = true;
}

/* Find the live process's greenlets as tachyon-top does (a scan of its
 * memory) and say where the image's reader is to look: greenlet's version
 * and vtables, the pages that hold the greenlets found. false: it could
 * not be read (said). No greenlet: at is left as it was. */
static bool
greenlet_pages(struct target *live, struct code_cache *codes, struct greenlet_reader *r,
	       struct readall_at *at)
{
	struct tt_error err = {0};
	struct tt_tasks ts = {0};
	if (greenlet_reader_init(r, live, codes, 0, 0, &err) != TT_OK ||
	    greenlet_reader_read(r, &ts, &err) != TT_OK) {
		fprintf(stderr, "snapshot: greenlets: %s\n", err.msg);
		return false;
	}
	tt_tasks_free(&ts);
	if (r->state != GREENLETS_READ) {
		if (r->state == GREENLETS_UNKNOWN)
			fprintf(stderr, "snapshot: %s\n", r->why);
		return true;
	}
	static struct gl_region pages[GREENLETS_MAX];
	uint32_t n = 0;
	for (uint32_t i = 0; i < r->nknown; i++) {
		uint64_t lo = r->known[i] & ~4095ull;
		uint64_t hi = (r->known[i] + r->gl->read_size + 4095) & ~4095ull;
		if (n && pages[n - 1].hi >= lo)
			pages[n - 1].hi = hi > pages[n - 1].hi ? hi : pages[n - 1].hi;
		else
			pages[n++] = (struct gl_region){lo, hi};
	}
	at->greenlet_version = r->version;
	at->greenlet_vtables[0] = r->vptr_user - 16;
	at->greenlet_vtables[1] = r->vptr_main - 16;
	at->greenlet_vtables[2] = r->vptr_broken ? r->vptr_broken - 16 : 0;
	at->greenlet_regions = pages;
	at->ngreenlet_regions = n;
	fprintf(stderr, "snapshot: greenlet %s, %u objects on %u spans of pages\n", r->version,
		r->nknown, n);
	return true;
}

int
main(int argc, char **argv)
{
	pid_t pid;
	unsigned what = 0;
	bool moving = false;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "walk") == 0)
			what |= READ_WALK;
		else if (strcmp(argv[i], "values") == 0)
			what |= READ_VALUES;
		else if (strcmp(argv[i], "tasks") == 0)
			what |= READ_TASKS;
		else if (strcmp(argv[i], "jit") == 0)
			what |= READ_JIT;
		else if (strcmp(argv[i], "greenlets") == 0)
			what |= READ_GREENLETS;
		else if (strcmp(argv[i], "moving") == 0)
			moving = true;
		else
			argc = 0;
	}
	if (argc < 3 || !cli_parse_pid(argv[1], &pid)) {
		fprintf(stderr, "usage: snapshot PID OUT [walk] [values] [tasks] [jit] [greenlets] "
				"[moving]\n");
		return 2;
	}
	if (!what)
		what = READ_WALK | READ_VALUES | READ_TASKS | READ_JIT | READ_GREENLETS;
	struct target live;
	struct tt_error err = {0};
	if (target_attach(&live, pid, &err) != TT_OK) {
		fprintf(stderr, "snapshot: %s\n", err.msg);
		return 1;
	}
	uint64_t table = 0, size;
	if (live.layout.minor >= 14 &&
	    target_find_section(&live, "python", ".AsyncioDebug", &table, &size, &err) != TT_OK &&
	    target_find_section(&live, "_asyncio", ".AsyncioDebug", &table, &size, &err) != TT_OK)
		table = 0;

	/* the JIT's descriptor: a symbol of the file that holds the runtime */
	uint64_t jit_descriptor = 0;
	static const char *const jit_names[] = {"__jit_debug_descriptor"};
	char path[512];
	if (!live.binary[0] ||
	    target_find_symbols(&live, procmaps_basename(live.binary), jit_names, 1,
				&jit_descriptor, path, sizeof path, &err) != TT_OK)
		jit_descriptor = 0;

	struct recorder rec = {.inner = live.mem.backend, .pid = pid};
	struct target t;
	uint64_t version = live.layout.compiled_in ? live.layout.version_hex : 0;
	struct remote_backend b = {.readv = recording_readv, .ctx = &rec};
	tt_status st = version ? target_attach_memory_compiled(&t, b, live.runtime_addr, version, &err)
			       : target_attach_memory(&t, b, live.runtime_addr, &err);
	if (st != TT_OK) {
		fprintf(stderr, "snapshot: %s\n", err.msg);
		return 1;
	}
	if (kill(pid, SIGSTOP) != 0) {
		fprintf(stderr, "snapshot: stopping %d: %s\n", (int)pid, strerror(errno));
		return 1;
	}
	usleep(20000);
	struct readall_at at = {table, jit_descriptor, "", {0, 0, 0}, NULL, 0,
				moving ? run_on : NULL, &rec};
	struct greenlet_reader gr;
	struct code_cache codes;
	if (codecache_init(&codes) != 0)
		abort();
	if ((what & READ_GREENLETS) && !greenlet_pages(&live, &codes, &gr, &at)) {
		kill(pid, SIGCONT);
		return 1;
	}
	readall(&t, &at, what);
	kill(pid, SIGCONT);

	order_sort(rec.v, rec.n, sizeof *rec.v, by_addr);
	FILE *f = fopen(argv[2], "wb");
	if (!f) {
		fprintf(stderr, "snapshot: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	uint32_t npatches = 0;
	uint32_t regions = write_regions(NULL, &rec, &npatches);
	put(f, MEMIMAGE_MAGIC, 8);
	put(f, &live.runtime_addr, 8);
	put(f, &version, 8);
	put(f, &table, 8);
	put(f, &jit_descriptor, 8);
	put(f, at.greenlet_vtables, 24);
	char gv[MEMIMAGE_VERSION_LEN] = {0};
	snprintf(gv, sizeof gv, "%s", at.greenlet_version);
	put(f, gv, sizeof gv);
	put(f, &regions, 4);
	write_regions(f, &rec, &npatches);
	if (fclose(f) != 0) {
		perror("snapshot: write");
		return 1;
	}
	fprintf(stderr, "snapshot: %s %s: %u reads in %u regions, %u patches\n",
		live.layout.version_str, argv[2], rec.n, regions, npatches);
	return 0;
}
