/* The other end of a unix socket, from the kernel's socket diagnostics
 * (NETLINK_SOCK_DIAG: UNIX_DIAG_PEER, UNIX_DIAG_NAME). /proc/net/unix names
 * sockets but does not say which is connected to which; this does.
 *
 * It asks in the process's network namespace (sockdiag.h).
 *
 * Names are the target's (or its peer's) choice: raw bytes, to be sanitized
 * before display. */
#ifndef TT_UNIXDIAG_H
#define TT_UNIXDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct unixdiag;

/* For the sockets of process pid; NULL when netlink is not available. */
struct unixdiag *unixdiag_open(pid_t pid);
void unixdiag_close(struct unixdiag *d);

/* Unix socket inode's peer (0: none, not connected) and the peer's bound
 * name ("" unnamed; "@name" abstract). False when the kernel does not know
 * the socket (gone, another namespace). */
bool unixdiag_peer(struct unixdiag *d, unsigned long inode, unsigned long *peer, char *peer_name,
		   size_t len);

/* The name of one netlink reply's UNIX_DIAG_NAME payload (sun_path bytes,
 * not NUL-terminated; an abstract name starts with a NUL): "" for none,
 * "@..." for abstract names. Pure; unit-tested. */
void unixdiag_format_name(const unsigned char *path, size_t n, char *out, size_t len);

/* One reply of len bytes (buf aligned as a netlink message) to question
 * seq about socket inode: 1 when it answered (*peer and name filled as
 * unixdiag_peer does), -1 when it said no, 0 when it held no answer to
 * seq (read the next). */
int unixdiag_parse(const void *buf, size_t len, uint32_t seq, unsigned long inode,
		   unsigned long *peer, char *name, size_t namelen);

#endif
