/* The names Python gives threads (threadnames.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "pyvalue.h"
#include "threadnames.h"
#include "unwinder.h"

/* Entries looked through: sys.modules of a big application, threading's
 * own names, its live threads. */
#define MODULES_MAX 65536u
#define MODULE_NAMES_MAX 4096u
#define THREADS_MAX 65536u

struct reading {
	struct pyvalue *v;
	struct thread_names *tn;
};

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

static bool
add_thread(void *ctx, uint64_t key, uint64_t value)
{
	struct reading *r = ctx;
	uint64_t ident;
	if (!pyvalue_u64(r->v, key, &ident))
		return true;
	char *name = pyvalue_str(r->v, pyvalue_attr(r->v, value, "_name"));
	if (!name)
		return true;
	struct thread_names *tn = r->tn;
	if (tn->n == tn->cap &&
	    !grow_array((void **)&tn->names, &tn->cap, tn->n + 1, sizeof *tn->names)) {
		free(name);
		return false;
	}
	struct thread_name *e = &tn->names[tn->n++];
	e->ident = ident;
	copy_cut(e->name, sizeof e->name, name);
	free(name);
	return true;
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
	struct reading r = {&v, tn};
	for (unsigned i = 0; interp && !(interp & 7) && i < UNWIND_MAX_INTERPRETERS; i++) {
		uint64_t modules, threading, names, active;
		if (!remote_read_u64(&t->mem, interp + l->is_modules, &modules, &err) &&
		    (threading = pyvalue_dict_get(&v, modules, "threading", MODULES_MAX)) &&
		    !remote_read_u64(&t->mem, threading + l->module_dict, &names, &err) &&
		    (active = pyvalue_dict_get(&v, names, "_active", MODULE_NAMES_MAX)))
			pyvalue_dict_each(&v, active, THREADS_MAX, add_thread, &r);
		if (remote_read_u64(&t->mem, interp + l->is_next, &interp, &err))
			break;
	}
	pyvalue_free(&v);
	return tn->n;
}

const char *
threadnames_of(struct target *t, const struct thread_names *tn, uint64_t tstate)
{
	uint64_t ident;
	struct tt_error err;
	if (!tn->n || remote_read_u64(&t->mem, tstate + t->layout.ts_thread_id, &ident, &err))
		return NULL;
	for (uint32_t i = 0; i < tn->n; i++)
		if (tn->names[i].ident == ident)
			return tn->names[i].name;
	return NULL;
}

void
threadnames_free(struct thread_names *tn)
{
	free(tn->names);
	tn->names = NULL;
	tn->n = tn->cap = 0;
}
