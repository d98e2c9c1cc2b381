/* varloc.c on a real build: Debian 12's /usr/bin/python3.11 and its debug
 * file (python3.11-dbg, found by build-id under /usr/lib/debug). The
 * evaluator's `next_instr` is described over hundreds of spans, some in
 * callee-saved registers and some in stack slots off the CFA; a lookup at
 * a span's start gives that span's location; another function's name, a
 * file without debug information and a missing file are "not found", not
 * a crash. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <elfutils/libdwfl.h>

#include "tap.h"
#include "native/varloc.h"

#define PYTHON "/usr/bin/python3.11"
#define DEBUG_DIRS "/usr/lib/debug"

/* The file address of symbol `name` in `path` (its own vaddrs). */
static uint64_t
symbol_address(const char *path, const char *name)
{
	char *debug_path = NULL;
	const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debug_path,
	};
	Dwfl *d = dwfl_begin(&cb);
	dwfl_report_begin(d);
	Dwfl_Module *mod = dwfl_report_elf(d, "x", path, -1, 0, false);
	dwfl_report_end(d, NULL, NULL);
	uint64_t at = 0;
	GElf_Addr bias = 0;
	if (mod && dwfl_module_getelf(mod, &bias)) {
		int n = dwfl_module_getsymtab(mod);
		for (int i = 0; i < n && !at; i++) {
			GElf_Sym sym;
			GElf_Addr a;
			const char *s = dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL, NULL);
			if (s && strcmp(s, name) == 0)
				at = a - bias;
		}
	}
	dwfl_end(d);
	return at;
}

int
main(void)
{
	static const char *const names[VARLOC_VARS] = {"frame", "next_instr"};
	FILE *f = fopen(PYTHON, "rb");
	if (!f) {
		printf("1..0 # SKIP %s not installed\n", PYTHON);
		return 0;
	}
	fclose(f);
	uint64_t eval = symbol_address(PYTHON, "_PyEval_EvalFrameDefault");
	tap_ok(eval != 0, "_PyEval_EvalFrameDefault in %s at 0x%llx", PYTHON,
	       (unsigned long long)eval);

	struct varloc_table t;
	bool found = varloc_table_read(&t, PYTHON, DEBUG_DIRS, eval + 16,
				       "_PyEval_EvalFrameDefault", names);
	size_t regs = 0, slots = 0;
	for (uint32_t i = 0; i < t.nspans[1]; i++) {
		regs += t.spans[1][i].at.kind == VARLOC_REG;
		slots += t.spans[1][i].at.kind == VARLOC_CFA_SLOT;
	}
	tap_ok(found && t.nspans[1] > 100 && regs > 0 && slots > 0,
	       "next_instr over %u spans (%zu in registers, %zu in slots off the CFA); "
	       "frame over %u", t.nspans[1], regs, slots, t.nspans[0]);
	size_t same = 0, looked = 0;
	for (uint32_t i = 0; i < t.nspans[1]; i += 7, looked++) {
		const struct varloc_span *s = &t.spans[1][i];
		struct varloc at = varloc_table_at(&t, 1, s->lo);
		same += at.kind == s->at.kind && at.reg == s->at.reg && at.off == s->at.off;
	}
	tap_ok(looked > 0 && same == looked, "a lookup at a span's start gives its location: "
	       "%zu of %zu", same, looked);
	tap_ok(varloc_table_at(&t, 1, 0).kind == VARLOC_NONE,
	       "an address outside the function: no location");
	varloc_table_free(&t);

	tap_ok(!varloc_table_read(&t, PYTHON, DEBUG_DIRS, eval + 16, "PyObject_Repr", names) &&
	       t.nspans[0] == 0 && t.nspans[1] == 0,
	       "asked for another function than the one at the address: not found");
	varloc_table_free(&t);
	tap_ok(!varloc_table_read(&t, PYTHON, "/nonexistent", eval + 16,
				  "_PyEval_EvalFrameDefault", names),
	       "no debug information: not found");
	varloc_table_free(&t);
	tap_ok(!varloc_table_read(&t, "/nonexistent/python", DEBUG_DIRS, 0x1000,
				  "_PyEval_EvalFrameDefault", names),
	       "no file: not found");
	varloc_table_free(&t);
	return tap_done();
}
