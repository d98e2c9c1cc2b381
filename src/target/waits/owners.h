/* Which processes hold a socket or a pipe: the other end of a wait.
 *
 * The kernel says which socket is the other end of a connection (its
 * inode), not who holds it. Only the processes' fd tables do: every
 * /proc/PID/fd/N that reads "socket:[INODE]" or "pipe:[INODE]". Reading
 * them all costs one readlink per descriptor of the machine, so a map is
 * built by one such scan and kept; an inode the map lacks (or whose holder
 * has let go of it) starts a new scan, at most once per OWNERS_RESCAN_NS,
 * and no more often than 50 times the last scan's duration (so that on a
 * machine with many descriptors scanning stays under 2% of the thread).
 * Processes whose descriptors we may not read (another user's, without
 * privilege) are simply not in it: a caller then says nothing of a pid.
 *
 * Not thread-safe: one map per reading thread, never the sampler's. */
#ifndef TT_OWNERS_H
#define TT_OWNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A full scan at most this often (or less often when scans are slow). */
#define OWNERS_RESCAN_NS 1000000000ull

enum owner_kind { OWNER_SOCKET, OWNER_PIPE };

struct owner {
	pid_t pid;
	int fd;
	bool writes;   /* pipes: the descriptor is open for writing */
};

struct owners;

/* NULL when out of memory. */
struct owners *owners_new(void);
void owners_free(struct owners *o);

/* Up to max holders of inode (of kind), the descriptor (not_pid, not_fd)
 * left out; for pipes, writes 1 keeps the writers only, 0 the readers only
 * (-1: any). Returns how many are stored, 0 when none can be seen. */
size_t owners_find(struct owners *o, enum owner_kind kind, unsigned long inode, pid_t not_pid,
		   int not_fd, int writes, struct owner *out, size_t max);

/* The socket or pipe descriptor fd of pid is: its kind and inode. False
 * for anything else, or a descriptor that cannot be read. */
bool owners_fd_inode(pid_t pid, int fd, enum owner_kind *kind, unsigned long *inode);

/* Is descriptor fd of pid open for writing (O_WRONLY or O_RDWR, from the
 * octal "flags:" line of /proc/PID/fdinfo/FD)? False when unreadable. */
bool owners_open_for_writing(pid_t pid, int fd);
/* The same from an fdinfo file's text. */
bool owners_parse_fdinfo_writes(const char *text);

/* "socket:[123]" or "pipe:[123]": its kind and inode. False for anything else. */
bool owners_parse_link(const char *link, enum owner_kind *kind, unsigned long *inode);

#endif
