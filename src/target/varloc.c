/* Local variables' locations from DWARF (varloc.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "varloc.h"

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

bool
varloc_find(Dwfl_Module *mod, Dwarf_Addr at, const char *func, const char *const *names, size_t n,
	    struct varloc *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct varloc){.kind = VARLOC_NONE};
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, at, &bias);
	if (!cu)
		return false;
	Dwarf_Die *scopes = NULL;
	int ns = dwarf_getscopes(cu, at - bias, &scopes);
	Dwarf_Die *sub = NULL;
	for (int k = 0; k < ns && !sub; k++)
		if (dwarf_tag(&scopes[k]) == DW_TAG_subprogram)
			sub = &scopes[k];
	const char *name = sub ? die_name(sub) : NULL;
	bool found = name && strcmp(name, func) == 0;
	Dwarf_Die child;
	if (found && dwarf_child(sub, &child) == 0) {
		bool cfa = frame_base_is_cfa(sub);
		do {
			int tag = dwarf_tag(&child);
			const char *var = tag == DW_TAG_variable || tag == DW_TAG_formal_parameter
						  ? die_name(&child) : NULL;
			Dwarf_Attribute a;
			Dwarf_Op *e;
			size_t len;
			for (size_t i = 0; var && i < n; i++)
				if (strcmp(var, names[i]) == 0 && dwarf_attr(&child, DW_AT_location, &a) &&
				    dwarf_getlocation_addr(&a, at - bias, &e, &len, 1) == 1)
					out[i] = from_expr(e, len, cfa);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	free(scopes);
	return found;
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
