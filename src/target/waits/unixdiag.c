#include "config.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "waits/sockdiag.h"
#include "waits/unixdiag.h"

struct unixdiag {
	int fd;
	uint32_t seq;
};

struct unixdiag *
unixdiag_open(pid_t pid)
{
	struct unixdiag *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->fd = sockdiag_socket(pid);
	if (d->fd < 0) {
		free(d);
		return NULL;
	}
	return d;
}

void
unixdiag_close(struct unixdiag *d)
{
	if (!d)
		return;
	close(d->fd);
	free(d);
}

void
unixdiag_format_name(const unsigned char *path, size_t n, char *out, size_t len)
{
	if (len == 0)
		return;
	size_t o = 0;
	size_t i = 0;
	if (n > 0 && path[0] == '\0') {
		if (o + 1 < len)
			out[o++] = '@';
		i = 1;
	} else {
		/* A pathname may come with its terminating NUL. */
		size_t end = 0;
		while (end < n && path[end])
			end++;
		n = end;
	}
	for (; i < n && o + 1 < len; i++)
		out[o++] = path[i] ? (char)path[i] : '@';
	out[o] = '\0';
}

int
unixdiag_parse(const void *buf, size_t len, uint32_t seq, unsigned long inode,
	       unsigned long *peer, char *name, size_t namelen)
{
	size_t off = 0;
	for (const struct nlmsghdr *h; (h = sockdiag_next(buf, len, &off));) {
		if (h->nlmsg_seq != seq)
			continue; /* a late answer to an earlier question */
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
			return -1; /* NLMSG_ERROR: no such socket here */
		const struct unix_diag_msg *m = NLMSG_DATA(h);
		if (m->udiag_ino != inode)
			return -1;
		if (peer)
			*peer = 0;
		if (name && namelen)
			name[0] = '\0';
		int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
		for (const struct rtattr *a = (const struct rtattr *)(m + 1); RTA_OK(a, alen);
		     a = RTA_NEXT(a, alen)) {
			if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= 4 && peer) {
				uint32_t v;
				memcpy(&v, RTA_DATA(a), 4);
				*peer = v;
			} else if (a->rta_type == UNIX_DIAG_NAME && name) {
				unixdiag_format_name(RTA_DATA(a), RTA_PAYLOAD(a), name, namelen);
			}
		}
		return 1;
	}
	return 0;
}

/* Ask for one socket by inode; fill what was asked for. */
static bool
query(struct unixdiag *d, unsigned long inode, unsigned long *peer, char *name, size_t len)
{
	if (inode == 0 || inode > UINT32_MAX)
		return false;
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} msg;
	memset(&msg, 0, sizeof msg);
	msg.nlh.nlmsg_len = sizeof msg;
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST;
	msg.nlh.nlmsg_seq = ++d->seq;
	msg.req.sdiag_family = AF_UNIX;
	msg.req.udiag_states = ~0u;
	msg.req.udiag_ino = (uint32_t)inode;
	msg.req.udiag_show = UDIAG_SHOW_PEER | UDIAG_SHOW_NAME;
	msg.req.udiag_cookie[0] = msg.req.udiag_cookie[1] = ~0u; /* INET_DIAG_NOCOOKIE */
	if (!sockdiag_send(d->fd, &msg, sizeof msg))
		return false;
	union {
		struct nlmsghdr h;
		char bytes[8192];
	} buf;
	for (;;) {
		ssize_t got = sockdiag_recv(d->fd, &buf, sizeof buf);
		if (got <= 0)
			return false;
		int r = unixdiag_parse(&buf, (size_t)got, d->seq, inode, peer, name, len);
		if (r != 0)
			return r > 0;
	}
}

bool
unixdiag_peer(struct unixdiag *d, unsigned long inode, unsigned long *peer, char *peer_name,
	      size_t len)
{
	if (!d || !query(d, inode, peer, NULL, 0))
		return false;
	if (len)
		peer_name[0] = '\0';
	/* An accepted connection carries its listener's name, so the client
	 * side learns the server's path here. */
	if (*peer)
		query(d, *peer, NULL, peer_name, len);
	return true;
}
