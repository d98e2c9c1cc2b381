#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "labels.h"
#include "order.h"
#include "speedscope.h"

/* Which speedscope profile an entry is in: its thread, and its process
 * when profiles are per process. */
static uint64_t
entry_key(const struct procset *ps, const struct profile_entry *e, bool per_process)
{
	return (uint64_t)profile_entry_thread(ps, e) << 32 | (per_process ? e->proc : 0);
}

int
profile_write_speedscope(const struct profile *p, const struct procset *ps, FILE *f,
			 const char *name, double interval_s, bool per_process)
{
	struct profile_entry *v = profile_sorted_entries(p);
	if (!v)
		return -1;
	/* Frame IDs are dense and shared by every process: speedscope's frame
	 * index is the frame ID - 1. */
	const struct intern *in = &ps->in;
	struct jsonw w;
	jsonw_init(&w, f);
	jsonw_object(&w, NULL);
	jsonw_string(&w, "$schema", "https://www.speedscope.app/file-format-schema.json");
	jsonw_break(&w, "\n ");
	jsonw_string(&w, "exporter", "tachyon-top " PACKAGE_VERSION);
	jsonw_string(&w, "name", name);
	jsonw_u64(&w, "activeProfileIndex", 0);
	jsonw_break(&w, "\n ");
	jsonw_object(&w, "shared");
	jsonw_array(&w, "frames");
	jsonw_style(&w, true, "\n  ");
	uint32_t nframes = appendlog_count(in->frames);
	for (uint32_t id = 1; id < nframes; id++) {
		const struct interned_frame *fr = intern_frame_at(in, id);
		const struct interned_func *c = intern_func_at(in, fr->func_id);
		jsonw_object(&w, NULL);
		if (c->kind == FUNC_NATIVE) {
			/* C code: "symbol (library)", the library as its file */
			char label[1200];
			snprintf(label, sizeof label, "%s (%s)", c->qualname, c->filename);
			jsonw_string(&w, "name", label);
			jsonw_string(&w, "file", c->filename);
		} else {
			jsonw_string(&w, "name", c->qualname);
			jsonw_string(&w, "file", c->filename);
			jsonw_i64(&w, "line", fr->line);
		}
		jsonw_end(&w);
	}
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_break(&w, "\n ");
	jsonw_array(&w, "profiles");
	jsonw_style(&w, true, "\n  ");
	/* One profile per thread (per process and thread), in slot order. */
	uint64_t *keys = malloc((p->count ? p->count : 1) * sizeof *keys);
	if (!keys) {
		free(v);
		return -1;
	}
	for (uint32_t i = 0; i < p->count; i++)
		keys[i] = entry_key(ps, &v[i], per_process);
	order_sort(keys, p->count, sizeof *keys, order_u64);
	for (uint32_t k = 0; k < p->count; k++) {
		if (k && keys[k] == keys[k - 1])
			continue;
		uint32_t t = (uint32_t)(keys[k] >> 32);
		uint64_t total = 0;
		const struct profile_entry *some = NULL;
		for (uint32_t i = 0; i < p->count; i++) {
			if (entry_key(ps, &v[i], per_process) == keys[k]) {
				total += v[i].weight;
				some = &v[i];
			}
		}
		char label[600];
		if (per_process) {
			profile_proc_label(ps, profile_entry_proc(some), label, sizeof label);
			size_t used = strlen(label);
			label[used++] = ' ';
			profile_thread_label(ps, t, label + used, sizeof label - used);
		} else {
			profile_thread_label(ps, t, label, sizeof label);
		}
		jsonw_object(&w, NULL);
		jsonw_string(&w, "type", "sampled");
		jsonw_string(&w, "name", label);
		jsonw_string(&w, "unit", "seconds");
		jsonw_u64(&w, "startValue", 0);
		jsonw_double(&w, "endValue", 6, (double)total * interval_s);
		jsonw_break(&w, "\n   ");
		jsonw_array(&w, "samples");
		for (uint32_t i = 0; i < p->count; i++) {
			if (entry_key(ps, &v[i], per_process) != keys[k])
				continue;
			uint32_t depth = v[i].stack_id ? intern_stack_at(in, v[i].stack_id)->depth : 0;
			/* root first: walk to the root, print backwards */
			uint32_t stackbuf[256];
			uint32_t *ids = depth <= 256 ? stackbuf : malloc(depth * sizeof *ids);
			if (!ids) {
				free(keys);
				free(v);
				return -1;
			}
			uint32_t n = 0;
			for (uint32_t s = v[i].stack_id; s; s = intern_stack_at(in, s)->parent)
				ids[n++] = intern_stack_at(in, s)->frame;
			jsonw_array(&w, NULL);
			jsonw_style(&w, true, NULL);
			for (uint32_t d = n; d-- > 0;)
				jsonw_u64(&w, NULL, ids[d] - 1);
			jsonw_end(&w);
			if (ids != stackbuf)
				free(ids);
		}
		jsonw_end(&w);
		jsonw_break(&w, "\n   ");
		jsonw_array(&w, "weights");
		for (uint32_t i = 0; i < p->count; i++)
			if (entry_key(ps, &v[i], per_process) == keys[k])
				jsonw_double(&w, NULL, 6, (double)v[i].weight * interval_s);
		jsonw_end(&w);
		jsonw_end(&w);
	}
	free(keys);
	jsonw_end(&w);
	jsonw_end(&w);
	fputc('\n', f);
	free(v);
	return ferror(f) ? -1 : 0;
}
