#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "heatmap.h"
#include "idindex.h"
#include "sanitize.h"
#include "order.h"

#define MAX_LINE 1000000      /* lines past this are not counted (generated code) */
#define MAX_SHOWN_CHARS 2000  /* of one source line */

struct hline {
	uint64_t own, total;
	uint32_t stamp;           /* the last stack that counted it in total */
};

struct hfile {
	const char *name;         /* interned (lives with the procset) */
	uint64_t own, total;      /* own: samples running in it; total: its hottest line's */
	struct hline *lines;
	uint32_t nlines;          /* lines[0 .. nlines) */
};

struct heat {
	struct hfile *files;
	uint32_t count, cap;
	struct idindex index;
	uint64_t samples;
};

static uint32_t
file_hash_at(const void *ctx, uint32_t id)
{
	const struct heat *h = ctx;
	return hash_mix64(hash_fnv(HASH_FNV_SEED, h->files[id - 1].name));
}

static struct hfile *
file_for(struct heat *h, const char *name)
{
	if (!idindex_reserve(&h->index, 1, h->count + 1, 64, file_hash_at, h))
		return NULL;
	uint32_t k = idindex_start(&h->index, hash_mix64(hash_fnv(HASH_FNV_SEED, name)));
	for (; h->index.slots[k]; k = idindex_next(&h->index, k)) {
		struct hfile *f = &h->files[h->index.slots[k] - 1];
		if (strcmp(f->name, name) == 0)
			return f;
	}
	if (!grow_array((void **)&h->files, &h->cap, h->count + 1, sizeof *h->files))
		return NULL;
	h->files[h->count++] = (struct hfile){.name = name};
	h->index.slots[k] = h->count;
	return &h->files[h->count - 1];
}

static struct hline *
line_of(struct hfile *f, int32_t line)
{
	if (line < 1 || line > MAX_LINE)
		return NULL;
	if ((uint32_t)line >= f->nlines) {
		uint32_t cap = f->nlines;
		if (!grow_array((void **)&f->lines, &cap, (uint32_t)line + 1, sizeof *f->lines))
			return NULL;
		f->nlines = cap;
	}
	return &f->lines[line];
}

/* Count every entry's samples on the lines of its stack. */
static bool
count_lines(struct heat *h, const struct profile *p, const struct procset *ps)
{
	const struct intern *in = &ps->in;
	for (uint32_t i = 0; i < p->count; i++) {
		const struct profile_entry *e = &p->entries[i];
		if (!e->weight)
			continue;
		h->samples += e->weight;
		bool innermost = true;
		for (uint32_t s = e->stack_id; s; s = intern_stack_at(in, s)->parent) {
			const struct interned_frame *fr = intern_frame_at(in, intern_stack_at(in, s)->frame);
			const struct interned_func *fn = intern_func_at(in, fr->func_id);
			if (fn->kind != FUNC_PYTHON || !fn->filename)
				continue;
			struct hfile *f = file_for(h, fn->filename);
			if (!f)
				return false;
			struct hline *l = line_of(f, fr->line);
			if (innermost) {
				f->own += e->weight;
				if (l)
					l->own += e->weight;
				innermost = false;
			}
			/* a line on the stack twice (recursion) counts once */
			if (l && l->stamp != i + 1) {
				l->stamp = i + 1;
				l->total += e->weight;
			}
		}
	}
	for (uint32_t i = 0; i < h->count; i++)
		for (uint32_t l = 0; l < h->files[i].nlines; l++)
			if (h->files[i].lines[l].total > h->files[i].total)
				h->files[i].total = h->files[i].lines[l].total;
	return true;
}

static int
cmp_files(const void *a, const void *b)
{
	const struct hfile *x = a, *y = b;
	if (x->own != y->own)
		return x->own < y->own ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* HTML text (source code: a tab stays a tab), at most max_chars characters. */
static void
put_html(FILE *f, const char *s, size_t len, size_t max_chars)
{
	markup_put_text(f, s, len, max_chars, "\xe2\x80\xa6");
}

static void
put_html_str(FILE *f, const char *s)
{
	put_html(f, s, strlen(s), SIZE_MAX);
}

/* A line's row: its number, own and total counts, the source shaded by
 * its share of all samples. */
static void
put_row(FILE *f, uint32_t file, uint32_t number, const struct hline *l, uint64_t samples,
	const char *text, size_t len)
{
	uint64_t own = l ? l->own : 0, total = l ? l->total : 0;
	double heat = samples ? (double)total / (double)samples : 0;
	double hot = samples ? (double)own / (double)samples : 0;
	fprintf(f, "<tr id=\"f%uL%u\"", file, number);
	if (total)
		fprintf(f, " class=\"s\" style=\"--t:%.3f;--o:%.3f\"", heat, hot);
	fprintf(f, "><td class=\"n\">%u</td><td class=\"c\">", number);
	if (own)
		fprintf(f, "%llu", (unsigned long long)own);
	fputs("</td><td class=\"c\">", f);
	if (total)
		fprintf(f, "%llu", (unsigned long long)total);
	fputs("</td><td class=\"src\">", f);
	if (text)
		put_html(f, text, len, MAX_SHOWN_CHARS);
	fputs("</td></tr>\n", f);
}

static void
put_file(FILE *f, const struct export_meta *m, const struct hfile *hf, uint32_t index,
	 uint64_t samples)
{
	fprintf(f, "<h2 id=\"f%u\">", index);
	put_html_str(f, hf->name);
	fprintf(f, "</h2>\n<p class=\"meta\">%llu samples running here (%.1f%%); hottest line "
		   "on %.1f%% of the stacks", (unsigned long long)hf->own,
		samples ? 100.0 * (double)hf->own / (double)samples : 0.0,
		samples ? 100.0 * (double)hf->total / (double)samples : 0.0);
	char why[200] = "";
	size_t len = 0;
	char *src = export_source_read(&m->sources, hf->name, HEATMAP_MAX_FILE_BYTES, &len, why,
				       sizeof why);
	if (src)
		fprintf(f, "; %zu bytes, fnv1a-64 %016llx</p>\n", len,
			(unsigned long long)hash_fnv_bytes(HASH_FNV_SEED, src, len));
	else
		fprintf(f, "; %s</p>\n", why);
	fputs("<table class=\"code\"><tr><th>line</th><th>own</th><th>total</th><th>source</th>"
	      "</tr>\n", f);
	if (src) {
		uint32_t last = 0;
		for (char *at = src; at < src + len || last == 0;) {
			char *nl = memchr(at, '\n', (size_t)(src + len - at));
			size_t n = nl ? (size_t)(nl - at) : (size_t)(src + len - at);
			if (n && at[n - 1] == '\r')   /* CRLF line ends */
				n--;
			last++;
			const struct hline *l = last < hf->nlines ? &hf->lines[last] : NULL;
			put_row(f, index, last, l, samples, at, n);
			if (!nl)
				break;
			at = nl + 1;
		}
		/* lines past the end of the file as read (it changed since) */
		for (uint32_t k = last + 1; k < hf->nlines; k++)
			if (hf->lines[k].total)
				put_row(f, index, k, &hf->lines[k], samples, "", 0);
	} else {
		for (uint32_t k = 1; k < hf->nlines; k++)
			if (hf->lines[k].total)
				put_row(f, index, k, &hf->lines[k], samples, NULL, 0);
	}
	fputs("</table>\n", f);
	free(src);
}

static const char style[] =
	"body{font:13px/1.35 'DejaVu Sans',Verdana,sans-serif;margin:16px;color:#222;"
	"background:#fbfaf4}\n"
	"h1{font-size:18px}h2{font-size:15px;margin-top:28px;word-break:break-all}\n"
	".meta{color:#555}\n"
	"table.index td,table.index th{padding:1px 8px;text-align:right}\n"
	"table.index td:last-child,table.index th:last-child{text-align:left;"
	"word-break:break-all}\n"
	"table.code{border-collapse:collapse;font:12px/1.3 'DejaVu Sans Mono',monospace}\n"
	"table.code td{padding:0 6px;vertical-align:top}\n"
	"table.code td.n,table.code td.c{text-align:right;color:#777;white-space:nowrap}\n"
	"table.code td.src{white-space:pre;tab-size:8}\n"
	"tr.s td.src{background:rgba(255,120,0,calc(0.08 + 0.8*var(--t)))}\n"
	"tr.s td.c{background:rgba(220,0,0,calc(0.9*var(--o)));color:#000}\n";

static void
free_heat(struct heat *h)
{
	for (uint32_t i = 0; i < h->count; i++)
		free(h->files[i].lines);
	free(h->files);
	idindex_free(&h->index);
}

/* The files by samples, as the page lists them. */
static bool
rank_files(struct heat *h, const struct profile *p, const struct procset *ps)
{
	if (!count_lines(h, p, ps))
		return false;
	order_sort(h->files, h->count, sizeof *h->files, cmp_files);
	return true;
}

bool
heatmap_sources(const struct profile *p, const struct procset *ps,
		void (*each)(void *ctx, const char *name), void *ctx)
{
	struct heat h = {0};
	bool ok = rank_files(&h, p, ps);
	for (uint32_t i = 0; ok && i < h.count && i < HEATMAP_MAX_FILES; i++)
		each(ctx, h.files[i].name);
	free_heat(&h);
	return ok;
}

int
heatmap_write(const struct profile *p, const struct procset *ps,
	      const struct export_meta *meta, FILE *f)
{
	struct heat h = {0};
	bool ok = rank_files(&h, p, ps);
	char cmd[512];
	sanitize_for_terminal(meta->command && meta->command[0] ? meta->command : "?", cmd,
			      sizeof cmd);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'\">\n<title>tachyon-top heatmap: ", f);
	put_html_str(f, cmd);
	fprintf(f, "</title>\n<style>\n%s</style></head><body>\n<h1>pid %d: ", style,
		(int)meta->pid);
	put_html_str(f, cmd);
	fprintf(f, "</h1>\n<p class=\"meta\">Python ");
	put_html_str(f, meta->python_version ? meta->python_version : "?");
	fprintf(f, " &middot; %s mode &middot; %.1f s &middot; %llu samples. Each line: own "
		   "(running it) and total (on the stack) samples; the source is shaded by "
		   "total, the counts by own.</p>\n",
		export_mode_name(meta->mode), (double)meta->duration_ns / 1e9,
		(unsigned long long)h.samples);
	fputs("<table class=\"index\"><tr><th>own</th><th>own %</th><th>hottest line %</th>"
	      "<th>file</th></tr>\n", f);
	for (uint32_t i = 0; ok && i < h.count; i++) {
		const struct hfile *hf = &h.files[i];
		fprintf(f, "<tr><td>%llu</td><td>%.1f</td><td>%.1f</td><td>",
			(unsigned long long)hf->own,
			h.samples ? 100.0 * (double)hf->own / (double)h.samples : 0.0,
			h.samples ? 100.0 * (double)hf->total / (double)h.samples : 0.0);
		if (i < HEATMAP_MAX_FILES)
			fprintf(f, "<a href=\"#f%u\">", i);
		put_html_str(f, hf->name);
		fputs(i < HEATMAP_MAX_FILES ? "</a></td></tr>\n" : "</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	for (uint32_t i = 0; ok && i < h.count && i < HEATMAP_MAX_FILES; i++)
		put_file(f, meta, &h.files[i], i, h.samples);
	fputs("</body></html>\n", f);
	free_heat(&h);
	return ok && !ferror(f) ? 0 : -1;
}
