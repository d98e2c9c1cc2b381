#include "config.h"

#include <stdlib.h>

#include "collapsed.h"
#include "grow.h"
#include "labels.h"

int
profile_write_collapsed(const struct profile *p, const struct procset *ps, FILE *f,
			bool per_thread, bool per_process)
{
	struct profile_entry *v = profile_sorted_entries(p);
	if (!v)
		return -1;
	uint32_t *ids = NULL;
	uint32_t cap = 0;
	int rc = 0;
	for (uint32_t i = 0; i < p->count; i++) {
		const struct intern *in = &ps->in;
		uint32_t depth = v[i].stack_id ? intern_stack_at(in, v[i].stack_id)->depth : 0;
		if (!grow_array((void **)&ids, &cap, depth, sizeof *ids)) {
			rc = -1;
			break;
		}
		uint32_t n = 0;
		for (uint32_t s = v[i].stack_id; s; s = intern_stack_at(in, s)->parent)
			ids[n++] = intern_stack_at(in, s)->frame;
		bool first = true;
		if (per_process) {
			char label[300];
			profile_proc_label(ps, profile_entry_proc(&v[i]), label, sizeof label);
			fputs(label, f);
			first = false;
		}
		if (per_thread) {
			char label[300];
			profile_thread_label(ps, profile_entry_thread(ps, &v[i]), label, sizeof label);
			fprintf(f, "%s%s", first ? "" : ";", label);
			first = false;
		}
		if (n == 0) {
			fprintf(f, "%s<no Python frames>", first ? "" : ";");
			first = false;
		}
		for (uint32_t k = n; k-- > 0;) {
			char label[2300];
			profile_frame_label(in, ids[k], label, sizeof label);
			fprintf(f, "%s%s", first ? "" : ";", label);
			first = false;
		}
		fprintf(f, " %llu\n", (unsigned long long)v[i].weight);
	}
	free(ids);
	free(v);
	return rc == 0 && !ferror(f) ? 0 : -1;
}
