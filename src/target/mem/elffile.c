#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem/elffile.h"
#include "readfile.h"

/* Bounds on what we believe from a file header: sane binaries stay far below. */
#define ELF_MAX_PHDRS 4096
#define ELF_MAX_SHSTRTAB (1u << 20)
#define ELF_MAX_STRTAB (64u << 20)

/* What every lookup needs: the ELF header, the load bias origin and the
 * section headers with their names. */
struct elf_view {
	uint64_t fsize;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	char *names;
	uint64_t names_size;
	uint64_t load_vaddr;
};

static void
elf_view_free(struct elf_view *v)
{
	free(v->sh);
	free(v->names);
}

static tt_status
elf_view_open(int fd, struct elf_view *v, struct tt_error *err)
{
	memset(v, 0, sizeof *v);
	struct stat sb;
	if (fstat(fd, &sb) != 0)
		return tt_fail(err, TT_EIO, errno, "fstat: %s", strerror(errno));
	uint64_t fsize = v->fsize = (uint64_t)sb.st_size;

	Elf64_Ehdr eh;
	if (fsize < sizeof eh || !read_fd_at(fd, 0, &eh, sizeof eh))
		return tt_fail(err, TT_ENOTPY, 0, "not an ELF file");
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return tt_fail(err, TT_ENOTPY, 0, "not a 64-bit little-endian ELF file");
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
	    eh.e_shstrndx >= eh.e_shnum ||
	    eh.e_shoff > fsize || (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > fsize - eh.e_shoff)
		return tt_fail(err, TT_ENOTPY, 0, "ELF file without a usable section table");
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > ELF_MAX_PHDRS ||
	    eh.e_phoff > fsize || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > fsize - eh.e_phoff)
		return tt_fail(err, TT_ENOTPY, 0, "ELF file without a usable program header table");
	v->eh = eh;

	/* The load bias is measured from the segment that maps file offset 0. */
	bool have_load = false;
	for (unsigned i = 0; i < eh.e_phnum && !have_load; i++) {
		Elf64_Phdr ph;
		if (!read_fd_at(fd, eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph))
			return tt_fail(err, TT_EIO, errno, "reading ELF program headers");
		if (ph.p_type != PT_LOAD)
			continue;
		uint64_t align = ph.p_align > 1 ? ph.p_align : 4096;
		if (align & (align - 1))
			align = 4096;
		v->load_vaddr = (ph.p_vaddr - ph.p_offset) & ~(align - 1);
		have_load = true;
	}
	if (!have_load)
		return tt_fail(err, TT_ENOTPY, 0, "ELF file has no loadable segment");

	size_t shbytes = (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
	v->sh = malloc(shbytes);
	if (!v->sh)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading ELF sections");
	tt_status st = TT_OK;
	if (!read_fd_at(fd, eh.e_shoff, v->sh, shbytes)) {
		st = tt_fail(err, TT_EIO, errno, "reading ELF section headers");
		goto fail;
	}
	const Elf64_Shdr *strtab = &v->sh[eh.e_shstrndx];
	if (strtab->sh_size == 0 || strtab->sh_size > ELF_MAX_SHSTRTAB ||
	    strtab->sh_offset > fsize || strtab->sh_size > fsize - strtab->sh_offset) {
		st = tt_fail(err, TT_ENOTPY, 0, "ELF section name table is invalid");
		goto fail;
	}
	v->names = malloc(strtab->sh_size + 1);
	if (!v->names) {
		st = tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading ELF sections");
		goto fail;
	}
	if (!read_fd_at(fd, strtab->sh_offset, v->names, strtab->sh_size)) {
		st = tt_fail(err, TT_EIO, errno, "reading ELF section names");
		goto fail;
	}
	v->names[strtab->sh_size] = '\0';
	v->names_size = strtab->sh_size;
	return TT_OK;
fail:
	elf_view_free(v);
	return st;
}

tt_status
elf_find_section(int fd, const char *name, struct elf_section_hit *hit, struct tt_error *err)
{
	struct elf_view v;
	tt_status st = elf_view_open(fd, &v, err);
	if (st != TT_OK)
		return st;
	memset(hit, 0, sizeof *hit);
	hit->is_pie = v.eh.e_type == ET_DYN;
	hit->load_vaddr = v.load_vaddr;
	st = tt_fail(err, TT_ENOTPY, 0, "no %s section", name);
	for (unsigned i = 0; i < v.eh.e_shnum; i++) {
		if (v.sh[i].sh_name >= v.names_size)
			continue;
		if (strcmp(v.names + v.sh[i].sh_name, name) == 0) {
			hit->sh_addr = v.sh[i].sh_addr;
			hit->sh_size = v.sh[i].sh_size;
			st = TT_OK;
			break;
		}
	}
	elf_view_free(&v);
	return st;
}

/* Look the wanted names up in one symbol table (SHT_DYNSYM or SHT_SYMTAB),
 * reading it in chunks: .symtab of a debug build holds ~100k symbols. */
static tt_status
scan_symtab(int fd, const struct elf_view *v, const Elf64_Shdr *symtab,
	    const char *const *names, size_t n, struct elf_symbols *out, struct tt_error *err)
{
	if (symtab->sh_link >= v->eh.e_shnum || symtab->sh_entsize != sizeof(Elf64_Sym))
		return TT_OK;
	const Elf64_Shdr *strs = &v->sh[symtab->sh_link];
	if (symtab->sh_offset > v->fsize || symtab->sh_size > v->fsize - symtab->sh_offset ||
	    strs->sh_offset > v->fsize || strs->sh_size > v->fsize - strs->sh_offset ||
	    strs->sh_size == 0 || strs->sh_size > ELF_MAX_STRTAB)
		return TT_OK; /* a truncated or absurd table: treat its symbols as absent */
	char *str = malloc(strs->sh_size + 1);
	if (!str)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading ELF symbols");
	if (!read_fd_at(fd, strs->sh_offset, str, strs->sh_size)) {
		free(str);
		return tt_fail(err, TT_EIO, errno, "reading ELF symbol names");
	}
	str[strs->sh_size] = '\0';
	Elf64_Sym chunk[512];
	uint64_t count = symtab->sh_size / sizeof(Elf64_Sym);
	tt_status st = TT_OK;
	for (uint64_t i = 0; i < count && st == TT_OK;) {
		uint64_t take = count - i < 512 ? count - i : 512;
		if (!read_fd_at(fd, symtab->sh_offset + i * sizeof *chunk, chunk,
				take * sizeof *chunk)) {
			st = tt_fail(err, TT_EIO, errno, "reading ELF symbols");
			break;
		}
		for (uint64_t j = 0; j < take; j++) {
			const Elf64_Sym *s = &chunk[j];
			if (s->st_shndx == SHN_UNDEF || s->st_name == 0 || s->st_name >= strs->sh_size)
				continue;
			const char *name = str + s->st_name;
			for (size_t k = 0; k < n; k++) {
				if (!out->found[k] && strcmp(name, names[k]) == 0) {
					out->found[k] = true;
					out->value[k] = s->st_value;
				}
			}
		}
		i += take;
	}
	free(str);
	return st;
}

tt_status
elf_find_symbols(int fd, const char *const *names, size_t n, bool dynsym_only,
		 struct elf_symbols *out, struct tt_error *err)
{
	if (n > ELF_MAX_LOOKUP)
		return tt_fail(err, TT_EIO, 0, "too many symbols to look up");
	memset(out, 0, sizeof *out);
	struct elf_view v;
	tt_status st = elf_view_open(fd, &v, err);
	if (st != TT_OK)
		return st;
	out->is_pie = v.eh.e_type == ET_DYN;
	out->load_vaddr = v.load_vaddr;
	for (int pass = 0; pass < 2 && st == TT_OK; pass++) {
		if (pass == 1 && dynsym_only)
			break;
		uint32_t type = pass == 0 ? SHT_DYNSYM : SHT_SYMTAB;
		for (unsigned i = 0; i < v.eh.e_shnum && st == TT_OK; i++)
			if (v.sh[i].sh_type == type)
				st = scan_symtab(fd, &v, &v.sh[i], names, n, out, err);
		bool all = true;
		for (size_t k = 0; k < n; k++)
			all = all && out->found[k];
		if (all)
			break;
	}
	elf_view_free(&v);
	return st;
}
