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

#include "hash.h"
#include "pprof.h"
#include "protobuf.h"
#include "sanitize.h"
#include "unwinder.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,
	MAPPING_ID = 1, MAPPING_HAS_FUNCTIONS = 7,
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
	uint32_t *slots;     /* index + 1, 0 = empty */
	uint32_t nslots;
	bool oom;
};

static uint32_t
str_hash(const char *s)
{
	return hash_mix64(hash_fnv(HASH_FNV_SEED, s));
}

static bool
strtab_grow(struct strtab *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *s = calloc(n, sizeof *s);
	if (!s)
		return false;
	for (uint32_t i = 0; i < t->count; i++) {
		uint32_t h = str_hash(t->strs[i]) & (n - 1);
		while (s[h])
			h = (h + 1) & (n - 1);
		s[h] = i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return true;
}

static int64_t
strtab_add(struct strtab *t, const char *s)
{
	if (t->oom)
		return 0;
	if ((t->count + 1) * 2 > t->nslots && !strtab_grow(t))
		goto oom;
	uint32_t h = str_hash(s) & (t->nslots - 1);
	while (t->slots[h]) {
		if (strcmp(t->strs[t->slots[h] - 1], s) == 0)
			return t->slots[h] - 1;
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->count == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **n = realloc(t->strs, cap * sizeof *n);
		if (!n)
			goto oom;
		t->strs = n;
		t->cap = cap;
	}
	char *copy = strdup(s);
	if (!copy)
		goto oom;
	t->strs[t->count] = copy;
	t->slots[h] = ++t->count;
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
	free(t->slots);
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

/* Functions deduplicated by (name, file, start line) string indices. */
struct functab {
	uint64_t *keys;      /* name | file << 32 (both < 2^32) */
	int32_t *starts;
	uint32_t *ids;       /* 0 = empty */
	uint32_t nslots, count;
};

static uint32_t
functab_get(struct functab *t, int64_t name, int64_t file, int32_t start, bool *created)
{
	uint64_t key = (uint64_t)name | (uint64_t)file << 32;
	uint32_t h = hash_mix64(key ^ (uint64_t)(uint32_t)start * 0x9E3779B97F4A7C15ull) &
		     (t->nslots - 1);
	while (t->ids[h]) {
		if (t->keys[h] == key && t->starts[h] == start) {
			*created = false;
			return t->ids[h];
		}
		h = (h + 1) & (t->nslots - 1);
	}
	t->keys[h] = key;
	t->starts[h] = start;
	t->ids[h] = ++t->count;
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

int
pprof_write(const struct profile *p, const struct procset *ps,
	    const struct export_meta *meta, FILE *f)
{
	/* Frame ID -> location ID and interned function -> function ID (0:
	 * not yet), over the one intern every process shares. */
	uint32_t nf = appendlog_count(ps->in.frames), ncodes = appendlog_count(ps->in.funcs);
	uint32_t *loc_of = calloc(nf + 1, sizeof *loc_of);
	uint32_t *func_of = calloc(ncodes + 1, sizeof *func_of);
	struct strtab st = {0};
	struct pb out = {0}, tmp = {0}, sub = {0};
	struct functab ft = {0};
	uint64_t *locs = NULL;
	uint32_t loc_cap = 0;
	int rc = -1;
	if (!loc_of || !func_of)
		goto done;
	ft.nslots = 1024;
	while (ft.nslots < ncodes * 2 + 2)
		ft.nslots *= 2;
	ft.keys = calloc(ft.nslots, sizeof *ft.keys);
	ft.starts = calloc(ft.nslots, sizeof *ft.starts);
	ft.ids = calloc(ft.nslots, sizeof *ft.ids);
	if (!ft.keys || !ft.starts || !ft.ids)
		goto done;

	strtab_add(&st, "");
	const char *time_type = meta->mode == PROFILE_CPU ? "cpu" :
				meta->mode == PROFILE_GIL ? "gil" : "wall";
	int64_t s_samples = strtab_add(&st, "samples"), s_count = strtab_add(&st, "count");
	int64_t s_time = strtab_add(&st, time_type), s_ns = strtab_add(&st, "nanoseconds");
	int64_t s_tid = strtab_add(&st, "thread_id"), s_tname = strtab_add(&st, "thread_name");
	int64_t s_pid = meta->per_process ? strtab_add(&st, "pid") : 0;
	value_type(&out, &tmp, PROFILE_SAMPLE_TYPE, s_samples, s_count);
	value_type(&out, &tmp, PROFILE_SAMPLE_TYPE, s_time, s_ns);

	/* A mapping that says the functions are known, so pprof does not look
	 * for native symbols. */
	pb_reset(&tmp);
	pb_uint(&tmp, MAPPING_ID, 1);
	pb_uint(&tmp, MAPPING_HAS_FUNCTIONS, 1);
	pb_uint(&tmp, MAPPING_HAS_FILENAMES, 1);
	pb_uint(&tmp, MAPPING_HAS_LINE_NUMBERS, 1);
	pb_bytes(&out, PROFILE_MAPPING, tmp.buf, tmp.len);

	uint32_t nlocs = 0;
	uint32_t no_frames_loc = 0;   /* "<no Python frames>", made when needed */
	for (uint32_t i = 0; i < p->nslots; i++) {
		const struct profile_entry *e = &p->entries[i];
		if (!e->weight)
			continue;
		uint32_t pi = profile_entry_proc(e);
		const struct proc_info *proc = pi == PROFILE_EXITED_PROC ? NULL : procset_at(ps, pi);
		if (proc && !proc->walk)
			continue;
		const struct intern *in = &ps->in;
		uint32_t *ploc = loc_of, *pfunc = func_of;
		uint32_t n = 0;
		uint32_t depth = e->stack_id ? intern_stack_at(in, e->stack_id)->depth : 0;
		if (depth + 1 > loc_cap) {
			loc_cap = (depth + 1) * 2;
			uint64_t *g = realloc(locs, loc_cap * sizeof *g);
			if (!g)
				goto done;
			locs = g;
		}
		/* innermost first, as profile.proto wants */
		for (uint32_t s = e->stack_id; s; s = intern_stack_at(in, s)->parent) {
			uint32_t fid = intern_stack_at(in, s)->frame;
			if (!ploc[fid]) {
				const struct interned_frame *fr = intern_frame_at(in, fid);
				const struct interned_func *c = intern_func_at(in, fr->func_id);
				if (!pfunc[fr->func_id]) {
					int64_t name = strtab_add_target(&st, c->qualname);
					int64_t file = strtab_add_target(&st, c->filename);
					bool created;
					uint32_t id = functab_get(&ft, name, file, c->firstlineno, &created);
					if (created) {
						pb_reset(&tmp);
						pb_uint(&tmp, FUNCTION_ID, id);
						pb_uint(&tmp, FUNCTION_NAME, (uint64_t)name);
						pb_uint(&tmp, FUNCTION_FILENAME, (uint64_t)file);
						pb_uint(&tmp, FUNCTION_START_LINE, (uint64_t)(int64_t)c->firstlineno);
						pb_bytes(&out, PROFILE_FUNCTION, tmp.buf, tmp.len);
					}
					pfunc[fr->func_id] = id;
				}
				ploc[fid] = ++nlocs;
				pb_reset(&sub);
				pb_uint(&sub, LINE_FUNCTION_ID, pfunc[fr->func_id]);
				pb_uint(&sub, LINE_LINE, (uint64_t)(int64_t)fr->line);
				pb_reset(&tmp);
				pb_uint(&tmp, LOCATION_ID, nlocs);
				pb_uint(&tmp, LOCATION_MAPPING_ID, 1);
				pb_bytes(&tmp, LOCATION_LINE, sub.buf, sub.len);
				pb_bytes(&out, PROFILE_LOCATION, tmp.buf, tmp.len);
			}
			locs[n++] = ploc[fid];
		}
		if (n == 0) {
			if (!no_frames_loc) {
				int64_t name = strtab_add(&st, "<no Python frames>");
				uint32_t id = ++ft.count;   /* never looked up: no key needed */
				pb_reset(&tmp);
				pb_uint(&tmp, FUNCTION_ID, id);
				pb_uint(&tmp, FUNCTION_NAME, (uint64_t)name);
				pb_bytes(&out, PROFILE_FUNCTION, tmp.buf, tmp.len);
				no_frames_loc = ++nlocs;
				pb_reset(&sub);
				pb_uint(&sub, LINE_FUNCTION_ID, id);
				pb_reset(&tmp);
				pb_uint(&tmp, LOCATION_ID, no_frames_loc);
				pb_uint(&tmp, LOCATION_MAPPING_ID, 1);
				pb_bytes(&tmp, LOCATION_LINE, sub.buf, sub.len);
				pb_bytes(&out, PROFILE_LOCATION, tmp.buf, tmp.len);
			}
			locs[n++] = no_frames_loc;
		}

		struct label labels[4];
		int nl = 0;
		if (profile_entry_thread(ps, e) != PROFILE_EXITED_SLOT) {
			const struct thread_slot *ts = procset_slot(ps, e->thread_slot);
			const char *tname = atomic_load_explicit(&((struct thread_slot *)ts)->name,
								 memory_order_acquire);
			labels[nl++] = (struct label){.key = s_tid, .num = (int64_t)ts->native_tid};
			labels[nl++] = (struct label){.key = s_tname,
						      .str = strtab_add_target(&st, tname ? tname : "?")};
		} else { /* threads that left (the live view's bucket, slots given away) */
			labels[nl++] = (struct label){.key = s_tname,
						      .str = strtab_add(&st, "exited threads")};
		}
		if (meta->per_process && proc)
			labels[nl++] = (struct label){.key = s_pid, .num = (int64_t)proc->pid};

		pb_reset(&tmp);
		pb_reset(&sub);
		for (uint32_t k = 0; k < n; k++)
			pb_varint(&sub, locs[k]);
		pb_bytes(&tmp, SAMPLE_LOCATION_ID, sub.buf, sub.len);
		pb_reset(&sub);
		pb_varint(&sub, e->weight);
		pb_varint(&sub, e->weight * meta->period_ns);
		pb_bytes(&tmp, SAMPLE_VALUE, sub.buf, sub.len);
		put_labels(&tmp, &sub, labels, nl);
		pb_bytes(&out, PROFILE_SAMPLE, tmp.buf, tmp.len);
	}

	pb_uint(&out, PROFILE_TIME_NANOS, meta->start_unix_ns);
	pb_uint(&out, PROFILE_DURATION_NANOS, meta->duration_ns);
	value_type(&out, &tmp, PROFILE_PERIOD_TYPE, s_time, s_ns);
	pb_uint(&out, PROFILE_PERIOD, meta->period_ns);
	char comment[700], cmd[512];
	sanitize_for_terminal(meta->command ? meta->command : "", cmd, sizeof cmd);
	snprintf(comment, sizeof comment, "tachyon-top %s: pid %d, %s, Python %s, %s mode",
		 PACKAGE_VERSION, (int)meta->pid, cmd[0] ? cmd : "?",
		 meta->python_version ? meta->python_version : "?", time_type);
	pb_uint(&out, PROFILE_COMMENT, (uint64_t)strtab_add(&st, comment));
	pb_uint(&out, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)s_time);
	for (uint32_t i = 0; i < st.count; i++)
		pb_bytes(&out, PROFILE_STRING_TABLE, st.strs[i], strlen(st.strs[i]));
	if (out.oom || tmp.oom || sub.oom || st.oom)
		goto done;
	rc = gzip_to(f, out.buf, out.len);
	if (ferror(f))
		rc = -1;
done:
	free(loc_of);
	free(func_of);
	free(locs);
	free(ft.keys);
	free(ft.starts);
	free(ft.ids);
	strtab_free(&st);
	pb_free(&out);
	pb_free(&tmp);
	pb_free(&sub);
	return rc;
}
