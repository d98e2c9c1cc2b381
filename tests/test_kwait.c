/* Unit tests for the parsers of the kernel's view of a thread (kwait.c),
 * on fixed /proc text as a 6.x kernel prints it. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "waits/kwait.h"
#include "waits/owners.h"
#include "proc/schedclock.h"
#include "tap.h"
#include "waits/unixdiag.h"

static void
test_syscall(void)
{
	struct kwait_call c;
	tap_ok(kwait_parse_syscall("running\n", &c) && c.state == KWAIT_RUNNING, "running");
	tap_ok(kwait_parse_syscall("-1 0x7ffd5e3f0a48 0x7f917725f2ad\n", &c) &&
	       c.state == KWAIT_USER && c.nr == -1 && c.sp == 0x7ffd5e3f0a48ull &&
	       c.pc == 0x7f917725f2adull,
	       "-1 sp pc: off CPU outside a system call, its registers");
	tap_ok(kwait_parse_syscall("45 0x7 0x7f00c0001000 0x10000 0x0 0x0 0x0 0x7ffd5e3f0a48 "
				   "0x7f917725f2ad\n", &c) &&
	       c.state == KWAIT_SYSCALL && c.nr == 45 && c.args[0] == 7 &&
	       c.args[1] == 0x7f00c0001000ull && c.args[2] == 0x10000 && c.args[5] == 0 &&
	       c.sp == 0x7ffd5e3f0a48ull && c.pc == 0x7f917725f2adull,
	       "recvfrom with its arguments and registers");
	tap_ok(kwait_parse_syscall("202 0x7f9176e5e4a0 0x189 0x0 0x0 0x0 0xffffffff 0x7ffd 0x7f91",
				   &c) && c.nr == 202 && c.args[1] == 0x189 && c.args[5] == 0xffffffffull,
	       "futex without a trailing newline");
	tap_ok(!kwait_parse_syscall("", &c), "empty text is rejected");
	tap_ok(!kwait_parse_syscall("45 0x7 0x1\n", &c), "too few fields are rejected");
	tap_ok(!kwait_parse_syscall("45 0x7 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8\n", &c),
	       "too many fields are rejected");
	tap_ok(!kwait_parse_syscall("45 0xZZ 0x1 0x2 0x3 0x4 0x5 0x6 0x7\n", &c),
	       "a bad hex field is rejected");
	tap_ok(!kwait_parse_syscall("-7 0x1 0x2\n", &c), "a negative number other than -1 is rejected");
	tap_ok(!kwait_parse_syscall("45 0x7 0x10000000000000000 0x2 0x3 0x4 0x5 0x6 0x7\n", &c),
	       "an argument beyond 64 bits is rejected");
	tap_ok(!kwait_parse_syscall("runningX\n", &c), "'runningX' is not running");
}

static void
test_names(void)
{
	tap_ok(strcmp(kwait_syscall_name(45), "recvfrom") == 0 &&
	       strcmp(kwait_syscall_name(202), "futex") == 0 &&
	       strcmp(kwait_syscall_name(230), "clock_nanosleep") == 0 &&
	       strcmp(kwait_syscall_name(61), "wait4") == 0 &&
	       strcmp(kwait_syscall_name(288), "accept4") == 0 &&
	       strcmp(kwait_syscall_name(232), "epoll_wait") == 0 &&
	       strcmp(kwait_syscall_name(270), "pselect6") == 0,
	       "x86-64 names of the blocking calls");
	tap_ok(kwait_syscall_name(99999) == NULL && kwait_syscall_name(-1) == NULL,
	       "unknown numbers have no name");
}

static void
test_sched(void)
{
	uint64_t ns = 0;
	const char *text = "python3 (1234, #threads: 3)\n"
			   "-------------------------------------------------------------------\n"
			   "se.exec_start                                :        351526.545882\n"
			   "se.vruntime                                  :           985.621813\n";
	tap_ok(schedclock_parse_exec_start(text, &ns) && ns == 351526545882ull,
	       "se.exec_start in ms with 6 decimals -> ns");
	tap_ok(schedclock_parse_exec_start("se.exec_start : 12.5\n", &ns) && ns == 12500000ull,
	       "fewer decimals are padded");
	tap_ok(!schedclock_parse_exec_start("se.vruntime : 1.0\n", &ns),
	       "no se.exec_start (no CONFIG_SCHED_DEBUG-like file) is not a time");
	tap_ok(!schedclock_parse_exec_start("xse.exec_start : 1.0\nse.exec_start : abc\n", &ns),
	       "a field only named like it, or a malformed value, is rejected");
}

static void
test_inet(void)
{
	char out[256];
	const char *listen =
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
		"     0        0 44321 1 0000000000000000 100 0 0 10 0\n";
	tap_ok(kwait_parse_inet_line(listen, "tcp", 44321, out, sizeof out) &&
	       strcmp(out, "tcp 127.0.0.1:8080 LISTEN") == 0,
	       "tcp listening socket: %s", out);
	tap_ok(!kwait_parse_inet_line(listen, "tcp", 44322, out, sizeof out),
	       "another inode does not match");
	const char *est =
		"  12: 0100007F:C852 0100007F:1538 01 00000000:00000000 00:00000000 00000000"
		"  1000        0 55667 1 0000000000000000 20 4 30 10 -1\n";
	tap_ok(kwait_parse_inet_line(est, "tcp", 55667, out, sizeof out) &&
	       strcmp(out, "tcp 127.0.0.1:51282 -> 127.0.0.1:5432 ESTABLISHED") == 0,
	       "tcp connection, both ends: %s", out);
	const char *v6 =
		"   1: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:D431 01"
		" 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 20 4 0 10 -1\n";
	tap_ok(kwait_parse_inet_line(v6, "tcp6", 777, out, sizeof out) &&
	       strcmp(out, "tcp6 [::1]:8080 -> [::1]:54321 ESTABLISHED") == 0,
	       "tcp6 loopback: %s", out);
	const char *mapped =
		"   2: 0000000000000000FFFF00000100007F:0050 00000000000000000000000000000000:0000 0A"
		" 00000000:00000000 00:00000000 00000000     0        0 778 1 0000000000000000 20 4 0 10 -1\n";
	tap_ok(kwait_parse_inet_line(mapped, "tcp6", 778, out, sizeof out) &&
	       strcmp(out, "tcp6 [::ffff:127.0.0.1]:80 LISTEN") == 0,
	       "tcp6 v4-mapped listener: %s", out);
	const char *udp =
		" 1234: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000"
		"     0        0 999 2 0000000000000000 0\n";
	tap_ok(kwait_parse_inet_line(udp, "udp", 999, out, sizeof out) &&
	       strcmp(out, "udp 127.0.0.1:53") == 0, "udp unconnected: %s", out);
	const char *udpc =
		" 1235: 0100007F:9C40 0100007F:0035 01 00000000:00000000 00:00000000 00000000"
		"     0        0 1000 2 0000000000000000 0\n";
	tap_ok(kwait_parse_inet_line(udpc, "udp", 1000, out, sizeof out) &&
	       strcmp(out, "udp 127.0.0.1:40000 -> 127.0.0.1:53") == 0, "udp connected: %s", out);
	tap_ok(!kwait_parse_inet_line("  sl  local_address rem_address   st tx_queue rx_queue tr "
				      "tm->when retrnsmt   uid  timeout inode\n", "tcp", 0, out, sizeof out),
	       "the heading is not an entry");
	tap_ok(!kwait_parse_inet_line("   0: 0100007G:1F90 00000000:0000 0A 0:0 0:0 0 0 0 5\n",
				      "tcp", 5, out, sizeof out),
	       "a bad address is rejected");
	tap_ok(!kwait_parse_inet_line("   0: 0100007F:1F90 00000000:0000 0A\n", "tcp", 0, out,
				      sizeof out),
	       "a truncated line is rejected");
	tap_ok(!kwait_parse_inet_line("   0: 0100007F:1FFFFF 00000000:0000 0A 0:0 0:0 0 0 0 5\n",
				      "tcp", 5, out, sizeof out),
	       "a port beyond 65535 is rejected");
}

static void
test_unix(void)
{
	char out[512];
	const char *text =
		"Num       RefCount Protocol Flags    Type St Inode Path\n"
		"0000000000000000: 00000002 00000000 00010000 0001 01 20001 /run/app.sock\n"
		"0000000000000000: 00000003 00000000 00000000 0001 03 20002\n"
		"0000000000000000: 00000002 00000000 00000000 0002 01 20003 @abstract@name\n"
		"0000000000000000: 00000002 00000000 00010000 0001 01 20004 /tmp/evil\x1b[31m\n"
		"INJECTED\n"
		"0000000000000000: 00000003 00000000 00000000 0001 03 20005 /tmp/with space.sock\n"
		"0000000000000000: 00000003 00000000 00000000 0005 03 20006 /tmp/last\n";
	tap_ok(kwait_find_unix(text, 20001, out, sizeof out) &&
	       strcmp(out, "unix /run/app.sock LISTEN") == 0, "listening unix socket: %s", out);
	tap_ok(kwait_find_unix(text, 20002, out, sizeof out) &&
	       strcmp(out, "unix (unnamed)") == 0, "unnamed connected socket: %s", out);
	tap_ok(kwait_find_unix(text, 20003, out, sizeof out) &&
	       strcmp(out, "unix dgram @abstract@name") == 0, "abstract datagram socket: %s", out);
	tap_ok(kwait_find_unix(text, 20004, out, sizeof out) &&
	       strcmp(out, "unix /tmp/evil\x1b[31m\nINJECTED LISTEN") == 0,
	       "a path with a newline continues on the next line (raw, for the caller to escape)");
	tap_ok(kwait_find_unix(text, 20005, out, sizeof out) &&
	       strcmp(out, "unix /tmp/with space.sock") == 0, "a path with a space: %s", out);
	tap_ok(kwait_find_unix(text, 20006, out, sizeof out) &&
	       strcmp(out, "unix seqpacket /tmp/last") == 0, "last line, seqpacket: %s", out);
	tap_ok(!kwait_find_unix(text, 99, out, sizeof out), "a missing inode is not found");
	tap_ok(!kwait_find_unix("0000000000000000: 00000002 00000000\n", 2, out, sizeof out),
	       "a truncated entry is not found");
}

static void
test_epoll(void)
{
	int fds[3];
	const char *text = "pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\n"
			   "tfd:        5 events:       19 data:                5  pos:0 ino:2f8e sdev:8\n"
			   "tfd:        7 events:       19 data:                7  pos:0 ino:2f8f sdev:8\n"
			   "tfd:       12 events:        1 data:                c  pos:0 ino:31 sdev:8\n"
			   "tfd:       13 events:        1 data:                d  pos:0 ino:32 sdev:8\n";
	size_t n = kwait_parse_epoll_fdinfo(text, fds, 3);
	tap_ok(n == 4 && fds[0] == 5 && fds[1] == 7 && fds[2] == 12,
	       "epoll fdinfo: 4 target fds, the first 3 kept");
	tap_ok(kwait_parse_epoll_fdinfo("pos:\t0\nflags:\t02\n", fds, 3) == 0, "an empty epoll set");
	tap_ok(kwait_parse_epoll_fdinfo("tfd: x events: 1\n", fds, 3) == 0, "a malformed tfd line");
}

static void
test_format(void)
{
	struct kwait_info ki = {.blocked = true, .nr = 45, .name = "recvfrom", .fd = 7,
				.object_is_fd = true};
	snprintf(ki.object, sizeof ki.object, "tcp 127.0.0.1:51234 -> 127.0.0.1:5432 ESTABLISHED");
	char buf[1200];
	kwait_format(&ki, 12.34, buf, sizeof buf);
	tap_ok(strcmp(buf, "blocked 12.3 s in recvfrom on tcp 127.0.0.1:51234 -> 127.0.0.1:5432 "
			   "ESTABLISHED") == 0, "long form: %s", buf);
	kwait_format_short(&ki, 75, buf, sizeof buf);
	tap_ok(strcmp(buf, "1m15s recvfrom tcp 127.0.0.1:51234 -> 127.0.0.1:5432 ESTABLISHED") == 0,
	       "short form: %s", buf);
	/* A lower bound (the watcher saw the call, the kernel gave no time). */
	ki.seconds_at_least = true;
	kwait_format(&ki, 2.14, buf, sizeof buf);
	tap_ok(strcmp(buf, "blocked \u2265 2.1 s in recvfrom on tcp 127.0.0.1:51234 -> "
			   "127.0.0.1:5432 ESTABLISHED") == 0, "long form of a lower bound: %s", buf);
	kwait_format_short(&ki, 2.14, buf, sizeof buf);
	tap_ok(strcmp(buf, "\u22652.1s recvfrom tcp 127.0.0.1:51234 -> 127.0.0.1:5432 "
			   "ESTABLISHED") == 0, "short form of a lower bound: %s", buf);
	kwait_format_short(&ki, -1, buf, sizeof buf);
	tap_ok(strncmp(buf, "recvfrom ", 9) == 0, "no duration: no bound sign either: %s", buf);
	ki.seconds_at_least = false;
	struct kwait_info fx = {.blocked = true, .nr = 202, .name = "futex", .fd = -1};
	snprintf(fx.object, sizeof fx.object, "lock or condition wait");
	kwait_format(&fx, -1, buf, sizeof buf);
	tap_ok(strcmp(buf, "blocked in futex (lock or condition wait)") == 0,
	       "no duration, a non-fd object: %s", buf);
}

/* Two ends of one loopback connection (ports 0xA000 and 0x1F90) and a
 * listener, as /proc/net/tcp has them. */
static const char tcp_table[] =
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1 0000000000000000 100 0 0 10 0\n"
	"   1: 0100007F:A000 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 200 1 0000000000000000 20 4 30 10 -1\n"
	"   2: 0100007F:1F90 0100007F:A000 01 00000000:00000000 00:00000000 00000000     0        0 300 1 0000000000000000 20 4 30 10 -1\n"
	"   3: 0100007F:1F90 0100007F:B000 01 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1\n";

static void
test_peers(void)
{
	char local[64], remote[64];
	unsigned long ino = 0;
	const char *row = strchr(tcp_table, '\n') + 1;
	row = strchr(row, '\n') + 1;
	bool parsed = kwait_parse_inet_tokens(row, local, remote, sizeof local, &ino);
	tap_ok(parsed && ino == 200 &&
		       strcmp(local, "0100007F:A000") == 0 && strcmp(remote, "0100007F:1F90") == 0,
	       "inet tokens: local, remote and inode of a row (%s %s %lu)", local, remote, ino);
	tap_ok(!kwait_parse_inet_tokens(tcp_table, local, remote, sizeof local, &ino),
	       "inet tokens: the heading is not a row");
	tap_ok(!kwait_parse_inet_tokens("   1: 0100007F:A000 0100007F:1F90 01 00:00\n", local,
					remote, sizeof local, &ino),
	       "inet tokens: a row cut short has no inode");
	unsigned long other = 1;
	tap_ok(kwait_find_inet_peer(tcp_table, "0100007F:A000", "0100007F:1F90", &other) &&
		       other == 300, "inet peer: the row with the addresses swapped is the other end");
	tap_ok(kwait_find_inet_peer(tcp_table, "0100007F:1F90", "0100007F:A000", &other) &&
		       other == 200, "inet peer: and back");
	tap_ok(!kwait_find_inet_peer(tcp_table, "0100007F:C000", "0A000001:0050", &other),
	       "inet peer: none for a remote host");
	tap_ok(kwait_find_inet_peer(tcp_table, "0100007F:B000", "0100007F:1F90", &other) &&
		       other == 0, "inet peer: a connection no process holds yet has inode 0");
	tap_ok(kwait_find_inet_listener(tcp_table, "0100007F:1F90") == 100,
	       "inet listener: the socket listening on the address");
	tap_ok(kwait_find_inet_listener(tcp_table, "0A000001:1F90") == 0,
	       "inet listener: none on another address with the same port");
	static const char wild[] =
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1 0\n";
	tap_ok(kwait_find_inet_listener(wild, "0A000001:1F90") == 555 &&
		       kwait_find_inet_listener(wild, "0A000001:1F91") == 0,
	       "inet listener: one on the wildcard address takes its port on every address");
	char name[64];
	unixdiag_format_name((const unsigned char *)"/run/app.sock\0", 14, name, sizeof name);
	tap_ok(strcmp(name, "/run/app.sock") == 0, "unix name: a path (with its NUL): %s", name);
	unixdiag_format_name((const unsigned char *)"\0abs\0x", 6, name, sizeof name);
	tap_ok(strcmp(name, "@abs@x") == 0, "unix name: abstract, inner NULs as '@': %s", name);
	unixdiag_format_name((const unsigned char *)"", 0, name, sizeof name);
	tap_ok(name[0] == '\0', "unix name: none");
	unixdiag_format_name((const unsigned char *)"/a/very/long/path", 17, name, 6);
	tap_ok(strcmp(name, "/a/ve") == 0, "unix name: cut to the room there is: %s", name);

	enum owner_kind kind;
	unsigned long inode;
	tap_ok(owners_parse_link("socket:[4321]", &kind, &inode) && kind == OWNER_SOCKET &&
		       inode == 4321, "owners: a socket link");
	tap_ok(owners_parse_link("pipe:[77]", &kind, &inode) && kind == OWNER_PIPE && inode == 77,
	       "owners: a pipe link");
	tap_ok(!owners_parse_link("socket:[12", &kind, &inode) &&
		       !owners_parse_link("socket:[]", &kind, &inode) &&
		       !owners_parse_link("/tmp/socket:[1]", &kind, &inode) &&
		       !owners_parse_link("anon_inode:[eventpoll]", &kind, &inode) &&
		       !owners_parse_link("socket:[99999999999999999999999]", &kind, &inode),
	       "owners: anything else, or a malformed or absurd inode, is refused");

	struct kwait_info ki = {.blocked = true, .nr = 7, .name = "poll", .fd = 5,
				.object_is_fd = true};
	char buf[1200];
	snprintf(ki.object, sizeof ki.object, "unix (unnamed)");
	ki.peer = (struct kwait_peer){.kind = KWAIT_PEER_UNIX, .pid = 24199};
	snprintf(ki.peer.name, sizeof ki.peer.name, "/run/postgresql/.s.PGSQL.5432");
	snprintf(ki.peer.cmd, sizeof ki.peer.cmd, "postgres: 18/main: postgres postgres [local] "
		 "UPDATE waiting");
	kwait_format(&ki, 5.6, buf, sizeof buf);
	tap_ok(strcmp(buf, "blocked 5.6 s in poll on unix (unnamed), peer "
			   "/run/postgresql/.s.PGSQL.5432 pid 24199 (postgres: 18/main: postgres "
			   "postgres [local] UPDATE waiting)") == 0, "long form with a peer: %s", buf);
	kwait_format_short(&ki, 5.6, buf, sizeof buf);
	tap_ok(strcmp(buf, "5.6s poll unix (unnamed) \u2192 /run/postgresql/.s.PGSQL.5432 24199 "
			   "postgres: 18/main: postg\u2026") == 0, "short form with a peer: %s", buf);
	ki.peer.pid = 0;
	kwait_format(&ki, 5.6, buf, sizeof buf);
	tap_ok(strcmp(buf, "blocked 5.6 s in poll on unix (unnamed), peer "
			   "/run/postgresql/.s.PGSQL.5432") == 0, "a peer nobody can be seen holding: %s",
	       buf);
	ki.peer = (struct kwait_peer){.kind = KWAIT_PEER_INET, .name = "127.0.0.1:6379"};
	snprintf(ki.object, sizeof ki.object, "tcp 127.0.0.1:40000 -> 127.0.0.1:6379 ESTABLISHED");
	kwait_format(&ki, 1, buf, sizeof buf);
	tap_ok(strcmp(buf, "blocked 1.0 s in poll on tcp 127.0.0.1:40000 -> 127.0.0.1:6379 "
			   "ESTABLISHED") == 0, "a TCP peer without a process adds nothing: %s", buf);
	ki.peer.pid = 812;
	ki.peer.more = 2;
	snprintf(ki.peer.cmd, sizeof ki.peer.cmd, "redis-server *:6379");
	kwait_format(&ki, 1, buf, sizeof buf);
	tap_ok(strcmp(buf, "blocked 1.0 s in poll on tcp 127.0.0.1:40000 -> 127.0.0.1:6379 "
			   "ESTABLISHED, peer pid 812 (redis-server *:6379) and 2 more") == 0,
	       "a TCP peer's process, and how many more hold it: %s", buf);
	ki.peer.more = 0;
	ki.peer.unaccepted = true;
	kwait_format(&ki, 1, buf, sizeof buf);
	tap_ok(strcmp(buf, "blocked 1.0 s in poll on tcp 127.0.0.1:40000 -> 127.0.0.1:6379 "
			   "ESTABLISHED, peer pid 812 (redis-server *:6379), which has not accepted "
			   "the connection") == 0, "a connection its listener has not accepted: %s", buf);
	ki.peer = (struct kwait_peer){.kind = KWAIT_PEER_PIPE, .pid = 900};
	snprintf(ki.peer.cmd, sizeof ki.peer.cmd, "/usr/bin/celery worker \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	snprintf(ki.object, sizeof ki.object, "pipe");
	kwait_format_short(&ki, 1, buf, sizeof buf);
	tap_ok(strcmp(buf, "1.0s poll pipe \u2192 900 celery worker \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			   "\xc3\xa9\u2026") == 0,
	       "a pipe's other end, its program's directory left out, its command line cut "
	       "between characters: %s", buf);
}

int
main(void)
{
	test_syscall();
	test_names();
	test_sched();
	test_inet();
	test_unix();
	test_epoll();
	test_format();
	test_peers();
	return tap_done();
}
