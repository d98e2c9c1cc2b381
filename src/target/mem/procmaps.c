#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "mem/procmaps.h"
#include "readfile.h"
#include "mem/remote.h"

/* Longest maps file we accept; a process with more mappings than this is
 * unusual enough that truncating the list is the right failure. */
#define MAPS_MAX_BYTES (64u << 20)

static const char *
parse_hex(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;
	for (;; p++, n++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (n >= 16)
			return NULL;
		v = (v << 4) | (uint64_t)d;
	}
	if (n == 0)
		return NULL;
	*out = v;
	return p;
}

static const char *
skip_field(const char *p)
{
	while (*p == ' ')
		p++;
	while (*p && *p != ' ' && *p != '\n')
		p++;
	return p;
}

bool
procmaps_parse_line(const char *line, struct map_entry *out)
{
	memset(out, 0, sizeof *out);
	const char *p = parse_hex(line, &out->start);
	if (!p || *p != '-')
		return false;
	p = parse_hex(p + 1, &out->end);
	if (!p || *p != ' ' || out->end < out->start)
		return false;
	p++;
	for (int i = 0; i < 4; i++) {
		if (!p[i] || p[i] == '\n')
			return false;
		out->perms[i] = p[i];
	}
	p += 4;
	if (*p != ' ')
		return false;
	p = parse_hex(p + 1, &out->offset);
	if (!p || *p != ' ')
		return false;
	p = skip_field(p); /* dev */
	p = skip_field(p); /* inode */
	while (*p == ' ')
		p++;
	size_t len = strcspn(p, "\n");
	static const char deleted[] = " (deleted)";
	if (len >= sizeof deleted - 1 &&
	    memcmp(p + len - (sizeof deleted - 1), deleted, sizeof deleted - 1) == 0) {
		out->deleted = true;
		len -= sizeof deleted - 1;
	}
	if (len >= sizeof out->path)
		len = sizeof out->path - 1;
	memcpy(out->path, p, len);
	out->path[len] = '\0';
	return true;
}

tt_status
procmaps_parse(const char *text, struct proc_maps *maps, struct tt_error *err)
{
	maps->entries = NULL;
	maps->count = 0;
	uint32_t cap = 0;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		struct map_entry e;
		if (procmaps_parse_line(line, &e)) {
			if (!grow_array((void **)&maps->entries, &cap, (uint32_t)maps->count + 1,
					sizeof *maps->entries)) {
				procmaps_free(maps);
				return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading maps");
			}
			maps->entries[maps->count++] = e;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return TT_OK;
}

tt_status
procmaps_read(pid_t pid, struct proc_maps *maps, struct tt_error *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return tt_fail(err, TT_ENOPROC, e, "no such process: %d", (int)pid);
		if (e == EACCES || e == EPERM)
			return remote_permission_error(pid, e, err);
		return tt_fail(err, TT_EIO, e, "cannot open %s: %s", path, strerror(e));
	}
	/* A map list past MAPS_MAX_BYTES is cut there: what was read is parsed. */
	size_t len;
	bool cut;
	char *buf = read_fd_whole(fd, MAPS_MAX_BYTES, &len, &cut);
	if (!buf) {
		int e = errno;
		close(fd);
		if (e == ENOMEM)
			return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading maps");
		if (e == ESRCH)
			return tt_fail(err, TT_ENOPROC, e, "process %d has exited", (int)pid);
		if (e == EACCES || e == EPERM)
			return remote_permission_error(pid, e, err);
		return tt_fail(err, TT_EIO, e, "reading %s: %s", path, strerror(e));
	}
	close(fd);
	if (len == 0) {
		free(buf);
		/* Kernel threads and zombies have empty maps. */
		return tt_fail(err, TT_ENOTPY, 0,
			       "process %d is not a Python process (it has no memory mappings)",
			       (int)pid);
	}
	tt_status st = procmaps_parse(buf, maps, err);
	free(buf);
	return st;
}

void
procmaps_free(struct proc_maps *maps)
{
	free(maps->entries);
	maps->entries = NULL;
	maps->count = 0;
}

const char *
procmaps_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}
