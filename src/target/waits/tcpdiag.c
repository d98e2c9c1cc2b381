#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "waits/owners.h"
#include "waits/sockdiag.h"
#include "waits/tcpdiag.h"
#include "order.h"

/* The kernel's TCP states we ask for (include/net/tcp_states.h). */
enum { STATE_ESTABLISHED = 1, STATE_LISTEN = 10 };

static void
format_addr(int family, const uint32_t *addr, uint16_t port_be, char *out, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	inet_ntop(family, addr, ip, sizeof ip);
	snprintf(out, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, ntohs(port_be));
}

int
tcpdiag_parse(const void *buf, size_t len, uint32_t seq, struct tcp_conn *out, size_t max,
	      size_t *n)
{
	size_t off = 0;
	for (const struct nlmsghdr *h; (h = sockdiag_next(buf, len, &off));) {
		if (h->nlmsg_seq != seq)
			continue;   /* a late answer to an earlier question */
		if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
			return -1;
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
			return 1;
		const struct inet_diag_msg *m = NLMSG_DATA(h);
		if ((m->idiag_family != AF_INET && m->idiag_family != AF_INET6) ||
		    (m->idiag_state != STATE_ESTABLISHED && m->idiag_state != STATE_LISTEN))
			continue;
		if (*n >= max)
			continue;
		struct tcp_conn *c = &out[*n];
		memset(c, 0, sizeof *c);
		c->inode = m->idiag_inode;
		c->listening = m->idiag_state == STATE_LISTEN;
		c->local_port = ntohs(m->id.idiag_sport);
		format_addr(m->idiag_family, m->id.idiag_src, m->id.idiag_sport, c->local,
			    sizeof c->local);
		format_addr(m->idiag_family, m->id.idiag_dst, m->id.idiag_dport, c->remote,
			    sizeof c->remote);
		c->since_sent_ms = c->since_recv_ms = UINT32_MAX;
		int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
		for (const struct rtattr *a = (const struct rtattr *)(m + 1); RTA_OK(a, alen);
		     a = RTA_NEXT(a, alen)) {
			size_t need = offsetof(struct tcp_info, tcpi_last_data_recv) +
				      sizeof(uint32_t);
			size_t counts = offsetof(struct tcp_info, tcpi_data_segs_out) +
					sizeof(uint32_t);
			size_t have = (size_t)RTA_PAYLOAD(a);
			if (a->rta_type != INET_DIAG_INFO || have < need)
				continue;
			struct tcp_info ti;
			memset(&ti, 0, sizeof ti);
			memcpy(&ti, RTA_DATA(a), have < sizeof ti ? have : sizeof ti);
			c->since_sent_ms = ti.tcpi_last_data_sent;
			c->since_recv_ms = ti.tcpi_last_data_recv;
			c->counted = have >= counts;
			c->data_in = ti.tcpi_data_segs_in;
			c->data_out = ti.tcpi_data_segs_out;
		}
		(*n)++;
	}
	return 0;
}

/* What a read keeps of a namespace's sockets: the process's own (mine,
 * sorted), and the ports any socket listens on. */
struct collect {
	const unsigned long *mine;
	size_t nmine;
	struct tcp_conn *out;
	size_t max, n;
	uint8_t listened[65536 / 8];   /* by port */
	/* one reply's sockets (a reply of 32 KiB holds fewer than this) */
	struct tcp_conn batch[32768 / NLMSG_LENGTH(sizeof(struct inet_diag_msg))];
};

static int by_inode(const void *a, const void *b);

/* One reply's sockets. */
static void
keep(struct collect *c, const struct tcp_conn *batch, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (batch[i].listening)
			c->listened[batch[i].local_port / 8] |= (uint8_t)(1u << (batch[i].local_port % 8));
		if (c->n < c->max &&
		    bsearch(&batch[i].inode, c->mine, c->nmine, sizeof *c->mine, by_inode))
			c->out[c->n++] = batch[i];
	}
}

/* Dump one family's established and listening TCP sockets into c. */
static bool
dump_family(int fd, uint8_t family, uint32_t seq, struct collect *c)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg;
	memset(&msg, 0, sizeof msg);
	msg.nlh.nlmsg_len = sizeof msg;
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	msg.nlh.nlmsg_seq = seq;
	msg.req.sdiag_family = family;
	msg.req.sdiag_protocol = IPPROTO_TCP;
	msg.req.idiag_ext = 1u << (INET_DIAG_INFO - 1);
	msg.req.idiag_states = (1u << STATE_ESTABLISHED) | (1u << STATE_LISTEN);
	if (!sockdiag_send(fd, &msg, sizeof msg))
		return false;
	_Alignas(struct nlmsghdr) char buf[32768];   /* per call: readers on two threads */
	for (;;) {
		ssize_t got = sockdiag_recv(fd, buf, sizeof buf);
		if (got <= 0)
			return false;
		size_t n = 0;
		int r = tcpdiag_parse(buf, (size_t)got, seq, c->batch,
				      sizeof c->batch / sizeof c->batch[0], &n);
		keep(c, c->batch, n);
		if (r != 0)
			return r < 0;
	}
}

static int
by_inode(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return x < y ? -1 : x > y;
}

/* The process's socket inodes, sorted: how many (at most max). */
static size_t
own_sockets(pid_t pid, unsigned long *out, size_t max)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		enum owner_kind kind;
		unsigned long inode;
		if (end != e->d_name && !*end && owners_fd_inode(pid, (int)fd, &kind, &inode) &&
		    kind == OWNER_SOCKET)
			out[n++] = inode;
	}
	closedir(d);
	order_sort(out, n, sizeof *out, by_inode);
	return n;
}

#define OWN_MAX 65536    /* sockets of a process */

size_t
tcpdiag_read(pid_t pid, struct tcp_conn *out, size_t max)
{
	struct collect *c = calloc(1, sizeof *c);
	unsigned long *mine = malloc(OWN_MAX * sizeof *mine);
	int fd = c && mine ? sockdiag_socket(pid) : -1;
	size_t n = 0;
	if (fd >= 0) {
		*c = (struct collect){.mine = mine, .nmine = own_sockets(pid, mine, OWN_MAX),
				      .out = out, .max = max};
		if (c->nmine && dump_family(fd, AF_INET, 1, c))
			dump_family(fd, AF_INET6, 2, c);
		/* accepted: its local port is one the namespace listens on */
		for (size_t i = 0; i < c->n; i++)
			out[i].accepted = !out[i].listening &&
					  (c->listened[out[i].local_port / 8] >> (out[i].local_port % 8) & 1);
		n = c->n;
		close(fd);
	}
	free(mine);
	free(c);
	return n;
}

/* Did data last go one way (in: got after sent)? The times are in jiffies
 * (ms at best), and a connection's start sets both: one way with nothing
 * ever the other way counts too; equal times otherwise say nothing. */
static bool
last_way(uint32_t since_got_ms, uint32_t since_gave_ms, bool counted, uint32_t got,
	 uint32_t gave)
{
	if (counted && !got)
		return false;
	return since_got_ms < since_gave_ms || (counted && !gave);
}

enum tcp_owed
tcpdiag_owed(const struct tcp_conn *c, uint32_t *ms)
{
	if (c->listening)
		return TCP_OWED_NOTHING;
	if (c->accepted &&
	    last_way(c->since_recv_ms, c->since_sent_ms, c->counted, c->data_in, c->data_out)) {
		*ms = c->since_recv_ms;
		return TCP_OWES_CLIENT;
	}
	/* made and never answered, asked or not (a server that speaks first) */
	if (!c->accepted &&
	    ((c->counted && !c->data_in) ||
	     last_way(c->since_sent_ms, c->since_recv_ms, c->counted, c->data_out, c->data_in))) {
		*ms = c->since_sent_ms;
		return TCP_AWAITS_SERVER;
	}
	return TCP_OWED_NOTHING;
}
