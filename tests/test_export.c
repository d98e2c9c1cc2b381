/* Unit tests of the profile writers on a synthetic profile: the writer is
 * the unit under test, fed through its real API (a walker's intern tables
 * and code cache, filled here instead of from a target).
 *
 *   - a 50,000-stack profile renders to SVG in under 1 s and under 15 MB;
 *   - hostile names stay text in the SVG (no element can be closed);
 *   - pprof output is a gzip stream;
 *   - a diff baseline reads folded stacks (every prefix counted, process
 *     and thread numbers and lines left out of the keys) and refuses what
 *     is not folded stacks with the line's number.
 *
 * `test_export --svg FILE` writes the 50,000-stack flame graph to FILE (for
 * tests/export.py, which times opening it in a browser) and exits. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "clock.h"
#include "diffbase.h"
#include "export.h"
#include "collapsed.h"
#include "flamegraph.h"
#include "pprof.h"
#include "speedscope.h"
#include "procset.h"
#include "walk/stackwalk.h"
#include "tap.h"
#include "walk/sample.h"

#define NCODES 2000
#define NSTACKS 50000
#define NTHREADS 4

static uint64_t rng = 88172645463325252ull;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static uint32_t
add_code(struct stackwalk *w, const char *qualname, const char *filename, int first)
{
	return intern_func(stackwalk_intern_rw(w), qualname, filename, first, FUNC_PYTHON);
}

static void
add_thread(struct stackwalk *w, uint64_t tid, const char *name)
{
	struct thread_slot *s = appendlog_reserve((struct appendlog *)stackwalk_slots(w));
	s->native_tid = tid;
	s->proc = 0;
	atomic_store(&s->name, strdup(name));
	appendlog_publish((struct appendlog *)stackwalk_slots(w));
}

/* 50,000 distinct stacks shaped like a server's: a shared trunk of 6
 * frames, then 4 to 34 frames; at each level a few callees take most of the
 * time (callee k with probability 2^-(k+1)), so the graph is deep and wide
 * where it matters and thin in its long tail. */
static void
big_profile(struct stackwalk *w, struct profile *p)
{
	struct intern *in = (struct intern *)stackwalk_intern(w);
	uint32_t codes[NCODES];
	for (uint32_t i = 0; i < NCODES; i++) {
		char q[96], f[128];
		snprintf(q, sizeof q, "Handler%u.method_%u.<locals>.step", i % 97, i);
		snprintf(f, sizeof f, "/usr/lib/python3/dist-packages/app/pkg%u/module_%u.py",
			 i % 40, i % 300);
		codes[i] = add_code(w, q, f, 10 + (int)(i % 500));
	}
	for (uint32_t t = 0; t < NTHREADS; t++) {
		char name[32];
		snprintf(name, sizeof name, "worker-%u", t);
		add_thread(w, 1000 + t, name);
	}
	uint32_t made = 0;
	while (made < NSTACKS) {
		uint32_t s = 0;
		for (uint32_t d = 0; d < 6; d++)
			s = intern_stack(in, s, intern_frame(in, codes[d], 20 + (int)d));
		uint32_t depth = 4 + rnd(31), pick = 0;
		for (uint32_t d = 0; d < depth; d++) {
			/* callee k of this caller with probability 2^-(k+1) */
			uint32_t k = (uint32_t)__builtin_ctz(rnd(1u << 20) | 1u << 19);
			pick = (pick * 40 + k) % NCODES;
			s = intern_stack(in, s, intern_frame(in, codes[pick], 12 + (int)(k % 3)));
		}
		uint32_t before = p->count;
		profile_add_weight(p, (uint16_t)rnd(NTHREADS), s, 1 + rnd(20));
		made += p->count != before;
	}
}

static double
cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct export_meta
meta_for_tests(void)
{
	return (struct export_meta){
		.pid = 4242, .command = "python3 -m app --workers 4", .python_version = "3.14.0",
		.mode = PROFILE_WALL, .rate_hz = 1000, .period_ns = 1000000,
		.duration_ns = 60000000000ull, .start_unix_ns = 1700000000000000000ull,
	};
}

/* A process set of one process (a zeroed target) and its walker. */
static struct stackwalk *
one_process(struct procset *ps)
{
	struct target t;
	memset(&t, 0, sizeof t);
	struct stackwalk_options o;
	stackwalk_default_options(&o);
	struct tt_error err;
	uint32_t idx;
	if (procset_init(ps) != 0 || procset_add(ps, &t, 0, true, &o, 1, &idx, &err) != TT_OK)
		return NULL;
	return procset_at(ps, idx)->walk;
}

/* The 50,000-stack flame graph's CPU budget: 0.39-0.41 s in a release
 * build here, 0.87-0.91 s under AddressSanitizer (1.13 s once, beside the
 * sanitizer pass's other tests): the sanitized build gets twice as long. */
#if defined(__SANITIZE_ADDRESS__)
#define SVG_CPU_BUDGET 2.0
#else
#define SVG_CPU_BUDGET 1.0
#endif

static void
test_big_svg(const struct procset *ps, const struct profile *p, const char *keep)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct export_meta m = meta_for_tests();
	uint64_t t0 = clock_now_ns();
	double c0 = cpu_seconds();
	int rc = flamegraph_write(p, ps, &m, f);
	fclose(f);
	double secs = (double)(clock_now_ns() - t0) / 1e9, cpu = cpu_seconds() - c0;
	tap_ok(rc == 0, "flame graph of %u stacks written", p->count);
	/* CPU time: on a shared machine wall time measures the neighbours */
	tap_ok(cpu < SVG_CPU_BUDGET, "flame graph of %u stacks in %.3f s of CPU (< %.0f s; %.3f s "
	       "wall)", p->count, cpu, SVG_CPU_BUDGET, secs);
	tap_ok(len < 15u << 20, "flame graph of %u stacks is %.2f MB (< 15 MB)", p->count,
	       (double)len / (1 << 20));
	size_t frames = 0;
	for (const char *s = buf; (s = strstr(s, "<g><title>")); s++)
		frames++;
	tap_ok(frames > 5000 && frames <= FLAMEGRAPH_MAX_FRAMES,
	       "%zu frames drawn (at most %d)", frames, FLAMEGRAPH_MAX_FRAMES);
	tap_ok(strstr(buf, "frames narrower than") != NULL, "the legend says narrow frames are left out");
	tap_ok(len > 6 && strcmp(buf + len - 7, "</svg>\n") == 0, "the document is complete");
	if (keep) {
		FILE *o = fopen(keep, "w");
		if (!o || fwrite(buf, 1, len, o) != len || fclose(o) != 0)
			tap_ok(0, "write %s", keep);
	}
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	t0 = clock_now_ns();
	rc = export_write(EXPORT_PPROF, p, ps, &m, f);
	fclose(f);
	secs = (double)(clock_now_ns() - t0) / 1e9;
	tap_ok(rc == 0 && len > 18 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b,
	       "pprof of %u stacks is gzip: %.2f MB in %.3f s", p->count, (double)len / (1 << 20),
	       secs);
	free(buf);
}

static void
test_hostile(void)
{
	struct procset ps;
	struct stackwalk *w = one_process(&ps);
	if (!w) {
		tap_ok(0, "walker for the hostile profile");
		return;
	}
	struct intern *in = (struct intern *)stackwalk_intern(w);
	uint32_t a = add_code(w, "</svg><script>alert(1)</script>", "/tmp/]]><x y=\"'&amp;.py", 1);
	uint32_t b = add_code(w, "\x1b[31mred\x07 \xff\xfe bad utf8 \xef\xbf\xbe", "<!--.py", 2);
	add_thread(w, 7, "<thread>&");
	uint32_t s = intern_stack(in, 0, intern_frame(in, a, 3));
	s = intern_stack(in, s, intern_frame(in, b, 4));
	struct profile p;
	profile_init(&p);
	profile_add_weight(&p, 0, s, 10);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct export_meta m = meta_for_tests();
	m.command = "python3 </title><script>x()</script>";
	m.per_thread = true;
	int rc = flamegraph_write(&p, &ps, &m, f);
	fclose(f);
	tap_ok(rc == 0, "hostile flame graph written");
	size_t scripts = 0;
	for (const char *x = buf; (x = strstr(x, "<script")); x++)
		scripts++;
	tap_ok(scripts == 1, "one <script> element (ours), found %zu", scripts);
	tap_ok(strstr(buf, "&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != NULL,
	       "the hostile function name is escaped text");
	tap_ok(strstr(buf, "]]><x") == NULL && strstr(buf, "]]&gt;&lt;x y=&quot;&#39;&amp;amp;.py"),
	       "the hostile file name is escaped text");
	tap_ok(strstr(buf, "&lt;thread&gt;&amp;") != NULL, "the thread name is escaped text");
	tap_ok(strstr(buf, "&lt;/title&gt;&lt;script&gt;") != NULL, "the command is escaped text");
	bool controls = false;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)buf[i] < 0x20 && buf[i] != '\n') || buf[i] == 0x7f)
			controls = true;
	tap_ok(!controls, "no control characters in the SVG");
	tap_ok(strstr(buf, "\xef\xbf\xbe") == NULL && strstr(buf, "\\u{fffe}") != NULL,
	       "U+FFFE (not an XML character) is written visibly");
	free(buf);
	profile_free(&p);
	procset_free(&ps);
}

static const char *
write_temp(const char *text)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/tt-diffbase-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static void
test_diffbase(void)
{
	const char *path = write_temp("process 10 (app);thread 11 main;f (a.py:1);g (a.py:5) 7\n"
				      "process 10 (app);thread 11 main;f (a.py:2);h (b.py:9) 3\n"
				      "\n"
				      "process 10 (app);thread 12 w;<no Python frames> 5\n");
	struct diff_base b;
	struct tt_error err = {0};
	tap_ok(path && diffbase_load(&b, path, &err) == TT_OK, "a folded file loads (%s)", err.msg);
	tap_ok(b.total == 15 && b.stacks == 3, "15 samples in 3 stacks (%llu in %llu)",
	       (unsigned long long)b.total, (unsigned long long)b.stacks);
	/* another run: other pid and tid, f called from other lines */
	uint64_t k = diffbase_key(DIFFBASE_ROOT, "process 99 (app)");
	tap_ok(diffbase_samples(&b, k) == 15, "a process frame matches without its pid");
	k = diffbase_key(k, "thread 98 main");
	tap_ok(diffbase_samples(&b, k) == 10, "a thread frame matches without its tid");
	k = diffbase_key(k, "f (a.py:40)");
	tap_ok(diffbase_samples(&b, k) == 10, "f's two lines are one path: 10 samples (%llu)",
	       (unsigned long long)diffbase_samples(&b, k));
	tap_ok(diffbase_samples(&b, diffbase_key(k, "g (a.py:6)")) == 7 &&
	       diffbase_samples(&b, diffbase_key(k, "h (b.py:1)")) == 3, "g 7 and h 3 under f");
	tap_ok(diffbase_samples(&b, diffbase_key(k, "g (other.py:6)")) == 0,
	       "another file is another function");
	tap_ok(diffbase_samples(&b, DIFFBASE_ROOT) == 15, "the root holds every sample");
	diffbase_free(&b);
	unlink(path);
	static const char *const bad[] = {"f (a.py:1) 3\nno count here\n", "f (a.py:1) -3\n",
					  "f (a.py:1) 3x\n", "", "f 0\n"};
	static const char *const says[] = {":2: not folded stacks", ":1: not folded stacks",
					   ":1: not folded stacks", "holds no samples",
					   "holds no samples"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		path = write_temp(bad[i]);
		memset(&err, 0, sizeof err);
		tap_ok(path && diffbase_load(&b, path, &err) != TT_OK && strstr(err.msg, says[i]),
		       "bad baseline %zu refused: %s", i, err.msg);
		unlink(path);
	}
	memset(&err, 0, sizeof err);
	tap_ok(diffbase_load(&b, "/nonexistent/base", &err) != TT_OK &&
	       strstr(err.msg, "cannot read the baseline"), "a missing baseline: %s", err.msg);
}

static char *
write_to_memory(int (*write)(const struct profile *, const struct procset *, FILE *, void *),
		const struct profile *p, const struct procset *ps, void *arg, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int rc = write(p, ps, f, arg);
	fclose(f);
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int
collapsed_to(const struct profile *p, const struct procset *ps, FILE *f, void *arg)
{
	(void)arg;
	return profile_write_collapsed(p, ps, f, false, false);
}

static int
speedscope_to(const struct profile *p, const struct procset *ps, FILE *f, void *arg)
{
	(void)arg;
	return profile_write_speedscope(p, ps, f, "t", 0.001, false);
}

static int
svg_to(const struct profile *p, const struct procset *ps, FILE *f, void *arg)
{
	return flamegraph_write(p, ps, arg, f);
}

static int
pprof_to(const struct profile *p, const struct procset *ps, FILE *f, void *arg)
{
	return pprof_write(p, ps, arg, f);
}

/* Native (C) frames: "symbol (library)" without a line in every format;
 * pprof gives the library a mapping of its own; the SVG colours them green. */
static void
test_native_frames(void)
{
	struct procset ps;
	struct stackwalk *w = one_process(&ps);
	if (!w) {
		tap_ok(0, "walker for native frames");
		return;
	}
	struct intern *in = (struct intern *)stackwalk_intern(w);
	uint32_t py = add_code(w, "hash_it", "/srv/app.py", 3);
	uint32_t c = intern_func(in, "PKCS5_PBKDF2_HMAC", "libcrypto.so.3", 0, FUNC_NATIVE);
	add_thread(w, 7, "main");
	uint32_t s = intern_stack(in, 0, intern_frame(in, py, 5));
	s = intern_stack(in, s, intern_frame(in, c, 0));
	struct profile p;
	profile_init(&p);
	profile_add_weight(&p, 0, s, 10);
	struct export_meta m = meta_for_tests();
	size_t len;
	char *text = write_to_memory(collapsed_to, &p, &ps, NULL, &len);
	tap_ok(text && strstr(text, "hash_it (/srv/app.py:5);PKCS5_PBKDF2_HMAC (libcrypto.so.3) 10\n"),
	       "collapsed: the native frame reads 'symbol (library)' (%s)", text ? text : "none");
	free(text);
	text = write_to_memory(speedscope_to, &p, &ps, NULL, &len);
	tap_ok(text && strstr(text, "{\"name\": \"PKCS5_PBKDF2_HMAC (libcrypto.so.3)\", "
				    "\"file\": \"libcrypto.so.3\"}"),
	       "speedscope: the native frame is named with its library, no line");
	free(text);
	text = write_to_memory(svg_to, &p, &ps, &m, &len);
	const char *at = text ? strstr(text, "PKCS5_PBKDF2_HMAC (libcrypto.so.3)") : NULL;
	tap_ok(at != NULL, "SVG: the native frame's title says 'symbol (library)'");
	/* its rectangle's fill: the first fill after the title's start of the group */
	const char *fill = at ? strstr(at, "fill=\"#") : NULL;
	unsigned r = 255, g = 0;
	if (fill)
		sscanf(fill, "fill=\"#%2x%2x", &r, &g);
	tap_ok(fill && g > r, "SVG: native frames are green (fill %.14s)", fill ? fill : "none");
	free(text);
	text = write_to_memory(pprof_to, &p, &ps, &m, &len);
	/* gunzip it: the string table holds the library's name (its mapping's
	 * file name) and the symbol */
	char out[1 << 16];
	z_stream z = {.next_in = (Bytef *)text, .avail_in = (uInt)(text ? len : 0),
		      .next_out = (Bytef *)out, .avail_out = sizeof out - 1};
	bool ok = text && inflateInit2(&z, 31) == Z_OK && inflate(&z, Z_FINISH) == Z_STREAM_END;
	inflateEnd(&z);
	size_t n = ok ? sizeof out - 1 - z.avail_out : 0;
	tap_ok(ok && memmem(out, n, "libcrypto.so.3", 14) && memmem(out, n, "PKCS5_PBKDF2_HMAC", 17),
	       "pprof: the library and the symbol are in the profile");
	free(text);
	profile_free(&p);
	procset_free(&ps);
}

int
main(int argc, char **argv)
{
	const char *keep = argc == 3 && strcmp(argv[1], "--svg") == 0 ? argv[2] : NULL;
	struct procset ps;
	struct stackwalk *w = one_process(&ps);
	if (!w) {
		tap_ok(0, "walker");
		return tap_done();
	}
	struct profile p;
	profile_init(&p);
	big_profile(w, &p);
	test_big_svg(&ps, &p, keep);
	profile_free(&p);
	procset_free(&ps);
	if (!keep) {
		test_hostile();
		test_diffbase();
		test_native_frames();
	}
	return tap_done();
}
