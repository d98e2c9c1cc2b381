#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elffile.h"
#include "procmaps.h"
#include "target.h"

/* Distinct mapped files we are willing to open looking for the runtime. */
#define MAX_CANDIDATE_FILES 512

static tt_status
read_layout(struct target *t, struct tt_error *err)
{
	uint8_t raw[PY_DEBUG_MAX_SIZE];
	tt_status st = remote_read(&t->mem, t->runtime_addr, raw, PY_DEBUG_HEADER_SIZE, err);
	if (st != TT_OK)
		return st;
	if (memcmp(raw, PY_DEBUG_COOKIE, 8) != 0)
		return tt_fail(err, TT_ENOTPY, 0,
			       "process %d is not a Python process (no _Py_DebugOffsets at the "
			       "runtime section)", (int)t->pid);
	uint64_t version;
	memcpy(&version, raw + 8, 8);
	size_t size = pylayout_table_size(version);
	if (size == 0 || size > sizeof raw) {
		char v[32];
		pylayout_version_string(version, v, sizeof v);
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python version %s (tachyon-top supports 3.13, 3.14 and 3.15)",
			       v);
	}
	st = remote_read(&t->mem, t->runtime_addr, raw, size, err);
	if (st != TT_OK)
		return st;
	return pylayout_from_table(raw, size, &t->layout, err);
}

tt_status
target_attach_memory(struct target *t, struct remote_backend backend, uint64_t runtime_addr,
		     struct tt_error *err)
{
	memset(t, 0, sizeof *t);
	remote_open_backend(&t->mem, backend);
	t->runtime_addr = runtime_addr;
	return read_layout(t, err);
}

/* Open a file the target has mapped, as the target sees it: through its root
 * (the target may live in a container), falling back to map_files and then
 * the path itself. */
static int
open_mapped_file(pid_t pid, const struct map_entry *m)
{
	char path[700];
	if (!m->deleted && m->path[0] == '/') {
		snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, m->path);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	snprintf(path, sizeof path, "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || m->deleted || m->path[0] != '/')
		return fd;
	/* map_files needs CAP_SYS_ADMIN on some kernels; in our own mount
	 * namespace (e.g. a chroot) the path as maps shows it works too. */
	return open(m->path, O_RDONLY | O_CLOEXEC);
}

static bool
is_python_named(const char *path)
{
	return strstr(procmaps_basename(path), "python") != NULL;
}

/* "python3.11" or "libpython3.11.so.1.0" -> "3.11" when older than 3.13, for a clear refusal of
 * interpreters older than 3.13 (they carry no .PyRuntime debug table). */
static bool
version_from_name(const char *path, char *out, size_t len)
{
	const char *p = strstr(procmaps_basename(path), "python");
	if (!p)
		return false;
	p += 6;
	if (!isdigit((unsigned char)p[0]) || p[1] != '.' || !isdigit((unsigned char)p[2]))
		return false;
	size_t n = 3;
	while (isdigit((unsigned char)p[n]) && n < 6)
		n++;
	if (n + 1 > len)
		return false;
	memcpy(out, p, n);
	out[n] = '\0';
	int major = out[0] - '0', minor = atoi(out + 2);
	return major < 3 || (major == 3 && minor < 13);
}

/* Try one mapped file: does it carry .PyRuntime, and is a valid table there? */
static tt_status
try_candidate(struct target *t, const struct proc_maps *maps, size_t idx,
	      struct tt_error *err)
{
	const struct map_entry *m = &maps->entries[idx];
	int fd = open_mapped_file(t->pid, m);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM)
			return remote_permission_error(t->pid, errno, err);
		return tt_fail(err, TT_ENOTPY, errno, "cannot open %s", m->path);
	}
	struct elf_section_hit hit;
	tt_status st = elf_find_section(fd, ".PyRuntime", &hit, err);
	close(fd);
	if (st != TT_OK)
		return st;
	/* Where is the file's offset-0 segment mapped? */
	uint64_t base = 0;
	bool found = false;
	for (size_t i = 0; i < maps->count; i++) {
		const struct map_entry *o = &maps->entries[i];
		if (o->offset == 0 && strcmp(o->path, m->path) == 0 && (!found || o->start < base)) {
			base = o->start;
			found = true;
		}
	}
	if (!found)
		return tt_fail(err, TT_ENOTPY, 0, "%s: no mapping at file offset 0", m->path);
	t->runtime_addr = hit.is_pie ? base - hit.load_vaddr + hit.sh_addr : hit.sh_addr;
	snprintf(t->binary, sizeof t->binary, "%s", m->path);
	return read_layout(t, err);
}

/* Which failure explains best why no candidate worked. */
static int
error_rank(tt_status st)
{
	switch (st) {
	case TT_OK: return 0;
	case TT_ENOTPY: return 1;
	case TT_ENOPROC: case TT_EPERM: return 3;
	default: return 2;
	}
}

tt_status
target_attach(struct target *t, pid_t pid, struct tt_error *err)
{
	memset(t, 0, sizeof *t);
	t->pid = pid;
	tt_status st = remote_open_pid(&t->mem, pid, err);
	if (st != TT_OK)
		return st;
	struct proc_maps maps;
	st = procmaps_read(pid, &maps, err);
	if (st != TT_OK)
		return st;

	/* Python-named files first (the executable or libpython), then any other
	 * mapped file, for interpreters embedded in differently named programs. */
	struct tt_error first = {0};
	char old_version[16] = "";
	/* Each file once: compared with the files tried so far, not with every
	 * earlier mapping, which is quadratic in a map of 65k entries. */
	size_t tried_at[MAX_CANDIDATE_FILES];
	size_t tried = 0;
	st = TT_ENOTPY;
	for (int pass = 0; pass < 2 && st != TT_OK; pass++) {
		for (size_t i = 0; i < maps.count && tried < MAX_CANDIDATE_FILES; i++) {
			const struct map_entry *m = &maps.entries[i];
			if (m->path[0] != '/' || (pass == 0) != is_python_named(m->path))
				continue;
			bool seen = false;
			for (size_t j = tried; j > 0 && !seen; j--)
				seen = strcmp(maps.entries[tried_at[j - 1]].path, m->path) == 0;
			if (seen)
				continue;
			tried_at[tried++] = i;
			if (pass == 0 && !old_version[0])
				version_from_name(m->path, old_version, sizeof old_version);
			struct tt_error e = {0};
			st = try_candidate(t, &maps, i, &e);
			if (st == TT_OK)
				break;
			if (error_rank(e.status) > error_rank(first.status))
				first = e;
			if (st == TT_ENOPROC || st == TT_EPERM)
				break;
		}
		if (first.status == TT_ENOPROC || first.status == TT_EPERM)
			break;
	}
	procmaps_free(&maps);
	if (st == TT_OK)
		return TT_OK;
	if (first.status == TT_ENOPROC && !remote_pid_alive(pid))
		return tt_fail(err, TT_ENOPROC, ESRCH, "process %d has exited", (int)pid);
	if (first.status != TT_ENOTPY && first.status != TT_OK) {
		*err = first;
		return first.status;
	}
	if (old_version[0])
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python version %s in process %d (tachyon-top supports "
			       "3.13, 3.14 and 3.15)", old_version, (int)pid);
	return tt_fail(err, TT_ENOTPY, 0,
		       "process %d is not a Python process (no CPython runtime in its mappings)",
		       (int)pid);
}
