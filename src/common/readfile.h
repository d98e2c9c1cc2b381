/* Reading a small file whole: a /proc file of a few kilobytes. */
#ifndef TT_READFILE_H
#define TT_READFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Up to len - 1 bytes of the file at path into buf (len >= 1), then a NUL
 * (the bytes may hold NULs of their own: /proc/PID/cmdline). Returns the
 * bytes read, or -1 when the file cannot be opened or read. */
ssize_t read_small_file(const char *path, char *buf, size_t len);

#endif
