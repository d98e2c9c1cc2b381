#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elffile.h"

/* Bounds on what we believe from a file header: sane binaries stay far below. */
#define ELF_MAX_PHDRS 4096
#define ELF_MAX_SHSTRTAB (1u << 20)

static bool
pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

tt_status
elf_find_section(int fd, const char *name, struct elf_section_hit *hit, struct tt_error *err)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0)
		return tt_fail(err, TT_EIO, errno, "fstat: %s", strerror(errno));
	uint64_t fsize = (uint64_t)sb.st_size;

	Elf64_Ehdr eh;
	if (fsize < sizeof eh || !pread_full(fd, &eh, sizeof eh, 0))
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

	memset(hit, 0, sizeof *hit);
	hit->is_pie = eh.e_type == ET_DYN;

	/* The load bias is measured from the segment that maps file offset 0. */
	bool have_load = false;
	for (unsigned i = 0; i < eh.e_phnum && !have_load; i++) {
		Elf64_Phdr ph;
		if (!pread_full(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph))
			return tt_fail(err, TT_EIO, errno, "reading ELF program headers");
		if (ph.p_type != PT_LOAD)
			continue;
		uint64_t align = ph.p_align > 1 ? ph.p_align : 4096;
		if (align & (align - 1))
			align = 4096;
		hit->load_vaddr = (ph.p_vaddr - ph.p_offset) & ~(align - 1);
		have_load = true;
	}
	if (!have_load)
		return tt_fail(err, TT_ENOTPY, 0, "ELF file has no loadable segment");

	size_t shbytes = (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
	Elf64_Shdr *sh = malloc(shbytes);
	if (!sh)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading ELF sections");
	tt_status st = TT_OK;
	char *names = NULL;
	if (!pread_full(fd, sh, shbytes, eh.e_shoff)) {
		st = tt_fail(err, TT_EIO, errno, "reading ELF section headers");
		goto out;
	}
	const Elf64_Shdr *strtab = &sh[eh.e_shstrndx];
	if (strtab->sh_size == 0 || strtab->sh_size > ELF_MAX_SHSTRTAB ||
	    strtab->sh_offset > fsize || strtab->sh_size > fsize - strtab->sh_offset) {
		st = tt_fail(err, TT_ENOTPY, 0, "ELF section name table is invalid");
		goto out;
	}
	names = malloc(strtab->sh_size + 1);
	if (!names) {
		st = tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory reading ELF sections");
		goto out;
	}
	if (!pread_full(fd, names, strtab->sh_size, strtab->sh_offset)) {
		st = tt_fail(err, TT_EIO, errno, "reading ELF section names");
		goto out;
	}
	names[strtab->sh_size] = '\0';
	st = tt_fail(err, TT_ENOTPY, 0, "no %s section", name);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_name >= strtab->sh_size)
			continue;
		if (strcmp(names + sh[i].sh_name, name) == 0) {
			hit->sh_addr = sh[i].sh_addr;
			hit->sh_size = sh[i].sh_size;
			st = TT_OK;
			break;
		}
	}
out:
	free(names);
	free(sh);
	return st;
}
