#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collapsed.h"
#include "export.h"
#include "readfile.h"
#include "flamegraph.h"
#include "gecko.h"
#include "heatmap.h"
#include "pprof.h"
#include "pstats.h"
#include "speedscope.h"

typedef int export_writer(const struct profile *p, const struct procset *ps,
			  const struct export_meta *meta, FILE *f);

static int
write_collapsed(const struct profile *p, const struct procset *ps, const struct export_meta *meta,
		FILE *f)
{
	return profile_write_collapsed(p, ps, f, meta->per_thread, meta->per_process);
}

static int
write_speedscope(const struct profile *p, const struct procset *ps,
		 const struct export_meta *meta, FILE *f)
{
	char name[96];
	snprintf(name, sizeof name, "tachyon-top pid %d%s (%s)", (int)meta->pid,
		 meta->per_process ? " and descendants" : "", export_mode_name(meta->mode));
	return profile_write_speedscope(p, ps, f, name, (double)meta->period_ns / 1e9,
					meta->per_process);
}

static int
write_gecko(const struct profile *p, const struct procset *ps, const struct export_meta *meta,
	    FILE *f)
{
	(void)p;
	return meta->timeline ? gecko_write(meta->timeline, ps, meta, f) : -1;
}

/* Every format: its name and other names it answers to, the extensions
 * that ask for it (the first is what the live view gives its files), and
 * its writer. A file name with none of the extensions gets FALLBACK_FORMAT. */
static const struct {
	const char *name;
	const char *aliases[2];
	const char *exts[3];
	export_writer *write;
	const char *about;   /* for --help, after "name (.ext, ...): " */
} FORMATS[EXPORT_FORMAT_COUNT] = {
	[EXPORT_COLLAPSED] = {"collapsed", {"folded"}, {".collapsed"}, write_collapsed,
			      "folded stacks"},
	[EXPORT_SPEEDSCOPE] = {"speedscope", {NULL}, {".speedscope.json", ".json"},
			       write_speedscope, "speedscope's"},
	[EXPORT_FLAMEGRAPH] = {"flamegraph", {"svg"}, {".svg"}, flamegraph_write,
			       "an interactive flame graph"},
	[EXPORT_PPROF] = {"pprof", {NULL}, {".pb.gz", ".pprof"}, pprof_write,
			  "gzipped profile.proto"},
	[EXPORT_PSTATS] = {"pstats", {NULL}, {".prof", ".pstats"}, pstats_write,
			   "cProfile's format"},
	[EXPORT_HEATMAP] = {"heatmap", {NULL}, {".html", ".htm"}, heatmap_write,
			    "the source, lines shaded"},
	[EXPORT_GECKO] = {"gecko", {"firefox"}, {".gecko.json"}, write_gecko,
			  "the Firefox Profiler's"},
};
#define NALIASES (sizeof FORMATS[0].aliases / sizeof FORMATS[0].aliases[0])
/* What a file name of none of the extensions gets. */
#define FALLBACK_FORMAT EXPORT_COLLAPSED
#define NEXTS (sizeof FORMATS[0].exts / sizeof FORMATS[0].exts[0])

bool
export_parse_format(const char *name, enum export_format *out)
{
	for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) {
		bool match = strcmp(name, FORMATS[i].name) == 0;
		for (size_t j = 0; j < NALIASES && FORMATS[i].aliases[j] && !match; j++)
			match = strcmp(name, FORMATS[i].aliases[j]) == 0;
		if (match) {
			*out = (enum export_format)i;
			return true;
		}
	}
	return false;
}

const char *
export_format_list(void)
{
	/* "collapsed, speedscope, ... or gecko": made once, from the table */
	static char list[256];
	if (!list[0]) {
		struct textbuf t;
		textbuf_init(&t, list, sizeof list);
		for (int i = 0; i < EXPORT_FORMAT_COUNT; i++)
			textbuf_printf(&t, "%s%s",
				       i == 0 ? "" : i + 1 < EXPORT_FORMAT_COUNT ? ", " : " or ",
				       FORMATS[i].name);
	}
	return list;
}

void
export_formats_help(struct textbuf *t, const char *indent)
{
	for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) {
		textbuf_printf(t, "%s%s (", indent, FORMATS[i].name);
		for (size_t j = 0; j < NEXTS && FORMATS[i].exts[j]; j++)
			textbuf_printf(t, "%s%s", j ? ", " : "", FORMATS[i].exts[j]);
		textbuf_printf(t, "%s): %s\n", i == FALLBACK_FORMAT ? ", any other name" : "",
			       FORMATS[i].about);
	}
}

const char *
export_format_extension(enum export_format f)
{
	return FORMATS[f].exts[0];
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The format whose extension is the longest that the name ends with
 * (".gecko.json" over ".json"). */
enum export_format
export_format_for_path(const char *path)
{
	enum export_format best = FALLBACK_FORMAT;
	size_t best_len = 0;
	for (int i = 0; i < EXPORT_FORMAT_COUNT; i++)
		for (size_t j = 0; j < NEXTS && FORMATS[i].exts[j]; j++) {
			size_t len = strlen(FORMATS[i].exts[j]);
			if (len > best_len && ends_with(path, FORMATS[i].exts[j])) {
				best = (enum export_format)i;
				best_len = len;
			}
		}
	return best;
}

bool
export_parse_mode(const char *name, enum profile_filter *out)
{
	static const enum profile_filter modes[] = {PROFILE_WALL, PROFILE_CPU, PROFILE_GIL};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (strcmp(name, export_mode_name(modes[i])) == 0) {
			*out = modes[i];
			return true;
		}
	return false;
}

const char *
export_mode_name(enum profile_filter mode)
{
	switch (mode) {
	case PROFILE_CPU: return "cpu";
	case PROFILE_GIL: return "gil";
	default: return "wall";
	}
}

void
export_sources_open(struct export_sources *s, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
	int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
	int cwd = root >= 0 ? open(path, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (cwd < 0 && root >= 0)
		close(root);
	*s = (struct export_sources){.have = cwd >= 0, .root_fd = root, .cwd_fd = cwd};
}

void
export_sources_close(struct export_sources *s)
{
	if (!s->have)
		return;
	close(s->root_fd);
	close(s->cwd_fd);
	s->have = false;
}

/* Open a source file as the target saw it: an absolute path under its
 * root, a relative one under its working directory, never escaping them. */
static int
open_source(const struct export_sources *s, const char *name)
{
	if (!s->have) {
		errno = ENOENT;
		return -1;
	}
	return open_in_root(s->root_fd, s->cwd_fd, name);
}

/* A text a recording kept. */
static char *
kept_source(const struct export_sources *s, const char *name, size_t *len, char *why,
	    size_t wlen)
{
	for (uint32_t i = 0; i < s->ntexts; i++) {
		const struct export_source_text *t = &s->texts[i];
		if (strcmp(t->name, name) != 0)
			continue;
		if (!t->bytes) {
			snprintf(why, wlen, "%s", t->why ? t->why : "source not available");
			return NULL;
		}
		char *copy = malloc(t->len + 1);
		if (!copy) {
			snprintf(why, wlen, "out of memory reading the source");
			return NULL;
		}
		memcpy(copy, t->bytes, t->len);
		copy[t->len] = '\0';
		*len = t->len;
		return copy;
	}
	snprintf(why, wlen, "source not available (not in the recording)");
	return NULL;
}

char *
export_source_read(const struct export_sources *s, const char *name, size_t max, size_t *len,
		   char *why, size_t wlen)
{
	if (s->recorded)
		return kept_source(s, name, len, why, wlen);
	int fd = open_source(s, name);
	if (fd < 0) {
		snprintf(why, wlen, "source not available (%s)",
			 !s->have ? "the target's root was not kept" : strerror(errno));
		return NULL;
	}
	bool cut;
	char *buf = read_fd_whole(fd, max, len, &cut);
	int e = errno;
	close(fd);
	if (!buf) {
		if (e == ENOMEM)
			snprintf(why, wlen, "out of memory reading the source");
		else
			snprintf(why, wlen, "source not readable (%s)", strerror(e));
	} else if (cut) {
		snprintf(why, wlen, "source over %zu MB: lines listed alone", max >> 20);
		free(buf);
		buf = NULL;
	}
	return buf;
}

tt_status
export_commit(enum export_format fmt, const struct profile *p, const struct procset *ps,
	      const struct export_meta *meta, struct outfile *o, const char *name,
	      struct tt_error *err)
{
	/* a writer's failure with the stream still good: memory ran short */
	if (export_write(fmt, p, ps, meta, o->f) != 0 && !ferror(o->f)) {
		outfile_abort(o);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "writing %s: out of memory", name);
	}
	return outfile_commit(o, err);
}

int
export_write(enum export_format fmt, const struct profile *p, const struct procset *ps,
	     const struct export_meta *meta, FILE *f)
{
	return FORMATS[fmt].write(p, ps, meta, f);
}
