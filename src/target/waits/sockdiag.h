/* A socket of the kernel's socket diagnostics (NETLINK_SOCK_DIAG) that
 * answers for the sockets of a given process. A netlink socket answers for
 * the network namespace it was made in, so for a process in another
 * namespace (a container) it is made there when we may (setns on a
 * short-lived thread of our own: root or CAP_SYS_ADMIN); otherwise in
 * ours, where the kernel finds none of its sockets and nothing is said.
 * Socket inodes are unique machine-wide: a lookup never finds the wrong
 * one. Replies are awaited at most 200 ms. */
#ifndef TT_SOCKDIAG_H
#define TT_SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The socket's descriptor, or -1 when netlink is not available. */
int sockdiag_socket(pid_t pid);

/* Send a request of len bytes to the kernel: false when it cannot be. */
bool sockdiag_send(int fd, const void *msg, size_t len);

/* The next reply into buf: its length, or <= 0 when none came (an error,
 * or the 200 ms wait ran out); an interrupted wait goes on. */
ssize_t sockdiag_recv(int fd, void *buf, size_t len);

struct nlmsghdr;
/* The next whole message of a reply buf of len bytes from *off on (start
 * at 0), *off moved past it; NULL at the end or at a message whose length
 * does not fit what is left. Replies are the kernel's, but are parsed as
 * if they were anybody's. */
const struct nlmsghdr *sockdiag_next(const void *buf, size_t len, size_t *off);

#endif
