/* Local variables' locations from DWARF (varloc.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "grow.h"
#include "native/varloc.h"
#include "order.h"

static const char *
die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	return dwarf_attr_integrate(die, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
}

/* One location expression of the forms a compiler gives a pointer kept
 * across a call: a register, or a slot off the frame base (the CFA) or
 * off a register. */
static struct varloc
from_expr(const Dwarf_Op *e, size_t len, bool frame_base_is_cfa)
{
	struct varloc v = {.kind = VARLOC_NONE};
	if (len != 1)
		return v;
	if (e[0].atom >= DW_OP_reg0 && e[0].atom <= DW_OP_reg31) {
		v.kind = VARLOC_REG;
		v.reg = (uint8_t)(e[0].atom - DW_OP_reg0);
	} else if (e[0].atom == DW_OP_regx && e[0].number < 32) {
		v.kind = VARLOC_REG;
		v.reg = (uint8_t)e[0].number;
	} else if (e[0].atom == DW_OP_fbreg && frame_base_is_cfa) {
		v.kind = VARLOC_CFA_SLOT;
		v.off = (int64_t)e[0].number;
	} else if (e[0].atom >= DW_OP_breg0 && e[0].atom <= DW_OP_breg31) {
		v.kind = VARLOC_REG_SLOT;
		v.reg = (uint8_t)(e[0].atom - DW_OP_breg0);
		v.off = (int64_t)e[0].number;
	}
	return v;
}

static bool
frame_base_is_cfa(Dwarf_Die *sub)
{
	Dwarf_Attribute a;
	Dwarf_Op *e;
	size_t len;
	return dwarf_attr_integrate(sub, DW_AT_frame_base, &a) && dwarf_getlocation(&a, &e, &len) == 0 &&
	       len == 1 && e[0].atom == DW_OP_call_frame_cfa;
}

static int
by_lo(const void *a, const void *b)
{
	const struct varloc_span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every span of variable die's location list, as file addresses. */
static bool
add_spans(struct varloc_table *t, int which, Dwarf_Die *die, bool cfa, Dwarf_Addr to_file)
{
	Dwarf_Attribute a;
	if (!dwarf_attr(die, DW_AT_location, &a))
		return true;
	Dwarf_Addr base, lo, hi;
	Dwarf_Op *e;
	size_t len;
	for (ptrdiff_t off = 0; (off = dwarf_getlocations(&a, off, &base, &lo, &hi, &e, &len)) > 0;) {
		struct varloc at = from_expr(e, len, cfa);
		bool whole = hi == (Dwarf_Addr)-1;   /* one location for the whole scope */
		if (at.kind == VARLOC_NONE || (!whole && lo >= hi))
			continue;   /* not one we read, or an empty span (GCC writes some) */
		if (!grow_array((void **)&t->spans[which], &t->caps[which], t->nspans[which] + 1,
				sizeof *t->spans[which]))
			return false;
		t->spans[which][t->nspans[which]++] = (struct varloc_span){
			.lo = whole ? 0 : lo + to_file, .hi = whole ? UINT64_MAX : hi + to_file, .at = at};
	}
	return true;
}

bool
varloc_table_read(struct varloc_table *t, const char *elf_path, char *debuginfo_path,
		  uint64_t addr, const char *func, const char *const names[VARLOC_VARS])
{
	memset(t, 0, sizeof *t);
	char *path = debuginfo_path;
	const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &path,
	};
	Dwfl *d = dwfl_begin(&callbacks);
	if (!d)
		return false;
	dwfl_report_begin(d);
	Dwfl_Module *mod = dwfl_report_elf(d, "evaluator", elf_path, -1, 0, false);
	dwfl_report_end(d, NULL, NULL);
	GElf_Addr elf_bias = 0;
	Dwarf_Addr dw_bias = 0;
	Dwarf_Die *cu = mod && dwfl_module_getelf(mod, &elf_bias)
				? dwfl_module_addrdie(mod, addr + elf_bias, &dw_bias) : NULL;
	/* The CU's own function holding the address, found among its
	 * children: dwarf_getscopes would do it but leaks a DIE (32 bytes)
	 * at some addresses in elfutils 0.188 (LeakSanitizer, Debian 12). */
	Dwarf_Die top, *sub = NULL;
	if (cu && dwarf_child(cu, &top) == 0) {
		do {
			if (dwarf_tag(&top) == DW_TAG_subprogram &&
			    dwarf_haspc(&top, addr + elf_bias - dw_bias) == 1)
				sub = &top;
		} while (!sub && dwarf_siblingof(&top, &top) == 0);
	}
	const char *name = sub ? die_name(sub) : NULL;
	bool ok = true;
	Dwarf_Die child;
	if (name && strcmp(name, func) == 0 && dwarf_child(sub, &child) == 0) {
		t->found = true;
		bool cfa = frame_base_is_cfa(sub);
		do {
			int tag = dwarf_tag(&child);
			const char *var = tag == DW_TAG_variable || tag == DW_TAG_formal_parameter
						  ? die_name(&child) : NULL;
			for (int i = 0; var && ok && i < VARLOC_VARS; i++)
				if (strcmp(var, names[i]) == 0)
					ok = add_spans(t, i, &child, cfa, dw_bias - elf_bias);
		} while (ok && dwarf_siblingof(&child, &child) == 0);
	}
	dwfl_end(d);   /* the debug information goes with it: only the spans stay */
	for (int i = 0; i < VARLOC_VARS; i++)
		if (t->nspans[i])
			order_sort(t->spans[i], t->nspans[i], sizeof *t->spans[i], by_lo);
	if (!ok)
		varloc_table_free(t);
	return t->found;
}

struct varloc
varloc_table_at(const struct varloc_table *t, int which, uint64_t addr)
{
	const struct varloc_span *s = t->spans[which];
	uint32_t lo = 0, hi = t->nspans[which];
	while (lo < hi) {   /* the first span starting after addr */
		uint32_t mid = lo + (hi - lo) / 2;
		if (s[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A location list's spans seldom overlap: a few back are enough. */
	for (uint32_t k = lo, back = 0; k > 0 && back < 4; k--, back++)
		if (addr >= s[k - 1].lo && addr < s[k - 1].hi)
			return s[k - 1].at;
	return (struct varloc){.kind = VARLOC_NONE};
}

void
varloc_table_free(struct varloc_table *t)
{
	for (int i = 0; i < VARLOC_VARS; i++)
		free(t->spans[i]);
	memset(t, 0, sizeof *t);
}

bool
varloc_cfa_rule(Dwfl_Module *mod, Dwarf_Addr at, uint8_t *reg, int64_t *off)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
	Dwarf_Frame *frame;
	if (!cfi || dwarf_cfi_addrframe(cfi, at - bias, &frame) != 0)
		return false;
	Dwarf_Op *ops;
	size_t nops;
	bool ok = dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1 &&
		  (ops[0].atom == DW_OP_bregx ||
		   (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31));
	if (ok) {
		*reg = (uint8_t)(ops[0].atom == DW_OP_bregx ? ops[0].number
							     : (Dwarf_Word)(ops[0].atom - DW_OP_breg0));
		*off = (int64_t)(ops[0].atom == DW_OP_bregx ? ops[0].number2 : ops[0].number);
	}
	free(frame);
	return ok;
}
