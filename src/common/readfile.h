/* Reading files: a small /proc file into a caller's buffer, any file into
 * one that grows as it fills, or exactly len bytes at an offset. */
#ifndef TT_READFILE_H
#define TT_READFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Up to len - 1 bytes of the file at path into buf (len >= 1), then a NUL
 * (the bytes may hold NULs of their own: /proc/PID/cmdline). Returns the
 * bytes read, or -1 when the file cannot be opened or read. */
ssize_t read_small_file(const char *path, char *buf, size_t len);

/* The whole of an open file, at most `max` bytes (< 4 GiB), NUL-terminated,
 * in a buffer that grows as it fills (free it); its length in *len, and in
 * *cut whether the file went on past max. NULL with errno set when reading
 * fails (ENOMEM: memory ran short). The descriptor stays open. */
char *read_fd_whole(int fd, size_t max, size_t *len, bool *cut);

/* Exactly len bytes of an open file from offset off into buf (pread, again
 * after EINTR and short reads); false at its end or on an error. */
bool read_fd_at(int fd, uint64_t off, void *buf, size_t len);

/* Opens path for reading as a process whose root is the directory root_fd
 * (and whose working directory is dir_fd, for a relative path) sees it:
 * "..", absolute symlinks and /proc's magic links never lead out of it
 * (openat2's RESOLVE_IN_ROOT; before Linux 5.6, no symlink followed at the
 * last component). Non-blocking, so that a FIFO there cannot hang us. -1
 * with errno as open's. */
int open_in_root(int root_fd, int dir_fd, const char *path);

#endif
