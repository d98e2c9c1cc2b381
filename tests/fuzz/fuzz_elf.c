/* ELF files a target maps, as attaching reads them: the sections it looks
 * for (.PyRuntime, .AsyncioDebug) and the symbols (_PyRuntime, Py_Version
 * and the debug build's), from .dynsym and .symtab.
 *
 * parsers: src/target/mem/elffile.c
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "mem/elffile.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file(data, size, path, sizeof path);
	static const char *const sections[] = {".PyRuntime", ".AsyncioDebug", ".gnu_debugdata"};
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
		struct elf_section_hit hit;
		struct tt_error err;
		elf_find_section(fd, sections[i], &hit, &err);
	}
	static const char *const names[] = {"_PyRuntime", "Py_Version", "_Py_NegativeRefcount",
					    "_Py_PrintReferences", "__jit_debug_descriptor"};
	for (int dynsym_only = 0; dynsym_only < 2; dynsym_only++) {
		struct elf_symbols syms;
		struct tt_error err;
		if (elf_find_symbols(fd, names, 5, dynsym_only, &syms, &err) == TT_OK)
			for (size_t i = 0; i < 5; i++)
				fuzz_check(syms.found[i] == 0 || syms.found[i] == 1);
	}
	close(fd);
	return 0;
}
