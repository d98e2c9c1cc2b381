/* Decoding CPython's location table (PEP 626 / PEP 657 format, 3.11+). */
#ifndef TT_LINETABLE_H
#define TT_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/* Line number of the instruction at code-unit index addrq, as
 * PyCode_Addr2Line computes it: firstlineno for addrq < 0, -1 when the
 * instruction has no line or the table does not cover it or is malformed. */
int linetable_addr2line(const uint8_t *table, size_t len, int firstlineno, int64_t addrq);

#endif
