#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
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

static const struct {
	const char *name, *ext;
} formats[EXPORT_FORMAT_COUNT] = {
	[EXPORT_COLLAPSED] = {"collapsed", ".collapsed"},
	[EXPORT_SPEEDSCOPE] = {"speedscope", ".speedscope.json"},
	[EXPORT_FLAMEGRAPH] = {"flamegraph", ".svg"},
	[EXPORT_PPROF] = {"pprof", ".pb.gz"},
	[EXPORT_PSTATS] = {"pstats", ".prof"},
	[EXPORT_HEATMAP] = {"heatmap", ".html"},
	[EXPORT_GECKO] = {"gecko", ".gecko.json"},
};

bool
export_parse_format(const char *name, enum export_format *out)
{
	for (int i = 0; i < EXPORT_FORMAT_COUNT; i++)
		if (strcmp(name, formats[i].name) == 0) {
			*out = (enum export_format)i;
			return true;
		}
	if (strcmp(name, "svg") == 0) {
		*out = EXPORT_FLAMEGRAPH;
		return true;
	}
	if (strcmp(name, "firefox") == 0) {
		*out = EXPORT_GECKO;
		return true;
	}
	if (strcmp(name, "folded") == 0) {
		*out = EXPORT_COLLAPSED;
		return true;
	}
	return false;
}

const char *
export_format_list(void)
{
	return "collapsed, speedscope, flamegraph, pprof, pstats, heatmap or gecko";
}

const char *
export_format_extension(enum export_format f)
{
	return formats[f].ext;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

enum export_format
export_format_for_path(const char *path)
{
	if (ends_with(path, ".svg"))
		return EXPORT_FLAMEGRAPH;
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof"))
		return EXPORT_PPROF;
	if (ends_with(path, ".gecko.json"))
		return EXPORT_GECKO;
	if (ends_with(path, ".json"))
		return EXPORT_SPEEDSCOPE;
	if (ends_with(path, ".prof") || ends_with(path, ".pstats"))
		return EXPORT_PSTATS;
	if (ends_with(path, ".html") || ends_with(path, ".htm"))
		return EXPORT_HEATMAP;
	return EXPORT_COLLAPSED;
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
 * root, a relative one under its working directory, never escaping them
 * (RESOLVE_IN_ROOT: "..", absolute symlinks stay inside). */
static int
open_source(const struct export_sources *s, const char *name)
{
	if (!s->have) {
		errno = ENOENT;
		return -1;
	}
	int dir = name[0] == '/' ? s->root_fd : s->cwd_fd;
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	int fd = (int)syscall(SYS_openat2, dir, name, &how, sizeof how);
	if (fd < 0 && errno == ENOSYS)
		fd = openat(dir, name[0] == '/' ? name + 1 : name,
			    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	return fd;
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
	switch (fmt) {
	case EXPORT_SPEEDSCOPE: {
		char name[96];
		snprintf(name, sizeof name, "tachyon-top pid %d%s (%s)", (int)meta->pid,
			 meta->per_process ? " and descendants" : "", export_mode_name(meta->mode));
		return profile_write_speedscope(p, ps, f, name, (double)meta->period_ns / 1e9,
						meta->per_process);
	}
	case EXPORT_FLAMEGRAPH:
		return flamegraph_write(p, ps, meta, f);
	case EXPORT_PPROF:
		return pprof_write(p, ps, meta, f);
	case EXPORT_PSTATS:
		return pstats_write(p, ps, meta, f);
	case EXPORT_HEATMAP:
		return heatmap_write(p, ps, meta, f);
	case EXPORT_GECKO:
		return meta->timeline ? gecko_write(meta->timeline, ps, meta, f) : -1;
	default:
		return profile_write_collapsed(p, ps, f, meta->per_thread, meta->per_process);
	}
}
