/* ELF core files (corefile.h). */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem/corefile.h"
#include "readfile.h"

/* Bounds on what a core may declare before it is taken for garbage. */
#define MAX_PHDRS (1u << 20)
#define MAX_NOTES_BYTES (64u << 20)
#define MAX_THREADS 65536
#define MAX_FILES 1000000

/* struct elf_prstatus and elf_prpsinfo on x86-64 (linux/elfcore.h) */
#define PRSTATUS_SIZE 336
#define PRSTATUS_SIGNO 0
#define PRSTATUS_PID 32
#define PRSTATUS_REGS 112
#define PRPSINFO_SIZE 136
#define PRPSINFO_PID 24
#define PRPSINFO_FNAME 40
#define PRPSINFO_PSARGS 56
#define NOTE_FILE 0x46494c45   /* NT_FILE: "FILE" */

void
corefile_close(struct corefile *c)
{
	if (c->fd >= 0)
		close(c->fd);
	for (size_t i = 0; i < c->nmaps; i++) {
		free(c->maps[i].path);
		if (c->maps[i].fd >= 0)
			close(c->maps[i].fd);
	}
	free(c->maps);
	free(c->loads);
	free(c->threads);
	memset(c, 0, sizeof *c);
	c->fd = -1;
}

static void
note_prstatus(struct corefile *c, const uint8_t *d, size_t len)
{
	if (len < PRSTATUS_SIZE || c->nthreads >= MAX_THREADS)
		return;
	struct core_thread *t = realloc(c->threads, (c->nthreads + 1) * sizeof *t);
	if (!t)
		return;
	c->threads = t;
	t = &c->threads[c->nthreads++];
	int32_t v;
	memcpy(&v, d + PRSTATUS_SIGNO, 4);
	t->signo = v;
	memcpy(&v, d + PRSTATUS_PID, 4);
	t->tid = v;
	memcpy(t->regs, d + PRSTATUS_REGS, sizeof t->regs);
}

static void
note_prpsinfo(struct corefile *c, const uint8_t *d, size_t len)
{
	if (len < PRPSINFO_SIZE)
		return;
	int32_t pid;
	memcpy(&pid, d + PRPSINFO_PID, 4);
	c->pid = pid;
	memcpy(c->fname, d + PRPSINFO_FNAME, 16);
	c->fname[16] = '\0';
	memcpy(c->psargs, d + PRPSINFO_PSARGS, 80);
	c->psargs[80] = '\0';
}

/* NT_FILE: count, page size, count x (start, end, page offset), names. */
static void
note_file(struct corefile *c, const uint8_t *d, size_t len)
{
	uint64_t count, page;
	if (len < 16 || c->maps)
		return;
	memcpy(&count, d, 8);
	memcpy(&page, d + 8, 8);
	if (count > MAX_FILES || count * 24 > len - 16 || page == 0 || page > (1u << 30))
		return;
	c->maps = calloc(count ? count : 1, sizeof *c->maps);
	if (!c->maps)
		return;
	const char *name = (const char *)d + 16 + count * 24, *end = (const char *)d + len;
	for (uint64_t i = 0; i < count && name < end; i++) {
		struct core_map *m = &c->maps[c->nmaps];
		uint64_t e[3];
		memcpy(e, d + 16 + i * 24, sizeof e);
		size_t n = strnlen(name, (size_t)(end - name));
		if (n == (size_t)(end - name) || e[0] >= e[1])
			break;
		m->start = e[0];
		m->end = e[1];
		m->offset = e[2] * page;
		m->fd = -1;
		m->path = strndup(name, n);
		if (!m->path)
			break;
		c->nmaps++;
		name += n + 1;
	}
}

/* NT_AUXV: (type, value) pairs; AT_ENTRY says where the executable is. */
static void
note_auxv(struct corefile *c, const uint8_t *d, size_t len)
{
	for (size_t at = 0; at + 16 <= len; at += 16) {
		uint64_t kv[2];
		memcpy(kv, d + at, sizeof kv);
		if (kv[0] == AT_ENTRY)
			c->entry = kv[1];
		if (kv[0] == AT_NULL)
			break;
	}
}

/* The next ELF note of buf[*at, end): its header, name and descriptor;
 * false at the end or at a note that does not fit. */
static bool
next_note(const uint8_t *buf, size_t end, size_t *at, Elf64_Nhdr *h, const uint8_t **name,
	  const uint8_t **desc)
{
	if (*at > end || end - *at < sizeof *h)
		return false;
	memcpy(h, buf + *at, sizeof *h);
	/* in size_t: a 32-bit size of 0xfffffffd rounded up in 32 bits is 0 */
	size_t nlen = ((size_t)h->n_namesz + 3) & ~(size_t)3;
	size_t dlen = ((size_t)h->n_descsz + 3) & ~(size_t)3;
	size_t from = *at + sizeof *h;
	if (nlen > end - from || dlen > end - from - nlen)
		return false;
	*name = buf + from;
	*desc = buf + from + nlen;
	*at = from + nlen + dlen;
	return true;
}

static void
read_notes(struct corefile *c, uint64_t off, uint64_t len)
{
	if (len > MAX_NOTES_BYTES || off >= c->size)
		return;
	if (len > c->size - off)
		len = c->size - off;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf || !read_fd_at(c->fd, off, buf, len)) {
		free(buf);
		return;
	}
	size_t at = 0;
	Elf64_Nhdr h;
	const uint8_t *name, *d;
	while (next_note(buf, len, &at, &h, &name, &d)) {
		bool core = h.n_namesz >= 4 && memcmp(name, "CORE", 4) == 0;
		if (core && h.n_type == NT_PRSTATUS)
			note_prstatus(c, d, h.n_descsz);
		else if (core && h.n_type == NT_PRPSINFO)
			note_prpsinfo(c, d, h.n_descsz);
		else if (core && h.n_type == NOTE_FILE)
			note_file(c, d, h.n_descsz);
		else if (core && h.n_type == NT_AUXV)
			note_auxv(c, d, h.n_descsz);
	}
	free(buf);
}

tt_status
corefile_open(struct corefile *c, const char *path, const char *root, struct tt_error *err)
{
	memset(c, 0, sizeof *c);
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0)
		return tt_fail(err, TT_EUSAGE, errno, "cannot open core %s: %s", path,
			       strerror(errno));
	snprintf(c->root, sizeof c->root, "%s", root ? root : "");
	/* "/" and "DIR/" as "" and "DIR": the core's paths start with a slash */
	for (size_t n = strlen(c->root); n > 0 && c->root[n - 1] == '/'; n--)
		c->root[n - 1] = '\0';
	struct stat st;
	Elf64_Ehdr eh;
	if (fstat(c->fd, &st) != 0 || !read_fd_at(c->fd, 0, &eh, sizeof eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		corefile_close(c);
		return tt_fail(err, TT_EUSAGE, 0, "%s is not an ELF file (not a core)", path);
	}
	c->size = (uint64_t)st.st_size;
	if (eh.e_type != ET_CORE) {
		corefile_close(c);
		return tt_fail(err, TT_EUSAGE, 0, "%s is an ELF file but not a core", path);
	}
	/* past 65,534 mappings the count is in the first section header */
	uint32_t phnum = eh.e_phnum;
	Elf64_Shdr sh0;
	if (phnum == PN_XNUM)
		phnum = read_fd_at(c->fd, eh.e_shoff, &sh0, sizeof sh0) ? sh0.sh_info : 0;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || phnum == 0 || phnum > MAX_PHDRS) {
		corefile_close(c);
		return tt_fail(err, TT_EUSAGE, 0, "%s is not a 64-bit x86 core (or its program "
						  "headers are damaged)", path);
	}
	Elf64_Phdr *ph = calloc(phnum, sizeof *ph);
	c->loads = calloc(phnum, sizeof *c->loads);
	if (!ph || !c->loads || !read_fd_at(c->fd, eh.e_phoff, ph, phnum * sizeof *ph)) {
		free(ph);
		corefile_close(c);
		return tt_fail(err, TT_EUSAGE, 0, "%s: its program headers cannot be read (cut "
						  "short?)", path);
	}
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_NOTE) {
			read_notes(c, ph[i].p_offset, ph[i].p_filesz);
		} else if (ph[i].p_type == PT_LOAD && ph[i].p_memsz) {
			struct core_load *l = &c->loads[c->nloads++];
			l->vaddr = ph[i].p_vaddr;
			l->memsz = ph[i].p_memsz;
			l->offset = ph[i].p_offset;
			l->filesz = ph[i].p_filesz;
			l->writable = (ph[i].p_flags & PF_W) != 0;
			l->executable = (ph[i].p_flags & PF_X) != 0;
			/* a core cut short keeps what it has */
			uint64_t have = l->offset < c->size ? c->size - l->offset : 0;
			if (l->filesz > have) {
				c->missing_bytes += l->filesz - have;
				l->filesz = have;
			}
		}
	}
	free(ph);
	if (c->nthreads == 0) {
		corefile_close(c);
		return tt_fail(err, TT_EUSAGE, 0, "%s: a core without threads (no NT_PRSTATUS "
						  "note: damaged or cut short)", path);
	}
	return TT_OK;
}

/* The mapping the executable's entry point is in. */
static const struct core_map *
exe_map(const struct corefile *c)
{
	for (size_t i = 0; i < c->nmaps && c->entry; i++)
		if (c->entry >= c->maps[i].start && c->entry < c->maps[i].end)
			return &c->maps[i];
	return NULL;
}

bool
corefile_set_exe(struct corefile *c, const char *path)
{
	if (!exe_map(c))
		return false;
	snprintf(c->exe, sizeof c->exe, "%s", path);
	return true;
}

void
corefile_files_root(const struct corefile *c, char *out, size_t len)
{
	const struct core_map *m = exe_map(c);
	const char *usr = NULL;
	for (const char *p = m && !c->root[0] ? strstr(m->path, "/usr/") : NULL; p;
	     p = strstr(p + 1, "/usr/"))
		usr = p;
	if (c->root[0])
		snprintf(out, len, "%s", c->root);
	else if (usr && usr > m->path)
		snprintf(out, len, "%.*s", (int)(usr - m->path), m->path);
	else
		snprintf(out, len, "/");
}

bool
corefile_anon_code(const struct corefile *c, uint64_t at)
{
	for (size_t i = 0; i < c->nmaps; i++)
		if (at >= c->maps[i].start && at < c->maps[i].end)
			return false;
	for (size_t i = 0; i < c->nloads; i++)
		if (at - c->loads[i].vaddr < c->loads[i].memsz)
			return c->loads[i].executable;
	return false;
}

int
corefile_map_fd(struct corefile *c, size_t i)
{
	struct core_map *m = &c->maps[i];
	if (m->fd == -1) {
		char path[1024];
		const struct core_map *exe = c->exe[0] ? exe_map(c) : NULL;
		size_t rootlen = strlen(c->root);
		if (exe && strcmp(exe->path, m->path) == 0)
			snprintf(path, sizeof path, "%s", c->exe);
		else if (rootlen && strncmp(m->path, c->root, rootlen) == 0 &&
			 m->path[rootlen] == '/')
			/* a core taken from outside the root (gdb's gcore run on
			 * the host) names the files by their host paths already */
			snprintf(path, sizeof path, "%s", m->path);
		else
			snprintf(path, sizeof path, "%s%s", c->root, m->path);
		m->fd = m->path[0] == '/' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
		if (m->fd < 0)
			m->fd = -2;
	}
	return m->fd >= 0 ? m->fd : -1;
}

/* The GNU build-id in the notes of an ELF image's first `len` bytes (the
 * file's start, or the core's copy of its first page): its length, 0 when
 * none is there. */
static size_t
build_id(const uint8_t *img, size_t len, uint8_t *out, size_t cap)
{
	Elf64_Ehdr eh;
	if (len < sizeof eh)
		return 0;
	memcpy(&eh, img, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > len ||
	    (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > len - eh.e_phoff)
		return 0;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, img + eh.e_phoff + i * sizeof ph, sizeof ph);
		if (ph.p_type != PT_NOTE || ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
			continue;
		size_t at = ph.p_offset;
		Elf64_Nhdr h;
		const uint8_t *name, *desc;
		while (next_note(img, ph.p_offset + ph.p_filesz, &at, &h, &name, &desc))
			if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && h.n_descsz <= cap) {
				memcpy(out, desc, h.n_descsz);
				return h.n_descsz;
			}
	}
	return 0;
}

enum core_file_state
corefile_check_map(struct corefile *c, size_t i)
{
	int fd = corefile_map_fd(c, i);
	if (fd < 0)
		return CORE_FILE_MISSING;
	const struct core_map *m = &c->maps[i];
	uint8_t page[4096], file[4096], a[64], b[64];
	/* the core's own copy only: the file would agree with itself */
	size_t have = 0;
	for (size_t k = 0; k < c->nloads && !have; k++) {
		const struct core_load *l = &c->loads[k];
		if (m->offset == 0 && m->start >= l->vaddr && m->start - l->vaddr < l->filesz) {
			uint64_t n = l->filesz - (m->start - l->vaddr);
			have = n < sizeof page ? (size_t)n : sizeof page;
			if (!read_fd_at(c->fd, l->offset + (m->start - l->vaddr), page, have))
				have = 0;
		}
	}
	ssize_t got = pread(fd, file, sizeof file, 0);
	size_t na = have ? build_id(page, have, a, sizeof a) : 0;
	size_t nb = got > 0 ? build_id(file, (size_t)got, b, sizeof b) : 0;
	if (!na || !nb)
		return CORE_FILE_UNCHECKED;
	return na == nb && memcmp(a, b, na) == 0 ? CORE_FILE_SAME : CORE_FILE_DIFFERS;
}

/* Up to len bytes at addr into buf: how many could be read from one place
 * (a segment of the core, else a mapped file), 0 when none. */
static size_t
read_some(struct corefile *c, uint64_t addr, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < c->nloads; i++) {
		const struct core_load *l = &c->loads[i];
		if (addr < l->vaddr || addr - l->vaddr >= l->filesz)
			continue;
		uint64_t n = l->filesz - (addr - l->vaddr);
		n = n < len ? n : len;
		return read_fd_at(c->fd, l->offset + (addr - l->vaddr), buf, n) ? (size_t)n : 0;
	}
	for (size_t i = 0; i < c->nmaps; i++) {
		const struct core_map *m = &c->maps[i];
		if (addr < m->start || addr >= m->end)
			continue;
		int fd = corefile_map_fd(c, i);
		if (fd < 0)
			return 0;
		uint64_t n = m->end - addr;
		n = n < len ? n : len;
		ssize_t got = pread(fd, buf, n, (off_t)(m->offset + (addr - m->start)));
		return got > 0 ? (size_t)got : 0;
	}
	return 0;
}

static ssize_t
core_readv(void *ctx, const struct remote_seg *segs, size_t nsegs)
{
	struct corefile *c = ctx;
	size_t total = 0;
	for (size_t s = 0; s < nsegs; s++) {
		size_t done = 0;
		while (done < segs[s].len) {
			size_t n = read_some(c, segs[s].addr + done, (uint8_t *)segs[s].buf + done,
					     segs[s].len - done);
			if (n == 0)
				break;
			done += n;
		}
		total += done;
		if (done < segs[s].len) {
			if (total == 0) {
				errno = EFAULT;
				return -1;
			}
			return (ssize_t)total;
		}
	}
	return (ssize_t)total;
}

struct remote_backend
corefile_backend(struct corefile *c)
{
	return (struct remote_backend){.readv = core_readv, .ctx = c};
}
