#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "clock.h"
#include "mem/corefile.h"
#include "async/greenlets.h"
#include "grow.h"
#include "hash.h"
#include "order.h"
#include "mem/procmaps.h"
#include "readfile.h"
#include "proc/tidmap.h"
#include "walk/sample.h"

#define CHUNK_BYTES (1u << 20)
#define PAGE_BYTES 4096u
#define READ_BATCH 256            /* greenlet objects per vectored read */
#define PYGREENLET_READ 48        /* a PyGreenlet's head, through pimpl */
#define LOCALS_HASHED 6           /* values per frame in a greenlet's identity */

tt_status
greenlet_reader_init(struct greenlet_reader *r, struct target *t, struct code_cache *codes,
		     uint64_t probe_interval_ns, uint64_t scan_budget, struct tt_error *err)
{
	memset(r, 0, sizeof *r);
	r->target = t;
	r->codes = codes;
	r->probe_interval_ns = probe_interval_ns;
	r->scan_budget = scan_budget ? scan_budget : UINT64_MAX;
	r->pagemap_fd = -1;
	r->chunk = malloc(CHUNK_BYTES);
	if (!r->chunk)
		return tt_fail(err, TT_ENOMEM, 0, "out of memory");
	return TT_OK;
}

void
greenlet_reader_free(struct greenlet_reader *r)
{
	if (r->chunk && r->pagemap_fd >= 0)    /* initialised: the descriptor is ours */
		close(r->pagemap_fd);
	free(r->regions);
	free(r->threads);
	free(r->states);
	free(r->scratch);
	free(r->known);
	free(r->given);
	free(r->chunk);
	memset(r, 0, sizeof *r);
	r->pagemap_fd = -1;
}

/* ---- finding greenlet in the target ---- */

/* greenlet's __version__ from the __init__.py beside _greenlet.so. */
static bool
read_version(const struct target *t, const char *so_path, char *out, size_t len)
{
	char path[1200];
	const char *slash = strrchr(so_path, '/');
	if (!slash)
		return false;
	/* As the target sees it (a core's: under its root); else as we do
	 * (maps names the file as seen from our root: a chroot's target shows
	 * the whole path). */
	if (t->core)
		snprintf(path, sizeof path, "%s%.*s/__init__.py", t->core->root,
			 (int)(slash - so_path), so_path);
	else
		snprintf(path, sizeof path, "/proc/%d/root%.*s/__init__.py", (int)t->pid,
			 (int)(slash - so_path), so_path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof path, "%.*s/__init__.py", (int)(slash - so_path), so_path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return false;
	size_t n;
	bool cut;
	char *text = read_fd_whole(fd, 1 << 20, &n, &cut);
	close(fd);
	if (!text)
		return false;
	bool ok = false;
	const char *v = strstr(text, "\n__version__ = ");
	if (v) {
		v += strlen("\n__version__ = ");
		char q = *v;
		const char *end = (q == '\'' || q == '"') ? strchr(v + 1, q) : NULL;
		if (end && end - v - 1 > 0 && (size_t)(end - v - 1) < len) {
			snprintf(out, len, "%.*s", (int)(end - v - 1), v + 1);
			ok = true;
		}
	}
	free(text);
	return ok;
}

/* Read greenlet r->version's objects by the layout tachyon-top has for it,
 * knowing its vtable symbols' addresses (UserGreenlet's, MainGreenlet's,
 * BrokenGreenlet's; 0: absent); else say why not. */
static void
use_layout(struct greenlet_reader *r, const uint64_t addr[3])
{
	const struct py_layout *l = &r->target->layout;
	const char *known;
	r->gl = l->free_threaded ? NULL : greenlet_layout_find(r->version, l->minor, &known);
	if (!r->gl || !addr[0] || !addr[1]) {
		snprintf(r->why, sizeof r->why,
			 "greenlets not read: greenlet %.31s on Python %u.%u%s is not a layout "
			 "tachyon-top knows (it knows %s)",
			 r->version, l->major, l->minor, l->free_threaded ? " (free-threaded)" : "",
			 l->free_threaded ? "no free-threaded one" : known);
		r->state = GREENLETS_UNKNOWN;
		return;
	}
	/* An object's vtable word points past the offset-to-top and typeinfo. */
	r->vptr_user = addr[0] + 16;
	r->vptr_main = addr[1] + 16;
	r->vptr_broken = addr[2] ? addr[2] + 16 : 0;
	r->state = GREENLETS_READ;
}

static tt_status
probe(struct greenlet_reader *r, struct tt_error *err)
{
	static const char *const names[] = {
		"_ZTVN8greenlet12UserGreenletE",
		"_ZTVN8greenlet12MainGreenletE",
		"_ZTVN8greenlet14BrokenGreenletE",
	};
	uint64_t addr[3];
	char path[512];
	struct tt_error e = {0};
	tt_status st = target_find_symbols(r->target, "_greenlet.", names, 3, addr, path,
					   sizeof path, &e);
	if (st == TT_ENOTPY)
		return TT_OK;    /* not imported (yet) */
	if (st != TT_OK) {
		*err = e;
		return st;
	}
	if (!read_version(r->target, path, r->version, sizeof r->version)) {
		snprintf(r->why, sizeof r->why,
			 "greenlets not read: greenlet's version is not in %.200s's __init__.py",
			 path);
		r->state = GREENLETS_UNKNOWN;
		return TT_OK;
	}
	use_layout(r, addr);
	return TT_OK;
}

static int
order_region(const void *a, const void *b)
{
	const struct gl_region *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

tt_status
greenlet_reader_use_memory(struct greenlet_reader *r, const char *version,
			   const uint64_t vtables[3], const struct gl_region *regions, uint32_t n,
			   struct tt_error *err)
{
	free(r->given);
	r->given = NULL;
	r->ngiven = 0;
	if (n) {
		r->given = malloc((size_t)n * sizeof *regions);
		if (!r->given)
			return tt_fail(err, TT_ENOMEM, 0, "out of memory");
		for (uint32_t i = 0; i < n; i++)
			if (regions[i].hi > regions[i].lo)
				r->given[r->ngiven++] = regions[i];
		order_sort(r->given, r->ngiven, sizeof *r->given, order_region);
	}
	snprintf(r->version, sizeof r->version, "%s", version);
	use_layout(r, vtables);
	r->memory_only = true;
	return TT_OK;
}

/* ---- the scan ---- */

static bool
scannable(const struct map_entry *m)
{
	return m->perms[0] == 'r' && m->perms[1] == 'w' && m->perms[3] == 'p' &&
	       (m->path[0] == '\0' || strcmp(m->path, "[heap]") == 0);
}

static bool
add_region(struct greenlet_reader *r, uint64_t lo, uint64_t hi)
{
	if (!grow_array((void **)&r->regions, &r->regions_cap, r->nregions + 1, sizeof *r->regions))
		return false;
	r->regions[r->nregions++] = (struct gl_region){lo, hi};
	return true;
}

/* ---- which thread a greenlet runs on ---- */

static bool
add_thread(struct greenlet_reader *r, uint64_t lo, uint64_t hi, uint64_t tid)
{
	if (!grow_array((void **)&r->threads, &r->threads_cap, r->nthreads + 1,
			sizeof *r->threads))
		return false;
	r->threads[r->nthreads++] = (struct gl_thread){{lo, hi}, tid};
	return true;
}

/* Which of n spans in address order holds addr, each the first member of
 * an element `stride` bytes long: its index, or -1. */
static int64_t
span_index(const void *first, uint32_t n, size_t stride, uint64_t addr)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct gl_region *g =
			(const struct gl_region *)((const char *)first + (size_t)mid * stride);
		if (addr < g->lo)
			hi = mid;
		else if (addr >= g->hi)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

/* The scannable region holding addr, or NULL (regions are in address
 * order, as the maps list them). */
static const struct gl_region *
region_of(const struct greenlet_reader *r, uint64_t addr)
{
	int64_t i = span_index(r->regions, r->nregions, sizeof *r->regions, addr);
	return i < 0 ? NULL : &r->regions[i];
}

static int
order_threads(const void *a, const void *b)
{
	const struct gl_thread *x = a, *y = b;
	return x->span.lo < y->span.lo ? -1 : x->span.lo > y->span.lo;
}

static int
order_pthread(const void *a, const void *b)
{
	const struct target_thread *x = a, *y = b;
	return x->pthread_id < y->pthread_id ? -1 : x->pthread_id > y->pthread_id;
}

/* Each thread's C stack. The main thread's is its own mapping (a live process's [stack], the
 * core's segment its stack pointer is in); every other thread's stack lies
 * just below its pthread_t (glibc puts a thread's descriptor at the top of
 * the stack it maps for it). false when memory is short. */
static bool
find_threads(struct greenlet_reader *r)
{
	struct target *t = r->target;
	r->nthreads = 0;
	uint32_t n = 0;
	for (uint32_t cap = 64;; cap *= 2) {
		if (cap > r->states_cap) {
			void *p = realloc(r->states, cap * sizeof *r->states);
			if (!p)
				return false;
			r->states = p;
			r->states_cap = cap;
		}
		target_list_threads(t, r->states, cap, &n);
		if (n < cap || cap >= TARGET_MAX_THREADS)
			break;
	}
	if (r->main_stack_hi && !add_thread(r, r->main_stack_lo, r->main_stack_hi, r->main_tid))
		return false;
	/* Stacks may share one mapping (glibc's guard regions leave no
	 * PROT_NONE mapping between them): a thread's stack runs from the
	 * descriptor below its own down to the one below that. */
	order_sort(r->states, n, sizeof *r->states, order_pthread);
	uint64_t below = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t p = r->states[i].pthread_id;
		const struct gl_region *g = region_of(r, p);
		if (!g || r->states[i].native_id == r->main_tid)
			continue;
		uint64_t lo = below > g->lo && below < p ? below : g->lo;
		if (!add_thread(r, lo, p, r->states[i].native_id))
			return false;
		below = p;
	}
	order_sort(r->threads, r->nthreads, sizeof *r->threads, order_threads);
	return true;
}

static uint64_t
thread_of(const struct greenlet_reader *r, uint64_t addr)
{
	int64_t i = span_index(r->threads, r->nthreads, sizeof *r->threads, addr);
	return i < 0 ? 0 : r->threads[i].tid;
}

/* A core's writable memory that it holds: where a live process's
 * anonymous memory and heap were (a file's writable data is small, and
 * the candidates are checked as ever). */
static tt_status
new_core_pass(struct greenlet_reader *r, struct tt_error *err)
{
	const struct corefile *c = r->target->core;
	r->nregions = 0;
	/* The main thread's stack: where its stack pointer is. */
	r->main_stack_lo = r->main_stack_hi = r->main_tid = 0;
	for (size_t i = 0; i < c->nthreads; i++) {
		if (c->threads[i].tid != c->pid && !(i == 0 && c->pid == 0))
			continue;
		uint64_t sp = c->threads[i].regs[CORE_REG_RSP];
		for (size_t k = 0; k < c->nloads; k++)
			if (sp >= c->loads[k].vaddr && sp - c->loads[k].vaddr < c->loads[k].memsz) {
				r->main_stack_lo = c->loads[k].vaddr;
				r->main_stack_hi = c->loads[k].vaddr + c->loads[k].memsz;
				r->main_tid = (uint64_t)c->threads[i].tid;
			}
	}
	for (size_t i = 0; i < c->nloads; i++) {
		const struct core_load *l = &c->loads[i];
		if (l->writable && l->filesz >= PAGE_BYTES &&
		    !add_region(r, l->vaddr, l->vaddr + l->filesz / PAGE_BYTES * PAGE_BYTES))
			return tt_fail(err, TT_ENOMEM, 0, "out of memory");
	}
	return TT_OK;
}

static tt_status
new_pass(struct greenlet_reader *r, struct tt_error *err)
{
	if (r->target->core) {
		tt_status st = new_core_pass(r, err);
		if (st != TT_OK)
			return st;
		goto started;
	}
	if (r->memory_only) {
		r->nregions = 0;
		r->main_stack_lo = r->main_stack_hi = r->main_tid = 0;
		for (uint32_t i = 0; i < r->ngiven; i++)
			if (!add_region(r, r->given[i].lo, r->given[i].hi))
				return tt_fail(err, TT_ENOMEM, 0, "out of memory");
		goto started;
	}
	struct proc_maps maps;
	tt_status st = procmaps_read(r->target->pid, &maps, err);
	if (st != TT_OK)
		return st;
	r->nregions = 0;
	r->main_stack_lo = r->main_stack_hi = 0;
	r->main_tid = (uint64_t)r->target->pid;
	tidmap_process_ns_pid(r->target->pid, &r->main_tid);
	for (size_t i = 0; i < maps.count; i++) {
		const struct map_entry *m = &maps.entries[i];
		if (strcmp(m->path, "[stack]") == 0) {
			r->main_stack_lo = m->start;
			r->main_stack_hi = m->end;
		}
		if (scannable(m) && !add_region(r, m->start, m->end)) {
			procmaps_free(&maps);
			return tt_fail(err, TT_ENOMEM, 0, "out of memory");
		}
	}
	procmaps_free(&maps);
	if (r->pagemap_fd < 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/pagemap", (int)r->target->pid);
		r->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
started:
	/* Threads come and go less often than passes: their stacks are
	 * found once a pass. */
	if (!find_threads(r))
		return tt_fail(err, TT_ENOMEM, 0, "out of memory");
	r->region_at = 0;
	r->offset_at = 0;
	r->last_pass_ms = r->pass_ms;
	r->pass_ms = 0;
	r->passes++;
	return TT_OK;
}

static bool
add_known(struct greenlet_reader *r, uint64_t addr)
{
	if (r->nknown >= GREENLETS_MAX)
		return true;
	if (!grow_array((void **)&r->known, &r->known_cap, r->nknown + 1, sizeof *r->known))
		return false;
	r->known[r->nknown++] = addr;
	return true;
}

/* A greenlet's first word: one of greenlet's vtables. */
static bool
is_greenlet_vptr(const struct greenlet_reader *r, uint64_t w)
{
	return w == r->vptr_user || w == r->vptr_main || (w == r->vptr_broken && w != 0);
}

/* Add the greenlet-looking words of [at, at + len), read into r->chunk. */
static bool
scan_words(struct greenlet_reader *r, uint64_t at, uint64_t len)
{
	for (uint64_t off = 0; off + 8 <= len; off += 8)
		if (is_greenlet_vptr(r, load_u64(r->chunk, off)) && !add_known(r, at + off))
			return false;
	return true;
}

/* Which pages of [at, at + len) are in memory: a page never touched (most
 * of a thread's stack) or swapped out is not read, so the scan neither
 * maps zero pages into the target nor brings its swap back. false when
 * the page map cannot be read (then every page is read). */
static bool
present_pages(struct greenlet_reader *r, uint64_t at, uint64_t len, bool *present)
{
	if (r->pagemap_fd < 0)
		return false;
	uint64_t entries[CHUNK_BYTES / PAGE_BYTES];
	size_t n = (size_t)(len / PAGE_BYTES);
	ssize_t got = pread(r->pagemap_fd, entries, n * sizeof *entries,
			    (off_t)(at / PAGE_BYTES * sizeof *entries));
	if (got != (ssize_t)(n * sizeof *entries))
		return false;
	for (size_t i = 0; i < n; i++)
		present[i] = (entries[i] >> 63) & 1;
	return true;
}

/* Scan up to the budget, from where the last read stopped; a pass starts
 * again at most once a read. The budget counts the bytes read, and a
 * 64th of the pages passed over as absent (their page map is read). */
static tt_status
scan(struct greenlet_reader *r, struct tt_tasks *out, struct tt_error *err)
{
	uint64_t t0 = clock_now_ns();
	uint64_t budget = r->scan_budget;
	bool started_pass = false;
	uint32_t before = r->nknown;
	bool present[CHUNK_BYTES / PAGE_BYTES];
	while (budget > 0) {
		if (r->region_at >= r->nregions) {
			if (started_pass)
				break;
			tt_status st = new_pass(r, err);
			if (st != TT_OK)
				return st;
			started_pass = true;
			if (r->nregions == 0)
				break;
			continue;
		}
		const struct gl_region *g = &r->regions[r->region_at];
		uint64_t at = g->lo + r->offset_at;
		uint64_t len = g->hi - at;
		if (len > CHUNK_BYTES)
			len = CHUNK_BYTES;
		uint64_t cost = 0;
		bool mapped = present_pages(r, at, len, present);
		for (uint64_t p = 0; p < len / PAGE_BYTES;) {
			if (mapped && !present[p]) {
				p++;
				cost += PAGE_BYTES / 64;
				continue;
			}
			uint64_t q = p + 1;
			while (q < len / PAGE_BYTES && (!mapped || present[q]))
				q++;
			uint64_t from = at + p * PAGE_BYTES, n = (q - p) * PAGE_BYTES;
			struct tt_error e = {0};
			tt_status st = remote_read(&r->target->mem, from, r->chunk, n, &e);
			out->syscalls++;
			if (st == TT_OK) {
				if (!scan_words(r, from, n))
					return tt_fail(err, TT_ENOMEM, 0, "out of memory");
				r->bytes_scanned += n;
			} else if (st != TT_EFAULT) {
				*err = e;
				return st;
			}   /* EFAULT: unmapped since; the rest of the pass shows it */
			cost += n;
			p = q;
		}
		budget = cost < budget ? budget - cost : 0;
		r->offset_at += len;
		if (g->lo + r->offset_at >= g->hi) {
			r->region_at++;
			r->offset_at = 0;
		}
	}
	if (r->nknown > before) {
		order_sort(r->known, r->nknown, sizeof *r->known, order_u64);
		uint32_t w = 0;
		for (uint32_t i = 0; i < r->nknown; i++)
			if (w == 0 || r->known[w - 1] != r->known[i])
				r->known[w++] = r->known[i];
		r->nknown = w;
	}
	r->pass_ms += (double)(clock_now_ns() - t0) / 1e6;
	return TT_OK;
}

/* ---- reading greenlets ---- */

/* Read n objects of `size` bytes at addrs[] into bufs (n * size); ok[i]
 * says which were read in full. */
static tt_status
read_many(struct greenlet_reader *r, struct tt_tasks *out, const uint64_t *addrs, uint32_t n,
	  size_t size, uint8_t *bufs, bool *ok, struct tt_error *err)
{
	struct remote_seg segs[READ_BATCH];
	for (uint32_t base = 0; base < n;) {
		uint32_t k = n - base < READ_BATCH ? n - base : READ_BATCH;
		for (uint32_t i = 0; i < k; i++)
			segs[i] = (struct remote_seg){.addr = addrs[base + i],
						      .buf = bufs + (size_t)(base + i) * size,
						      .len = size};
		size_t done = 0;
		tt_status st = remote_readv(&r->target->mem, segs, k, &done, err);
		out->syscalls++;
		if (st != TT_OK)
			return st;
		for (uint32_t i = 0; i < done; i++)
			ok[base + i] = true;
		if (done < k)
			ok[base + done] = false;   /* the one that stopped it */
		base += (uint32_t)done + (done < k ? 1 : 0);
	}
	return TT_OK;
}

/* A suspended greenlet's stack: what lay in [start, start + saved) is now
 * at copy. */
struct gl_stack {
	uint64_t start, saved, copy;
};

static bool
stack_read(struct greenlet_reader *r, struct tt_tasks *out, const struct gl_stack *s,
	   uint64_t addr, uint8_t *buf, size_t len)
{
	struct tt_error e = {0};
	uint64_t end = addr + len, lo = s->start, hi = s->start + s->saved;
	out->syscalls++;
	if (s->saved == 0 || end <= lo || addr >= hi)
		return remote_read(&r->target->mem, addr, buf, len, &e) == TT_OK;
	if (addr < lo) {
		if (remote_read(&r->target->mem, addr, buf, lo - addr, &e) != TT_OK)
			return false;
		buf += lo - addr;
		addr = lo;
	}
	uint64_t mid = (end < hi ? end : hi) - addr;
	if (remote_read(&r->target->mem, s->copy + (addr - lo), buf, mid, &e) != TT_OK)
		return false;
	buf += mid;
	addr += mid;
	return addr >= end || remote_read(&r->target->mem, addr, buf, end - addr, &e) == TT_OK;
}

/* The frames from the greenlet's saved top frame outwards, innermost first;
 * the evaluator's entry frames (on the C stack) are passed over. */
static bool
read_frames(struct greenlet_reader *r, struct tt_tasks *out, struct tt_task *t, uint64_t top,
	    const struct gl_stack *s, uint64_t *who)
{
	const struct py_layout *l = &r->target->layout;
	uint8_t fr[512];
	uint64_t iframe;
	struct tt_error e = {0};
	/* With each frame, the first values of its locals and stack: objects
	 * of this request, not the last one's (see who below). */
	size_t want = l->fr_localsplus + 8 * LOCALS_HASHED;
	if (want < l->fr_read_size)
		want = l->fr_read_size;
	if (want > sizeof fr ||
	    remote_read_u64(&r->target->mem, top + r->gl->frameobj_f_frame, &iframe, &e) != TT_OK)
		return false;
	for (unsigned depth = 0; iframe != 0; depth++) {
		if (depth >= TASKS_MAX_CHAIN) {
			t->chain_cut = true;
			break;
		}
		if ((iframe & 7) || !stack_read(r, out, s, iframe, fr, want))
			return false;
		for (unsigned k = 0; k < LOCALS_HASHED; k++)
			*who = hash_mix64(*who ^ load_u64(fr, l->fr_localsplus + 8 * k)) + iframe;
		int owner = (int8_t)fr[l->fr_owner];
		if (owner != l->owner_cstack && owner != l->owner_interpreter) {
			uint64_t code = load_u64(fr, l->fr_executable) & ~l->tag_mask;
			uint32_t id;
			if (codecache_lookup(r->codes, &r->target->mem, l, code, &id, &e) != TT_OK)
				return false;
			if (!tt_tasks_push_frame(out, id,
						 codecache_line(r->codes, id,
								load_u64(fr, l->fr_instr_ptr))))
				return false;
			t->nframes++;
		}
		iframe = load_u64(fr, l->fr_previous);
	}
	return true;
}

/* The type's name, the part after its module: "Hub", "Greenlet". */
static const char *
type_name(struct greenlet_reader *r, uint64_t type)
{
	for (uint32_t i = 0; i < r->ntypes && i < 16; i++)
		if (r->types[i].type == type)
			return r->types[i].name;
	struct gl_type_name *slot = &r->types[r->ntypes++ % 16];
	slot->type = type;
	snprintf(slot->name, sizeof slot->name, "greenlet");
	uint64_t p;
	char buf[sizeof slot->name];
	struct tt_error e = {0};
	if (remote_read_u64(&r->target->mem, type + r->target->layout.tp_name, &p, &e) == TT_OK &&
	    remote_read(&r->target->mem, p, buf, sizeof buf, &e) == TT_OK) {
		buf[sizeof buf - 1] = '\0';
		const char *dot = strrchr(buf, '.');
		snprintf(slot->name, sizeof slot->name, "%s", dot ? dot + 1 : buf);
	}
	return slot->name;
}

static bool
is_running(const uint64_t *running, uint32_t n, uint64_t self)
{
	for (uint32_t i = 0; i < n; i++)
		if (running[i] == self)
			return true;
	return false;
}

/* One greenlet, from its C++ object's bytes `g` and its Python object's
 * `py`; false when memory is short. A greenlet that changed is lost. */
static bool
read_greenlet(struct greenlet_reader *r, struct tt_tasks *out, uint64_t obj, const uint8_t *g,
	      const uint8_t *py, const uint64_t *running, uint32_t nrunning)
{
	const struct greenlet_layout *gl = r->gl;
	const struct py_layout *l = &r->target->layout;
	bool main = load_u64(g, 0) == r->vptr_main;
	uint64_t self = load_u64(g, gl->g_self);
	struct tt_task *t = tt_tasks_begin(out, TASK_GREENLET);
	if (!t)
		return false;
	t->id = self;
	t->coro = obj;
	t->main_greenlet = main;
	t->running = is_running(running, nrunning, self);
	t->thread = thread_of(r, load_u64(g, gl->g_stack_start));
	const char *name = type_name(r, load_u64(py, l->ob_type));
	t->hub = strstr(name, "Hub") != NULL;
	if (!tt_tasks_push_name(out, name, strlen(name), &t->name_off))
		return false;
	uint64_t parent = main ? 0 : load_u64(g, gl->ug_parent);
	if (parent && !tt_tasks_push_awaiter(out, t, parent))
		return false;
	uint64_t top = load_u64(g, gl->g_top_frame);
	bool ok = true;
	if (!t->running && top) {
		struct gl_stack s = {load_u64(g, gl->g_stack_start), load_u64(g, gl->g_stack_saved),
				     load_u64(g, gl->g_stack_copy)};
		/* Which greenlet this is: pymalloc hands a finished greenlet's
		 * objects to the next one made, which soon waits at the same
		 * point; its frames' locals are that request's own objects.
		 * Without this a new greenlet would inherit the old one's stuck
		 * time (tt_task.coro). */
		uint64_t who = hash_mix64(obj ^ hash_mix64(top ^ s.copy));
		ok = read_frames(r, out, t, top, &s, &who);
		t->coro = who;
		/* It may have run meanwhile: its state again, as it was. */
		uint8_t again[512];
		struct tt_error e = {0};
		ok = ok && gl->read_size <= sizeof again &&
		     remote_read(&r->target->mem, obj, again, gl->read_size, &e) == TT_OK &&
		     load_u64(again, gl->g_top_frame) == top &&
		     load_u64(again, gl->g_stack_start) == s.start &&
		     load_u64(again, gl->g_stack_saved) == s.saved;
		out->syscalls++;
	}
	if (ok)
		tt_tasks_keep(out, t);
	else
		tt_tasks_drop(out, t);
	return true;
}

tt_status
greenlet_reader_read(struct greenlet_reader *r, struct tt_tasks *out, struct tt_error *err)
{
	if (!r->target->core && r->target->pid <= 0 && !r->memory_only)
		return TT_OK;
	if (r->state == GREENLETS_NONE) {
		uint64_t now = clock_now_ns();
		if (r->last_probe_ns && now - r->last_probe_ns < r->probe_interval_ns)
			return TT_OK;
		r->last_probe_ns = now;
		tt_status st = probe(r, err);
		if (st != TT_OK)
			return st;
	}
	if (r->state != GREENLETS_READ)
		return TT_OK;
	tt_status st = scan(r, out, err);
	if (st != TT_OK)
		return st;
	uint32_t n = r->nknown;
	if (n == 0)
		return TT_OK;
	const struct greenlet_layout *gl = r->gl;
	/* One buffer, kept from read to read, for what each greenlet needs:
	 * its self and running words, its C++ and Python objects' bytes, two
	 * flags (read_size and PYGREENLET_READ are multiples of 8). */
	size_t per = 16 + gl->read_size + PYGREENLET_READ + 2;
	if ((size_t)n * per > r->scratch_len) {
		void *p = realloc(r->scratch, (size_t)n * per);
		if (!p)
			return tt_fail(err, TT_ENOMEM, 0, "out of memory");
		r->scratch = p;
		r->scratch_len = (size_t)n * per;
	}
	uint64_t *selfs = (uint64_t *)r->scratch, *running = selfs + n;
	uint8_t *g = (uint8_t *)(running + n), *py = g + (size_t)n * gl->read_size;
	bool *ok = (bool *)(py + (size_t)n * PYGREENLET_READ), *pyok = ok + n;
	if ((st = read_many(r, out, r->known, n, gl->read_size, g, ok, err)) != TT_OK)
		return st;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *b = g + (size_t)i * gl->read_size;
		selfs[i] = load_u64(b, gl->g_self);
		if (!ok[i] || !is_greenlet_vptr(r, load_u64(b, 0)) || selfs[i] == 0 || (selfs[i] & 7))
			ok[i] = false;
		if (!ok[i])
			selfs[i] = r->known[i];    /* something readable, not used */
	}
	if ((st = read_many(r, out, selfs, n, PYGREENLET_READ, py, pyok, err)) != TT_OK)
		return st;
	/* Each thread's running greenlet, from its main greenlet. */
	uint32_t nrunning = 0;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *b = g + (size_t)i * gl->read_size;
		ok[i] = ok[i] && pyok[i] &&
			load_u64(py + (size_t)i * PYGREENLET_READ, gl->pyg_pimpl) == r->known[i];
		uint64_t tstate, cur;
		struct tt_error e = {0};
		/* The layout checked on the live process: greenlet makes every
		 * main greenlet's stack end at (char *)-1. */
		if (ok[i] && load_u64(b, 0) == r->vptr_main && load_u64(b, gl->g_stack_stop) != UINT64_MAX) {
			snprintf(r->why, sizeof r->why,
				 "greenlets not read: greenlet %.31s's objects in this process are not "
				 "where tachyon-top's layout of greenlet %s puts them (a main "
				 "greenlet's stack_stop reads 0x%llx, not -1)",
				 r->version, gl->greenlet_versions,
				 (unsigned long long)load_u64(b, gl->g_stack_stop));
			r->state = GREENLETS_UNKNOWN;
			r->nknown = 0;
			return TT_OK;
		}
		if (ok[i] && load_u64(b, 0) == r->vptr_main && load_u64(b, gl->g_stack_start) != 0 &&
		    (tstate = load_u64(b, gl->mg_thread_state)) != 0 &&
		    remote_read_u64(&r->target->mem, tstate + gl->ts_current_greenlet, &cur, &e) ==
			    TT_OK)
			running[nrunning++] = cur;
	}
	uint32_t keep = 0;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *b = g + (size_t)i * gl->read_size;
		if (!ok[i])
			continue;                        /* freed, or not a greenlet */
		bool main = load_u64(b, 0) == r->vptr_main;
		bool started = load_u64(b, gl->g_stack_stop) != 0;
		bool active = load_u64(b, gl->g_stack_start) != 0 &&
			      (!main || load_u64(b, gl->mg_thread_state) != 0);
		if (started && !active)
			continue;    /* finished, or its thread did: never again */
		r->known[keep++] = r->known[i];
		if (!started || out->n >= TASKS_MAX)
			continue;
		if (!read_greenlet(r, out, r->known[keep - 1], b, py + (size_t)i * PYGREENLET_READ,
				   running, nrunning))
			return tt_fail(err, TT_ENOMEM, 0, "out of memory");
	}
	r->nknown = keep;
	return TT_OK;
}
