#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/asynctasks.h"
#include "native/jitreg.h"
#include "fuzz.h"
#include "memimage.h"
#include "python/pyvalue.h"
#include "readall.h"
#include "walk/plainwalk.h"
#include "walk/stackwalk.h"
#include "walk/threadnames.h"

/* Frames whose locals are read, per image. */
#define VALUE_FRAMES 48


static void
check_codes(const struct code_cache *codes, const struct tt_sample *s)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct tt_thread *th = &s->threads[i];
		fuzz_check(th->first_frame + th->nframes <= s->nframes);
		for (uint32_t f = 0; f < th->nframes; f++) {
			const struct code_entry *e = codecache_get(codes, s->frames[th->first_frame + f].code_id);
			fuzz_check(e && e->qualname && e->filename);
		}
	}
}

static void
values(struct target *t, struct plainwalk *u, const struct tt_sample *s)
{
	static struct pylocal locals[PYLOCALS_MAX];
	struct pyvalue_limits lim = PYVALUE_LIMITS_DEFAULT;
	struct pyvalue v;
	pyvalue_init(&v, &t->mem, &t->layout, &lim);
	unsigned done = 0;
	unsigned long shown = 0;
	for (uint32_t i = 0; i < s->nframes && done < VALUE_FRAMES; i++, done++) {
		const struct tt_frame *fr = &s->frames[i];
		struct tt_error err;
		int n = pylocals_read(&v, fr->addr, codecache_get(&u->codes, fr->code_id)->addr, locals,
				      PYLOCALS_MAX, &err);
		fuzz_check(n <= PYLOCALS_MAX);
		shown += n > 0 ? (unsigned long)n : 0;
		for (int k = 0; k < n; k++) {
			fuzz_check_str(locals[k].name, sizeof locals[k].name);
			fuzz_check_str(locals[k].type, sizeof locals[k].type);
			fuzz_check_str(locals[k].repr, sizeof locals[k].repr);
		}
	}
	pyvalue_free(&v);
	fuzz_say("values: %lu locals in %u frames\n", shown, done);
}

/* The process moves on, once per reading (the first reader to read a
 * second time has it). */
static void
move_on(struct readall_at *at)
{
	if (at->between_samples)
		at->between_samples(at->between_ctx);
	at->between_samples = NULL;
}

static void
walk_sampler(struct target *t, struct readall_at *at)
{
	struct stackwalk_options o;
	stackwalk_default_options(&o);
	o.cpu_period_ns = 0;   /* an image has no /proc */
	struct stackwalk *w;
	struct tt_error err;
	if (stackwalk_new(t, &o, &w, &err) != TT_OK)
		return;
	const struct walk_thread *th;
	uint32_t n;
	/* twice: the second sample goes through the caches the first filled,
	 * after what the process changed meanwhile; a third after that one */
	for (int k = 0; k < 3; k++) {
		if (k == 1)
			move_on(at);
		tt_status st = stackwalk_sample(w, 1000000000ull + 1000000ull * (uint64_t)k, &th, &n,
						&err);
		fuzz_say("sampler: %u threads (sample %d)%s%s\n", st == TT_OK ? n : 0, k,
			 st == TT_OK ? "" : ": ", st == TT_OK ? "" : err.msg);
	}
	stackwalk_free(w);
}

/* What a read promises of the tasks it made. */
static void
check_tasks(const struct tt_tasks *ts)
{
	fuzz_check(ts->n <= ts->cap);
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct tt_task *k = &ts->tasks[i];
		fuzz_check(k->name_off < ts->names_len || ts->names_len == 0);
		fuzz_check(k->first_frame + k->nframes <= ts->nframes);
		fuzz_check(k->first_awaiter + k->nawaiters <= ts->nawaiters);
	}
}

static void
tasks(struct target *t, uint64_t table)
{
	struct code_cache codes;
	if (codecache_init(&codes) != 0)
		abort();
	struct task_reader r;
	struct tt_error err;
	struct tt_tasks ts = {0}, one = {0};
	if (task_reader_init(&r, t, &codes, 0, &err) == TT_OK &&
	    task_reader_use_table(&r, table, &err) == TT_OK &&
	    task_reader_read(&r, &ts, &err) == TT_OK) {
		check_tasks(&ts);
		fuzz_say("tasks: %u tasks, %u frames\n", ts.n, ts.nframes);
		/* a task born since the last read is read alone */
		for (uint32_t i = 0; i < ts.n && i < 4; i++) {
			tt_tasks_clear(&one);
			task_reader_read_task(&r, ts.tasks[i].id, &one, &err);
		}
	}
	tt_tasks_free(&one);
	tt_tasks_free(&ts);
	task_reader_free(&r);
	codecache_free(&codes);
}

static void
greenlets(struct target *t, struct readall_at *at)
{
	struct code_cache codes;
	if (codecache_init(&codes) != 0)
		abort();
	struct greenlet_reader r;
	struct tt_error err;
	struct tt_tasks ts = {0};
	/* without vtables given, greenlet is found as a core's reader finds
	 * it: by its module's files under the core's root */
	if (greenlet_reader_init(&r, t, &codes, 0, 0, &err) == TT_OK &&
	    (!at->greenlet_vtables[0] ||
	     greenlet_reader_use_memory(&r, at->greenlet_version, at->greenlet_vtables,
					at->greenlet_regions, at->ngreenlet_regions, &err) == TT_OK)) {
		/* twice: the second read starts from the greenlets the first kept
		 * (and meets what changed meanwhile) */
		for (int k = 0; k < 2; k++) {
			if (k == 1)
				move_on(at);
			tt_tasks_clear(&ts);
			if (greenlet_reader_read(&r, &ts, &err) != TT_OK)
				break;
			check_tasks(&ts);
			fuzz_say("greenlets: %u greenlets, %u frames (read %d)\n", ts.n, ts.nframes, k);
		}
		fuzz_check_str(r.why, sizeof r.why);
		if (r.state != GREENLETS_READ)
			fuzz_say("greenlets: %s\n", r.why);
	}
	tt_tasks_free(&ts);
	greenlet_reader_free(&r);
	codecache_free(&codes);
}

/* The JIT's in-memory objects, as the native unwinder names JIT code. */
static void
jit(struct target *t, uint64_t descriptor)
{
	struct perfmap names;
	perfmap_init(&names);
	if (jitreg_read(&t->mem, descriptor, &names)) {
		fuzz_say("jit: %u functions named\n", names.n);
		for (uint32_t i = 0; i < names.n && i < 64; i++) {
			const char *name = perfmap_lookup(&names, names.v[i].start, NULL);
			fuzz_check(name && strlen(name) <= PERFMAP_NAME_MAX);
		}
	}
	perfmap_free(&names);
}

void
readall(struct target *t, const struct readall_at *where, unsigned what)
{
	struct readall_at copy = *where, *at = &copy;
	struct tt_error err;
	if (what & (READ_WALK | READ_VALUES)) {
		struct plainwalk u;
		struct tt_sample s = {0};
		if (plainwalk_init(&u, t, 0, &err) == TT_OK) {
			if (plainwalk_sample(&u, &s, &err) == TT_OK) {
				fuzz_say("plain walk: %u threads, %u frames\n", s.nthreads, s.nframes);
				check_codes(&u.codes, &s);
				if (what & READ_VALUES)
					values(t, &u, &s);
			}
			plainwalk_free(&u);
		}
		tt_sample_free(&s);
	}
	if (what & READ_WALK) {
		walk_sampler(t, at);
		struct thread_names tn = {0};
		fuzz_say("thread names: %u\n", threadnames_read(t, &tn));
		struct target_thread th[64];
		uint32_t n = 0;
		target_list_threads(t, th, 64, &n);
		for (uint32_t i = 0; i < n; i++) {
			const char *name = threadnames_of(t, &tn, th[i].ts);
			if (name)
				fuzz_check(strlen(name) < 4096);
		}
		threadnames_free(&tn);
	}
	if ((what & READ_TASKS) && at->asyncio_table)
		tasks(t, at->asyncio_table);
	if ((what & READ_JIT) && at->jit_descriptor)
		jit(t, at->jit_descriptor);
	if ((what & READ_GREENLETS) && (at->greenlet_vtables[0] || t->core))
		greenlets(t, at);
}

static void
apply_patches(void *m)
{
	memimage_apply_patches(m);
}

void
readall_image(const uint8_t *data, size_t size, unsigned what)
{
	struct memimage m;
	if (!memimage_load(&m, data, size))
		return;
	/* greenlets are looked for in the whole image */
	static struct gl_region regions[MEMIMAGE_MAX_REGIONS];
	uint32_t n = 0;
	for (size_t i = 0; i < m.mem.nregions && n < MEMIMAGE_MAX_REGIONS; i++)
		regions[n++] = (struct gl_region){m.mem.regions[i].addr,
						  m.mem.regions[i].addr + m.mem.regions[i].len};
	struct readall_at at = {m.asyncio_table, m.jit_descriptor, m.greenlet_version,
				{m.greenlet_vtables[0], m.greenlet_vtables[1], m.greenlet_vtables[2]},
				regions, n, m.npatches ? apply_patches : NULL, &m};
	struct target t;
	struct tt_error err;
	if (memimage_attach(&m, &t, &err) == TT_OK)
		readall(&t, &at, what);
	memimage_free(&m);
}
