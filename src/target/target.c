#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "mem/corefile.h"
#include "proc/discover.h"
#include "mem/elffile.h"
#include "mem/procmaps.h"
#include "target.h"
#include "proc/procstat.h"

/* A root that is not Python: how many of its descendants are looked at
 * for a Python one (a container's tree, not a whole host's). */
#define DESCENDANTS_TRIED 4096

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
			       "unsupported Python version %s (tachyon-top supports " PY_SUPPORTED_RANGE ")",
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

tt_status
target_attach_memory_compiled(struct target *t, struct remote_backend backend,
			      uint64_t runtime_addr, uint64_t version_hex, struct tt_error *err)
{
	memset(t, 0, sizeof *t);
	remote_open_backend(&t->mem, backend);
	t->runtime_addr = runtime_addr;
	return pylayout_compiled_in(version_hex, 0, &t->layout, err);
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

/* "python3.10" or "libpython3.10.so.1.0" -> "3.10" when older than 3.11, for a clear refusal of
 * interpreters older than we support (they carry no Py_Version either). */
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
	return major < 3 || (major == 3 && minor < PY_MIN_MINOR);
}

/* Where is the file's offset-0 segment mapped? */
static bool
file_base(const struct proc_maps *maps, const char *path, uint64_t *base)
{
	bool found = false;
	for (size_t i = 0; i < maps->count; i++) {
		const struct map_entry *o = &maps->entries[i];
		if (o->offset == 0 && strcmp(o->path, path) == 0 && (!found || o->start < *base)) {
			*base = o->start;
			found = true;
		}
	}
	return found;
}

static uint64_t
runtime_address(bool is_pie, uint64_t base, uint64_t load_vaddr, uint64_t link_addr)
{
	return is_pie ? base - load_vaddr + link_addr : link_addr;
}

/* 3.11 and 3.12 carry no _Py_DebugOffsets: find _PyRuntime and the exported
 * Py_Version by symbol, and use the layout compiled in for that version.
 * Debug and Py_TRACE_REFS builds are told apart by symbols only they export. */
enum { SYM_RUNTIME, SYM_VERSION, SYM_REF_DEBUG, SYM_TRACE_REFS, SYM_COUNT };
static const char *const symbol_names[SYM_COUNT] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_VERSION] = "Py_Version",
	[SYM_REF_DEBUG] = "_Py_NegativeRefcount",   /* Py_REF_DEBUG, implied by Py_DEBUG */
	[SYM_TRACE_REFS] = "_Py_PrintReferences",   /* Py_TRACE_REFS only */
};

static tt_status
attach_by_symbols(struct target *t, int fd, uint64_t base, const char *path, bool have_section,
		  struct tt_error *err)
{
	struct elf_symbols syms;
	/* Without a .PyRuntime section this is most likely some other
	 * library: look at its exported symbols only, which is quick. */
	tt_status st = elf_find_symbols(fd, symbol_names, SYM_COUNT, !have_section, &syms, err);
	if (st != TT_OK)
		return st;
	if (!syms.found[SYM_RUNTIME] || !syms.found[SYM_VERSION])
		return tt_fail(err, TT_ENOTPY, 0, "%s: no _Py_DebugOffsets and no Py_Version", path);
	uint64_t version;
	st = remote_read_u64(&t->mem, runtime_address(syms.is_pie, base, syms.load_vaddr,
						      syms.value[SYM_VERSION]), &version, err);
	if (st != TT_OK)
		return st;
	version &= 0xffffffffu; /* an unsigned long holding PY_VERSION_HEX */
	unsigned flags = (syms.found[SYM_REF_DEBUG] ? PY_BUILD_DEBUG : 0) |
			 (syms.found[SYM_TRACE_REFS] ? PY_BUILD_TRACE_REFS : 0);
	unsigned minor = (version >> 16) & 0xff;
	if ((version >> 24) == 3 && minor >= 13)
		/* 3.13+ always carry the table: the runtime section is torn or
		 * this binary was built oddly. */
		return tt_fail(err, TT_ENOTPY, 0,
			       "%s: Python %u.%u without a _Py_DebugOffsets table", path,
			       (unsigned)(version >> 24), minor);
	st = pylayout_compiled_in(version, flags, &t->layout, err);
	if (st != TT_OK)
		return st;
	t->runtime_addr = runtime_address(syms.is_pie, base, syms.load_vaddr, syms.value[SYM_RUNTIME]);
	snprintf(t->binary, sizeof t->binary, "%s", path);
	return TT_OK;
}

/* Try one mapped file: does it carry .PyRuntime, and is a valid table there?
 * If not, is it a 3.11/3.12 runtime we know by its symbols? */
/* How the files a target maps are opened: through /proc/PID/map_files
 * for a live process, under a root for a core's. */
struct file_opener {
	int (*open)(void *ctx, const struct proc_maps *maps, size_t idx);
	void *ctx;
};

static int
open_live_file(void *ctx, const struct proc_maps *maps, size_t idx)
{
	return open_mapped_file(*(const pid_t *)ctx, &maps->entries[idx]);
}

static tt_status
try_candidate(struct target *t, const struct proc_maps *maps, size_t idx,
	      const struct file_opener *open_file, struct tt_error *err)
{
	const struct map_entry *m = &maps->entries[idx];
	int fd = open_file->open(open_file->ctx, maps, idx);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM)
			return remote_permission_error(t->pid, errno, err);
		return tt_fail(err, TT_ENOTPY, errno, "cannot open %s", m->path);
	}
	struct elf_section_hit hit;
	struct tt_error section_err = {0};
	tt_status st = elf_find_section(fd, ".PyRuntime", &hit, &section_err);
	uint64_t base = 0;
	if (!file_base(maps, m->path, &base)) {
		close(fd);
		return tt_fail(err, TT_ENOTPY, 0, "%s: no mapping at file offset 0", m->path);
	}
	if (st == TT_OK) {
		t->runtime_addr = runtime_address(hit.is_pie, base, hit.load_vaddr, hit.sh_addr);
		uint8_t cookie[8];
		st = remote_read(&t->mem, t->runtime_addr, cookie, sizeof cookie, err);
		if (st == TT_OK && memcmp(cookie, PY_DEBUG_COOKIE, 8) == 0) {
			close(fd);
			snprintf(t->binary, sizeof t->binary, "%s", m->path);
			return read_layout(t, err);
		}
		if (st != TT_OK && st != TT_EFAULT) {
			close(fd);
			return st;
		}
		st = attach_by_symbols(t, fd, base, m->path, true, err);
	} else if (section_err.status == TT_ENOTPY) {
		st = attach_by_symbols(t, fd, base, m->path, false, err);
	} else {
		*err = section_err;
	}
	close(fd);
	return st;
}

/* A core's mappings (NT_FILE), in its order, as a maps listing. */
static bool
core_maps(const struct corefile *c, struct proc_maps *maps)
{
	maps->count = c->nmaps;
	maps->entries = calloc(c->nmaps ? c->nmaps : 1, sizeof *maps->entries);
	if (!maps->entries)
		return false;
	for (size_t i = 0; i < c->nmaps; i++) {
		struct map_entry *m = &maps->entries[i];
		m->start = c->maps[i].start;
		m->end = c->maps[i].end;
		m->offset = c->maps[i].offset;
		memcpy(m->perms, "r--p", 5);
		snprintf(m->path, sizeof m->path, "%s", c->maps[i].path);
	}
	return true;
}

static int
open_core_file(void *ctx, const struct proc_maps *maps, size_t idx)
{
	(void)maps;
	int fd = corefile_map_fd(ctx, idx);   /* the maps are the core's, in order */
	if (fd < 0) {
		errno = ENOENT;
		return -1;
	}
	return dup(fd);   /* the caller closes its own */
}

/* Call `look` on each file the target maps whose name contains name_part
 * (starts with it when prefix), once per file, until it returns TT_OK;
 * TT_ENOTPY when none did. */
typedef tt_status (*mapped_file_fn)(void *ctx, int fd, const struct proc_maps *maps,
				    const struct map_entry *m, struct tt_error *err);

static tt_status
each_mapped_file(const struct target *t, const char *name_part, bool prefix, mapped_file_fn look,
		 void *ctx, struct tt_error *err)
{
	struct proc_maps maps;
	tt_status st = TT_OK;
	if (t->core) {
		if (!core_maps(t->core, &maps))
			return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory");
	} else if ((st = procmaps_read(t->pid, &maps, err)) != TT_OK) {
		return st;
	}
	st = TT_ENOTPY;
	const char *last = "";
	for (size_t i = 0; i < maps.count && st != TT_OK; i++) {
		const struct map_entry *m = &maps.entries[i];
		const char *base = procmaps_basename(m->path);
		if (m->path[0] != '/' || strcmp(m->path, last) == 0 ||
		    (prefix ? strncmp(base, name_part, strlen(name_part)) != 0
			    : !strstr(base, name_part)))
			continue;
		last = m->path;
		int fd = t->core ? open_core_file(t->core, &maps, i) : open_mapped_file(t->pid, m);
		if (fd < 0)
			continue;
		st = look(ctx, fd, &maps, m, err);
		close(fd);
	}
	procmaps_free(&maps);
	return st;
}

struct section_look {
	const char *section;
	uint64_t *addr, *size;
};

static tt_status
look_for_section(void *ctx, int fd, const struct proc_maps *maps, const struct map_entry *m,
		 struct tt_error *err)
{
	(void)err;
	struct section_look *s = ctx;
	struct elf_section_hit hit;
	struct tt_error e = {0};
	uint64_t base = 0;
	if (elf_find_section(fd, s->section, &hit, &e) != TT_OK || !file_base(maps, m->path, &base))
		return TT_ENOTPY;
	*s->addr = runtime_address(hit.is_pie, base, hit.load_vaddr, hit.sh_addr);
	*s->size = hit.sh_size;
	return TT_OK;
}

tt_status
target_find_section(const struct target *t, const char *name_part, const char *section,
		    uint64_t *addr, uint64_t *size, struct tt_error *err)
{
	struct section_look s = {section, addr, size};
	tt_status st = each_mapped_file(t, name_part, false, look_for_section, &s, err);
	if (st == TT_ENOTPY)
		return tt_fail(err, TT_ENOTPY, 0, "no mapped file carries %s", section);
	return st;
}

struct symbols_look {
	const char *const *names;
	size_t n;
	uint64_t *addr;
	char *path;
	size_t pathlen;
};

static tt_status
look_for_symbols(void *ctx, int fd, const struct proc_maps *maps, const struct map_entry *m,
		 struct tt_error *err)
{
	(void)err;
	struct symbols_look *s = ctx;
	struct elf_symbols syms;
	struct tt_error e = {0};
	uint64_t base = 0;
	if (s->n > ELF_MAX_LOOKUP || elf_find_symbols(fd, s->names, s->n, true, &syms, &e) != TT_OK ||
	    !file_base(maps, m->path, &base))
		return TT_ENOTPY;
	for (size_t k = 0; k < s->n; k++)
		s->addr[k] = syms.found[k] ? runtime_address(syms.is_pie, base, syms.load_vaddr,
							     syms.value[k])
					   : 0;
	snprintf(s->path, s->pathlen, "%s", m->path);
	return TT_OK;
}

tt_status
target_find_symbols(const struct target *t, const char *name_prefix, const char *const *names,
		    size_t n, uint64_t *addr, char *path, size_t pathlen, struct tt_error *err)
{
	struct symbols_look s = {names, n, addr, path, pathlen};
	tt_status st = each_mapped_file(t, name_prefix, true, look_for_symbols, &s, err);
	if (st == TT_ENOTPY)
		return tt_fail(err, TT_ENOTPY, 0, "no mapped file is named %s*", name_prefix);
	return st;
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

/* Look for the runtime in each mapped file: TT_OK, or the worst error met
 * in *first and a version named by a file in old_version. */
static tt_status
attach_from_maps(struct target *t, const struct proc_maps *mapsp,
		 const struct file_opener *opener, char *old_version, size_t vlen,
		 struct tt_error *firstp)
{
	const struct proc_maps maps = *mapsp;
	struct tt_error first = {0};
	tt_status st;

	/* Python-named files first (the executable or libpython), then any other
	 * mapped file, for interpreters embedded in differently named programs. */
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
				version_from_name(m->path, old_version, vlen);
			struct tt_error e = {0};
			st = try_candidate(t, &maps, i, opener, &e);
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
	*firstp = first;
	return st;
}

tt_status
target_attach_core(struct target *t, struct corefile *c, struct tt_error *err)
{
	memset(t, 0, sizeof *t);
	/* pid 0: nothing of the machine's /proc is read for a core (a live
	 * process may have its pid now) */
	remote_open_backend(&t->mem, corefile_backend(c));
	struct proc_maps maps;
	if (!core_maps(c, &maps))
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory");
	t->core = c;
	struct file_opener opener = {open_core_file, c};
	char old_version[16] = "";
	struct tt_error first = {0};
	tt_status st = attach_from_maps(t, &maps, &opener, old_version, sizeof old_version, &first);
	/* a Python file the core maps that is not under the root */
	const char *missing = NULL;
	for (size_t i = 0; i < c->nmaps && st != TT_OK && !missing; i++)
		if (is_python_named(c->maps[i].path) && corefile_map_fd(c, i) < 0)
			missing = c->maps[i].path;
	procmaps_free(&maps);
	if (st == TT_OK)
		return TT_OK;
	if (missing)
		return tt_fail(err, TT_ENOTPY, 0, "the core's process maps %s, which is not %s%s%s "
				  "(give --root DIR: where the process's files are; --exe PATH: "
				  "its executable)", missing,
				  c->root[0] ? "under " : "on this machine", c->root,
				  c->root[0] ? "" : "");
	if (first.status != TT_ENOTPY && first.status != TT_OK) {
		*err = first;
		return first.status;
	}
	if (old_version[0])
		return tt_fail(err, TT_EVERSION, 0, "the core's process runs Python %s (tachyon-top "
				  "supports " PY_SUPPORTED_RANGE ")", old_version);
	return tt_fail(err, TT_ENOTPY, 0, "the core's process (%s, pid %d) is not a Python "
			  "process (no CPython runtime in its mappings)", c->fname, (int)c->pid);
}

tt_status
target_attach(struct target *t, pid_t pid, struct tt_error *err)
{
	memset(t, 0, sizeof *t);
	t->pid = pid;
	tt_status st = remote_open_pid(&t->mem, pid, err);
	if (st != TT_OK)
		return st;
	/* An exited, unreaped process (a zombie) has no mappings left: it is
	 * gone, not "not Python". */
	if (procstat_process_exited(pid))
		return tt_fail(err, TT_ENOPROC, ESRCH, "process %d has exited", (int)pid);
	struct proc_maps maps;
	st = procmaps_read(pid, &maps, err);
	if (st != TT_OK) {
		if (procstat_process_exited(pid))
			return tt_fail(err, TT_ENOPROC, ESRCH, "process %d has exited", (int)pid);
		return st;
	}
	struct file_opener opener = {open_live_file, &pid};
	char old_version[16] = "";
	struct tt_error first = {0};
	st = attach_from_maps(t, &maps, &opener, old_version, sizeof old_version, &first);
	procmaps_free(&maps);
	if (st == TT_OK)
		return TT_OK;
	if ((first.status == TT_ENOPROC && !remote_pid_alive(pid)) || procstat_process_exited(pid))
		return tt_fail(err, TT_ENOPROC, ESRCH, "process %d has exited", (int)pid);
	if (first.status != TT_ENOTPY && first.status != TT_OK) {
		*err = first;
		return first.status;
	}
	if (old_version[0])
		return tt_fail(err, TT_EVERSION, 0,
			       "unsupported Python version %s in process %d (tachyon-top supports "
			       PY_SUPPORTED_RANGE ")", old_version, (int)pid);
	return tt_fail(err, TT_ENOTPY, 0,
		       "process %d is not a Python process (no CPython runtime in its mappings)",
		       (int)pid);
}


tt_status
target_attach_like(struct target *t, pid_t pid, const struct target *like, struct tt_error *err)
{
	memset(t, 0, sizeof *t);
	t->pid = pid;
	tt_status st = remote_open_pid(&t->mem, pid, err);
	if (st != TT_OK)
		return st;
	/* A fork has its parent's mappings: the runtime is where it was.
	 * Reading and checking the table there re-validates that. */
	struct tt_error e = {0};
	t->runtime_addr = like->runtime_addr;
	if (read_layout(t, &e) == TT_OK && t->layout.version_hex == like->layout.version_hex) {
		snprintf(t->binary, sizeof t->binary, "%s", like->binary);
		return TT_OK;
	}
	return target_attach(t, pid, err);
}

/* One look at root's descendants, breadth first. */
static bool
attach_first_descendant(struct target *t, pid_t root)
{
	pid_t *todo = NULL;
	uint32_t cap = 0;
	size_t n = discover_children(root, &todo, &cap, 0);
	bool found = false;
	/* todo grows as it is walked: each process's children go at the end. */
	for (size_t i = 0; n != (size_t)-1 && i < n && i < DESCENDANTS_TRIED && !found; i++) {
		struct tt_error e;
		found = target_attach(t, todo[i], &e) == TT_OK;
		if (!found)
			n = discover_children(todo[i], &todo, &cap, n);
	}
	free(todo);
	return found;
}

tt_status
target_attach_root(struct target *t, pid_t pid, uint64_t wait_ns, bool *other_root,
		   struct tt_error *err)
{
	*other_root = false;
	tt_status st = target_attach(t, pid, err);
	/* (A zombie has no mappings either: it keeps its own error.) */
	if (st != TT_ENOTPY || !discover_running(pid))
		return st;
	st = target_attach_descendant(t, pid, wait_ns, err);
	*other_root = st == TT_OK;
	return st;
}

tt_status
target_attach_descendant(struct target *t, pid_t root, uint64_t wait_ns, struct tt_error *err)
{
	uint64_t deadline = clock_now_ns() + wait_ns;
	for (;;) {
		if (attach_first_descendant(t, root))
			return TT_OK;
		if (!discover_running(root))
			return tt_fail(err, TT_ENOPROC, 0,
				       "process %d (not Python) ended before a Python process "
				       "appeared under it", (int)root);
		if (clock_now_ns() >= deadline)
			break;
		struct timespec ts = {0, 50000000L};
		nanosleep(&ts, NULL);
	}
	if (wait_ns == 0)
		return tt_fail(err, TT_ENOTPY, 0,
			       "process %d is not a Python process, and none of its descendants is",
			       (int)root);
	return tt_fail(err, TT_ENOTPY, 0,
		       "process %d is not a Python process, and no Python process appeared "
		       "under it within %.0f s", (int)root, (double)wait_ns / 1e9);
}

void
target_threads_begin(struct target_threads_iter *it, const struct target *t,
		     target_read_u64_fn *read, void *ctx)
{
	memset(it, 0, sizeof *it);
	it->t = t;
	it->read = read;
	it->ctx = ctx;
	cycle_guard_init(&it->interps_seen);
}

_Static_assert(TARGET_MAX_INTERPRETERS == 256 && TARGET_MAX_THREADS == 65535,
	       "the messages below name the limits");

static bool
iter_broke(struct target_threads_iter *it, const char *why, bool read_failed)
{
	if (!it->broken) {
		it->broken = why;
		it->read_failed = read_failed;
	}
	return false;
}

bool
target_threads_next_interp(struct target_threads_iter *it, uint64_t *interp)
{
	const struct py_layout *l = &it->t->layout;
	uint64_t at;
	if (!it->started) {
		it->started = true;
		if (!it->read(it->ctx, it->t->runtime_addr + l->rt_interpreters_head, &at))
			return iter_broke(it, "cannot read the interpreter list", true);
	} else if (it->in_interp) {
		at = it->next_interp;
	} else {
		return false;   /* ended, or broke */
	}
	it->in_interp = false;
	if (at == 0)
		return false;
	if (at & 7)
		return iter_broke(it, "misaligned interpreter state pointer", false);
	if (++it->ninterps > TARGET_MAX_INTERPRETERS)
		return iter_broke(it, "more than 256 interpreters (a cycle?)", false);
	if (cycle_guard_seen(&it->interps_seen, at))
		return iter_broke(it, "interpreter list loops back on itself", false);
	if (!it->read(it->ctx, at + l->is_next, &it->next_interp) ||
	    !it->read(it->ctx, at + l->is_threads_head, &it->ts))
		return iter_broke(it, "cannot read an interpreter state", true);
	*interp = at;
	it->in_interp = true;
	it->nthreads = 0;
	cycle_guard_init(&it->threads_seen);
	return true;
}

bool
target_threads_next(struct target_threads_iter *it, uint64_t *ts)
{
	const struct py_layout *l = &it->t->layout;
	if (!it->in_interp || it->ts == 0)
		return false;
	uint64_t at = it->ts;
	it->ts = 0;   /* a list that breaks here ends here */
	if (at & 7)
		return iter_broke(it, "misaligned thread state pointer", false);
	if (++it->nthreads > TARGET_MAX_THREADS)
		return iter_broke(it, "more than 65535 threads (a cycle?)", false);
	if (cycle_guard_seen(&it->threads_seen, at))
		return iter_broke(it, "thread list loops back on itself", false);
	if (!it->read(it->ctx, at + l->ts_next, &it->ts))
		return iter_broke(it, "cannot read a thread state", true);
	*ts = at;
	return true;
}

static bool
read_live_u64(void *ctx, uint64_t addr, uint64_t *out)
{
	struct tt_error e = {0};
	return remote_read_u64(ctx, addr, out, &e) == TT_OK;
}

bool
target_list_threads(struct target *t, struct target_thread *out, uint32_t max, uint32_t *n)
{
	const struct py_layout *l = &t->layout;
	struct target_threads_iter it;
	uint64_t interp, ts;
	*n = 0;
	target_threads_begin(&it, t, read_live_u64, &t->mem);
	while (target_threads_next_interp(&it, &interp)) {
		while (target_threads_next(&it, &ts)) {
			struct target_thread th = {.ts = ts};
			if (!read_live_u64(&t->mem, ts + l->ts_native_thread_id, &th.native_id) ||
			    !read_live_u64(&t->mem, ts + l->ts_thread_id, &th.pthread_id))
				return false;
			if (*n >= max)
				return true;
			out[(*n)++] = th;
		}
		if (it.broken)
			return false;
	}
	return !it.broken;
}
