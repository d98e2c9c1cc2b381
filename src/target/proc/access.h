/* Why the kernel refused to let us read a process, worked out from what
 * /proc says about both sides, so the error names the real cause and only
 * the remedies that would help. */
#ifndef TT_ACCESS_H
#define TT_ACCESS_H

#include <stddef.h>
#include <sys/types.h>

/* Write "<cause>: <remedy>" for a refused read of `pid` into buf. */
void access_explain(pid_t pid, char *buf, size_t len);

#endif
