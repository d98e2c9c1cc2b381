/* A runtime's perf map (native/perfmap.h). */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "native/perfmap.h"
#include "proc/tidmap.h"
#include "readfile.h"
#include "order.h"

void
perfmap_init(struct perfmap *m)
{
	memset(m, 0, sizeof *m);
}

void
perfmap_free(struct perfmap *m)
{
	free(m->v);
	free(m->names);
	memset(m, 0, sizeof *m);
}

/* A hex number of at most 16 digits at *p, then one space or tab; *p past
 * them. */
static bool
hex_field(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t x = 0;
	int digits = 0;
	for (; s < end; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
			: *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (digits == 16)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	if (!digits || s == end || (*s != ' ' && *s != '\t'))
		return false;
	*v = x;
	*p = s + 1;
	return true;
}

bool
perfmap_add(struct perfmap *m, uint64_t start, uint64_t size, const char *s, size_t len)
{
	uint32_t line = m->lines++;
	if (size == 0 || start + size < start || len == 0)
		return false;
	if (len > PERFMAP_NAME_MAX)
		len = PERFMAP_NAME_MAX;
	if (m->names_len + len + 1 < m->names_len ||
	    !grow_array((void **)&m->names, &m->names_cap, m->names_len + (uint32_t)len + 1, 1) ||
	    !grow_array((void **)&m->v, &m->cap, m->n + 1, sizeof *m->v))
		return false;
	char *name = m->names + m->names_len;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		name[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	name[len] = '\0';
	m->v[m->n++] = (struct perfmap_entry){.start = start, .size = size, .name = m->names_len,
					      .line = line};
	m->names_len += (uint32_t)len + 1;
	m->sorted = false;
	return true;
}

static void
add_line(struct perfmap *m, const char *s, const char *end)
{
	uint64_t start, size;
	if (!hex_field(&s, end, &start) || !hex_field(&s, end, &size)) {
		m->lines++;
		return;
	}
	while (end > s && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	perfmap_add(m, start, size, s, (size_t)(end - s));
}

size_t
perfmap_parse(struct perfmap *m, const char *text, size_t len)
{
	size_t used = 0;
	for (;;) {
		const char *nl = memchr(text + used, '\n', len - used);
		if (!nl)
			return used;
		add_line(m, text + used, nl);
		used = (size_t)(nl - text) + 1;
	}
}

static int
by_start_then_line(const void *a, const void *b)
{
	const struct perfmap_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* How far back from the last entry starting at or below an address a
 * covering one is looked for (code pieces rarely overlap). */
#define OVERLAP_LOOK 16

const char *
perfmap_lookup(struct perfmap *m, uint64_t addr, uint64_t *start)
{
	if (!m->n)
		return NULL;
	if (!m->sorted) {
		order_sort(m->v, m->n, sizeof *m->v, by_start_then_line);
		m->sorted = true;
	}
	uint32_t lo = 0, hi = m->n;   /* the first entry starting above addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct perfmap_entry *best = NULL;
	for (uint32_t i = lo, k = 0; i > 0 && k < OVERLAP_LOOK; i--, k++) {
		const struct perfmap_entry *e = &m->v[i - 1];
		if (addr - e->start < e->size && (!best || e->line > best->line))
			best = e;
	}
	if (best && start)
		*start = best->start;
	return best ? m->names + best->name : NULL;
}

/* Reads what root's /tmp/<m->file> holds beyond what was parsed. */
static bool
read_more(struct perfmap *m, const char *root)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/%s", m->file);
	int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return false;
	int fd = open_in_root(root_fd, root_fd, path);
	close(root_fd);
	if (fd < 0)
		return false;
	struct stat st;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	uint64_t size = ok ? (uint64_t)st.st_size : 0;
	if (size > PERFMAP_FILE_MAX)
		size = PERFMAP_FILE_MAX;
	if (ok && size > m->consumed) {
		size_t len = (size_t)(size - m->consumed);
		char *buf = malloc(len);
		if (buf && read_fd_at(fd, m->consumed, buf, len))
			m->consumed += perfmap_parse(m, buf, len);
		free(buf);
	}
	close(fd);
	return ok;
}

bool
perfmap_update(struct perfmap *m, pid_t pid)
{
	if (!m->file[0]) {   /* the process's own id names it: its namespace's */
		uint64_t inner = (uint64_t)pid;
		tidmap_process_ns_pid(pid, &inner);
		snprintf(m->file, sizeof m->file, "perf-%llu.map", (unsigned long long)inner);
	}
	char root[64];
	snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
	return read_more(m, root);
}

bool
perfmap_update_in(struct perfmap *m, const char *root, pid_t pid)
{
	if (!m->file[0])
		snprintf(m->file, sizeof m->file, "perf-%d.map", (int)pid);
	return read_more(m, root[0] ? root : "/");
}
