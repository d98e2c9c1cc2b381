#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "async/asynctasks.h"
#include "bytes.h"
#include "clock.h"
#include "grow.h"
#include "python/pyint.h"
#include "python/pystr.h"

/* Pages cached per read (direct-mapped). Tasks, their coroutines and names
 * sit close together in the allocator's pools: one read serves many. */
#define PAGE_SIZE_BYTES 4096u
#define PAGE_SLOTS 2048u
#define ASYNC_TABLE_SIZE 104u    /* 13 uint64_t fields */


struct task_page {
	uint64_t addr;
	uint32_t epoch;           /* valid when equal to the reader's page_epoch */
	uint8_t data[PAGE_SIZE_BYTES];
};

tt_status
task_reader_init(struct task_reader *r, struct target *t, struct code_cache *codes,
		 uint64_t probe_interval_ns, struct tt_error *err)
{
	memset(r, 0, sizeof *r);
	r->target = t;
	r->codes = codes;
	r->probe_interval_ns = probe_interval_ns;
	r->pages = calloc(PAGE_SLOTS, sizeof *r->pages);
	if (!r->pages)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the task reader");
	return TT_OK;
}

void
task_reader_free(struct task_reader *r)
{
	free(r->pages);
	memset(r, 0, sizeof *r);
}

void
tt_tasks_free(struct tt_tasks *ts)
{
	free(ts->tasks);
	free(ts->frames);
	free(ts->awaiters);
	free(ts->names);
	memset(ts, 0, sizeof *ts);
}

void
tt_tasks_clear(struct tt_tasks *ts)
{
	ts->n = ts->nframes = ts->nawaiters = ts->names_len = 0;
	ts->lost = ts->ngreenlets = ts->greenlets_lost = 0;
	ts->incomplete = ts->truncated = false;
	ts->syscalls = 0;
}

bool
tt_tasks_append(struct tt_tasks *dst, const struct tt_tasks *src)
{
	uint64_t n = (uint64_t)dst->n + src->n, nf = (uint64_t)dst->nframes + src->nframes;
	uint64_t na = (uint64_t)dst->nawaiters + src->nawaiters;
	uint64_t nn = (uint64_t)dst->names_len + src->names_len;
	if (n > UINT32_MAX || nf > UINT32_MAX || na > UINT32_MAX || nn > UINT32_MAX ||
	    !grow_array((void **)&dst->tasks, &dst->cap, (uint32_t)n, sizeof *dst->tasks) ||
	    !grow_array((void **)&dst->frames, &dst->frames_cap, (uint32_t)nf, sizeof *dst->frames) ||
	    !grow_array((void **)&dst->awaiters, &dst->awaiters_cap, (uint32_t)na,
			sizeof *dst->awaiters) ||
	    !grow_array((void **)&dst->names, &dst->names_cap, (uint32_t)nn, 1))
		return false;
	for (uint32_t i = 0; i < src->n; i++) {
		struct tt_task t = src->tasks[i];
		t.name_off += dst->names_len;
		t.first_frame += dst->nframes;
		t.first_awaiter += dst->nawaiters;
		dst->tasks[dst->n + i] = t;
	}
	if (src->nframes)
		memcpy(dst->frames + dst->nframes, src->frames, src->nframes * sizeof *src->frames);
	if (src->nawaiters)
		memcpy(dst->awaiters + dst->nawaiters, src->awaiters,
		       src->nawaiters * sizeof *src->awaiters);
	if (src->names_len)
		memcpy(dst->names + dst->names_len, src->names, src->names_len);
	dst->n = (uint32_t)n;
	dst->nframes = (uint32_t)nf;
	dst->nawaiters = (uint32_t)na;
	dst->names_len = (uint32_t)nn;
	dst->lost += src->lost;
	dst->incomplete |= src->incomplete;
	dst->truncated |= src->truncated;
	dst->syscalls += src->syscalls;
	dst->ngreenlets += src->ngreenlets;
	dst->greenlets_lost += src->greenlets_lost;
	return true;
}

/* ---- reading through the page cache ---- */

static struct task_page *
page_get(struct task_reader *r, struct tt_tasks *out, uint64_t page)
{
	uint32_t slot = (uint32_t)((page >> 12) * 0x9E3779B1u) % PAGE_SLOTS;
	struct task_page *p = &r->pages[slot];
	if (p->epoch == r->page_epoch && p->addr == page)
		return p;
	struct tt_error e = {0};
	out->syscalls++;
	if (remote_read(&r->target->mem, page, p->data, PAGE_SIZE_BYTES, &e) != TT_OK) {
		p->epoch = 0;
		return NULL;
	}
	p->addr = page;
	p->epoch = r->page_epoch;
	return p;
}

/* Copy len bytes at addr; false when unreadable. */
static bool
rd(struct task_reader *r, struct tt_tasks *out, uint64_t addr, void *buf, size_t len)
{
	uint8_t *dst = buf;
	if (addr == 0 || addr + len < addr)
		return false;
	while (len > 0) {
		uint64_t page = addr & ~(uint64_t)(PAGE_SIZE_BYTES - 1);
		size_t in_page = PAGE_SIZE_BYTES - (size_t)(addr - page);
		size_t n = len < in_page ? len : in_page;
		struct task_page *p = page_get(r, out, page);
		if (!p) {
			/* A page we cannot read whole may still hold the bytes. */
			struct tt_error e = {0};
			out->syscalls++;
			return remote_read(&r->target->mem, addr, dst, len, &e) == TT_OK;
		}
		memcpy(dst, p->data + (addr - page), n);
		dst += n;
		addr += n;
		len -= n;
	}
	return true;
}

static bool
rd_u64(struct task_reader *r, struct tt_tasks *out, uint64_t addr, uint64_t *v)
{
	return rd(r, out, addr, v, 8);
}

/* The thread lists, read through the page cache too. */
struct list_read {
	struct task_reader *r;
	struct tt_tasks *out;
};

static bool
list_read_u64(void *ctx, uint64_t addr, uint64_t *v)
{
	struct list_read *lr = ctx;
	return rd_u64(lr->r, lr->out, addr, v);
}

/* ---- finding the offsets ---- */

/* len bytes at off lie within size bytes (no wrap-around: offsets come from
 * the target and may be anything). */
static bool
fits_in(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static bool
offsets_plausible(const struct task_reader *r, const struct py_layout *l)
{
	uint64_t ts = l->ts_size + 4096, task = r->task_size;
	return task >= 32 && task <= 4096 && fits_in(r->task_name, 8, task) &&
	       fits_in(r->task_awaited_by, 8, task) && fits_in(r->task_is_set, 1, task) &&
	       fits_in(r->task_coro, 8, task) && fits_in(r->task_node, 16, task) &&
	       fits_in(r->task_node + l->llist_next, 8, task) &&
	       fits_in(r->ts_running_loop, 8, ts) && fits_in(r->ts_running_task, 8, ts) &&
	       fits_in(r->ts_tasks_head, 16, ts) && r->interp_tasks_head < (64u << 20);
}

/* Look for .AsyncioDebug: in the interpreter's own file (3.15) or in the
 * _asyncio extension module (3.14, mapped once asyncio is imported). */
static tt_status
find_offsets(struct task_reader *r, struct tt_error *err)
{
	uint64_t addr = 0, size = 0;
	struct tt_error e = {0};
	tt_status st = TT_ENOTPY;
	if (r->target->pid > 0 || r->target->core) {
		st = target_find_section(r->target, "python", ".AsyncioDebug", &addr, &size, &e);
		if (st == TT_ENOTPY)
			st = target_find_section(r->target, "_asyncio", ".AsyncioDebug", &addr,
						 &size, &e);
	}
	if (st == TT_ENOTPY)
		return TT_ENOTPY;
	if (st != TT_OK) {
		*err = e;
		return st;
	}
	if (size < ASYNC_TABLE_SIZE)
		return tt_fail(err, TT_EBADMEM, 0, ".AsyncioDebug section too small (%llu bytes)",
			       (unsigned long long)size);
	return task_reader_use_table(r, addr, err);
}

tt_status
task_reader_use_table(struct task_reader *r, uint64_t addr, struct tt_error *err)
{
	tt_status st;
	uint8_t raw[ASYNC_TABLE_SIZE];
	if ((st = remote_read(&r->target->mem, addr, raw, sizeof raw, err)) != TT_OK)
		return st;
	r->task_size = load_u64(raw, 0);
	r->task_name = load_u64(raw, 8);
	r->task_awaited_by = load_u64(raw, 16);
	/* raw + 24: task_is_task; every object on the lists is a task */
	r->task_is_set = load_u64(raw, 32);
	r->task_coro = load_u64(raw, 40);
	r->task_node = load_u64(raw, 48);
	/* raw + 56: size of the interpreter part */
	r->interp_tasks_head = load_u64(raw, 64);
	/* raw + 72: size of the thread part */
	r->ts_running_loop = load_u64(raw, 80);
	r->ts_running_task = load_u64(raw, 88);
	r->ts_tasks_head = load_u64(raw, 96);
	if (!offsets_plausible(r, &r->target->layout))
		return tt_fail(err, TT_EBADMEM, 0, "implausible .AsyncioDebug offsets");
	r->found = true;
	return TT_OK;
}

/* ---- growing the result ---- */

struct tt_task *
tt_tasks_begin(struct tt_tasks *ts, enum task_kind kind)
{
	if (!grow_array((void **)&ts->tasks, &ts->cap, ts->n + 1, sizeof *ts->tasks))
		return NULL;
	struct tt_task *t = &ts->tasks[ts->n];
	memset(t, 0, sizeof *t);
	t->kind = (uint8_t)kind;
	t->first_frame = ts->nframes;
	t->first_awaiter = ts->nawaiters;
	t->name_off = ts->names_len;   /* where its name goes: all it added ends here */
	return t;
}

void
tt_tasks_keep(struct tt_tasks *ts, const struct tt_task *t)
{
	ts->n++;
	if (t->kind == TASK_GREENLET)
		ts->ngreenlets++;
}

void
tt_tasks_drop(struct tt_tasks *ts, const struct tt_task *t)
{
	ts->nframes = t->first_frame;
	ts->nawaiters = t->first_awaiter;
	ts->names_len = t->name_off;
	ts->lost++;
	if (t->kind == TASK_GREENLET)
		ts->greenlets_lost++;
}

bool
tt_tasks_push_name(struct tt_tasks *ts, const char *s, size_t len, uint32_t *off)
{
	if (!grow_array((void **)&ts->names, &ts->names_cap, ts->names_len + (uint32_t)len + 1, 1))
		return false;
	*off = ts->names_len;
	memcpy(ts->names + ts->names_len, s, len);
	ts->names[ts->names_len + len] = '\0';
	ts->names_len += (uint32_t)len + 1;
	return true;
}

/* ---- one task ---- */

enum name_kind { NAME_OTHER, NAME_STR, NAME_LONG };

static enum name_kind
name_kind(struct task_reader *r, struct tt_tasks *out, uint64_t type)
{
	for (int i = 0; i < 4; i++) {
		if (r->str_types[i] == type)
			return NAME_STR;
		if (r->long_types[i] == type)
			return NAME_LONG;
	}
	uint64_t flags;
	if (!rd_u64(r, out, type + r->target->layout.type_flags, &flags))
		return NAME_OTHER;
	uint64_t *slot = NULL;
	enum name_kind k = NAME_OTHER;
	if (flags & PY_TPFLAGS_UNICODE_SUBCLASS) {
		slot = r->str_types;
		k = NAME_STR;
	} else if (flags & PY_TPFLAGS_LONG_SUBCLASS) {
		slot = r->long_types;
		k = NAME_LONG;
	}
	for (int i = 0; slot && i < 4; i++) {
		if (slot[i] == 0) {
			slot[i] = type;
			break;
		}
	}
	return k;
}

/* A task's name: a str, or an int N that asyncio shows as "Task-N". */
static bool
read_name(struct task_reader *r, struct tt_tasks *out, uint64_t obj, char *buf, size_t len)
{
	const struct py_layout *l = &r->target->layout;
	uint8_t hdr[256];
	uint64_t type;
	if (!rd_u64(r, out, obj + l->ob_type, &type))
		return false;
	switch (name_kind(r, out, type)) {
	case NAME_LONG: {
		uint64_t size, v;
		struct pyint_shape sh;
		uint32_t digits[3];
		if (!rd_u64(r, out, obj + l->long_size, &size) || !pyint_shape(l, size, &sh) ||
		    sh.ndigits > 3 || !rd(r, out, obj + l->long_digits, digits, sh.ndigits * 4) ||
		    !pyint_magnitude(digits, sh.ndigits, &v))
			return false;
		snprintf(buf, len, "Task-%s%llu", sh.negative ? "-" : "", (unsigned long long)v);
		return true;
	}
	case NAME_STR: {
		if (!rd(r, out, obj, hdr, l->str_compact_size))
			return false;
		struct pystr_shape shape;
		struct tt_error e = {0};
		if (pystr_parse_header(l, hdr, l->str_compact_size, &shape, &e) != TT_OK)
			return false;
		bool cut = shape.length > TASKS_NAME_MAX;
		uint64_t n = cut ? TASKS_NAME_MAX : shape.length;
		uint8_t data[TASKS_NAME_MAX * 4];
		if (!rd(r, out, obj + shape.data_offset, data, n * shape.kind))
			return false;
		char utf8[TASKS_NAME_MAX * 4 + 8];
		size_t ulen;
		if (pystr_to_utf8(shape.kind, shape.ascii, data, n, utf8, &ulen, &e) != TT_OK)
			return false;
		snprintf(buf, len, "%s%s", utf8, cut ? "..." : "");
		return true;
	}
	default:
		return false;
	}
}

bool
tt_tasks_push_frame(struct tt_tasks *out, uint32_t code_id, int line)
{
	if (!grow_array((void **)&out->frames, &out->frames_cap, out->nframes + 1, sizeof *out->frames))
		return false;
	out->frames[out->nframes++] = (struct tt_frame){.code_id = code_id, .line = line};
	return true;
}

/* Follow the coroutine chain from the task's coroutine to the innermost
 * coroutine it awaits; frames end up innermost first. */
static bool
read_chain(struct task_reader *r, struct tt_tasks *out, struct tt_task *t, uint64_t coro)
{
	const struct py_layout *l = &r->target->layout;
	uint8_t gen[1024];
	if (l->gen_read_size > sizeof gen)
		return false;
	uint64_t type = 0;
	for (unsigned depth = 0; coro != 0; depth++) {
		if (depth >= TASKS_MAX_CHAIN) {
			t->chain_cut = true;
			break;
		}
		uint64_t this_type;
		if ((coro & 7) || !rd_u64(r, out, coro + l->ob_type, &this_type))
			return false;
		/* Only a coroutine awaiting a coroutine of its own kind continues the
		 * chain; a Future, an iterator or a C awaitable ends it. Its type
		 * comes first: such an object is smaller than a coroutine, and one
		 * at the end of a mapping cannot be read at a coroutine's size. */
		if (depth > 0 && this_type != type)
			break;
		if (!rd(r, out, coro, gen, l->gen_read_size))
			return false;
		type = this_type;
		int state = (int8_t)gen[l->gen_frame_state];
		if (state == l->gen_state_cleared)
			break;
		const uint8_t *fr = gen + l->gen_iframe;
		if ((int8_t)fr[l->fr_owner] != l->owner_generator)
			return false;
		uint64_t code = load_u64(fr, l->fr_executable) & ~l->tag_mask;
		uint32_t id;
		struct tt_error e = {0};
		if (codecache_lookup(r->codes, &r->target->mem, l, code, &id, &e) != TT_OK)
			return false;
		if (!tt_tasks_push_frame(out, id, codecache_line(r->codes, id, load_u64(fr, l->fr_instr_ptr))))
			return false;
		t->nframes++;
		if (state != l->gen_state_yield_from && state != l->gen_state_yield_from_locked)
			break;
		uint64_t sp = load_u64(fr, l->fr_stackpointer) & ~l->tag_mask;
		uint64_t awaitee;
		if (sp == 0 || !rd_u64(r, out, sp - 8 * l->awaitee_slot, &awaitee))
			break;
		coro = awaitee & ~l->tag_mask;
	}
	/* Collected outermost first; reverse to innermost first (none: frames
	 * may not have been allocated yet). */
	if (t->nframes > 1) {
		struct tt_frame *f = out->frames + t->first_frame;
		for (uint32_t i = 0, j = t->nframes; i + 1 < j; i++, j--) {
			struct tt_frame tmp = f[i];
			f[i] = f[j - 1];
			f[j - 1] = tmp;
		}
	}
	return true;
}

bool
tt_tasks_push_awaiter(struct tt_tasks *out, struct tt_task *t, uint64_t id)
{
	if (t->nawaiters >= TASKS_MAX_AWAITERS)
		return true;
	if (!grow_array((void **)&out->awaiters, &out->awaiters_cap, out->nawaiters + 1,
		  sizeof *out->awaiters))
		return false;
	out->awaiters[out->nawaiters++] = id;
	t->nawaiters++;
	return true;
}

/* task_awaited_by is one object, or a set of them. */
static bool
read_awaiters(struct task_reader *r, struct tt_tasks *out, struct tt_task *t, uint64_t ab,
	      bool is_set)
{
	const struct py_layout *l = &r->target->layout;
	if (ab == 0)
		return true;
	if (!is_set)
		return tt_tasks_push_awaiter(out, t, ab);
	uint8_t hdr[256];
	if (l->set_read_size > sizeof hdr || !rd(r, out, ab, hdr, l->set_read_size))
		return false;
	int64_t used = (int64_t)load_u64(hdr, l->set_used);
	int64_t mask = (int64_t)load_u64(hdr, l->set_mask);
	uint64_t table = load_u64(hdr, l->set_table);
	if (mask < 0 || (uint64_t)mask >= TASKS_MAX_SET_SLOTS || used < 0 || used > mask + 1 ||
	    ((mask + 1) & mask) != 0)
		return false;
	int64_t found = 0;
	uint64_t entry[2 * 64];
	for (int64_t i = 0; i <= mask && found < used;) {
		int64_t n = mask + 1 - i < 64 ? mask + 1 - i : 64;
		if (!rd(r, out, table + (uint64_t)i * 16, entry, (size_t)n * 16))
			return false;
		for (int64_t k = 0; k < n && found < used; k++) {
			uint64_t key = entry[2 * k];
			int64_t hash = (int64_t)entry[2 * k + 1];
			/* empty slots have no key; removed ones a dummy key with hash -1 */
			if (key == 0 || hash == -1)
				continue;
			found++;
			if (!tt_tasks_push_awaiter(out, t, key))
				return false;
		}
		i += n;
	}
	return true;
}

/* Read the task whose list node is at `node`. *next receives the next node;
 * false when even the task object is unreadable (the list ends here). A task
 * read only in part is dropped and counted in out->lost. */
static bool
read_task(struct task_reader *r, struct tt_tasks *out, uint64_t node, uint64_t thread,
	  int64_t interp_id, uint64_t running_task, uint64_t *next)
{
	const struct py_layout *l = &r->target->layout;
	uint64_t addr = node - r->task_node;
	uint8_t obj[4096];
	if (!rd(r, out, addr, obj, r->task_size))
		return false;
	*next = load_u64(obj, r->task_node + l->llist_next);
	struct tt_task *t = tt_tasks_begin(out, TASK_ASYNCIO);
	if (!t)
		return false;
	t->id = addr;
	t->thread = thread;
	t->interp_id = interp_id;
	t->running = running_task == addr;
	t->coro = load_u64(obj, r->task_coro) & ~l->tag_mask;
	char name[TASKS_NAME_MAX * 4 + 16];
	bool ok = read_name(r, out, load_u64(obj, r->task_name) & ~l->tag_mask, name, sizeof name) &&
		  tt_tasks_push_name(out, name, strlen(name), &t->name_off) &&
		  read_chain(r, out, t, t->coro) &&
		  read_awaiters(r, out, t, load_u64(obj, r->task_awaited_by) & ~l->tag_mask,
				obj[r->task_is_set] != 0);
	if (ok)
		tt_tasks_keep(out, t);
	else
		tt_tasks_drop(out, t);
	return true;
}

/* Walk one circular task list whose head node is at `head`. */
static void
read_list(struct task_reader *r, struct tt_tasks *out, uint64_t head, uint64_t thread,
	  int64_t interp_id, uint64_t running_task)
{
	uint64_t node;
	if (!rd_u64(r, out, head + r->target->layout.llist_next, &node)) {
		out->incomplete = true;
		return;
	}
	while (node != head) {
		if (out->n >= TASKS_MAX) {
			out->truncated = true;
			return;
		}
		/* A list head never initialised reads as NULL: empty. */
		if (node == 0)
			return;
		uint64_t next;
		if ((node & 7) || node < r->task_node ||
		    !read_task(r, out, node, thread, interp_id, running_task, &next)) {
			out->incomplete = true;
			return;
		}
		if (out->n + out->lost >= TASKS_MAX) {
			out->truncated = true;
			return;
		}
		node = next;
	}
}

/* A read starts with no page cached: the target moved on since the last. */
static void
begin_read(struct task_reader *r, struct tt_tasks *out)
{
	out->state = TASKS_READ;
	if (++r->page_epoch == 0)
		r->page_epoch = 1;
}

tt_status
task_reader_read(struct task_reader *r, struct tt_tasks *out, struct tt_error *err)
{
	const struct py_layout *l = &r->target->layout;
	tt_tasks_clear(out);
	if (!l->has_async) {
		out->state = TASKS_UNSUPPORTED;
		return TT_OK;
	}
	if (!r->found) {
		uint64_t now = clock_now_ns();
		if (r->last_probe_ns && now - r->last_probe_ns < r->probe_interval_ns) {
			out->state = TASKS_NO_ASYNCIO;
			return TT_OK;
		}
		r->last_probe_ns = now;
		tt_status st = find_offsets(r, err);
		if (st == TT_ENOTPY) {
			out->state = TASKS_NO_ASYNCIO;
			return TT_OK;
		}
		if (st != TT_OK)
			return st;
	}
	begin_read(r, out);

	struct list_read lr = {r, out};
	struct target_threads_iter it;
	target_threads_begin(&it, r->target, list_read_u64, &lr);
	uint64_t interp, ts;
	while (target_threads_next_interp(&it, &interp)) {
		uint64_t id, gen;
		if (!rd_u64(r, out, interp + l->is_id, &id)) {
			out->incomplete = true;
			continue;
		}
		/* A code object freed and another allocated at its address: the
		 * code cache must look again. */
		if (l->has_code_generation && rd_u64(r, out, interp + l->is_code_generation, &gen)) {
			if (gen != r->code_generation)
				codecache_invalidate(r->codes);
			r->code_generation = gen;
		}
		int64_t interp_id = (int64_t)id;
		read_list(r, out, interp + r->interp_tasks_head, 0, interp_id, 0);
		while (target_threads_next(&it, &ts)) {
			uint64_t tid, loop = 0, running = 0;
			if (!rd_u64(r, out, ts + l->ts_native_thread_id, &tid) ||
			    !rd_u64(r, out, ts + r->ts_running_loop, &loop) ||
			    !rd_u64(r, out, ts + r->ts_running_task, &running)) {
				out->incomplete = true;
				continue;
			}
			read_list(r, out, ts + r->ts_tasks_head, tid, interp_id,
				  loop ? running & ~l->tag_mask : 0);
		}
	}
	if (it.broken && it.read_failed && it.ninterps == 0) {
		/* nothing read: the process's own error says why (it ended?) */
		uint64_t head;
		tt_status st = remote_read_u64(&r->target->mem,
					       r->target->runtime_addr + l->rt_interpreters_head, &head,
					       err);
		if (st != TT_OK)
			return st;
	}
	if (it.broken)
		out->incomplete = true;
	return TT_OK;
}

tt_status
task_reader_read_task(struct task_reader *r, uint64_t task, struct tt_tasks *out,
		      struct tt_error *err)
{
	tt_tasks_clear(out);
	out->state = TASKS_NO_ASYNCIO;
	if (!r->target->layout.has_async)
		return tt_fail(err, TT_ENOTPY, 0, "no asyncio tasks before Python 3.14");
	if (!r->found) {
		tt_status st = find_offsets(r, err);
		if (st == TT_ENOTPY)
			return tt_fail(err, st, 0, "asyncio is not imported");
		if (st != TT_OK)
			return st;
	}
	begin_read(r, out);
	uint64_t next;
	if ((task & 7) || task == 0 || !read_task(r, out, task + r->task_node, 0, 0, 0, &next) ||
	    out->n != 1)
		return tt_fail(err, TT_EBADMEM, 0, "task 0x%llx changed while read",
			       (unsigned long long)task);
	return TT_OK;
}
