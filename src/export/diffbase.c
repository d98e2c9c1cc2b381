#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binrec.h"
#include "collapsed.h"
#include "diffbase.h"
#include "hash.h"

/* A process's or thread's frame without its number: "process (cmd)",
 * "thread name". Other labels as they are. */
static const char *
skip_number(const char *label, size_t *prefix)
{
	static const char *const kinds[] = {"process ", "thread "};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		size_t n = strlen(kinds[k]);
		if (strncmp(label, kinds[k], n) != 0 || !isdigit((unsigned char)label[n]))
			continue;
		const char *p = label + n;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p != ' ')
			continue;
		*prefix = n;
		return p + 1;
	}
	*prefix = 0;
	return label;
}

/* Where a Python frame's label has its line: ":12" in "name (file:12)",
 * left out so that code edited between the runs (lines moved) still
 * matches its function. *cut_len is 0 when there is none. */
static void
find_line(const char *label, size_t n, size_t *cut_at, size_t *cut_len)
{
	*cut_len = 0;
	if (n < 4 || label[n - 1] != ')')
		return;
	size_t i = n - 1;
	while (i > 0 && isdigit((unsigned char)label[i - 1]))
		i--;
	if (i > 0 && label[i - 1] == '-')
		i--;
	if (i == n - 1 || i == 0 || label[i - 1] != ':')
		return;
	*cut_at = i - 1;
	*cut_len = n - 1 - (i - 1);
}

uint64_t
diffbase_key(uint64_t parent, const char *label)
{
	uint64_t h = parent;
	size_t prefix;
	const char *rest = skip_number(label, &prefix);
	if (prefix) {
		/* the kind word and the rest, the number left out */
		h = hash_fnv(hash_fnv_bytes(h, label, prefix), rest);
	} else {
		size_t n = strlen(label), at = n, cut;
		find_line(label, n, &at, &cut);
		h = hash_fnv_bytes(hash_fnv_bytes(h, label, at), label + at + cut, n - at - cut);
	}
	/* ';' cannot be in a label (the folded format escapes it): it ends one */
	return hash_fnv_bytes(h, ";", 1);
}

bool
diffbase_add(struct diff_base *b, uint64_t key, uint64_t samples)
{
	bool added;
	struct diff_path *p = keytab_put(&b->paths, key, &added);
	if (!p)
		return false;
	p->samples += samples;
	return true;
}

uint64_t
diffbase_samples(const struct diff_base *b, uint64_t key)
{
	if (key == DIFFBASE_ROOT)
		return b->total;
	const struct diff_path *p = keytab_find(&b->paths, key);
	return p ? p->samples : 0;
}

/* One line: every prefix of its stack gains its count. */
static tt_status
add_line(struct diff_base *b, char *line, size_t len, const char *path, uint64_t lineno,
	 struct tt_error *err)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!len)
		return TT_OK;
	char *space = strrchr(line, ' ');
	char *end = NULL;
	errno = 0;
	unsigned long long count = space && isdigit((unsigned char)space[1])
					   ? strtoull(space + 1, &end, 10) : 0;
	if (!space || space == line || !end || *end || errno)
		return tt_fail(err, TT_EUSAGE, 0, "%s:%llu: not folded stacks (a stack, a space, "
			       "a count)", path, (unsigned long long)lineno);
	*space = '\0';
	uint64_t key = DIFFBASE_ROOT;
	for (char *frame = line;;) {
		char *semi = strchr(frame, ';');
		if (semi)
			*semi = '\0';
		key = diffbase_key(key, frame);
		if (!diffbase_add(b, key, count))
			return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", path);
		if (!semi)
			break;
		frame = semi + 1;
	}
	b->total += count;
	b->stacks++;
	return TT_OK;
}

/* Folded stacks from f (path names it in messages). */
static tt_status
load_folded(struct diff_base *b, FILE *f, const char *path, struct tt_error *err)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t lineno = 0;
	tt_status st = TT_OK;
	while (st == TT_OK && (n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (memchr(line, '\0', (size_t)n))
			st = tt_fail(err, TT_EUSAGE, 0, "%s:%llu: not folded stacks (a NUL byte)", path,
				     (unsigned long long)lineno);
		else
			st = add_line(b, line, (size_t)n, path, lineno, err);
	}
	if (st == TT_OK && ferror(f))
		st = tt_fail(err, TT_EIO, errno, "cannot read the baseline %s", path);
	free(line);
	return st;
}

/* A recording: its profile as folded stacks, written to memory and read
 * back as a collapsed file would be. */
static tt_status
load_recording(struct diff_base *b, const char *path, struct tt_error *err)
{
	struct binrec_replay r;
	tt_status st = binrec_replay(path, NULL, false, &r, err);
	char *text = NULL;
	size_t len = 0;
	FILE *mem = st == TT_OK ? open_memstream(&text, &len) : NULL;
	if (st == TT_OK && !mem)
		st = tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", path);
	if (st == TT_OK) {
		profile_settle(&r.prof, &r.log.mirror);
		bool per_process = r.h.subprocesses && procset_count(&r.log.mirror) > 1;
		int wrc = profile_write_collapsed(&r.prof, &r.log.mirror, mem, false, per_process);
		if (fclose(mem) != 0 || wrc != 0)
			st = tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", path);
		mem = NULL;
	}
	binrec_replay_free(&r);
	if (st == TT_OK) {
		FILE *f = fmemopen(text, len ? len : 1, "r");
		if (!f)
			st = tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading %s", path);
		else {
			st = load_folded(b, f, path, err);
			fclose(f);
		}
	}
	free(text);
	return st;
}

tt_status
diffbase_load(struct diff_base *b, const char *path, struct tt_error *err)
{
	diffbase_init(b);
	tt_status st;
	if (binrec_is_recording(path)) {
		st = load_recording(b, path, err);
	} else {
		FILE *f = fopen(path, "r");
		if (!f)
			return tt_fail(err, TT_EIO, errno, "cannot read the baseline %s", path);
		st = load_folded(b, f, path, err);
		fclose(f);
	}
	if (st == TT_OK && !b->total)
		st = tt_fail(err, TT_EUSAGE, 0, "the baseline %s holds no samples", path);
	if (st != TT_OK)
		diffbase_free(b);
	return st;
}

void
diffbase_init(struct diff_base *b)
{
	memset(b, 0, sizeof *b);
	keytab_init(&b->paths, sizeof(struct diff_path));
}

void
diffbase_free(struct diff_base *b)
{
	keytab_free(&b->paths);
	b->total = b->stacks = 0;
}
