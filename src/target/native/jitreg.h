/* gdb's JIT interface: a runtime that generates code (CPython 3.15's JIT)
 * lists in-memory ELF objects describing it under the exported symbol
 * __jit_debug_descriptor, for debuggers to read their symbols. Read from
 * the target's memory, never by stopping it. */
#ifndef TT_JITREG_H
#define TT_JITREG_H

#include <stdbool.h>
#include <stdint.h>

#include "mem/remote.h"
#include "native/perfmap.h"

/* Objects read at most, and the largest object read. */
#define JITREG_ENTRIES_MAX 4096
#define JITREG_OBJECT_MAX (1u << 20)

/* Every named function of every object listed by the descriptor at
 * `descriptor` in mem, added to names. False when the descriptor cannot
 * be read or is not version 1; objects that cannot be read or parsed are
 * skipped, and the list is followed JITREG_ENTRIES_MAX entries at most. */
bool jitreg_read(struct remote *mem, uint64_t descriptor, struct perfmap *names);

/* The same for an object already copied: its functions' symbols (value,
 * size, name) added to names. For the reader and the unit tests. */
bool jitreg_parse_object(const void *object, size_t len, struct perfmap *names);

#endif
