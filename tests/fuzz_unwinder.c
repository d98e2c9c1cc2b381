/* Feed both unwinders (the plain one and the sampler's batched, caching
 * walker), and on 3.14+ the asyncio task reader, corrupted memory images of
 * a synthetic interpreter and check they never crash, hang or return
 * nonsense. The walker keeps its caches across
 * images, as it does across samples of a live target whose memory changes
 * under it. Run under the sanitizers in CI. TT_FUZZ_SECONDS bounds the time (default 3 per version),
 * TT_FUZZ_SEED reproduces a run. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "async/asynctasks.h"
#include "fakemem.h"
#include "python/pylayout.h"
#include "walk/stackwalk.h"
#include "tap.h"
#include "target.h"
#include "walk/plainwalk.h"

/* Addresses of the synthetic objects (regions of the fake memory). */
enum {
	A_RUNTIME = 0x100000, A_INTERP = 0x200000, A_TSTATE = 0x300000,
	A_FRAMES = 0x400000, A_CODE = 0x500000, A_STRINGS = 0x600000,
	A_TYPE = 0x700000, A_TSTATE2 = 0x800000, A_CFRAME = 0x900000,
	/* asyncio (3.14+): the offsets table, task objects, coroutines, types */
	A_ASYNC = 0xa00000, A_TASKS = 0xb00000, A_COROS = 0xc00000, A_TYPES = 0xd00000,
};
#define STRUCT_SIZE 512
#define RUNTIME_FIELDS 1024
#define NFRAMES 6
/* The frames live in a data-stack chunk whose header is at A_FRAMES. */
#define FRAME0 (A_FRAMES + 64)

static uint64_t rng_state;

static uint64_t
rng(void)
{
	/* xorshift64*: reproducible from the printed seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* Offsets we give the synthetic layout: field i of a group sits at 64 + 8i,
 * except where object headers have a fixed shape. */
static uint64_t
synthetic_offset(const char *name, size_t index_in_group)
{
	static const struct { const char *name; uint64_t off; } fixed[] = {
		{"pyobject.ob_type", 8},
		{"unicode_object.state", 32}, {"unicode_object.length", 16},
		{"unicode_object.asciiobject_size", 40},
		{"unicode_object.compactunicodeobject_size", 56},
		{"bytes_object.ob_size", 16}, {"bytes_object.ob_sval", 32},
		{"long_object.lv_tag", 16}, {"long_object.ob_digit", 24},
		{"llist_node.next", 0}, {"llist_node.prev", 8},
	};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (strcmp(fixed[i].name, name) == 0)
			return fixed[i].off;
	const char *dot = strchr(name, '.');
	/* The table is the first member of _PyRuntimeState: runtime fields
	 * come after it. */
	bool runtime = strncmp(name, "runtime_state.", 14) == 0;
	if (dot && strcmp(dot, ".size") == 0)
		return runtime ? 2 * RUNTIME_FIELDS : STRUCT_SIZE;
	return (runtime ? RUNTIME_FIELDS : 64) + 8 * index_in_group;
}

struct image {
	struct fakemem mem;
	struct py_layout l;       /* what the table should decode to */
	unsigned minor;
	uint64_t compiled_version; /* 3.11/3.12: no table, this Py_Version; else 0 */
};

static tt_status
attach_image(struct target *t, struct fakemem *m, const struct image *img, struct tt_error *err)
{
	if (img->compiled_version)
		return target_attach_memory_compiled(t, fakemem_backend(m), A_RUNTIME,
						     img->compiled_version, err);
	return target_attach_memory(t, fakemem_backend(m), A_RUNTIME, err);
}

static uint64_t
table_value(unsigned minor, const char *want)
{
	size_t n;
	const char *const *names = pylayout_field_names(minor, &n);
	size_t in_group = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0) {
			size_t glen = strcspn(names[i], ".");
			in_group = strncmp(names[i], names[i - 1], glen) == 0 ? in_group + 1 : 0;
		}
		if (strcmp(names[i], want) == 0)
			return synthetic_offset(names[i], in_group);
	}
	return 0;
}

static void
put64(uint8_t *p, uint64_t off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

static void
put32(uint8_t *p, uint64_t off, uint32_t v)
{
	memcpy(p + off, &v, 4);
}

/* A compact ASCII str at addr inside region `base`. */
static void
put_ascii(uint8_t *base, uint64_t region_addr, uint64_t addr, const char *s)
{
	uint8_t *o = base + (addr - region_addr);
	put64(o, 8, A_TYPE);
	put64(o, 16, strlen(s));
	put32(o, 32, (1u << 2) | (1u << 5) | (1u << 6)); /* kind 1, compact, ascii */
	memcpy(o + 40, s, strlen(s) + 1);
}

static void
build_image(struct image *img, unsigned minor)
{
	memset(img, 0, sizeof *img);
	img->minor = minor;
	size_t n;
	const char *const *names = pylayout_field_names(minor, &n);
	uint8_t *rt = fakemem_add(&img->mem, A_RUNTIME, 4096);
	memcpy(rt, PY_DEBUG_COOKIE, 8);
	put64(rt, 8, 0x030000f0ull | (3ull << 24) | ((uint64_t)minor << 16) | (2u << 8));
	size_t in_group = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0) {
			size_t glen = strcspn(names[i], ".");
			in_group = strncmp(names[i], names[i - 1], glen) == 0 ? in_group + 1 : 0;
		}
		put64(rt, PY_DEBUG_HEADER_SIZE + 8 * i, synthetic_offset(names[i], in_group));
	}
#define OFF(name) table_value(minor, name)
	uint64_t interp_head = OFF("runtime_state.interpreters_head");
	put64(rt, interp_head, A_INTERP);

	uint8_t *in = fakemem_add(&img->mem, A_INTERP, 4096);
	put64(in, OFF("interpreter_state.threads_head"), A_TSTATE);
	if (minor >= 14)
		put64(in, OFF("interpreter_state.threads_main"), A_TSTATE2);
	put32(in, OFF("interpreter_state.gil_runtime_state_locked"), 1);
	put64(in, OFF("interpreter_state.gil_runtime_state_holder"), A_TSTATE);

	/* Two threads: one with NFRAMES frames, one with none. */
	uint8_t *ts = fakemem_add(&img->mem, A_TSTATE, 4096);
	uint8_t *ts2 = fakemem_add(&img->mem, A_TSTATE2, 4096);
	uint8_t *fr = fakemem_add(&img->mem, A_FRAMES, 4096);
	put64(ts, OFF("thread_state.interp"), A_INTERP);
	put64(ts, OFF("thread_state.next"), A_TSTATE2);
	put64(ts, OFF("thread_state.native_thread_id"), 4242);
	put64(ts, OFF("thread_state.current_frame"), FRAME0);
	put64(ts2, OFF("thread_state.interp"), A_INTERP);
	put64(ts2, OFF("thread_state.native_thread_id"), 4243);
	/* _PyStackChunk: previous, size, top, then the frames */
	put64(fr, 8, 4096);
	put64(ts, OFF("thread_state.datastack_chunk"), A_FRAMES);
	put64(ts, OFF("thread_state.datastack_chunk") + 8, FRAME0 + 256 * (NFRAMES + 3));
	uint64_t base_frame = FRAME0 + 256 * (NFRAMES + 1);
	if (minor >= 15) {
		put64(ts, OFF("thread_state.base_frame"), base_frame);
		put64(ts2, OFF("thread_state.base_frame"), FRAME0 + 256 * (NFRAMES + 2));
		put64(ts2, OFF("thread_state.current_frame"), FRAME0 + 256 * (NFRAMES + 2));
		put32(ts, OFF("thread_state.holds_gil"), 1);
		put32(ts2, OFF("thread_state.gil_requested"), 1);
	}
	for (int i = 0; i <= NFRAMES; i++) {
		uint8_t *f = fr + 64 + 256 * i;
		uint64_t next = i < NFRAMES ? FRAME0 + 256 * (i + 1) : 0;
		if (minor >= 15 && i == NFRAMES - 1)
			next = base_frame;
		put64(f, OFF("interpreter_frame.previous"), next);
		/* frame NFRAMES-... : the last one is an entry shim (owner 3) */
		bool shim = i == NFRAMES || i == 2;
		f[OFF("interpreter_frame.owner")] = shim ? 3 : (i == 1 ? 1 : 0);
		uint64_t code = A_CODE + 512 * (uint64_t)(i % 3);
		put64(f, OFF("interpreter_frame.executable"), code | (minor >= 14 ? 1 : 0));
		put64(f, OFF("interpreter_frame.instr_ptr"),
		      code + OFF("code_object.co_code_adaptive") + 2 * (uint64_t)i);
	}

	/* Three code objects, their names and line tables. */
	uint8_t *co = fakemem_add(&img->mem, A_CODE, 4096);
	uint8_t *st = fakemem_add(&img->mem, A_STRINGS, 4096);
	static const char *const quals[] = {"alpha", "Beta.gamma", "delta.<locals>.eps"};
	for (int i = 0; i < 3; i++) {
		uint8_t *c = co + 512 * i;
		put64(c, 8, A_TYPE);
		uint64_t qual = A_STRINGS + 256 * (uint64_t)i;
		uint64_t file = A_STRINGS + 1024;
		uint64_t table = A_STRINGS + 2048 + 256 * (uint64_t)i;
		put64(c, OFF("code_object.qualname"), qual);
		put64(c, OFF("code_object.name"), qual);
		put64(c, OFF("code_object.filename"), file);
		put64(c, OFF("code_object.linetable"), table);
		put32(c, OFF("code_object.firstlineno"), 10 * (uint32_t)(i + 1));
		put_ascii(st, A_STRINGS, qual, quals[i]);
		/* line table: 8 one-unit entries, "no columns" form, +1 line each,
		 * so code unit k is on line firstlineno + 1 + k */
		uint8_t *b = st + (table - A_STRINGS);
		put64(b, 8, A_TYPE);
		put64(b, 16, 16);
		for (int k = 0; k < 8; k++) {
			b[32 + 2 * k] = 0x80 | (13 << 3);   /* code 13, one code unit */
			b[32 + 2 * k + 1] = 2;              /* svarint +1 */
		}
	}
	put_ascii(st, A_STRINGS, A_STRINGS + 1024, "/app/fuzz.py");
	uint8_t *ty = fakemem_add(&img->mem, A_TYPE, 1024);
	put64(ty, OFF("type_object.tp_name"), A_TYPE + 512);
	memcpy(ty + 512, "code", 5);
#undef OFF
}

static void
check_sample_sane(const struct plainwalk *u, const struct tt_sample *s, int *bad)
{
	for (uint32_t t = 0; t < s->nthreads; t++) {
		const struct tt_thread *th = &s->threads[t];
		if (th->first_frame + (uint64_t)th->nframes > s->nframes ||
		    th->nframes > WALK_MAX_FRAMES)
			(*bad)++;
	}
	for (uint32_t f = 0; f < s->nframes; f++) {
		if (s->frames[f].code_id >= appendlog_count(u->codes.entries)) {
			(*bad)++;
			continue;
		}
		const struct code_entry *c = codecache_get(&u->codes, s->frames[f].code_id);
		if (!c->qualname || !c->filename)
			(*bad)++;
	}
}

static void
mutate(struct fakemem *m)
{
	size_t r = rng() % m->nregions;
	uint8_t *data = m->regions[r].data;
	size_t len = m->regions[r].len;
	int edits = 1 + (int)(rng() % 4);
	for (int e = 0; e < edits; e++) {
		size_t off = (rng() % len) & ~(size_t)7;
		/* Half the time, hit a field the image fills in (pointers,
		 * sizes, counters): blind edits would mostly land in padding. */
		if (rng() % 2)
			for (int tries = 0; tries < 64; tries++) {
				size_t o = (rng() % len) & ~(size_t)7;
				uint64_t cur;
				memcpy(&cur, data + o, 8);
				if (cur) {
					off = o;
					break;
				}
			}
		uint64_t v;
		const struct fakemem *rm = m;
		size_t other = rng() % rm->nregions;
		switch (rng() % 9) {
		case 0: data[rng() % len] ^= (uint8_t)(1u << (rng() % 8)); continue;
		case 1: v = rng(); break;                                       /* garbage */
		case 2: v = rm->regions[other].addr + (rng() % 4096); break;    /* into a region */
		case 3: v = rng() % 64; break;                                  /* small int */
		case 4: v = (uint64_t)-(int64_t)(rng() % 16); break;            /* negative */
		case 5: v = (uint64_t)-(int64_t)(8 * (1 + rng() % 64)); break;  /* aligned, wraps */
		case 6: /* aligned, at or just past a region's end */
			v = rm->regions[other].addr + rm->regions[other].len - 64 + 8 * (rng() % 16);
			break;
		case 7: v = 0x7ffffffff000ull + 8 * (rng() % 1024); break;     /* top of user space */
		default: v = 0; break;
		}
		if (off + 8 <= len)
			memcpy(data + off, &v, 8);
	}
}

/* A walker's sample must only name slots, stacks, frames and code objects
 * that exist, with stack depths that add up. */
static void
check_walk_sane(const struct stackwalk *w, const struct walk_thread *th, uint32_t n, int *bad)
{
	const struct intern *in = stackwalk_intern(w);
	uint32_t nstacks = appendlog_count(in->stacks), nframes = appendlog_count(in->frames);
	for (uint32_t t = 0; t < n; t++) {
		if (th[t].slot >= appendlog_count(stackwalk_slots(w)) || th[t].stack_id >= nstacks) {
			(*bad)++;
			continue;
		}
		uint32_t id = th[t].stack_id, depth = id ? intern_stack_at(in, id)->depth : 0;
		for (uint32_t hops = 0; id != 0; hops++) {
			const struct interned_stack *sk = intern_stack_at(in, id);
			if (hops > WALK_MAX_FRAMES || sk->depth != depth - hops || sk->frame == 0 ||
			    sk->frame >= nframes || sk->parent >= nstacks) {
				(*bad)++;
				break;
			}
			const struct interned_frame *f = intern_frame_at(in, sk->frame);
			if (f->func_id == 0 || f->func_id >= appendlog_count(in->funcs) ||
			    !intern_func_at(in, f->func_id)->qualname) {
				(*bad)++;
				break;
			}
			id = sk->parent;
		}
	}
}

/* The sampler's walker on the same kind of images: one long-lived walker
 * whose memory is corrupted between samples, and fresh ones. */
static void
fuzz_walker(const struct image *img, unsigned minor, double seconds)
{
	struct fakemem work = {0};
	fakemem_copy(&work, &img->mem);
	struct tt_error err = {0};
	struct target t;
	tt_status st = attach_image(&t, &work, img, &err);
	struct stackwalk_options o;
	stackwalk_default_options(&o);
	o.cpu_period_ns = 0; /* no /proc: the threads are made up */
	struct stackwalk *lived = NULL;
	if (st == TT_OK)
		st = stackwalk_new(&t, &o, &lived, &err);
	tap_ok(st == TT_OK, "3.%u walker starts on the synthetic image (%s)", minor, err.msg);
	if (st != TT_OK) {
		fakemem_free(&work);
		return;
	}
	const struct walk_thread *th;
	uint32_t n = 0;
	uint64_t now = 1000000000ull;
	st = stackwalk_sample(lived, now, &th, &n, &err);
	bool pristine = st == TT_OK && n == 2;
	uint32_t depth = 0;
	if (pristine)
		for (uint32_t k = 0; k < n; k++)
			if (th[k].stack_id)
				depth = intern_stack_at(stackwalk_intern(lived), th[k].stack_id)->depth;
	uint32_t want_depth = img->compiled_version && t.layout.owner_cstack < 0 ? NFRAMES + 1
										  : NFRAMES - 1;
	tap_ok(pristine && depth == want_depth, "3.%u walker: pristine image gives 2 threads, "
	       "%u frames deep (%s)", minor, depth, err.msg);

	unsigned long iterations = 0, ok = 0, failed = 0;
	int bad = 0, bad_status = 0;
	struct timespec start, cur;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		/* Mostly small drifts from the last image, sometimes a fresh
		 * copy: the cache sees both gradual and sudden change. */
		if (rng() % 4 == 0)
			fakemem_restore(&work, &img->mem);
		mutate(&work);
		now += rng() % 50000000ull;
		struct stackwalk *fresh = NULL, *w = lived;
		if (iterations % 3 == 0) {
			st = stackwalk_new(&t, &o, &fresh, &err);
			if (st != TT_OK) {
				bad_status++;
				break;
			}
			w = fresh;
		}
		int samples = 1 + (int)(rng() % 3);
		for (int k = 0; k < samples; k++) {
			st = stackwalk_sample(w, now + (uint64_t)k * 1000, &th, &n, &err);
			if (st == TT_OK) {
				check_walk_sane(w, th, n, &bad);
				ok++;
			} else {
				failed++;
				if (st != TT_EBADMEM && st != TT_EFAULT && st != TT_ENOTPY &&
				    !bad_status++)
					tap_diag("walker: unexpected status %s: %s", tt_status_name(st),
						 err.msg);
			}
		}
		stackwalk_free(fresh);
		iterations++;
		clock_gettime(CLOCK_MONOTONIC, &cur);
	} while ((cur.tv_sec - start.tv_sec) + (cur.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	stackwalk_free(lived);
	tap_diag("3.%u walker: %lu corrupted images, %lu samples taken, %lu refused", minor,
		 iterations, ok, failed);
	tap_ok(iterations > 100, "3.%u walker fuzzing ran (%lu iterations)", minor, iterations);
	tap_ok(bad == 0, "3.%u walker: every sample names existing stacks and code (%d bad)", minor,
	       bad);
	tap_ok(bad_status == 0, "3.%u walker: failures are memory errors only (%d others)", minor,
	       bad_status);
	tap_ok(ok > 0 && failed > 0, "3.%u walker: corruption both survived and detected", minor);
	fakemem_free(&work);
}

static uint8_t *
region_at(struct fakemem *m, uint64_t addr)
{
	for (size_t i = 0; i < m->nregions; i++)
		if (m->regions[i].addr == addr)
			return m->regions[i].data;
	abort();
}

/* Images built to make a walker loop, hoard or grow: each must end in a
 * prompt memory error, with bounded work and memory. */
static void
hostile_images(unsigned minor)
{
#define OFF(name) table_value(minor, name)
	struct tt_error err = {0};
	struct stackwalk_options o;
	stackwalk_default_options(&o);
	o.cpu_period_ns = 0;
	const struct walk_thread *th;
	uint32_t n;
	tt_status st;

	/* A thread list that loops through a state whose OS thread has not
	 * started (native id 0), then one that loops through a live one:
	 * refused as corrupt, sample after sample, without using up slots. */
	for (int live = 0; live <= 1; live++) {
		struct image img;
		build_image(&img, minor);
		struct target t;
		struct stackwalk *w = NULL;
		st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
		if (st == TT_OK)
			st = stackwalk_new(&t, &o, &w, &err);
		if (st == TT_OK)
			st = stackwalk_sample(w, 1000000000ull, &th, &n, &err);
		uint8_t *ts2 = region_at(&img.mem, A_TSTATE2), *in = region_at(&img.mem, A_INTERP);
		if (!live)
			put64(ts2, OFF("thread_state.native_thread_id"), 0);
		put64(ts2, OFF("thread_state.next"), A_TSTATE2);
		int bad = 0;
		for (int k = 0; k < 200 && st != TT_ENOMEM; k++) {
			put64(in, t.layout.is_threads_count, 100 + (uint64_t)k); /* the list changed */
			st = stackwalk_sample(w, 2000000000ull + (uint64_t)k * 1000000ull, &th, &n, &err);
			bad += st == TT_EBADMEM;
		}
		uint32_t slots = w ? appendlog_count(stackwalk_slots(w)) : 0;
		tap_ok(bad == 200 && slots <= 2, "3.%u walker: thread list looping through a %s thread: "
		       "200 refusals (%d), %u slots (%s)", minor, live ? "live" : "not yet started",
		       bad, slots, err.msg);
		stackwalk_free(w);
		fakemem_free(&img.mem);
	}

	/* An interpreter list that loops back on itself (a torn read): refused
	 * sample after sample, its threads neither multiplied into new slots
	 * nor their caches lost (the sanitizer build checks for leaks), and
	 * sampled again once the list is whole. */
	{
		struct image img;
		build_image(&img, minor);
		struct target t;
		struct stackwalk *w = NULL;
		st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
		if (st == TT_OK)
			st = stackwalk_new(&t, &o, &w, &err);
		if (st == TT_OK)
			st = stackwalk_sample(w, 1000000000ull, &th, &n, &err);
		uint8_t *in = region_at(&img.mem, A_INTERP);
		int bad = 0;
		char why[sizeof err.msg] = "";
		if (st == TT_OK) {
			put64(in, t.layout.is_next, A_INTERP);
			/* 100 ms apart: the interpreter list is read again each time */
			for (int k = 0; k < 50; k++) {
				st = stackwalk_sample(w, 2000000000ull + (uint64_t)k * 100000000ull, &th,
						      &n, &err);
				bad += st == TT_EBADMEM;
			}
			snprintf(why, sizeof why, "%s", err.msg);
			put64(in, t.layout.is_next, 0);
			st = stackwalk_sample(w, 9000000000ull, &th, &n, &err);
		}
		uint32_t slots = w ? appendlog_count(stackwalk_slots(w)) : 0;
		tap_ok(bad == 50 && st == TT_OK && n == 2 && slots == 2,
		       "3.%u walker: interpreter list looping back on itself: 50 refusals (%d), "
		       "then %u threads in %u slots (%s)", minor, bad, n, slots, why);
		stackwalk_free(w);
		fakemem_free(&img.mem);
	}

	/* The same interpreter list for the plain unwinder and the list of
	 * threads every reader shares (target_list_threads): refused as a
	 * loop after a lap or two, not after 256 interpreters. */
	{
		struct image img;
		build_image(&img, minor);
		struct target t;
		struct plainwalk u;
		struct tt_sample s = {0};
		put64(region_at(&img.mem, A_INTERP), OFF("interpreter_state.next"), A_INTERP);
		st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
		struct target_thread listed[600];
		uint32_t nlisted = 0;
		bool listed_ok = true;
		if (st == TT_OK) {
			plainwalk_init(&u, &t, 0, &err);
			st = plainwalk_sample(&u, &s, &err);
			plainwalk_free(&u);
			listed_ok = target_list_threads(&t, listed, 600, &nlisted);
		}
		tap_ok(st == TT_EBADMEM && strstr(err.msg, "loops back") && s.nthreads <= 8 &&
		       !listed_ok && nlisted <= 8,
		       "3.%u unwinder and thread list: interpreter list looping back on itself "
		       "refused (%s; %u threads listed)", minor, err.msg, nlisted);
		tt_sample_free(&s);
		fakemem_free(&img.mem);
	}

	/* A 20,000-frame chain is long, not a loop: both walkers keep its
	 * innermost WALK_MAX_FRAMES frames, mark it truncated, read no
	 * further, and the other thread is sampled as usual. The same chain
	 * closed into a loop of 3,000 frames (a torn read) is refused. */
	for (int loop = 0; loop <= 1; loop++) {
		struct image img;
		build_image(&img, minor);
		enum { LONG = 20000, LOOP_AT = 17000, A_LONG = 0x10000000 };
		uint8_t *d = fakemem_add(&img.mem, A_LONG, (size_t)256 * LONG);
		for (int i = 0; i < LONG; i++) {
			uint8_t *f = d + 256 * (size_t)i;
			uint64_t prev = i + 1 < LONG ? A_LONG + 256 * (uint64_t)(i + 1) : 0;
			if (loop && i == LOOP_AT + 2999)
				prev = A_LONG + 256 * (uint64_t)LOOP_AT;
			put64(f, OFF("interpreter_frame.previous"), prev);
			put64(f, OFF("interpreter_frame.executable"), A_CODE | (minor >= 14 ? 1 : 0));
			put64(f, OFF("interpreter_frame.instr_ptr"),
			      A_CODE + OFF("code_object.co_code_adaptive") + 2 * (uint64_t)(i % 8));
		}
		/* The loop starts near the top for the check: frames 0.. lead into it. */
		uint64_t top = A_LONG + (loop ? 256 * (uint64_t)(LOOP_AT - 100) : 0);
		uint8_t *ts = region_at(&img.mem, A_TSTATE);
		put64(ts, OFF("thread_state.current_frame"), top);
		put64(ts, OFF("thread_state.datastack_chunk"), 0);
		if (minor >= 15)
			put64(ts, OFF("thread_state.base_frame"), 0);
		struct target t;
		struct plainwalk u;
		struct tt_sample s = {0};
		st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
		uint64_t before = img.mem.reads;
		tt_status ust = st;
		if (st == TT_OK) {
			plainwalk_init(&u, &t, 0, &err);
			ust = plainwalk_sample(&u, &s, &err);
			plainwalk_free(&u);
		}
		uint64_t ureads = img.mem.reads - before;
		bool uok = loop ? ust == TT_EBADMEM
				: ust == TT_OK && s.nthreads == 2 && s.threads[0].nframes == WALK_MAX_FRAMES &&
					  (s.threads[0].status & TT_THREAD_TRUNCATED) &&
					  !(s.threads[1].status & TT_THREAD_TRUNCATED);
		tap_ok(uok && ureads <= WALK_MAX_FRAMES + 64,
		       "3.%u unwinder: 20,000-frame chain %s after %llu reads (%s)", minor,
		       loop ? "with a 3,000-frame loop refused" : "truncated to its innermost frames",
		       (unsigned long long)ureads, ust == TT_OK ? "ok" : err.msg);
		tt_sample_free(&s);

		struct stackwalk *w = NULL;
		tt_status wst = st == TT_OK ? stackwalk_new(&t, &o, &w, &err) : st;
		uint32_t depth = 0, state = 0, others = 0;
		for (int k = 0; k < 3 && wst == TT_OK; k++) {
			wst = stackwalk_sample(w, 1000000000ull + (uint64_t)k * 100000000ull, &th, &n, &err);
			for (uint32_t i = 0; wst == TT_OK && i < n; i++) {
				if (i == 0 && th[i].stack_id) {
					depth = intern_stack_at(stackwalk_intern(w), th[i].stack_id)->depth;
					state = th[i].state;
				} else if (i > 0) {
					others++;
				}
			}
		}
		bool wok = loop ? wst == TT_EBADMEM
				: wst == TT_OK && depth == WALK_MAX_FRAMES && (state & TT_THREAD_TRUNCATED) &&
					  others == 3;
		tap_ok(wok, "3.%u walker: 20,000-frame chain %s (depth %u, state 0x%x; %s)", minor,
		       loop ? "with a 3,000-frame loop refused" : "truncated, other thread sampled",
		       depth, state, wst == TT_OK ? "ok" : err.msg);
		stackwalk_free(w);
		fakemem_free(&img.mem);
	}

	/* The plain unwinder on a thread list looping through a thread with
	 * an 8000-frame stack: found out after a few laps, not 8192. */
	{
		struct image img;
		build_image(&img, minor);
		enum { DEEP = 8000, A_DEEP = 0x10000000 };
		uint8_t *d = fakemem_add(&img.mem, A_DEEP, (size_t)256 * DEEP);
		for (int i = 0; i < DEEP; i++) {
			uint8_t *f = d + 256 * (size_t)i;
			put64(f, OFF("interpreter_frame.previous"),
			      i + 1 < DEEP ? A_DEEP + 256 * (uint64_t)(i + 1) : 0);
			put64(f, OFF("interpreter_frame.executable"), A_CODE | (minor >= 14 ? 1 : 0));
			put64(f, OFF("interpreter_frame.instr_ptr"),
			      A_CODE + OFF("code_object.co_code_adaptive"));
		}
		uint8_t *ts = region_at(&img.mem, A_TSTATE);
		put64(ts, OFF("thread_state.current_frame"), A_DEEP);
		if (minor >= 15)
			put64(ts, OFF("thread_state.base_frame"), 0);
		put64(ts, OFF("thread_state.next"), A_TSTATE);
		struct target t;
		struct plainwalk u;
		struct tt_sample s = {0};
		st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
		if (st == TT_OK) {
			plainwalk_init(&u, &t, 0, &err);
			st = plainwalk_sample(&u, &s, &err);
			plainwalk_free(&u);
		}
		uint64_t reads = img.mem.reads;
		tap_ok(st == TT_EBADMEM && reads < 5 * DEEP, "3.%u unwinder: looping thread list with "
		       "a deep stack refused after %llu reads (%s)", minor, (unsigned long long)reads,
		       err.msg);
		tt_sample_free(&s);
		fakemem_free(&img.mem);
	}

	/* An idle thread whose memory gains, sample after sample, a long new
	 * prefix that ends in its cached top frame: the spliced chain must
	 * stay within what one walk may read. */
	{
		struct image img;
		build_image(&img, minor);
		struct target t;
		struct stackwalk *w = NULL;
		st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
		if (st == TT_OK)
			st = stackwalk_new(&t, &o, &w, &err);
		uint64_t now = 1000000000ull;
		if (st == TT_OK)
			st = stackwalk_sample(w, now, &th, &n, &err);
		uint8_t *ts = region_at(&img.mem, A_TSTATE), *in = region_at(&img.mem, A_INTERP);
		put64(ts, OFF("thread_state.datastack_chunk"), 0); /* never copied whole */
		put64(in, OFF("interpreter_state.gil_runtime_state_holder"), A_TSTATE2);
		if (minor >= 15)
			put32(ts, OFF("thread_state.holds_gil"), 0);
		enum { K = 6000, STRIDE = 128 };
		uint64_t top = FRAME0;
		uint32_t deepest = 0;
		int refused = 0;
		bool truncated = false;
		for (int k = 0; k < 12 && st == TT_OK; k++) {
			uint64_t base = 0x20000000ull + (uint64_t)k * 0x1000000ull;
			uint8_t *d = fakemem_add(&img.mem, base, (size_t)STRIDE * K);
			for (int i = 0; i < K; i++) {
				uint8_t *f = d + (size_t)STRIDE * i;
				put64(f, OFF("interpreter_frame.previous"),
				      i + 1 < K ? base + STRIDE * (uint64_t)(i + 1) : top);
				put64(f, OFF("interpreter_frame.executable"), A_CODE | (minor >= 14 ? 1 : 0));
				put64(f, OFF("interpreter_frame.instr_ptr"),
				      A_CODE + OFF("code_object.co_code_adaptive") + 2 * (uint64_t)(i % 8));
			}
			top = base;
			put64(ts, OFF("thread_state.current_frame"), top);
			put64(in, t.layout.is_gil_switch, 1000 + (uint64_t)k); /* someone ran */
			now += 100000;
			st = stackwalk_sample(w, now, &th, &n, &err);
			if (st == TT_EBADMEM) {
				refused++;
				st = TT_OK;
			}
			for (uint32_t i = 0; st == TT_OK && i < n; i++)
				if (th[i].stack_id) {
					uint32_t dd = intern_stack_at(stackwalk_intern(w), th[i].stack_id)->depth;
					deepest = dd > deepest ? dd : deepest;
					truncated = (th[i].state & TT_THREAD_TRUNCATED) != 0;
				}
		}
		tap_ok(st == TT_OK && deepest == WALK_MAX_FRAMES && refused == 0 && truncated,
		       "3.%u walker: prefixes spliced onto a cached chain keep the innermost %u "
		       "frames, marked truncated (deepest %u, %d refused; %s)", minor,
		       WALK_MAX_FRAMES, deepest, refused, err.msg);
		stackwalk_free(w);
		fakemem_free(&img.mem);
	}

	/* An instruction pointer far below its code object: no signed
	 * overflow (UBSan watches), just no line. */
	{
		struct image img;
		build_image(&img, minor);
		struct target t;
		struct code_cache c;
		codecache_init(&c);
		uint32_t id = 0;
		st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
		if (st == TT_OK)
			st = codecache_lookup(&c, &t.mem, &t.layout, A_CODE, &id, &err);
		int line = st == TT_OK ? codecache_line(&c, id, 0x8000000000000000ull) : 0;
		tap_ok(st == TT_OK && line < 0, "3.%u instruction pointer 2^63 away: no line (%d)",
		       minor, line);
		codecache_free(&c);
		fakemem_free(&img.mem);
	}

	memset(&err, 0, sizeof err);
	/* A code object replaced at its address (freed, another made there):
	 * the cache's newest entry for the address is the one found, also
	 * after its index grew and took every entry again. */
	{
		struct image img;
		build_image(&img, minor);
		struct target t;
		struct code_cache c;
		codecache_init(&c);
		uint32_t first = 0, second = 0, again = 0;
		st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
		if (st == TT_OK)
			st = codecache_lookup(&c, &t.mem, &t.layout, A_CODE, &first, &err);
		uint8_t *co = region_at(&img.mem, A_CODE), *co1 = co + 512;
		memcpy(co + OFF("code_object.qualname"), co1 + OFF("code_object.qualname"), 8);
		codecache_invalidate(&c);
		if (st == TT_OK)
			st = codecache_lookup(&c, &t.mem, &t.layout, A_CODE, &second, &err);
		/* 600 more code objects: the index grows past its first 1,024 slots */
		enum { MANY = 600, A_MANY = 0x1000000 };
		uint8_t *many = fakemem_add(&img.mem, A_MANY, (size_t)MANY * 512);
		for (uint32_t i = 0; i < MANY; i++)
			memcpy(many + 512 * i, co + 1024, 512);
		for (uint32_t i = 0; i < MANY && st == TT_OK; i++) {
			uint32_t id;
			st = codecache_lookup(&c, &t.mem, &t.layout, A_MANY + 512 * (uint64_t)i, &id, &err);
		}
		if (st == TT_OK)
			st = codecache_lookup(&c, &t.mem, &t.layout, A_CODE, &again, &err);
		tap_ok(st == TT_OK && second != first && again == second && c.replaced == 1 &&
		       strcmp(codecache_get(&c, again)->qualname, "Beta.gamma") == 0,
		       "3.%u code cache: a replaced code object's newest entry is found, after "
		       "the index grew too (ids %u, %u, %u; replaced %llu; %s)", minor, first, second,
		       again, (unsigned long long)c.replaced, err.msg);
		codecache_free(&c);
		fakemem_free(&img.mem);
	}
#undef OFF
}

static void fuzz_tasks(const struct image *img, unsigned minor, double seconds);

static void
fuzz_version(unsigned minor, double seconds)
{
	struct image img;
	build_image(&img, minor);

	/* The pristine image must unwind to exactly what we built. */
	struct target t;
	struct tt_error err = {0};
	tt_status st = target_attach_memory(&t, fakemem_backend(&img.mem), A_RUNTIME, &err);
	tap_ok(st == TT_OK, "3.%u synthetic table decodes (%s)", minor, err.msg);
	if (st != TT_OK) {
		fakemem_free(&img.mem);
		return;
	}
	struct plainwalk u;
	plainwalk_init(&u, &t, 0, &err);
	struct tt_sample s = {0};
	st = plainwalk_sample(&u, &s, &err);
	tap_ok(st == TT_OK && s.nthreads == 2, "3.%u pristine image samples 2 threads (%s)", minor,
	       err.msg);
	if (st == TT_OK && s.nthreads == 2) {
		const struct tt_thread *th = &s.threads[0];
		tap_ok(th->nframes == NFRAMES - 1, "3.%u shim frames skipped: %u frames", minor,
		       th->nframes);
		const char *q0 = codecache_get(&u.codes, s.frames[th->first_frame].code_id)->qualname;
		int l0 = s.frames[th->first_frame].line;
		tap_ok(strcmp(q0, "alpha") == 0 && l0 == 11, "3.%u innermost frame alpha:11 (got %s:%d)",
		       minor, q0, l0);
		const struct tt_frame *f1 = &s.frames[th->first_frame + 1];
		tap_ok(strcmp(codecache_get(&u.codes, f1->code_id)->qualname, "Beta.gamma") == 0 &&
			       f1->line == 22,
		       "3.%u generator-owned frame decoded with its line (got %d)", minor, f1->line);
		tap_ok((th->status & TT_THREAD_GIL) && !(s.threads[1].status & TT_THREAD_GIL),
		       "3.%u GIL holder identified", minor);
		tap_ok(th->native_tid == 4242 && s.threads[1].native_tid == 4243,
		       "3.%u native thread ids", minor);
	}
	plainwalk_free(&u);

	/* Now corrupt copies of it, again and again. */
	struct fakemem work = {0};
	for (size_t i = 0; i < img.mem.nregions; i++)
		fakemem_add(&work, img.mem.regions[i].addr, img.mem.regions[i].len);
	unsigned long iterations = 0, ok = 0, failed = 0;
	int bad = 0, bad_status = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct plainwalk shared;
	plainwalk_init(&shared, &t, 0, &err);
	do {
		fakemem_restore(&work, &img.mem);
		int rounds = 1 + (int)(rng() % 3);
		for (int k = 0; k < rounds; k++)
			mutate(&work);
		struct target ft;
		st = target_attach_memory(&ft, fakemem_backend(&work), A_RUNTIME, &err);
		if (st == TT_OK) {
			/* Alternate fresh and long-lived caches: stale cache entries
			 * must not turn into bad output either. */
			struct plainwalk fresh, *uw = &fresh;
			if (iterations & 1) {
				shared.target = &ft;
				uw = &shared;
			} else {
				plainwalk_init(&fresh, &ft, 0, &err);
			}
			st = plainwalk_sample(uw, &s, &err);
			if (st == TT_OK)
				check_sample_sane(uw, &s, &bad), ok++;
			else
				failed++;
			if (uw == &fresh)
				plainwalk_free(&fresh);
		} else {
			failed++;
		}
		if (st != TT_OK && st != TT_EBADMEM && st != TT_EFAULT && st != TT_ENOTPY &&
		    st != TT_EVERSION) {
			if (!bad_status++)
				tap_diag("unexpected status %s: %s", tt_status_name(st), err.msg);
		}
		iterations++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	plainwalk_free(&shared);
	tap_diag("3.%u: %lu corrupted images, %lu sampled, %lu refused", minor, iterations, ok, failed);
	tap_ok(iterations > 100, "3.%u fuzzing ran (%lu iterations)", minor, iterations);
	tap_ok(bad == 0, "3.%u every accepted sample is internally consistent (%d bad)", minor, bad);
	tap_ok(bad_status == 0, "3.%u failures are memory errors only (%d others)", minor, bad_status);
	tap_ok(ok > 0 && failed > 0, "3.%u corruption both survived and detected", minor);
	tt_sample_free(&s);
	fakemem_free(&work);
	fuzz_walker(&img, minor, seconds);
	if (minor >= 14)
		fuzz_tasks(&img, minor, seconds);
	hostile_images(minor);
	fakemem_free(&img.mem);
}

/* A 3.11/3.12 image with the compiled-in offsets: the current frame behind
 * tstate->cframe (one thread's cframe on "its C stack", the other's its
 * root_cframe with no frame), the GIL in the runtime (3.11) or behind
 * interp->ceval.gil (3.12), entry shims only where the version has them. */
static void
build_compiled_image(struct image *img, unsigned minor)
{
	memset(img, 0, sizeof *img);
	img->minor = minor;
	img->compiled_version = 0x030000f0ull | (3ull << 24) | ((uint64_t)minor << 16) | (4u << 8);
	struct tt_error err = {0};
	struct py_layout L;
	if (pylayout_compiled_in(img->compiled_version, 0, &L, &err) != TT_OK)
		abort();
	uint8_t *rt = fakemem_add(&img->mem, A_RUNTIME, 4096);
	uint8_t *in = fakemem_add(&img->mem, A_INTERP, 4096);
	put64(rt, L.rt_interpreters_head, A_INTERP);
	uint8_t *gil = L.gil_place == PY_GIL_IN_RUNTIME ? rt + L.rt_gil : in + 2048;
	if (L.gil_place == PY_GIL_BEHIND_POINTER)
		put64(in, L.is_gil_ptr, A_INTERP + 2048);
	put32(gil, L.gil_locked, 1);
	put64(gil, L.gil_holder, A_TSTATE);
	put64(in, L.is_threads_head, A_TSTATE);

	uint8_t *ts = fakemem_add(&img->mem, A_TSTATE, 4096);
	uint8_t *ts2 = fakemem_add(&img->mem, A_TSTATE2, 4096);
	uint8_t *cf = fakemem_add(&img->mem, A_CFRAME, 4096);
	uint8_t *fr = fakemem_add(&img->mem, A_FRAMES, 4096);
	put64(ts, L.ts_interp, A_INTERP);
	put64(ts, L.ts_next, A_TSTATE2);
	put64(ts, L.ts_native_thread_id, 4242);
	put64(ts, L.ts_cframe, A_CFRAME + 64);
	put64(cf, 64 + L.cf_current_frame, FRAME0);
	put64(ts2, L.ts_interp, A_INTERP);
	put64(ts2, L.ts_native_thread_id, 4243);
	put64(ts2, L.ts_cframe, A_TSTATE2 + L.ts_root_cframe);
	put64(fr, 8, 4096);
	put64(ts, L.ts_datastack_chunk, A_FRAMES);
	put64(ts, L.ts_datastack_top, FRAME0 + 256 * (NFRAMES + 3));
	for (int i = 0; i <= NFRAMES; i++) {
		uint8_t *f = fr + 64 + 256 * i;
		put64(f, L.fr_previous, i < NFRAMES ? FRAME0 + 256 * (i + 1) : 0);
		bool shim = L.owner_cstack >= 0 && (i == NFRAMES || i == 2);
		f[L.fr_owner] = (uint8_t)(shim ? L.owner_cstack : (i == 1 ? 1 : 0));
		uint64_t code = A_CODE + 512 * (uint64_t)(i % 3);
		put64(f, L.fr_executable, code);
		put64(f, L.fr_instr_ptr, code + L.co_code_adaptive + 2 * (uint64_t)i);
	}
	uint8_t *co = fakemem_add(&img->mem, A_CODE, 4096);
	uint8_t *st = fakemem_add(&img->mem, A_STRINGS, 4096);
	static const char *const quals[] = {"alpha", "Beta.gamma", "delta.<locals>.eps"};
	for (int i = 0; i < 4; i++) {
		uint64_t addr = i < 3 ? A_STRINGS + 256 * (uint64_t)i : A_STRINGS + 1024;
		uint8_t *o = st + (addr - A_STRINGS);
		const char *text = i < 3 ? quals[i] : "/app/fuzz.py";
		put64(o, L.ob_type, A_TYPE);
		put64(o, L.str_length, strlen(text));
		put32(o, L.str_state, (1u << 2) | (1u << 5) | (1u << 6));
		memcpy(o + L.str_ascii_size, text, strlen(text) + 1);
	}
	for (int i = 0; i < 3; i++) {
		uint8_t *c = co + 512 * i;
		uint64_t table = A_STRINGS + 2048 + 256 * (uint64_t)i;
		put64(c, L.ob_type, A_TYPE);
		put64(c, L.co_qualname, A_STRINGS + 256 * (uint64_t)i);
		put64(c, L.co_name, A_STRINGS + 256 * (uint64_t)i);
		put64(c, L.co_filename, A_STRINGS + 1024);
		put64(c, L.co_linetable, table);
		put32(c, L.co_firstlineno, 10 * (uint32_t)(i + 1));
		uint8_t *b = st + (table - A_STRINGS);
		put64(b, L.ob_type, A_TYPE);
		put64(b, L.bytes_size, 16);
		for (int k = 0; k < 8; k++) {
			b[L.bytes_sval + 2 * k] = 0x80 | (13 << 3);
			b[L.bytes_sval + 2 * k + 1] = 2;
		}
	}
	uint8_t *ty = fakemem_add(&img->mem, A_TYPE, 1024);
	put64(ty, L.tp_name, A_TYPE + 512);
	memcpy(ty + 512, "code", 5);
	img->l = L;
}

static void
fuzz_compiled(unsigned minor, double seconds)
{
	struct image img;
	build_compiled_image(&img, minor);
	struct target t;
	struct tt_error err = {0};
	tt_status st = attach_image(&t, &img.mem, &img, &err);
	struct plainwalk u;
	plainwalk_init(&u, &t, 0, &err);
	struct tt_sample s = {0};
	if (st == TT_OK)
		st = plainwalk_sample(&u, &s, &err);
	uint32_t want = t.layout.owner_cstack < 0 ? NFRAMES + 1 : NFRAMES - 1;
	tap_ok(st == TT_OK && s.nthreads == 2 && s.threads[0].nframes == want &&
		       s.threads[1].nframes == 0 && (s.threads[0].status & TT_THREAD_GIL) &&
		       !(s.threads[1].status & TT_THREAD_GIL),
	       "3.%u compiled-in layout: pristine image gives 2 threads, %u frames through the "
	       "cframe, GIL holder known (%s)", minor, want, err.msg);
	if (st == TT_OK && s.nthreads == 2 && s.nframes > 1) {
		const struct tt_frame *f0 = &s.frames[0], *f1 = &s.frames[1];
		tap_ok(strcmp(codecache_get(&u.codes, f0->code_id)->qualname, "alpha") == 0 &&
			       f0->line == 11 && f1->line == 22,
		       "3.%u frames decoded with prev_instr lines (got %d, %d)", minor, f0->line,
		       f1->line);
	} else {
		tap_ok(false, "3.%u frames decoded", minor);
	}
	plainwalk_free(&u);

	struct fakemem work = {0};
	for (size_t i = 0; i < img.mem.nregions; i++)
		fakemem_add(&work, img.mem.regions[i].addr, img.mem.regions[i].len);
	unsigned long iterations = 0, ok = 0, failed = 0;
	int bad = 0, bad_status = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct target ft;
	attach_image(&ft, &work, &img, &err);
	struct plainwalk shared;
	plainwalk_init(&shared, &ft, 0, &err);
	do {
		fakemem_restore(&work, &img.mem);
		int rounds = 1 + (int)(rng() % 3);
		for (int k = 0; k < rounds; k++)
			mutate(&work);
		struct plainwalk fresh, *uw = &shared;
		if (!(iterations & 1)) {
			plainwalk_init(&fresh, &ft, 0, &err);
			uw = &fresh;
		}
		st = plainwalk_sample(uw, &s, &err);
		if (st == TT_OK)
			check_sample_sane(uw, &s, &bad), ok++;
		else
			failed++;
		if (uw == &fresh)
			plainwalk_free(&fresh);
		if (st != TT_OK && st != TT_EBADMEM && st != TT_EFAULT && !bad_status++)
			tap_diag("unexpected status %s: %s", tt_status_name(st), err.msg);
		iterations++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	plainwalk_free(&shared);
	tap_diag("3.%u: %lu corrupted images, %lu sampled, %lu refused", minor, iterations, ok, failed);
	tap_ok(iterations > 100, "3.%u fuzzing ran (%lu iterations)", minor, iterations);
	tap_ok(bad == 0, "3.%u every accepted sample is internally consistent (%d bad)", minor, bad);
	tap_ok(bad_status == 0, "3.%u failures are memory errors only (%d others)", minor, bad_status);
	tap_ok(ok > 0 && failed > 0, "3.%u corruption both survived and detected", minor);
	tt_sample_free(&s);
	fakemem_free(&work);
	fuzz_walker(&img, minor, seconds);
	fakemem_free(&img.mem);
}

/* ---- asyncio tasks (3.14+) ---- */

/* Our made-up Py_AsyncioModuleDebugOffsets: task object fields, and where
 * the interpreter and thread states keep their task lists. */
enum {
	TASK_SIZE = 256, TASK_NAME = 32, TASK_AWAITED_BY = 40, TASK_IS_SET = 56,
	TASK_CORO = 64, TASK_NODE = 96,
	INTERP_TASKS = 2048, TS_LOOP = 2048, TS_RUNNING = 2056, TS_TASKS = 2064,
	STR_TYPE = A_TYPES, LONG_TYPE = A_TYPES + 512,
	CORO_STRIDE = 1024, NTASKS = 4,
};

static uint64_t
task_addr(int k)
{
	return A_TASKS + 512 * (uint64_t)k;
}

/* Four tasks: "main"; "conn-1" (two coroutines deep) awaited by main;
 * "conn-2", running, awaited by a set of {main, conn-1}; and one named by
 * an int (Task-7) on the interpreter's list. */
static void
add_tasks(struct fakemem *m, const struct py_layout *l)
{
	uint8_t *tab = fakemem_add(m, A_ASYNC, 4096);
	static const uint64_t table[] = {TASK_SIZE, TASK_NAME, TASK_AWAITED_BY, 48, TASK_IS_SET,
					 TASK_CORO, TASK_NODE, 4096, INTERP_TASKS, 4096, TS_LOOP,
					 TS_RUNNING, TS_TASKS};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		put64(tab, 8 * i, table[i]);
	uint8_t *ty = fakemem_add(m, A_TYPES, 1024);
	put64(ty, l->type_flags, 1ull << 28);          /* Py_TPFLAGS_UNICODE_SUBCLASS */
	put64(ty + 512, l->type_flags, 1ull << 24);    /* Py_TPFLAGS_LONG_SUBCLASS */
	uint8_t *tasks = fakemem_add(m, A_TASKS, 4096);
	uint8_t *coros = fakemem_add(m, A_COROS, CORO_STRIDE * 8);
	static const char *const names[] = {"main", "conn-1", "conn-2"};
	for (int k = 0; k < NTASKS; k++) {
		uint8_t *t = tasks + 512 * k;
		uint64_t name = task_addr(k) + TASK_SIZE;
		if (k < 3) {
			put_ascii(tasks, A_TASKS, name, names[k]);
			put64(tasks + (name - A_TASKS), 8, STR_TYPE);
		} else {
			uint8_t *n = tasks + (name - A_TASKS);
			put64(n, 8, LONG_TYPE);
			put64(n, l->long_size, 1u << 3);   /* one digit, positive */
			put32(n, l->long_digits, 7);
		}
		put64(t, TASK_NAME, name);
		put64(t, TASK_CORO, A_COROS + CORO_STRIDE * (uint64_t)k);
	}
	/* The set awaiting conn-2: 8 slots, a removed entry among them. */
	uint64_t set = task_addr(2) + 384, entries = A_TASKS + 2048;
	put64(tasks + (set - A_TASKS), l->set_used, 2);
	put64(tasks + (set - A_TASKS), l->set_mask, 7);
	put64(tasks + (set - A_TASKS), l->set_table, entries);
	uint8_t *e = tasks + (entries - A_TASKS);
	put64(e, 16 * 1, task_addr(0));
	put64(e, 16 * 1 + 8, 11);
	put64(e, 16 * 3, task_addr(3));
	put64(e, 16 * 3 + 8, (uint64_t)-1);         /* a dummy: removed */
	put64(e, 16 * 6, task_addr(1));
	put64(e, 16 * 6 + 8, 13);
	put64(tasks + 512 * 1, TASK_AWAITED_BY, task_addr(0));
	put64(tasks + 512 * 2, TASK_AWAITED_BY, set);
	tasks[512 * 2 + TASK_IS_SET] = 1;
	/* Coroutines 0-4; conn-1's awaits coroutine 4 (same type). */
	for (int k = 0; k < 5; k++) {
		uint8_t *c = coros + CORO_STRIDE * k;
		uint64_t at = A_COROS + CORO_STRIDE * (uint64_t)k;
		put64(c, 8, A_TYPES + 256);
		c[l->gen_frame_state] = (uint8_t)(int8_t)(k == 1 ? l->gen_state_yield_from
								 : l->gen_state_yield_from - 1);
		uint8_t *f = c + l->gen_iframe;
		f[l->fr_owner] = (uint8_t)l->owner_generator;
		uint64_t code = A_CODE + 512 * (uint64_t)(k % 3);
		put64(f, l->fr_executable, code | 1);
		put64(f, l->fr_instr_ptr, code + l->co_code_adaptive + 2 * (uint64_t)k);
		uint64_t sp = at + 960;
		put64(f, l->fr_stackpointer, sp);
		if (k == 1)
			put64(c, 960 - 8 * l->awaitee_slot, A_COROS + CORO_STRIDE * 4);
	}
	/* Lists: the thread's holds main, conn-1, conn-2; the interpreter's Task-7. */
	uint8_t *ts = region_at(m, A_TSTATE), *in = region_at(m, A_INTERP);
	uint64_t head = A_TSTATE + TS_TASKS, ihead = A_INTERP + INTERP_TASKS;
	put64(ts, TS_TASKS + l->llist_next, task_addr(0) + TASK_NODE);
	for (int k = 0; k < 3; k++)
		put64(tasks + 512 * k, TASK_NODE + l->llist_next,
		      k < 2 ? task_addr(k + 1) + TASK_NODE : head);
	put64(in, INTERP_TASKS + l->llist_next, task_addr(3) + TASK_NODE);
	put64(tasks + 512 * 3, TASK_NODE + l->llist_next, ihead);
	put64(ts, TS_LOOP, 0x4000);
	put64(ts, TS_RUNNING, task_addr(2));
}

/* Is a read's result within its own bounds? */
static void
check_tasks_sane(const struct tt_tasks *ts, const struct code_cache *codes, int *bad)
{
	if (ts->n > TASKS_MAX)
		(*bad)++;
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct tt_task *t = &ts->tasks[i];
		if ((uint64_t)t->first_frame + t->nframes > ts->nframes ||
		    t->nframes > TASKS_MAX_CHAIN ||
		    (uint64_t)t->first_awaiter + t->nawaiters > ts->nawaiters ||
		    t->nawaiters > TASKS_MAX_AWAITERS || t->name_off >= ts->names_len ||
		    strnlen(ts->names + t->name_off, ts->names_len - t->name_off) ==
			    ts->names_len - t->name_off) {
			(*bad)++;
			continue;
		}
		for (uint32_t f = 0; f < t->nframes; f++)
			if (ts->frames[t->first_frame + f].code_id >= appendlog_count(codes->entries))
				(*bad)++;
	}
}

static const struct tt_task *
task_named(const struct tt_tasks *ts, const char *name)
{
	for (uint32_t i = 0; i < ts->n; i++)
		if (strcmp(tt_task_name(ts, &ts->tasks[i]), name) == 0)
			return &ts->tasks[i];
	return NULL;
}

static void
fuzz_tasks(const struct image *img, unsigned minor, double seconds)
{
	struct fakemem pristine = {0}, work = {0};
	fakemem_copy(&pristine, &img->mem);
	struct tt_error err = {0};
	struct target t;
	tt_status st = attach_image(&t, &pristine, img, &err);
	tap_ok(st == TT_OK && t.layout.has_async, "3.%u tasks: the layout reads asyncio (%s)",
	       minor, err.msg);
	if (st != TT_OK || !t.layout.has_async) {
		fakemem_free(&pristine);
		return;
	}
	add_tasks(&pristine, &t.layout);
	fakemem_copy(&work, &pristine);
	struct target wt;
	attach_image(&wt, &work, img, &err);
	struct code_cache codes;
	codecache_init(&codes);
	struct task_reader lived;
	struct tt_tasks out = {0};
	task_reader_init(&lived, &wt, &codes, 0, &err);
	st = task_reader_use_table(&lived, A_ASYNC, &err);
	if (st == TT_OK)
		st = task_reader_read(&lived, &out, &err);
	const struct tt_task *main_t = task_named(&out, "main"), *c1 = task_named(&out, "conn-1");
	const struct tt_task *c2 = task_named(&out, "conn-2"), *t7 = task_named(&out, "Task-7");
	tap_ok(st == TT_OK && out.n == NTASKS && out.lost == 0 && !out.incomplete && main_t && c1 &&
		       c2 && t7,
	       "3.%u tasks: pristine image reads 4 tasks by name (%u, %s)", minor, out.n, err.msg);
	if (main_t && c1 && c2 && t7) {
		const uint64_t *aw = out.awaiters;
		tap_ok(c1->nframes == 2 && main_t->nframes == 1 && c1->nawaiters == 1 &&
			       aw[c1->first_awaiter] == task_addr(0) && c2->nawaiters == 2 &&
			       c2->running && !c1->running && t7->thread == 0 && c1->thread == 4242,
		       "3.%u tasks: chains, awaiters (one and a set with a removed entry), running "
		       "task and lists as built", minor);
	} else {
		tap_ok(false, "3.%u tasks: chains and awaiters as built", minor);
	}

	/* Hostile shapes random edits do not make: each bound must hold. */
	const struct py_layout *l = &t.layout;
	/* Offsets that wrap around when added to (found by ASan in this fuzz). */
	static const uint64_t wraps[][2] = {
		{40, (uint64_t)-2}, {8, (uint64_t)-4}, {16, (uint64_t)-1}, {32, (uint64_t)-1},
		{48, (uint64_t)-8}, {80, (uint64_t)-3}, {88, (uint64_t)-8}, {96, (uint64_t)-12},
	};
	uint8_t *tab = region_at(&work, A_ASYNC);
	int wrapped = 0;
	for (size_t i = 0; i < sizeof wraps / sizeof wraps[0]; i++) {
		uint64_t keep;
		memcpy(&keep, tab + wraps[i][0], 8);
		put64(tab, wraps[i][0], wraps[i][1]);
		struct task_reader probe;
		task_reader_init(&probe, &wt, &codes, 0, &err);
		wrapped += task_reader_use_table(&probe, A_ASYNC, &err) == TT_OK;
		task_reader_free(&probe);
		put64(tab, wraps[i][0], keep);
	}
	tap_ok(wrapped == 0, "3.%u tasks: offsets near 2^64 are refused (%d of %zu taken)", minor,
	       wrapped, sizeof wraps / sizeof wraps[0]);
	uint8_t *coro1 = region_at(&work, A_COROS) + CORO_STRIDE;
	put64(coro1, 960 - 8 * l->awaitee_slot, A_COROS + CORO_STRIDE);   /* awaits itself */
	st = task_reader_read(&lived, &out, &err);
	c1 = st == TT_OK ? task_named(&out, "conn-1") : NULL;
	tap_ok(c1 && c1->nframes == TASKS_MAX_CHAIN && c1->chain_cut,
	       "3.%u tasks: a coroutine awaiting itself stops at %u frames (%u)", minor,
	       TASKS_MAX_CHAIN, c1 ? c1->nframes : 0);
	memcpy(coro1, region_at(&pristine, A_COROS) + CORO_STRIDE, CORO_STRIDE);
	uint8_t *tk = region_at(&work, A_TASKS);
	put64(tk + 512 * 2, TASK_NODE + l->llist_next, task_addr(1) + TASK_NODE); /* a lap */
	st = task_reader_read(&lived, &out, &err);
	tap_ok(st == TT_OK && out.truncated && out.n + out.lost <= TASKS_MAX,
	       "3.%u tasks: a task list that never returns to its head stops at %u tasks (%u)",
	       minor, TASKS_MAX, out.n);
	put64(tk + 512 * 2, TASK_NODE + l->llist_next, A_TSTATE + TS_TASKS);
	put64(tk + (task_addr(2) + 384 - A_TASKS), l->set_mask, (1ull << 40) - 1);
	st = task_reader_read(&lived, &out, &err);
	tap_ok(st == TT_OK && out.n == NTASKS - 1 && out.lost == 1 && !task_named(&out, "conn-2"),
	       "3.%u tasks: an awaiter set of 2^40 slots costs that task only (%u read, %u lost)",
	       minor, out.n, out.lost);

	unsigned long iterations = 0, ok = 0, failed = 0;
	int bad = 0, bad_status = 0;
	struct timespec start, cur;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		fakemem_restore(&work, &pristine);
		int rounds = 1 + (int)(rng() % 3);
		for (int k = 0; k < rounds; k++)
			mutate(&work);
		struct task_reader fresh, *r = &lived;
		if (iterations % 3 == 0) {
			/* A new reader takes the (maybe corrupted) table itself. */
			task_reader_init(&fresh, &wt, &codes, 0, &err);
			r = &fresh;
			st = task_reader_use_table(r, A_ASYNC, &err);
		} else {
			st = TT_OK;
		}
		if (st == TT_OK)
			st = task_reader_read(r, &out, &err);
		if (st == TT_OK) {
			check_tasks_sane(&out, &codes, &bad);
			ok++;
		} else {
			failed++;
		}
		if (st != TT_OK && st != TT_EBADMEM && st != TT_EFAULT && !bad_status++)
			tap_diag("tasks: unexpected status %s: %s", tt_status_name(st), err.msg);
		/* One task at a time, as the sampler reads a task born since the last read. */
		for (int k = 0; k <= NTASKS && r->found; k++) {
			uint64_t at = k < NTASKS ? task_addr(k) : A_TASKS + (rng() % 4096);
			st = task_reader_read_task(r, at, &out, &err);
			if (st == TT_OK)
				check_tasks_sane(&out, &codes, &bad);
			else if (st != TT_EBADMEM && st != TT_EFAULT && !bad_status++)
				tap_diag("tasks: one task, unexpected status %s: %s", tt_status_name(st),
					 err.msg);
		}
		if (r == &fresh)
			task_reader_free(&fresh);
		iterations++;
		clock_gettime(CLOCK_MONOTONIC, &cur);
	} while ((cur.tv_sec - start.tv_sec) + (cur.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	tap_diag("3.%u tasks: %lu corrupted images, %lu read, %lu refused", minor, iterations, ok,
		 failed);
	tap_ok(iterations > 100, "3.%u task reader fuzzing ran (%lu iterations)", minor, iterations);
	tap_ok(bad == 0, "3.%u tasks: every read stays within its bounds (%d bad)", minor, bad);
	tap_ok(bad_status == 0, "3.%u tasks: failures are memory errors only (%d others)", minor,
	       bad_status);
	tap_ok(ok > 0 && failed > 0, "3.%u tasks: corruption both survived and detected", minor);
	tt_tasks_free(&out);
	task_reader_free(&lived);
	codecache_free(&codes);
	fakemem_free(&work);
	fakemem_free(&pristine);
}

int
main(void)
{
	const char *seed_env = getenv("TT_FUZZ_SEED");
	const char *secs_env = getenv("TT_FUZZ_SECONDS");
	rng_state = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
	if (rng_state == 0)
		rng_state = 1;
	double seconds = secs_env ? atof(secs_env) : 3.0;
	tap_diag("seed %llu (set TT_FUZZ_SEED to reproduce)", (unsigned long long)rng_state);
	for (unsigned minor = 11; minor <= 12; minor++)
		fuzz_compiled(minor, seconds);
	for (unsigned minor = 13; minor <= 15; minor++)
		fuzz_version(minor, seconds);
	return tap_done();
}
