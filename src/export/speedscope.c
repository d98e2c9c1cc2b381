#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "order.h"
#include "sanitize.h"
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
	fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
	      " \"exporter\": \"tachyon-top " PACKAGE_VERSION "\", \"name\": ", f);
	json_put_string(f, name);
	fputs(", \"activeProfileIndex\": 0,\n \"shared\": {\"frames\": [", f);
	uint32_t nframes = appendlog_count(in->frames);
	for (uint32_t id = 1; id < nframes; id++) {
		const struct interned_frame *fr = intern_frame_at(in, id);
		const struct interned_func *c = intern_func_at(in, fr->func_id);
		fprintf(f, "%s\n  {\"name\": ", id > 1 ? "," : "");
		if (c->kind == FUNC_NATIVE) {
			/* C code: "symbol (library)", the library as its file */
			char label[1200];
			snprintf(label, sizeof label, "%s (%s)", c->qualname, c->filename);
			json_put_string(f, label);
			fputs(", \"file\": ", f);
			json_put_string(f, c->filename);
			fputs("}", f);
			continue;
		}
		json_put_string(f, c->qualname);
		fputs(", \"file\": ", f);
		json_put_string(f, c->filename);
		fprintf(f, ", \"line\": %d}", fr->line);
	}
	fputs("]},\n \"profiles\": [", f);
	/* One profile per thread (per process and thread), in slot order. */
	uint64_t *keys = malloc((p->count ? p->count : 1) * sizeof *keys);
	if (!keys) {
		free(v);
		return -1;
	}
	for (uint32_t i = 0; i < p->count; i++)
		keys[i] = entry_key(ps, &v[i], per_process);
	qsort(keys, p->count, sizeof *keys, order_u64);
	bool first_profile = true;
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
		fprintf(f, "%s\n  {\"type\": \"sampled\", \"name\": ", first_profile ? "" : ",");
		json_put_string(f, label);
		fprintf(f, ", \"unit\": \"seconds\", \"startValue\": 0, \"endValue\": %.6f,\n   \"samples\": [",
			(double)total * interval_s);
		bool first = true;
		for (uint32_t i = 0; i < p->count; i++) {
			if (entry_key(ps, &v[i], per_process) != keys[k])
				continue;
			fprintf(f, "%s[", first ? "" : ", ");
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
			for (uint32_t d = n; d-- > 0;)
				fprintf(f, "%s%u", d + 1 == n ? "" : ",", ids[d] - 1);
			if (ids != stackbuf)
				free(ids);
			fputc(']', f);
			first = false;
		}
		fputs("],\n   \"weights\": [", f);
		first = true;
		for (uint32_t i = 0; i < p->count; i++) {
			if (entry_key(ps, &v[i], per_process) != keys[k])
				continue;
			fprintf(f, "%s%.6f", first ? "" : ", ", (double)v[i].weight * interval_s);
			first = false;
		}
		fputs("]}", f);
		first_profile = false;
	}
	free(keys);
	fputs("]}\n", f);
	free(v);
	return ferror(f) ? -1 : 0;
}
