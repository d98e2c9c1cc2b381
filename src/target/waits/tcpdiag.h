/* A process's TCP connections and who owes whom an answer on each, from
 * the socket diagnostics (inet_diag with tcp_info: how long since data
 * last went out and came in) asked in its network namespace (sockdiag.h)
 * and its fd table (which sockets are its own).
 *
 * A connection it accepted (its local port is one a socket of the
 * namespace listens on) whose data last came in after it last sent any
 * holds a request not answered yet; one it made whose data last went out
 * after any came in waits for an answer from the server it called. (The
 * kernel keeps those times in jiffies and sets both when a connection
 * starts: data one way and never the other counts as the last way; equal
 * times otherwise say nothing is owed. A connection made that never got a
 * byte awaits its server, asked or not: some speak first.) Either
 * way it is owed for as long as that has been so. What `watch` asks to
 * tell an asyncio task or greenlet waiting for its client (a keep-alive
 * connection: idle) from one holding a request while waiting on a server
 * (stuck), and to name the other end.
 *
 * Addresses are the kernel's numbers, formatted here: safe to print. */
#ifndef TT_TCPDIAG_H
#define TT_TCPDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tcp_conn {
	unsigned long inode;
	char local[56], remote[56];     /* "127.0.0.1:5000", "[::1]:5432" */
	uint16_t local_port;
	bool listening;                 /* a listening socket, not a connection */
	bool accepted;                  /* the peer called us (set by tcpdiag_read) */
	uint32_t since_sent_ms;         /* since data last went out */
	uint32_t since_recv_ms;         /* since data last came in */
	bool counted;                   /* the kernel counts data segments: */
	uint32_t data_in, data_out;     /* segments with data, in and out */
};

enum tcp_owed {
	TCP_OWED_NOTHING,
	TCP_OWES_CLIENT,                /* accepted: a request not answered yet */
	TCP_AWAITS_SERVER,              /* made: a request the server has not answered */
};

/* The process's established TCP connections and listening sockets (at
 * most max) into out: how many. 0 when it has none, or when netlink or its
 * fd table cannot be read. */
size_t tcpdiag_read(pid_t pid, struct tcp_conn *out, size_t max);

/* What c is owed, and for how long (*ms). Pure. */
enum tcp_owed tcpdiag_owed(const struct tcp_conn *c, uint32_t *ms);

/* One netlink reply buffer of an inet_diag dump (IPv4 or IPv6, with
 * INET_DIAG_INFO): its sockets appended to out[*n..max). -1 at the dump's
 * end (NLMSG_DONE) or on an error message, 0 for more to come, 1 for a
 * malformed buffer. Pure; unit-tested. */
int tcpdiag_parse(const void *buf, size_t len, uint32_t seq, struct tcp_conn *out, size_t max,
		  size_t *n);

#endif
