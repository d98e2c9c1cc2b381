#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "binrec.h"
#include "grow.h"
#include "heatmap.h"

/* The file: MAGIC, the version (16 bits, little-endian), 16 reserved bits
 * (0), then one zlib stream of events, each a kind byte and its fields. */
static const unsigned char MAGIC[8] = {0x89, 'T', 'T', 'R', 'E', 'C', '\r', '\n'};
#define PREAMBLE 12

enum {
	EV_HEADER = 16,
	EV_PROGRESS = 17,
	EV_END = 18,
	EV_SOURCE = 19,
};

/* Longest string a recording holds (a command line, a path, a qualified
 * name): anything longer is damage. */
#define MAX_STRING (1u << 20)

/* ---- writing ---- */

struct binrec_writer {
	FILE *f;
	char *path;
	z_stream z;
	bool z_ready;
	int errnum;                /* the first write error (0: none) */
	uint64_t last_time;        /* the previous sample's time: samples carry the difference */
	uint64_t last_flush_ns;
	size_t len;                /* bytes waiting in buf */
	unsigned char buf[8192];
	unsigned char out[65536];
};

/* Compress n bytes (with flush) and write what comes out. */
static void
deflate_bytes(struct binrec_writer *w, const void *p, size_t n, int flush)
{
	if (w->errnum)
		return;
	w->z.next_in = (Bytef *)p;
	w->z.avail_in = (uInt)n;
	do {
		w->z.next_out = w->out;
		w->z.avail_out = sizeof w->out;
		if (deflate(&w->z, flush) == Z_STREAM_ERROR) {
			w->errnum = EIO;
			return;
		}
		size_t have = sizeof w->out - w->z.avail_out;
		if (have && fwrite(w->out, 1, have, w->f) != have) {
			w->errnum = errno ? errno : EIO;
			return;
		}
	} while (w->z.avail_out == 0 || w->z.avail_in);
}

static void
push_buf(struct binrec_writer *w, int flush)
{
	deflate_bytes(w, w->buf, w->len, flush);
	w->len = 0;
}

static void
put_bytes(struct binrec_writer *w, const void *p, size_t n)
{
	if (w->len + n > sizeof w->buf)
		push_buf(w, Z_NO_FLUSH);
	if (n > sizeof w->buf) {
		deflate_bytes(w, p, n, Z_NO_FLUSH);
		return;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void
put_var(struct binrec_writer *w, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;
	do {
		b[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		b[n++] |= v ? 0x80 : 0;
	} while (v);
	put_bytes(w, b, n);
}

static void
put_svar(struct binrec_writer *w, int64_t v)
{
	put_var(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void
put_byte(struct binrec_writer *w, unsigned v)
{
	unsigned char b = (unsigned char)v;
	put_bytes(w, &b, 1);
}

static void
put_str(struct binrec_writer *w, const char *s)
{
	size_t n = s ? strnlen(s, MAX_STRING) : 0;
	put_var(w, n);
	put_bytes(w, s, n);
}

tt_status
binrec_open(struct binrec_writer **out, const char *path, struct tt_error *err)
{
	struct binrec_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for %s", path);
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(w->f = fdopen(fd, "wb"))) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		free(w->path);
		free(w);
		return tt_fail(err, TT_EIO, e, "cannot write %s: %s", path, strerror(e));
	}
	*out = w;
	return TT_OK;
}

tt_status
binrec_begin(struct binrec_writer *w, const struct binrec_header *h, struct tt_error *err)
{
	unsigned char pre[PREAMBLE];
	memcpy(pre, MAGIC, sizeof MAGIC);
	pre[8] = BINREC_VERSION & 0xff;
	pre[9] = BINREC_VERSION >> 8;
	pre[10] = pre[11] = 0;
	if (fwrite(pre, 1, sizeof pre, w->f) != sizeof pre)
		return tt_fail(err, TT_EIO, errno, "cannot write %s: %s", w->path, strerror(errno));
	if (deflateInit(&w->z, Z_DEFAULT_COMPRESSION) != Z_OK)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for %s", w->path);
	w->z_ready = true;
	put_byte(w, EV_HEADER);
	put_svar(w, h->pid);
	put_str(w, h->python_version);
	put_str(w, h->command);
	put_byte(w, (unsigned)h->mode);
	uint64_t rate;
	memcpy(&rate, &h->rate_hz, sizeof rate);
	put_var(w, rate);
	put_var(w, h->start_unix_ns);
	put_byte(w, (h->subprocesses ? 1u : 0u) | (h->async_aware ? 2u : 0u));
	/* the header in a block of its own: a file cut short anywhere after
	 * it still says what it is of */
	push_buf(w, Z_SYNC_FLUSH);
	if (!w->errnum && fflush(w->f) != 0)
		w->errnum = errno ? errno : EIO;
	if (w->errnum)
		return tt_fail(err, TT_EIO, w->errnum, "cannot write %s: %s", w->path,
			       strerror(w->errnum));
	return TT_OK;
}

void
binrec_put(void *ctx, const struct samplelog_event *ev)
{
	struct binrec_writer *w = ctx;
	put_byte(w, (unsigned)ev->kind);
	switch (ev->kind) {
	case SAMPLELOG_FUNC:
		put_str(w, ev->func.qualname);
		put_str(w, ev->func.filename);
		put_svar(w, ev->func.firstlineno);
		put_byte(w, ev->func.kind);
		break;
	case SAMPLELOG_FRAME:
		put_var(w, ev->frame.func);
		put_svar(w, ev->frame.line);
		break;
	case SAMPLELOG_STACK:
		put_var(w, ev->stack.parent);
		put_var(w, ev->stack.frame);
		break;
	case SAMPLELOG_PROC:
		put_var(w, ev->proc.index);
		put_svar(w, ev->proc.pid);
		put_var(w, ev->proc.start_ns);
		put_byte(w, ev->proc.sampled);
		put_str(w, ev->proc.cmdline);
		break;
	case SAMPLELOG_THREAD:
		put_var(w, ev->thread.slot);
		put_var(w, ev->thread.proc);
		put_var(w, ev->thread.prev_proc);
		put_var(w, ev->thread.native_tid);
		put_var(w, ev->thread.born_ns);
		put_var(w, ev->thread.gone_ns);
		put_byte(w, ev->thread.name != NULL);
		if (ev->thread.name)
			put_str(w, ev->thread.name);
		break;
	case SAMPLELOG_SAMPLE:
		put_svar(w, (int64_t)(ev->sample.time_ns - w->last_time));
		w->last_time = ev->sample.time_ns;
		put_var(w, ev->sample.stack_id);
		put_var(w, ev->sample.thread_slot);
		/* the kernel's state now is the live view's; older files have
		 * the main-thread bit there */
		put_byte(w, ev->sample.state & ~TT_THREAD_RUNNABLE);
		put_byte(w, ev->sample.weight);
		break;
	}
}

struct source_put {
	struct binrec_writer *w;
	const struct export_sources *src;
};

static void
put_source(void *ctx, const char *name)
{
	struct source_put *sp = ctx;
	struct binrec_writer *w = sp->w;
	char why[200] = "";
	size_t len = 0;
	char *bytes = export_source_read(sp->src, name, HEATMAP_MAX_FILE_BYTES, &len, why,
					 sizeof why);
	put_byte(w, EV_SOURCE);
	put_str(w, name);
	put_byte(w, bytes != NULL);
	if (bytes) {
		put_var(w, len);
		put_bytes(w, bytes, len);
	} else {
		put_str(w, why);
	}
	free(bytes);
}

void
binrec_put_sources(struct binrec_writer *w, const struct profile *prof,
		   const struct procset *mirror, const struct export_sources *src)
{
	struct source_put sp = {w, src};
	heatmap_sources(prof, mirror, put_source, &sp);
}

static void
put_progress(struct binrec_writer *w, const struct binrec_progress *p)
{
	put_byte(w, EV_PROGRESS);
	put_var(w, p->duration_ns);
	put_var(w, p->passes);
	put_var(w, p->errors);
	put_var(w, p->missed);
}

void
binrec_progress(struct binrec_writer *w, uint64_t now_ns, const struct binrec_progress *p,
		bool force)
{
	if (!force && now_ns < w->last_flush_ns + 1000000000ull)
		return;
	w->last_flush_ns = now_ns;
	put_progress(w, p);
	/* everything so far decodable from the file alone */
	push_buf(w, Z_SYNC_FLUSH);
	if (!w->errnum && fflush(w->f) != 0)
		w->errnum = errno ? errno : EIO;
}

static void
close_writer(struct binrec_writer *w)
{
	if (w->z_ready)
		deflateEnd(&w->z);
	if (w->f)
		fclose(w->f);
	free(w->path);
	free(w);
}

tt_status
binrec_finish(struct binrec_writer *w, const char *command, const struct binrec_progress *p,
	      struct tt_error *err)
{
	put_progress(w, p);
	put_byte(w, EV_END);
	put_str(w, command);
	push_buf(w, Z_FINISH);
	if (!w->errnum && fflush(w->f) != 0)
		w->errnum = errno ? errno : EIO;
	if (!w->errnum && fsync(fileno(w->f)) != 0 && errno != EINVAL)
		w->errnum = errno;
	tt_status st = TT_OK;
	if (w->errnum)
		st = tt_fail(err, TT_EIO, w->errnum, "writing %s: %s", w->path, strerror(w->errnum));
	int e = fclose(w->f) != 0 ? errno : 0;
	w->f = NULL;
	if (st == TT_OK && e)
		st = tt_fail(err, TT_EIO, e, "writing %s: %s", w->path, strerror(e));
	close_writer(w);
	return st;
}

void
binrec_abort(struct binrec_writer *w)
{
	if (!w)
		return;
	unlink(w->path);
	close_writer(w);
}

/* ---- reading ---- */

struct reader {
	FILE *f;
	const char *path;
	z_stream z;
	bool z_ready, file_end, stream_end;
	int zerr;                   /* a zlib error (damage), 0 if none */
	unsigned char *buf;         /* decompressed bytes, pos..len not read yet */
	size_t len, pos;
	uint32_t cap;
	uint64_t offset;            /* decompressed bytes before buf[0] */
	char *str[2];               /* a string field's bytes, NUL-terminated */
	uint32_t str_cap[2];
	unsigned char in[65536];
};

/* Decompress more into buf: false when nothing more comes (the stream's
 * end, the file's end, or damage: r->zerr). */
static bool
inflate_more(struct reader *r)
{
	if (r->stream_end || r->zerr)
		return false;
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->offset += r->pos;
		r->pos = 0;
	}
	/* room for 64 KiB more: an event is at most a string's MAX_STRING */
	if (r->cap - r->len < 65536 &&
	    !grow_array((void **)&r->buf, &r->cap, (uint32_t)r->len + 262144, 1)) {
		r->zerr = Z_MEM_ERROR;
		return false;
	}
	for (;;) {
		if (r->z.avail_in == 0 && !r->file_end) {
			size_t n = fread(r->in, 1, sizeof r->in, r->f);
			if (n == 0)
				r->file_end = true;
			r->z.next_in = r->in;
			r->z.avail_in = (uInt)n;
		}
		r->z.next_out = r->buf + r->len;
		r->z.avail_out = (uInt)(r->cap - r->len);
		int zr = inflate(&r->z, Z_NO_FLUSH);
		size_t got = (size_t)(r->cap - r->len) - r->z.avail_out;
		r->len += got;
		if (zr == Z_STREAM_END)
			r->stream_end = true;
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			r->zerr = zr;
		if (got)
			return true;
		if (r->stream_end || r->zerr || (r->file_end && r->z.avail_in == 0))
			return false;
	}
}

static bool
need(struct reader *r, size_t n)
{
	while (r->len - r->pos < n)
		if (!inflate_more(r))
			return false;
	return true;
}

/* Field readers: false when the data ends (cut short) or is not a field
 * (*bad set: damage). */
static bool
get_byte(struct reader *r, unsigned *v)
{
	if (!need(r, 1))
		return false;
	*v = r->buf[r->pos++];
	return true;
}

static bool
get_var(struct reader *r, uint64_t *v, bool *bad)
{
	*v = 0;
	for (unsigned shift = 0;; shift += 7) {
		unsigned b;
		if (!get_byte(r, &b))
			return false;
		if (shift == 63 && b > 1) {
			*bad = true;
			return false;
		}
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
}

static bool
get_svar(struct reader *r, int64_t *v, bool *bad)
{
	uint64_t u;
	if (!get_var(r, &u, bad))
		return false;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return true;
}

/* A 32-bit field (an id, a line). */
static bool
get_u32(struct reader *r, uint32_t *v, bool *bad)
{
	uint64_t u;
	if (!get_var(r, &u, bad))
		return false;
	if (u > UINT32_MAX) {
		*bad = true;
		return false;
	}
	*v = (uint32_t)u;
	return true;
}

static bool
get_s32(struct reader *r, int32_t *v, bool *bad)
{
	int64_t s;
	if (!get_svar(r, &s, bad))
		return false;
	if (s < INT32_MIN || s > INT32_MAX) {
		*bad = true;
		return false;
	}
	*v = (int32_t)s;
	return true;
}

/* A string into field buffer k. */
static bool
get_str(struct reader *r, int k, const char **s, bool *bad)
{
	uint64_t n;
	if (!get_var(r, &n, bad))
		return false;
	if (n > MAX_STRING) {
		*bad = true;
		return false;
	}
	if (!need(r, (size_t)n))
		return false;
	if (!grow_array((void **)&r->str[k], &r->str_cap[k], (uint32_t)n + 1, 1)) {
		r->zerr = Z_MEM_ERROR;
		return false;
	}
	memcpy(r->str[k], r->buf + r->pos, (size_t)n);
	r->str[k][n] = '\0';
	r->pos += (size_t)n;
	/* a NUL inside would cut the string where the writer did not */
	if (strlen(r->str[k]) != n) {
		*bad = true;
		return false;
	}
	*s = r->str[k];
	return true;
}

/* A source's bytes (NULs allowed), in a buffer of their own. */
static bool
get_blob(struct reader *r, char **out, size_t *len, bool *bad)
{
	uint64_t n;
	if (!get_var(r, &n, bad))
		return false;
	if (n > HEATMAP_MAX_FILE_BYTES) {
		*bad = true;
		return false;
	}
	if (!need(r, (size_t)n))
		return false;
	char *b = malloc((size_t)n + 1);
	if (!b) {
		r->zerr = Z_MEM_ERROR;
		return false;
	}
	memcpy(b, r->buf + r->pos, (size_t)n);
	b[n] = '\0';
	r->pos += (size_t)n;
	*out = b;
	*len = (size_t)n;
	return true;
}

/* A source event's fields, kept in out. */
static bool
read_source(struct reader *r, struct binrec_replay *out, bool *bad)
{
	const char *name, *why = NULL;
	unsigned have;
	char *bytes = NULL;
	size_t len = 0;
	if (!get_str(r, 0, &name, bad) || !get_byte(r, &have) ||
	    (have ? !get_blob(r, &bytes, &len, bad) : !get_str(r, 1, &why, bad)))
		return false;
	if (!grow_array((void **)&out->sources, &out->sources_cap, out->nsources + 1,
			sizeof *out->sources)) {
		free(bytes);
		r->zerr = Z_MEM_ERROR;
		return false;
	}
	struct export_source_text *t = &out->sources[out->nsources];
	*t = (struct export_source_text){.name = strdup(name), .bytes = bytes, .len = len,
					 .why = why ? strdup(why) : NULL};
	if (!t->name || (why && !t->why)) {
		free(t->name);
		free(t->bytes);
		free(t->why);
		r->zerr = Z_MEM_ERROR;
		return false;
	}
	out->nsources++;
	return true;
}

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static bool
read_header(struct reader *r, struct binrec_header *h, bool *bad)
{
	unsigned kind, mode, flags;
	int64_t pid;
	uint64_t rate;
	const char *version, *command;
	if (!get_byte(r, &kind))
		return false;
	if (kind != EV_HEADER) {
		*bad = true;
		return false;
	}
	if (!get_svar(r, &pid, bad) || !get_str(r, 0, &version, bad) ||
	    !get_str(r, 1, &command, bad) || !get_byte(r, &mode) || !get_var(r, &rate, bad) ||
	    !get_var(r, &h->start_unix_ns, bad) || !get_byte(r, &flags))
		return false;
	if (mode > PROFILE_GIL || pid < 0 || pid > INT32_MAX) {
		*bad = true;
		return false;
	}
	h->pid = (pid_t)pid;
	h->mode = (enum profile_filter)mode;
	memcpy(&h->rate_hz, &rate, sizeof rate);
	h->subprocesses = flags & 1;
	h->async_aware = flags & 2;
	h->python_version = dup_or_null(version);
	h->command = dup_or_null(command);
	return h->python_version && h->command;
}

/* One event's fields into ev (its strings in r's buffers). */
static bool
read_event(struct reader *r, unsigned kind, struct samplelog_event *ev, uint64_t *last_time,
	   bool *bad)
{
	unsigned b;
	ev->kind = (enum samplelog_kind)kind;
	switch (kind) {
	case SAMPLELOG_FUNC:
		if (!get_str(r, 0, &ev->func.qualname, bad) || !get_str(r, 1, &ev->func.filename, bad) ||
		    !get_s32(r, &ev->func.firstlineno, bad) || !get_byte(r, &b))
			return false;
		/* 0 and 1 are what recordings before native frames wrote */
		if (b > FUNC_NATIVE) {   /* damage, or a newer writer */
			*bad = true;
			return false;
		}
		ev->func.kind = (uint8_t)b;
		return true;
	case SAMPLELOG_FRAME:
		return get_u32(r, &ev->frame.func, bad) && get_s32(r, &ev->frame.line, bad);
	case SAMPLELOG_STACK:
		return get_u32(r, &ev->stack.parent, bad) && get_u32(r, &ev->stack.frame, bad);
	case SAMPLELOG_PROC: {
		int64_t pid;
		if (!get_u32(r, &ev->proc.index, bad) || !get_svar(r, &pid, bad) ||
		    !get_var(r, &ev->proc.start_ns, bad) || !get_byte(r, &b) ||
		    !get_str(r, 0, &ev->proc.cmdline, bad))
			return false;
		if (pid < INT32_MIN || pid > INT32_MAX) {
			*bad = true;
			return false;
		}
		ev->proc.pid = (int32_t)pid;
		ev->proc.sampled = b != 0;
		return true;
	}
	case SAMPLELOG_THREAD:
		if (!get_u32(r, &ev->thread.slot, bad) || !get_u32(r, &ev->thread.proc, bad) ||
		    !get_u32(r, &ev->thread.prev_proc, bad) ||
		    !get_var(r, &ev->thread.native_tid, bad) || !get_var(r, &ev->thread.born_ns, bad) ||
		    !get_var(r, &ev->thread.gone_ns, bad) || !get_byte(r, &b))
			return false;
		ev->thread.name = NULL;
		return !b || get_str(r, 0, &ev->thread.name, bad);
	case SAMPLELOG_SAMPLE: {
		int64_t dt;
		uint32_t slot;
		unsigned state, weight;
		if (!get_svar(r, &dt, bad) || !get_u32(r, &ev->sample.stack_id, bad) ||
		    !get_u32(r, &slot, bad) || !get_byte(r, &state) || !get_byte(r, &weight))
			return false;
		if (slot > UINT16_MAX) {
			*bad = true;
			return false;
		}
		*last_time += (uint64_t)dt;
		ev->sample.time_ns = *last_time;
		ev->sample.thread_slot = (uint16_t)slot;
		ev->sample.state = (uint8_t)(state & ~TT_THREAD_RUNNABLE);
		ev->sample.weight = (uint8_t)weight;
		return true;
	}
	}
	*bad = true;
	return false;
}

bool
binrec_is_recording(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	unsigned char m[sizeof MAGIC];
	bool yes = fread(m, 1, sizeof m, f) == sizeof m && memcmp(m, MAGIC, sizeof m) == 0;
	fclose(f);
	return yes;
}

static tt_status
check_preamble(struct reader *r, struct tt_error *err)
{
	unsigned char pre[PREAMBLE];
	size_t n = fread(pre, 1, sizeof pre, r->f);
	if (ferror(r->f))
		return tt_fail(err, TT_EIO, errno, "cannot read %s: %s", r->path, strerror(errno));
	if (n < sizeof MAGIC || memcmp(pre, MAGIC, sizeof MAGIC) != 0)
		return tt_fail(err, TT_EUSAGE, 0, "%s is not a tachyon-top recording", r->path);
	if (n < sizeof pre)
		return tt_fail(err, TT_EUSAGE, 0, "%s ends before its header: nothing to replay",
			       r->path);
	unsigned version = pre[8] | (unsigned)pre[9] << 8;
	if (version > BINREC_VERSION)
		return tt_fail(err, TT_EVERSION, 0, "%s is recording format version %u; this "
			       "tachyon-top reads version %u or older: replay it with a newer one",
			       r->path, version, BINREC_VERSION);
	if (version == 0)
		return tt_fail(err, TT_EUSAGE, 0, "%s is not a tachyon-top recording (version 0)",
			       r->path);
	return TT_OK;
}

static void
close_reader(struct reader *r)
{
	if (r->z_ready)
		inflateEnd(&r->z);
	if (r->f)
		fclose(r->f);
	free(r->buf);
	free(r->str[0]);
	free(r->str[1]);
}

static tt_status
damaged(struct reader *r, struct tt_error *err, const char *why)
{
	return tt_fail(err, TT_EUSAGE, 0, "%s is damaged (%s, %llu bytes into its data)", r->path,
		       why, (unsigned long long)(r->offset + r->pos));
}

/* The events after the header, to the end or the first damage. */
static tt_status
replay_events(struct reader *r, struct binrec_replay *out, struct tt_error *err)
{
	uint64_t last_time = 0;
	for (;;) {
		unsigned kind;
		bool bad = false;
		if (!get_byte(r, &kind))
			break;
		struct samplelog_event ev;
		if (kind == EV_PROGRESS) {
			struct binrec_progress p;
			if (!get_var(r, &p.duration_ns, &bad) || !get_var(r, &p.passes, &bad) ||
			    !get_var(r, &p.errors, &bad) || !get_var(r, &p.missed, &bad)) {
				if (bad)
					return damaged(r, err, "a bad progress record");
				break;
			}
			out->progress = p;
		} else if (kind == EV_END) {
			const char *command;
			if (!get_str(r, 0, &command, &bad)) {
				if (bad)
					return damaged(r, err, "a bad end record");
				break;
			}
			free(out->end_command);
			if (!(out->end_command = strdup(command)))
				return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", r->path);
		} else if (kind == EV_SOURCE) {
			if (!read_source(r, out, &bad)) {
				if (bad)
					return damaged(r, err, "a bad source record");
				break;
			}
		} else if (read_event(r, kind, &ev, &last_time, &bad)) {
			struct tt_error e;
			tt_status st = samplelog_apply(&out->log, &ev, NULL, &e);
			if (st == TT_ENOMEM)
				return tt_fail(err, st, ENOMEM, "%s: %s", r->path, e.msg);
			if (st != TT_OK)
				return damaged(r, err, e.msg);
		} else {
			if (bad)
				return damaged(r, err, "an unknown or bad record");
			break;
		}
	}
	if (r->zerr == Z_MEM_ERROR)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", r->path);
	if (r->zerr)
		return damaged(r, err, "not a zlib stream");
	if (ferror(r->f))
		return tt_fail(err, TT_EIO, EIO, "cannot read %s: %s", r->path, strerror(EIO));
	out->complete = r->stream_end && out->end_command && r->pos == r->len;
	return TT_OK;
}

tt_status
binrec_replay(const char *path, const enum profile_filter *mode, bool timeline,
	      struct binrec_replay *out, struct tt_error *err)
{
	memset(out, 0, sizeof *out);
	profile_init(&out->prof);
	timeline_init(&out->timeline);
	struct reader r = {.path = path};
	if (!(r.f = fopen(path, "rb")))
		return tt_fail(err, TT_EIO, errno, "cannot open %s: %s", path, strerror(errno));
	tt_status st = check_preamble(&r, err);
	if (st == TT_OK && inflateInit(&r.z) != Z_OK)
		st = tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", path);
	r.z_ready = st == TT_OK;
	bool bad = false;
	if (st == TT_OK && !read_header(&r, &out->h, &bad)) {
		if (r.zerr == Z_MEM_ERROR)
			st = tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", path);
		else if (bad || r.zerr)
			st = damaged(&r, err, "no header");
		else
			st = tt_fail(err, TT_EUSAGE, 0, "%s ends before its header: nothing to replay",
				     path);
	}
	if (st == TT_OK && samplelog_init(&out->log, &out->prof, mode ? *mode : out->h.mode) != 0)
		st = tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", path);
	if (st == TT_OK && timeline)
		out->log.timeline = &out->timeline;
	if (st == TT_OK)
		st = replay_events(&r, out, err);
	close_reader(&r);
	return st;
}

void
binrec_replay_free(struct binrec_replay *r)
{
	free((char *)r->h.python_version);
	free((char *)r->h.command);
	free(r->end_command);
	for (uint32_t i = 0; i < r->nsources; i++) {
		free(r->sources[i].name);
		free(r->sources[i].bytes);
		free(r->sources[i].why);
	}
	free(r->sources);
	if (r->log.mirror.procs)
		samplelog_free(&r->log);
	profile_free(&r->prof);
	timeline_free(&r->timeline);
	memset(r, 0, sizeof *r);
}
