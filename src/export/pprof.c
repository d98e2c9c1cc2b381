/* Layout: one Location per interned frame (code, line) the profile uses,
 * one Function per distinct (qualified name, file, first line), one Sample
 * per (thread, stack) with values [samples, time] and thread labels. The
 * message is built in memory (profiles are small next to the samples they
 * summarize) and gzipped with zlib on the way out. Functions carry no
 * system_name: pprof would "demangle" a name equal to it, and C++ template
 * stripping turns Python's "<module>" or "f.<locals>.g" into nonsense. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "grow.h"
#include "hash.h"
#include "idindex.h"
#include "pprof.h"
#include "protobuf.h"
#include "sanitize.h"
#include "walk/sample.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,
	MAPPING_ID = 1, MAPPING_FILENAME = 5, MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* The string table: index 0 is "", every string once. */
struct strtab {
	char **strs;
	uint32_t count, cap;
	struct idindex index;   /* ids: a string's index + 1 */
	bool oom;
};

static uint32_t
str_hash(const char *s)
{
	return (uint32_t)hash_mix64(hash_fnv(HASH_FNV_SEED, s));
}

static uint32_t
strtab_hash(const void *ctx, uint32_t id)
{
	return str_hash(((const struct strtab *)ctx)->strs[id - 1]);
}

static int64_t
strtab_add(struct strtab *t, const char *s)
{
	if (t->oom)
		return 0;
	struct idindex *ix = &t->index;
	if (!idindex_reserve(ix, 1, t->count + 1, 1024, strtab_hash, t))
		goto oom;
	uint32_t i = idindex_start(ix, str_hash(s));
	for (; ix->slots[i]; i = idindex_next(ix, i))
		if (strcmp(t->strs[ix->slots[i] - 1], s) == 0)
			return ix->slots[i] - 1;
	char *copy = strdup(s);
	if (!copy || !grow_array((void **)&t->strs, &t->cap, t->count + 1, sizeof *t->strs)) {
		free(copy);
		goto oom;
	}
	t->strs[t->count] = copy;
	ix->slots[i] = ++t->count;
	return t->count - 1;
oom:
	t->oom = true;
	return 0;
}

/* Strings from the target, made safe to print (pprof prints them). */
static int64_t
strtab_add_target(struct strtab *t, const char *s)
{
	char safe[2048];
	sanitize_for_terminal(s ? s : "?", safe, sizeof safe);
	return strtab_add(t, safe);
}

static void
strtab_free(struct strtab *t)
{
	for (uint32_t i = 0; i < t->count; i++)
		free(t->strs[i]);
	free(t->strs);
	idindex_free(&t->index);
}

static void
value_type(struct pb *out, struct pb *tmp, uint32_t field, int64_t type, int64_t unit)
{
	pb_reset(tmp);
	pb_uint(tmp, VALUETYPE_TYPE, (uint64_t)type);
	pb_uint(tmp, VALUETYPE_UNIT, (uint64_t)unit);
	pb_bytes(out, field, tmp->buf, tmp->len);
}

/* A sample label: a string or a number. Keep labels in one array so a new
 * one (a pid, a task) is one line where they are filled in. */
struct label {
	int64_t key, str, num, unit;
};

static void
put_labels(struct pb *out, struct pb *tmp, const struct label *l, int n)
{
	for (int i = 0; i < n; i++) {
		pb_reset(tmp);
		pb_uint(tmp, LABEL_KEY, (uint64_t)l[i].key);
		if (l[i].str)
			pb_uint(tmp, LABEL_STR, (uint64_t)l[i].str);
		else
			pb_uint(tmp, LABEL_NUM, (uint64_t)l[i].num);
		if (l[i].unit)
			pb_uint(tmp, LABEL_NUM_UNIT, (uint64_t)l[i].unit);
		pb_bytes(out, SAMPLE_LABEL, tmp->buf, tmp->len);
	}
}

/* Functions deduplicated by (name, file, start line) string indices; a
 * function's id is its index + 1. */
struct pfunc {
	uint64_t key;        /* name | file << 32 (both < 2^32) */
	int32_t start;
};

struct functab {
	struct pfunc *funcs;
	uint32_t count, cap;
	struct idindex index;
};

static uint32_t
pfunc_hash(uint64_t key, int32_t start)
{
	return (uint32_t)hash_mix64(key ^ (uint64_t)(uint32_t)start * 0x9E3779B97F4A7C15ull);
}

static uint32_t
functab_hash(const void *ctx, uint32_t id)
{
	const struct pfunc *f = &((const struct functab *)ctx)->funcs[id - 1];
	return pfunc_hash(f->key, f->start);
}

/* The function's id, 0 when memory is short; *created when new. */
static uint32_t
functab_get(struct functab *t, int64_t name, int64_t file, int32_t start, bool *created)
{
	uint64_t key = (uint64_t)name | (uint64_t)file << 32;
	struct idindex *ix = &t->index;
	*created = false;
	if (!idindex_reserve(ix, 1, t->count + 1, 1024, functab_hash, t) ||
	    !grow_array((void **)&t->funcs, &t->cap, t->count + 1, sizeof *t->funcs))
		return 0;
	uint32_t i = idindex_start(ix, pfunc_hash(key, start));
	for (; ix->slots[i]; i = idindex_next(ix, i)) {
		const struct pfunc *f = &t->funcs[ix->slots[i] - 1];
		if (f->key == key && f->start == start)
			return ix->slots[i];
	}
	t->funcs[t->count] = (struct pfunc){.key = key, .start = start};
	ix->slots[i] = ++t->count;
	*created = true;
	return t->count;
}

static int
gzip_to(FILE *f, const uint8_t *data, size_t len)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	/* 15 window bits + 16: a gzip header and trailer rather than zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	uint8_t out[65536];
	int rc = 0, zr;
	z.next_in = (Bytef *)data;
	do {
		size_t chunk = len > (1u << 30) ? (1u << 30) : len;
		z.avail_in = (uInt)chunk;
		len -= chunk;
		int flush = len ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = out;
			z.avail_out = sizeof out;
			zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR) {
				rc = -1;
				break;
			}
			size_t have = sizeof out - z.avail_out;
			if (have && fwrite(out, 1, have, f) != have) {
				rc = -1;
				break;
			}
		} while (z.avail_out == 0);
	} while (rc == 0 && len);
	if (rc == 0 && zr != Z_STREAM_END)
		rc = -1;
	deflateEnd(&z);
	return rc;
}

/* The message as it is built: its tables, and the frames and functions
 * given a Location and a Function so far (over the one intern every
 * process shares; 0: not yet). */
struct pprof_build {
	struct pb out, tmp, sub;
	struct strtab st;
	struct functab ft;
	uint32_t *loc_of, *func_of;
	uint32_t nlocs;
	uint32_t *locs, locs_cap;     /* one sample's stack */
	uint32_t no_frames_loc;       /* "<no Python frames>", made when needed */
	uint32_t *mapping_of;         /* a native library's string index -> its Mapping */
	uint32_t mapping_cap, nmappings;
	int64_t s_tid, s_tname, s_pid;
};

/* A Function; one without source (no Python frames) has a name only. */
static void
put_function(struct pprof_build *b, uint32_t id, int64_t name, int64_t file, int32_t start,
	     bool has_source)
{
	pb_reset(&b->tmp);
	pb_uint(&b->tmp, FUNCTION_ID, id);
	pb_uint(&b->tmp, FUNCTION_NAME, (uint64_t)name);
	if (has_source) {
		pb_uint(&b->tmp, FUNCTION_FILENAME, (uint64_t)file);
		pb_uint(&b->tmp, FUNCTION_START_LINE, (uint64_t)(int64_t)start);
	}
	pb_bytes(&b->out, PROFILE_FUNCTION, b->tmp.buf, b->tmp.len);
}

/* A Mapping saying its functions are known, so pprof looks for no symbols:
 * mapping 1 for Python code, one per library (its file name) for native. */
static uint32_t
put_mapping(struct pprof_build *b, int64_t filename)
{
	uint32_t id = ++b->nmappings;
	pb_reset(&b->tmp);
	pb_uint(&b->tmp, MAPPING_ID, id);
	if (filename)
		pb_uint(&b->tmp, MAPPING_FILENAME, (uint64_t)filename);
	pb_uint(&b->tmp, MAPPING_HAS_FUNCTIONS, 1);
	pb_uint(&b->tmp, MAPPING_HAS_FILENAMES, 1);
	pb_uint(&b->tmp, MAPPING_HAS_LINE_NUMBERS, filename ? 0 : 1);
	pb_bytes(&b->out, PROFILE_MAPPING, b->tmp.buf, b->tmp.len);
	return id;
}

/* The Mapping of native code in library (a string index); 0 when memory
 * is short. */
static uint32_t
library_mapping(struct pprof_build *b, int64_t library)
{
	if (library <= 0 || !grow_array((void **)&b->mapping_of, &b->mapping_cap,
					 (uint32_t)library + 1, sizeof *b->mapping_of))
		return 0;
	if (!b->mapping_of[library])
		b->mapping_of[library] = put_mapping(b, library);
	return b->mapping_of[library];
}

/* A new Location: one line of one function (or the function alone), in
 * mapping 1 (Python) or a library's. */
static uint32_t
put_location(struct pprof_build *b, uint32_t func, int32_t line, bool has_line, uint32_t mapping)
{
	uint32_t id = ++b->nlocs;
	pb_reset(&b->sub);
	pb_uint(&b->sub, LINE_FUNCTION_ID, func);
	if (has_line)
		pb_uint(&b->sub, LINE_LINE, (uint64_t)(int64_t)line);
	pb_reset(&b->tmp);
	pb_uint(&b->tmp, LOCATION_ID, id);
	pb_uint(&b->tmp, LOCATION_MAPPING_ID, mapping);
	pb_bytes(&b->tmp, LOCATION_LINE, b->sub.buf, b->sub.len);
	pb_bytes(&b->out, PROFILE_LOCATION, b->tmp.buf, b->tmp.len);
	return id;
}

/* The Location of interned frame `fid`, made with its Function on first
 * use; 0 when memory is short. */
static uint32_t
location_of(struct pprof_build *b, const struct intern *in, uint32_t fid)
{
	if (b->loc_of[fid])
		return b->loc_of[fid];
	const struct interned_frame *fr = intern_frame_at(in, fid);
	const struct interned_func *c = intern_func_at(in, fr->func_id);
	bool native = c->kind == FUNC_NATIVE;
	int64_t file = strtab_add_target(&b->st, c->filename);
	if (!b->func_of[fr->func_id]) {
		int64_t name = strtab_add_target(&b->st, c->qualname);
		bool created;
		uint32_t id = functab_get(&b->ft, name, file, c->firstlineno, &created);
		if (!id)
			return 0;
		if (created)
			put_function(b, id, name, file, c->firstlineno, true);
		b->func_of[fr->func_id] = id;
	}
	/* native code: its library's mapping, no line */
	uint32_t mapping = native ? library_mapping(b, file) : 1;
	if (!mapping)
		return 0;
	return b->loc_of[fid] = put_location(b, b->func_of[fr->func_id], fr->line, !native, mapping);
}

/* The one Location of samples without Python frames. */
static uint32_t
no_frames_location(struct pprof_build *b)
{
	if (!b->no_frames_loc) {
		int64_t name = strtab_add(&b->st, "<no Python frames>");
		bool created;
		uint32_t id = functab_get(&b->ft, name, 0, 0, &created);
		if (!id)
			return 0;
		if (created)
			put_function(b, id, name, 0, 0, false);
		b->no_frames_loc = put_location(b, id, 0, false, 1);
	}
	return b->no_frames_loc;
}

/* One Sample: the entry's stack (innermost first, as profile.proto wants),
 * its counts and its thread's labels. false when memory is short. */
static bool
put_sample(struct pprof_build *b, const struct profile_entry *e, const struct procset *ps,
	   const struct proc_info *proc, const struct export_meta *meta)
{
	const struct intern *in = &ps->in;
	uint32_t n = 0;
	for (uint32_t s = e->stack_id; s; s = intern_stack_at(in, s)->parent) {
		uint32_t loc = location_of(b, in, intern_stack_at(in, s)->frame);
		if (!loc || !grow_array((void **)&b->locs, &b->locs_cap, n + 1, sizeof *b->locs))
			return false;
		b->locs[n++] = loc;
	}
	if (n == 0) {
		uint32_t loc = no_frames_location(b);
		if (!loc || !grow_array((void **)&b->locs, &b->locs_cap, 1, sizeof *b->locs))
			return false;
		b->locs[n++] = loc;
	}
	/* (location_of writes through tmp and sub: the stack is gathered first.) */
	pb_reset(&b->tmp);
	pb_reset(&b->sub);
	for (uint32_t k = 0; k < n; k++)
		pb_varint(&b->sub, b->locs[k]);
	pb_bytes(&b->tmp, SAMPLE_LOCATION_ID, b->sub.buf, b->sub.len);
	pb_reset(&b->sub);
	pb_varint(&b->sub, e->weight);
	pb_varint(&b->sub, e->weight * meta->period_ns);
	pb_bytes(&b->tmp, SAMPLE_VALUE, b->sub.buf, b->sub.len);

	struct label labels[4];
	int nl = 0;
	if (profile_entry_thread(ps, e) != PROFILE_EXITED_SLOT) {
		const struct thread_slot *ts = procset_slot(ps, e->thread_slot);
		const char *tname = atomic_load_explicit(&((struct thread_slot *)ts)->name,
							 memory_order_acquire);
		labels[nl++] = (struct label){.key = b->s_tid, .num = (int64_t)ts->native_tid};
		labels[nl++] = (struct label){.key = b->s_tname,
					      .str = strtab_add_target(&b->st, tname ? tname : "?")};
	} else { /* threads that left (the live view's bucket, slots given away) */
		labels[nl++] = (struct label){.key = b->s_tname,
					      .str = strtab_add(&b->st, "exited threads")};
	}
	if (meta->per_process && proc)
		labels[nl++] = (struct label){.key = b->s_pid, .num = (int64_t)proc->pid};
	put_labels(&b->tmp, &b->sub, labels, nl);
	pb_bytes(&b->out, PROFILE_SAMPLE, b->tmp.buf, b->tmp.len);
	return true;
}

int
pprof_write(const struct profile *p, const struct procset *ps,
	    const struct export_meta *meta, FILE *f)
{
	struct pprof_build b = {0};
	int rc = -1;
	b.loc_of = calloc(appendlog_count(ps->in.frames) + 1, sizeof *b.loc_of);
	b.func_of = calloc(appendlog_count(ps->in.funcs) + 1, sizeof *b.func_of);
	if (!b.loc_of || !b.func_of)
		goto done;

	strtab_add(&b.st, "");
	const char *time_type = meta->mode == PROFILE_CPU ? "cpu" :
				meta->mode == PROFILE_GIL ? "gil" : "wall";
	int64_t s_samples = strtab_add(&b.st, "samples"), s_count = strtab_add(&b.st, "count");
	int64_t s_time = strtab_add(&b.st, time_type), s_ns = strtab_add(&b.st, "nanoseconds");
	b.s_tid = strtab_add(&b.st, "thread_id");
	b.s_tname = strtab_add(&b.st, "thread_name");
	b.s_pid = meta->per_process ? strtab_add(&b.st, "pid") : 0;
	value_type(&b.out, &b.tmp, PROFILE_SAMPLE_TYPE, s_samples, s_count);
	value_type(&b.out, &b.tmp, PROFILE_SAMPLE_TYPE, s_time, s_ns);

	put_mapping(&b, 0);   /* 1: Python code */

	for (uint32_t i = 0; i < p->count; i++) {
		const struct profile_entry *e = &p->entries[i];
		if (!e->weight)
			continue;
		uint32_t pi = profile_entry_proc(e);
		const struct proc_info *proc = pi == PROFILE_EXITED_PROC ? NULL : procset_at(ps, pi);
		if (proc && !proc->sampled)
			continue;
		if (!put_sample(&b, e, ps, proc, meta))
			goto done;
	}

	pb_uint(&b.out, PROFILE_TIME_NANOS, meta->start_unix_ns);
	pb_uint(&b.out, PROFILE_DURATION_NANOS, meta->duration_ns);
	value_type(&b.out, &b.tmp, PROFILE_PERIOD_TYPE, s_time, s_ns);
	pb_uint(&b.out, PROFILE_PERIOD, meta->period_ns);
	char comment[700], cmd[512];
	sanitize_for_terminal(meta->command ? meta->command : "", cmd, sizeof cmd);
	snprintf(comment, sizeof comment, "tachyon-top %s: pid %d, %s, Python %s, %s mode",
		 PACKAGE_VERSION, (int)meta->pid, cmd[0] ? cmd : "?",
		 meta->python_version ? meta->python_version : "?", time_type);
	pb_uint(&b.out, PROFILE_COMMENT, (uint64_t)strtab_add(&b.st, comment));
	pb_uint(&b.out, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)s_time);
	for (uint32_t i = 0; i < b.st.count; i++)
		pb_bytes(&b.out, PROFILE_STRING_TABLE, b.st.strs[i], strlen(b.st.strs[i]));
	if (b.out.oom || b.tmp.oom || b.sub.oom || b.st.oom)
		goto done;
	rc = gzip_to(f, b.out.buf, b.out.len);
	if (ferror(f))
		rc = -1;
done:
	free(b.loc_of);
	free(b.func_of);
	free(b.mapping_of);
	free(b.locs);
	free(b.ft.funcs);
	idindex_free(&b.ft.index);
	strtab_free(&b.st);
	pb_free(&b.out);
	pb_free(&b.tmp);
	pb_free(&b.sub);
	return rc;
}
