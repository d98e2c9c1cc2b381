/* What a thread waits for in the kernel: the system call it is blocked in
 * (/proc/PID/task/TID/syscall), the file descriptor that call waits on and
 * what that descriptor is (/proc/PID/fd, /proc/PID/fdinfo, and the
 * target's own /proc/PID/net tables, so a target in another network
 * namespace resolves too). How long it has not run is schedclock.h's.
 *
 * Everything here is read from /proc about the target and may be chosen by
 * it (file and unix socket paths): callers sanitize the text before it
 * reaches a terminal or a JSON document. Nothing stops or writes the target.
 *
 * The parsers take fixed text and are unit-tested (tests/test_kwait.c). */
#ifndef TT_KWAIT_H
#define TT_KWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mem/remote.h"

#define KWAIT_OBJECT_MAX 512

/* ------------------------------------------------------------------
 * Parsers of /proc text (pure functions)
 * ---------------------------------------------------------------- */

enum kwait_state {
	KWAIT_UNKNOWN = 0,   /* unreadable or malformed */
	KWAIT_RUNNING,       /* "running": on a CPU */
	KWAIT_USER,          /* "-1 sp pc": off CPU, not in a system call */
	KWAIT_SYSCALL,       /* "nr a0..a5 sp pc": in system call nr */
};

struct kwait_call {
	enum kwait_state state;
	long nr;
	uint64_t args[6];
	uint64_t sp, pc;     /* user stack and instruction pointers (KWAIT_USER, KWAIT_SYSCALL) */
};

/* /proc/PID/task/TID/syscall. */
bool kwait_parse_syscall(const char *text, struct kwait_call *out);

/* The x86-64 name of system call nr, or NULL when not in the table. */
const char *kwait_syscall_name(long nr);

/* One line of /proc/net/{tcp,tcp6,udp,udp6}: when its inode is `inode`,
 * write "tcp 127.0.0.1:5000 -> 127.0.0.1:5432 ESTABLISHED" (proto is the
 * table's name: "tcp", "tcp6", "udp", "udp6") and return true. */
bool kwait_parse_inet_line(const char *line, const char *proto, unsigned long inode,
			   char *out, size_t len);

/* The raw address fields and inode of one line of /proc/net/{tcp,udp}[6]
 * ("0100007F:1F90" as the table has them). False for a heading or a
 * malformed line. */
bool kwait_parse_inet_tokens(const char *line, char *local, char *remote, size_t len,
			     unsigned long *inode);

/* In the text of a whole table: the socket whose local address is `remote`
 * and remote address is `local` (the other end of a connection between two
 * sockets of this machine). False when there is none (the other end is on
 * another host, or in another network namespace); *inode 0 when no process
 * holds it yet (it waits in its listener's accept queue). */
bool kwait_find_inet_peer(const char *text, const char *local, const char *remote,
			  unsigned long *inode);

/* The inode of the socket listening on `addr` (or on the wildcard address
 * with its port), 0 when none. */
unsigned long kwait_find_inet_listener(const char *text, const char *addr);

/* The whole text of /proc/net/unix: find the socket with `inode` and write
 * "unix /run/app.sock" (LISTEN when listening; "unix (unnamed)" without a
 * path; an abstract name starts with '@'). A path may hold newlines: a line
 * that does not start a new entry continues the previous entry's path. */
bool kwait_find_unix(const char *text, unsigned long inode, char *out, size_t len);

/* The target fds of an epoll set from /proc/PID/fdinfo/EPFD ("tfd: N ...").
 * Returns how many there are; stores at most max of them. */
size_t kwait_parse_epoll_fdinfo(const char *text, int *fds, size_t max);

/* ------------------------------------------------------------------
 * Reading a live target
 * ---------------------------------------------------------------- */

enum kwait_peer_kind {
	KWAIT_PEER_NONE = 0,
	KWAIT_PEER_UNIX,      /* name: the other end's bound path ("" unnamed) */
	KWAIT_PEER_INET,      /* name: its address, "127.0.0.1:5432" */
	KWAIT_PEER_PIPE,      /* no name */
};

/* The other end of the one socket or pipe a thread waits on. */
struct kwait_peer {
	enum kwait_peer_kind kind;
	char name[256];       /* raw: the peer's choice */
	int pid;              /* a process holding the other end; 0 when none can be seen */
	bool unaccepted;      /* TCP: pid's listener has not accepted the connection yet */
	unsigned more;        /* how many others hold it too */
	char cmd[160];        /* pid's command line, raw, cut */
};

struct kwait_info {
	bool blocked;                 /* in a system call, off CPU */
	long nr;                      /* system call number */
	char name[32];                /* its name, or "syscall N" */
	int fd;                       /* the one fd it waits on, or -1 */
	char object[KWAIT_OBJECT_MAX]; /* what it waits on (raw target text), or "" */
	bool object_is_fd;            /* "in NAME on OBJECT" rather than "in NAME (OBJECT)" */
	double seconds;               /* how long; < 0 when not known */
	const char *seconds_why;      /* when not known, why (a static phrase), or NULL */
	bool seconds_at_least;        /* a lower bound: the caller saw the call start no
					 later than that, the kernel did not say when */
	struct kwait_peer peer;       /* the other end (kind NONE: nothing to name) */
};

/* A reader for one target. It caches the network tables for one pass over
 * the threads (kwait_reader_pass starts a new pass). `mem` reads fd sets
 * of poll/select from the target; NULL leaves them out. `owners` (shared by
 * the readers of one thread) finds the processes at the other ends; NULL
 * names the other ends without their processes. Not thread-safe: one
 * reader per thread, with its own `mem`. */
struct kwait_reader;
struct owners;

struct kwait_reader *kwait_reader_new(pid_t pid, struct remote *mem, struct owners *owners);
void kwait_reader_free(struct kwait_reader *r);
void kwait_reader_pass(struct kwait_reader *r);

/* What thread tid does in the kernel. Returns false (and info->blocked
 * false) for a running thread or one that cannot be read; never fails the
 * caller. info->seconds is left at -1: callers that want it ask
 * schedclock_since_last_ran (schedclock.h). */
bool kwait_read_thread(struct kwait_reader *r, long tid, struct kwait_info *info);

/* "blocked 12.3 s in recvfrom on tcp 127.0.0.1:5 -> 127.0.0.1:6 ESTABLISHED"
 * (raw: sanitize before display). seconds < 0: no duration; with
 * info->seconds_at_least, "blocked ≥ 12.3 s in ...". The other end
 * follows: ", peer /run/app.sock (pid 812: app-server --workers 4)". */
void kwait_format(const struct kwait_info *info, double seconds, char *buf, size_t len);

/* "12s recvfrom tcp 127.0.0.1:5 -> 127.0.0.1:6 ESTABLISHED": the short
 * form for a table column (raw); "≥12s" for a lower bound; the other end
 * as " → /run/app.sock 812 app-server". */
void kwait_format_short(const struct kwait_info *info, double seconds, char *buf, size_t len);

#endif
