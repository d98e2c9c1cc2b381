/* gdb's JIT interface, read from a target's memory (native/jitreg.h). */
#include "config.h"

#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "keytab.h"
#include "native/jitreg.h"

/* struct jit_descriptor and struct jit_code_entry, as gdb defines them. */
struct jit_descriptor {
	uint32_t version, action_flag;
	uint64_t relevant_entry, first_entry;
};

struct jit_code_entry {
	uint64_t next_entry, prev_entry, symfile_addr, symfile_size;
};

bool
jitreg_parse_object(const void *object, size_t len, struct perfmap *names)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)object, len);
	if (!elf)
		return false;
	bool any = false;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize == 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t count = data ? data->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_size == 0)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && name[0])
				any |= perfmap_add(names, sym.st_value, sym.st_size, name, strlen(name));
		}
	}
	elf_end(elf);
	return any;
}

bool
jitreg_read(struct remote *mem, uint64_t descriptor, struct perfmap *names)
{
	struct jit_descriptor d;
	if (!descriptor || remote_read_upto(mem, descriptor, &d, sizeof d) != sizeof d ||
	    d.version != 1)
		return false;
	uint64_t at = d.first_entry;
	/* A list that loops back on itself ends at the first entry seen again. */
	struct keytab seen;
	keytab_init(&seen, sizeof(uint64_t));
	bool added = true;
	for (unsigned i = 0; at && i < JITREG_ENTRIES_MAX; i++) {
		if (!keytab_put(&seen, at, &added) || !added)
			break;
		struct jit_code_entry e;
		if (remote_read_upto(mem, at, &e, sizeof e) != sizeof e)
			break;
		if (e.symfile_size && e.symfile_size <= JITREG_OBJECT_MAX) {
			void *object = malloc(e.symfile_size);
			if (object && remote_read_upto(mem, e.symfile_addr, object, e.symfile_size) ==
					      e.symfile_size)
				jitreg_parse_object(object, e.symfile_size, names);
			free(object);
		}
		at = e.next_entry;
	}
	keytab_free(&seen);
	return true;
}
