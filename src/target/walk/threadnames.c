/* The names Python gives threads (threadnames.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "python/pyvalue.h"
#include "walk/threadnames.h"
#include "order.h"

/* Entries looked through: sys.modules of a big application, threading's
 * own names, its live threads. */
#define MODULES_MAX 65536u
#define MODULE_NAMES_MAX 4096u
#define THREADS_MAX 65536u

/* Copy s into out (len bytes with the NUL), cut at a UTF-8 character's end. */
static void
copy_cut(char *out, size_t len, const char *s)
{
	size_t n = strlen(s);
	if (n >= len) {
		n = len - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

/* Each registry entry's ident (its key) and its Thread's name into tn, a
 * few backend calls for all. */
static void
name_entries(struct pyvalue *v, const struct pyvalue_items *e, struct thread_names *tn)
{
	size_t n = e->n;
	uint64_t *idents = malloc((n ? n : 1) * sizeof *idents);
	uint64_t *strs = malloc((n ? n : 1) * sizeof *strs);
	bool *ok = malloc((n ? n : 1) * sizeof *ok);
	char **names = calloc(n ? n : 1, sizeof *names);
	if (!idents || !strs || !ok || !names ||
	    (tn->cap < tn->n + n &&
	     !grow_array((void **)&tn->names, &tn->cap, tn->n + n, sizeof *tn->names)))
		goto done;
	pyvalue_u64_many(v, e->keys, n, idents, ok);
	pyvalue_attr_many(v, e->values, n, "_name", strs);
	pyvalue_str_many(v, strs, n, names);
	for (size_t i = 0; i < n; i++) {
		if (!ok[i] || !names[i])
			continue;
		struct thread_name *t = &tn->names[tn->n++];
		t->ident = idents[i];
		copy_cut(t->name, sizeof t->name, names[i]);
	}
done:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(ok);
	free(strs);
	free(idents);
}

static int
by_ident(const void *a, const void *b)
{
	uint64_t x = ((const struct thread_name *)a)->ident, y = ((const struct thread_name *)b)->ident;
	return x < y ? -1 : x > y;
}

uint32_t
threadnames_read(struct target *t, struct thread_names *tn)
{
	const struct py_layout *l = &t->layout;
	struct pyvalue_limits lim = PYVALUE_LIMITS_DEFAULT;
	struct pyvalue v;
	struct tt_error err;
	uint64_t interp;
	tn->n = 0;
	if (!l->has_values ||
	    remote_read_u64(&t->mem, t->runtime_addr + l->rt_interpreters_head, &interp, &err))
		return 0;
	pyvalue_init(&v, &t->mem, l, &lim);
	struct pyvalue_items e = {0};
	for (unsigned i = 0; interp && !(interp & 7) && i < TARGET_MAX_INTERPRETERS; i++) {
		uint64_t modules, threading, names, active;
		if (!remote_read_u64(&t->mem, interp + l->is_modules, &modules, &err) &&
		    (threading = pyvalue_dict_get(&v, modules, "threading", MODULES_MAX)) &&
		    !remote_read_u64(&t->mem, threading + l->module_dict, &names, &err) &&
		    (active = pyvalue_dict_get(&v, names, "_active", MODULE_NAMES_MAX)) &&
		    pyvalue_dict_items(&v, active, THREADS_MAX, &e))
			name_entries(&v, &e, tn);
		if (remote_read_u64(&t->mem, interp + l->is_next, &interp, &err))
			break;
	}
	pyvalue_items_free(&e);
	pyvalue_free(&v);
	if (tn->n > 1)
		order_sort(tn->names, tn->n, sizeof *tn->names, by_ident);
	return tn->n;
}

const char *
threadnames_find(const struct thread_names *tn, uint64_t ident)
{
	uint32_t lo = 0, hi = tn->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (tn->names[mid].ident < ident)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < tn->n && tn->names[lo].ident == ident ? tn->names[lo].name : NULL;
}

const char *
threadnames_of(struct target *t, const struct thread_names *tn, uint64_t tstate)
{
	uint64_t ident;
	struct tt_error err;
	if (!tn->n || remote_read_u64(&t->mem, tstate + t->layout.ts_thread_id, &ident, &err))
		return NULL;
	return threadnames_find(tn, ident);
}

void
threadnames_free(struct thread_names *tn)
{
	free(tn->names);
	tn->names = NULL;
	tn->n = tn->cap = 0;
}
