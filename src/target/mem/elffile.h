/* Just enough ELF reading to find a named section or symbol in a mapped file. */
#ifndef TT_ELFFILE_H
#define TT_ELFFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct elf_section_hit {
	uint64_t sh_addr;       /* section's link-time address */
	uint64_t sh_size;
	uint64_t load_vaddr;    /* page-aligned p_vaddr of the PT_LOAD with offset 0 */
	bool is_pie;            /* ET_DYN: loaded at a bias */
};

/* Look for section `name` (e.g. ".PyRuntime") in the ELF file open on fd.
 * Returns TT_OK and fills hit, TT_ENOTPY when the file has no such section or
 * is not a 64-bit little-endian ELF, TT_EIO/TT_ENOMEM otherwise. */
tt_status elf_find_section(int fd, const char *name, struct elf_section_hit *hit,
			   struct tt_error *err);

#define ELF_MAX_LOOKUP 8

struct elf_symbols {
	uint64_t value[ELF_MAX_LOOKUP];  /* st_value: link-time address */
	bool found[ELF_MAX_LOOKUP];
	uint64_t load_vaddr;             /* as in elf_section_hit */
	bool is_pie;
};

/* Look up defined symbols by name in .dynsym, then (unless dynsym_only) in
 * .symtab for those not found. A missing symbol is not an error: see
 * out->found. TT_ENOTPY when the file is not a usable ELF file. */
tt_status elf_find_symbols(int fd, const char *const *names, size_t n, bool dynsym_only,
			   struct elf_symbols *out, struct tt_error *err);

#endif
