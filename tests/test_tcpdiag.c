/* tcpdiag: a crafted inet_diag reply parsed; who owes whom on a
 * connection; and on real sockets of this process (a listener, a client
 * and the connection it accepted): a request sent and not answered is
 * owed to the client on the accepted side and awaited from the server on
 * the other; once answered, nothing is owed. */
#include "config.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "waits/tcpdiag.h"

/* One SOCK_DIAG_BY_FAMILY message of an IPv4 socket with a tcp_info. */
static size_t
put_msg(char *at, uint32_t seq, uint8_t state, uint16_t sport, uint16_t dport, uint32_t inode,
	uint32_t sent_ms, uint32_t recv_ms)
{
	struct nlmsghdr *h = (struct nlmsghdr *)at;
	struct inet_diag_msg *m = NLMSG_DATA(h);
	memset(m, 0, sizeof *m);
	m->idiag_family = AF_INET;
	m->idiag_state = state;
	m->id.idiag_sport = htons(sport);
	m->id.idiag_dport = htons(dport);
	m->id.idiag_src[0] = htonl(0x7f000001);
	m->id.idiag_dst[0] = htonl(0x0a000007);
	m->idiag_inode = inode;
	struct rtattr *a = (struct rtattr *)(m + 1);
	a->rta_type = INET_DIAG_INFO;
	a->rta_len = (unsigned short)RTA_LENGTH(sizeof(struct tcp_info));
	struct tcp_info ti;
	memset(&ti, 0, sizeof ti);
	ti.tcpi_last_data_sent = sent_ms;
	ti.tcpi_last_data_recv = recv_ms;
	memcpy(RTA_DATA(a), &ti, sizeof ti);
	h->nlmsg_len = (uint32_t)NLMSG_LENGTH(sizeof *m + RTA_ALIGN(a->rta_len));
	h->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	h->nlmsg_seq = seq;
	return NLMSG_ALIGN(h->nlmsg_len);
}

static const struct tcp_conn *
find(const struct tcp_conn *c, size_t n, unsigned long inode)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].inode == inode)
			return &c[i];
	return NULL;
}

static unsigned long
inode_of(int fd)
{
	char path[64], link[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ssize_t k = readlink(path, link, sizeof link - 1);
	unsigned long ino = 0;
	if (k > 0) {
		link[k] = '\0';
		sscanf(link, "socket:[%lu]", &ino);
	}
	return ino;
}

static void
nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int
main(void)
{
	alignas(struct nlmsghdr) char buf[4096];
	size_t len = 0;
	len += put_msg(buf + len, 7, 1, 8000, 51000, 11, 5000, 1200);   /* request in after reply */
	len += put_msg(buf + len, 7, 10, 8000, 0, 12, 0, 0);            /* the listener */
	len += put_msg(buf + len, 6, 1, 1, 2, 13, 0, 0);                /* an older answer's */
	struct nlmsghdr *done = (struct nlmsghdr *)(buf + len);
	done->nlmsg_len = NLMSG_LENGTH(4);
	done->nlmsg_type = NLMSG_DONE;
	done->nlmsg_seq = 7;
	len += NLMSG_ALIGN(done->nlmsg_len);
	struct tcp_conn got[4];
	size_t n = 0;
	int r = tcpdiag_parse(buf, len, 7, got, 4, &n);
	tap_ok(r == -1 && n == 2 && got[0].inode == 11 && got[0].local_port == 8000 &&
	       strcmp(got[0].local, "127.0.0.1:8000") == 0 &&
	       strcmp(got[0].remote, "10.0.0.7:51000") == 0 && got[0].since_sent_ms == 5000 &&
	       got[0].since_recv_ms == 1200 && !got[0].listening && got[1].listening,
	       "a crafted reply: two sockets of this question, the dump's end (%d, %zu: %s -> %s)",
	       r, n, n ? got[0].local : "", n ? got[0].remote : "");
	n = 0;
	tap_ok(tcpdiag_parse(buf, 10, 7, got, 4, &n) == 0 && n == 0,
	       "a cut buffer: nothing, more to come");

	uint32_t ms = 0;
	struct tcp_conn c = {.accepted = true, .since_sent_ms = 5000, .since_recv_ms = 1200};
	tap_ok(tcpdiag_owed(&c, &ms) == TCP_OWES_CLIENT && ms == 1200,
	       "accepted, data in after the last out: a request owed to the client");
	c.since_sent_ms = 100;
	tap_ok(tcpdiag_owed(&c, &ms) == TCP_OWED_NOTHING,
	       "accepted, answered last: the client's turn (keep-alive), nothing owed");
	c = (struct tcp_conn){.accepted = true, .since_sent_ms = 700, .since_recv_ms = 700,
			      .counted = true, .data_in = 1};
	tap_ok(tcpdiag_owed(&c, &ms) == TCP_OWES_CLIENT && ms == 700,
	       "accepted, a request in the connection's first jiffy, never answered: owed");
	c.data_out = 1;
	tap_ok(tcpdiag_owed(&c, &ms) == TCP_OWED_NOTHING,
	       "answered within the same jiffy: nothing owed (equal times say nothing)");
	c = (struct tcp_conn){.since_sent_ms = 800, .since_recv_ms = 9000};
	tap_ok(tcpdiag_owed(&c, &ms) == TCP_AWAITS_SERVER && ms == 800,
	       "made, data out after the last in: awaiting the server");
	c = (struct tcp_conn){.since_sent_ms = 4000, .since_recv_ms = 4000, .counted = true};
	tap_ok(tcpdiag_owed(&c, &ms) == TCP_AWAITS_SERVER && ms == 4000,
	       "made 4 s ago, nothing either way: awaiting a server that speaks first");

	/* real sockets of this process */
	int ls = socket(AF_INET, SOCK_STREAM, 0), cl = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	bind(ls, (struct sockaddr *)&sa, sizeof sa);
	listen(ls, 4);
	getsockname(ls, (struct sockaddr *)&sa, &sl);
	connect(cl, (struct sockaddr *)&sa, sizeof sa);
	int sv = accept(ls, NULL, NULL);
	if (write(cl, "GET /\r\n", 7) != 7 || read(sv, buf, 7) != 7)
		tap_diag("the request did not go through");
	nap_ms(300);
	struct tcp_conn conns[64];
	n = tcpdiag_read(getpid(), conns, 64);
	const struct tcp_conn *srv = find(conns, n, inode_of(sv)), *cli = find(conns, n,
									      inode_of(cl));
	uint32_t ms_srv = 0, ms_cli = 0;
	enum tcp_owed o_srv = srv ? tcpdiag_owed(srv, &ms_srv) : TCP_OWED_NOTHING;
	enum tcp_owed o_cli = cli ? tcpdiag_owed(cli, &ms_cli) : TCP_OWED_NOTHING;
	tap_ok(srv && cli && srv->accepted && !cli->accepted && o_srv == TCP_OWES_CLIENT &&
	       o_cli == TCP_AWAITS_SERVER && ms_srv >= 250 && ms_cli >= 250 && ms_srv < 5000,
	       "a request sent, not answered for 300 ms: owed to the client %u ms, awaited from "
	       "the server %u ms (%zu sockets of ours)", ms_srv, ms_cli, n);
	if (write(sv, "200\r\n", 5) != 5 || read(cl, buf, 5) != 5)
		tap_diag("the answer did not go through");
	nap_ms(50);
	n = tcpdiag_read(getpid(), conns, 64);
	srv = find(conns, n, inode_of(sv));
	cli = find(conns, n, inode_of(cl));
	tap_ok(srv && cli && tcpdiag_owed(srv, &ms) == TCP_OWED_NOTHING &&
	       tcpdiag_owed(cli, &ms) == TCP_OWED_NOTHING, "answered: nothing owed either way");
	close(sv);
	close(cl);
	close(ls);
	return tap_done();
}
