/* Feed the unwinder corrupted memory images of a synthetic interpreter and
 * check it never crashes, hangs or returns nonsense. Run under the
 * sanitizers in CI. TT_FUZZ_SECONDS bounds the time (default 3 per version),
 * TT_FUZZ_SEED reproduces a run. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakemem.h"
#include "pylayout.h"
#include "tap.h"
#include "target.h"
#include "unwinder.h"

/* Addresses of the synthetic objects (regions of the fake memory). */
enum {
	A_RUNTIME = 0x100000, A_INTERP = 0x200000, A_TSTATE = 0x300000,
	A_FRAMES = 0x400000, A_CODE = 0x500000, A_STRINGS = 0x600000,
	A_TYPE = 0x700000, A_TSTATE2 = 0x800000,
};
#define STRUCT_SIZE 512
#define RUNTIME_FIELDS 1024
#define NFRAMES 6

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
};

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
	put64(ts, OFF("thread_state.current_frame"), A_FRAMES);
	put64(ts2, OFF("thread_state.interp"), A_INTERP);
	put64(ts2, OFF("thread_state.native_thread_id"), 4243);
	uint64_t base_frame = A_FRAMES + 256 * (NFRAMES + 1);
	if (minor >= 15) {
		put64(ts, OFF("thread_state.base_frame"), base_frame);
		put64(ts2, OFF("thread_state.base_frame"), A_FRAMES + 256 * (NFRAMES + 2));
		put64(ts2, OFF("thread_state.current_frame"), A_FRAMES + 256 * (NFRAMES + 2));
		put32(ts, OFF("thread_state.holds_gil"), 1);
		put32(ts2, OFF("thread_state.gil_requested"), 1);
	}
	for (int i = 0; i <= NFRAMES; i++) {
		uint8_t *f = fr + 256 * i;
		uint64_t next = i < NFRAMES ? A_FRAMES + 256 * (i + 1) : 0;
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
check_sample_sane(const struct unwinder *u, const struct tt_sample *s, int *bad)
{
	for (uint32_t t = 0; t < s->nthreads; t++) {
		const struct tt_thread *th = &s->threads[t];
		if (th->first_frame + (uint64_t)th->nframes > s->nframes ||
		    th->nframes > UNWIND_MAX_FRAMES)
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
		uint64_t v;
		switch (rng() % 6) {
		case 0: data[rng() % len] ^= (uint8_t)(1u << (rng() % 8)); continue;
		case 1: v = rng(); break;                                       /* garbage */
		case 2: v = m->regions[rng() % m->nregions].addr + (rng() % 4096); break;
		case 3: v = rng() % 64; break;                                  /* small int */
		case 4: v = (uint64_t)-(int64_t)(rng() % 16); break;            /* negative */
		default: v = 0; break;
		}
		if (off + 8 <= len)
			memcpy(data + off, &v, 8);
	}
}

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
	struct unwinder u;
	unwinder_init(&u, &t, 0, &err);
	struct tt_sample s = {0};
	st = unwinder_sample(&u, &s, &err);
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
	unwinder_free(&u);

	/* Now corrupt copies of it, again and again. */
	struct fakemem work = {0};
	for (size_t i = 0; i < img.mem.nregions; i++)
		fakemem_add(&work, img.mem.regions[i].addr, img.mem.regions[i].len);
	unsigned long iterations = 0, ok = 0, failed = 0;
	int bad = 0, bad_status = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct unwinder shared;
	unwinder_init(&shared, &t, 0, &err);
	do {
		for (size_t i = 0; i < work.nregions; i++)
			memcpy(work.regions[i].data, img.mem.regions[i].data, work.regions[i].len);
		int rounds = 1 + (int)(rng() % 3);
		for (int k = 0; k < rounds; k++)
			mutate(&work);
		struct target ft;
		st = target_attach_memory(&ft, fakemem_backend(&work), A_RUNTIME, &err);
		if (st == TT_OK) {
			/* Alternate fresh and long-lived caches: stale cache entries
			 * must not turn into bad output either. */
			struct unwinder fresh, *uw = &fresh;
			if (iterations & 1) {
				shared.target = &ft;
				uw = &shared;
			} else {
				unwinder_init(&fresh, &ft, 0, &err);
			}
			st = unwinder_sample(uw, &s, &err);
			if (st == TT_OK)
				check_sample_sane(uw, &s, &bad), ok++;
			else
				failed++;
			if (uw == &fresh)
				unwinder_free(&fresh);
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
	unwinder_free(&shared);
	tap_diag("3.%u: %lu corrupted images, %lu sampled, %lu refused", minor, iterations, ok, failed);
	tap_ok(iterations > 100, "3.%u fuzzing ran (%lu iterations)", minor, iterations);
	tap_ok(bad == 0, "3.%u every accepted sample is internally consistent (%d bad)", minor, bad);
	tap_ok(bad_status == 0, "3.%u failures are memory errors only (%d others)", minor, bad_status);
	tap_ok(ok > 0 && failed > 0, "3.%u corruption both survived and detected", minor);
	tt_sample_free(&s);
	fakemem_free(&work);
	fakemem_free(&img.mem);
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
	for (unsigned minor = 13; minor <= 15; minor++)
		fuzz_version(minor, seconds);
	return tap_done();
}
