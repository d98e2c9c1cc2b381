/* The kernel's socket diagnostics replies (NETLINK_SOCK_DIAG): TCP
 * connections with their tcp_info (tcpdiag) and a unix socket's peer and
 * name (unixdiag). The question's sequence number is the first message's,
 * so that real replies in the corpus are answers. *
 * parsers: src/target/waits/tcpdiag.c src/target/waits/unixdiag.c src/target/waits/sockdiag.c
 */
#include "config.h"

#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "waits/tcpdiag.h"
#include "waits/unixdiag.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a reply lands in a buffer aligned for its messages */
	if (size > 65536)
		return 0;
	static union {
		struct nlmsghdr h;
		uint8_t bytes[65536];
	} buf;
	memcpy(buf.bytes, data, size);
	uint32_t seq = size >= sizeof buf.h ? buf.h.nlmsg_seq : 0;

	struct tcp_conn conns[8];
	size_t n = 0;
	tcpdiag_parse(buf.bytes, size, seq, conns, 8, &n);
	fuzz_check(n <= 8);
	for (size_t i = 0; i < n; i++) {
		fuzz_check_str(conns[i].local, sizeof conns[i].local);
		fuzz_check_str(conns[i].remote, sizeof conns[i].remote);
		uint32_t ms;
		tcpdiag_owed(&conns[i], &ms);
	}

	/* the unix socket asked about: the first answer's inode */
	unsigned long inode = 0;
	if (size >= NLMSG_LENGTH(16))
		memcpy(&inode, buf.bytes + NLMSG_LENGTH(4), 4);
	unsigned long peer = 0;
	char name[108];
	if (unixdiag_parse(buf.bytes, size, seq, inode, &peer, name, sizeof name) > 0)
		fuzz_check_str(name, sizeof name);
	return 0;
}
