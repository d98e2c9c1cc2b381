/* Where a function keeps its local variables at a code address, from its
 * module's DWARF (libdw): a register, or a stack slot relative to the
 * frame's canonical frame address or its stack pointer. Used to check a
 * native sample against the Python frame read (native.c): the evaluator
 * keeps its frame and next instruction somewhere at each call it makes,
 * and its debug information says where. */
#ifndef TT_VARLOC_H
#define TT_VARLOC_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

enum varloc_kind {
	VARLOC_NONE,       /* not described here (no debug information, optimized out,
			      or an expression this reader does not evaluate) */
	VARLOC_REG,        /* in DWARF register reg */
	VARLOC_CFA_SLOT,   /* in memory at the frame's CFA + off */
	VARLOC_REG_SLOT,   /* in memory at DWARF register reg + off */
};

struct varloc {
	uint8_t kind;      /* enum varloc_kind */
	uint8_t reg;
	int64_t off;
};

/* The locations, at absolute address `at` in module mod, of the locals
 * names[0..n) of the function named `func` that contains `at` (not of a
 * function inlined into it). false when mod has no debug information or
 * `at` is not in `func`; a local without a location there is VARLOC_NONE. */
bool varloc_find(Dwfl_Module *mod, Dwarf_Addr at, const char *func, const char *const *names,
		 size_t n, struct varloc *out);

/* The rule for the CFA at absolute address `at` in mod: DWARF register
 * *reg plus *off. false when the call frame information has none of that
 * form there. */
bool varloc_cfa_rule(Dwfl_Module *mod, Dwarf_Addr at, uint8_t *reg, int64_t *off);

#endif
