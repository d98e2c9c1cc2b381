/* Where a function keeps two of its local variables, over all of its code,
 * from its module's DWARF (libdw): at each address a register, or a stack
 * slot relative to the frame's canonical frame address or to a register.
 * Used to check a native sample against the Python frame read (native.c):
 * the evaluator keeps its next instruction (and its frame) somewhere at
 * each call it makes, and its debug information says where.
 *
 * The debug information is read once, in a libdwfl session of its own that
 * is then ended: decompressed, a build's takes tens of megabytes (Debian's
 * python3.14: 39 MB), and what is kept is a table of a few thousand spans. */
#ifndef TT_VARLOC_H
#define TT_VARLOC_H

#include <stdbool.h>
#include <stddef.h>
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

struct varloc_span {
	uint64_t lo, hi;   /* file addresses (the ELF's own vaddrs) */
	struct varloc at;
};

#define VARLOC_VARS 2

struct varloc_table {
	bool found;        /* the function and its debug information were found */
	struct varloc_span *spans[VARLOC_VARS];   /* per variable, by lo */
	uint32_t nspans[VARLOC_VARS], caps[VARLOC_VARS];
};

/* Fill t with where the function named func, which holds file address
 * `addr` of the ELF file at elf_path, keeps each of names[0..VARLOC_VARS)
 * (its own locals, not those of a function inlined into it). The debug
 * file is looked for by build-id in debuginfo_path (libdwfl's syntax).
 * false (and t->found false) when there is none or addr is not in func. */
bool varloc_table_read(struct varloc_table *t, const char *elf_path, char *debuginfo_path,
		       uint64_t addr, const char *func, const char *const names[VARLOC_VARS]);

/* Where variable `which` is at file address addr (VARLOC_NONE: not said). */
struct varloc varloc_table_at(const struct varloc_table *t, int which, uint64_t addr);

void varloc_table_free(struct varloc_table *t);

/* The rule for the CFA at absolute address `at` in mod: DWARF register
 * *reg plus *off. false when the call frame information has none of that
 * form there. */
bool varloc_cfa_rule(Dwfl_Module *mod, Dwarf_Addr at, uint8_t *reg, int64_t *off);

#endif
