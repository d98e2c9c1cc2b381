#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "waits/kwait.h"
#include "waits/owners.h"
#include "readfile.h"
#include "proc/procstat.h"
#include "waits/unixdiag.h"

/* A network table larger than this is not read (a server with hundreds of
 * thousands of connections): its sockets are shown as "socket". */
#define NET_TABLE_MAX (64u << 20)
/* Fds of one poll/select/epoll named in the description. */
#define SET_NAMED 3
/* Fds of one poll/select read from the target. */
#define SET_READ 64

/* ------------------------------------------------------------------
 * The system call table (x86-64)
 * ---------------------------------------------------------------- */

enum call_kind {
	CALL_OTHER = 0,
	CALL_FD,        /* waits on the fd in args[0] */
	CALL_SELECT,    /* select, pselect6: nfds, readfds, writefds, exceptfds */
	CALL_POLL,      /* poll, ppoll: fds, nfds */
	CALL_EPOLL,     /* epoll_wait & co: epfd */
	CALL_FUTEX,
	CALL_SLEEP,
	CALL_WAIT4,     /* pid in args[0] */
	CALL_WAITID,    /* idtype, id */
	CALL_SIGNAL,    /* pause, sigsuspend, sigtimedwait */
	CALL_PATH,      /* open/openat: the path (a FIFO's open blocks) */
};

struct call_def {
	short nr;
	enum call_kind kind;
	const char *name;
};

#if defined(__x86_64__)
static const struct call_def calls[] = {
	{0, CALL_FD, "read"}, {1, CALL_FD, "write"}, {2, CALL_PATH, "open"},
	{3, CALL_FD, "close"}, {7, CALL_POLL, "poll"}, {9, CALL_OTHER, "mmap"},
	{17, CALL_FD, "pread64"}, {18, CALL_FD, "pwrite64"}, {19, CALL_FD, "readv"},
	{20, CALL_FD, "writev"}, {23, CALL_SELECT, "select"}, {24, CALL_OTHER, "sched_yield"},
	{34, CALL_SIGNAL, "pause"}, {35, CALL_SLEEP, "nanosleep"}, {40, CALL_FD, "sendfile"},
	{42, CALL_FD, "connect"}, {43, CALL_FD, "accept"}, {44, CALL_FD, "sendto"},
	{45, CALL_FD, "recvfrom"}, {46, CALL_FD, "sendmsg"}, {47, CALL_FD, "recvmsg"},
	{48, CALL_FD, "shutdown"}, {56, CALL_OTHER, "clone"}, {57, CALL_OTHER, "fork"},
	{59, CALL_OTHER, "execve"}, {60, CALL_OTHER, "exit"}, {61, CALL_WAIT4, "wait4"},
	{62, CALL_OTHER, "kill"}, {72, CALL_FD, "fcntl"}, {73, CALL_FD, "flock"},
	{74, CALL_FD, "fsync"}, {75, CALL_FD, "fdatasync"}, {76, CALL_OTHER, "truncate"},
	{77, CALL_FD, "ftruncate"}, {78, CALL_FD, "getdents"}, {87, CALL_OTHER, "unlink"},
	{101, CALL_OTHER, "ptrace"}, {128, CALL_SIGNAL, "rt_sigtimedwait"},
	{130, CALL_SIGNAL, "rt_sigsuspend"}, {162, CALL_OTHER, "sync"},
	{202, CALL_FUTEX, "futex"}, {217, CALL_FD, "getdents64"},
	{219, CALL_OTHER, "restart_syscall"}, {230, CALL_SLEEP, "clock_nanosleep"},
	{231, CALL_OTHER, "exit_group"}, {232, CALL_EPOLL, "epoll_wait"},
	{233, CALL_FD, "epoll_ctl"}, {247, CALL_WAITID, "waitid"}, {257, CALL_PATH, "openat"},
	{270, CALL_SELECT, "pselect6"}, {271, CALL_POLL, "ppoll"}, {275, CALL_FD, "splice"},
	{277, CALL_FD, "sync_file_range"}, {281, CALL_EPOLL, "epoll_pwait"},
	{285, CALL_FD, "fallocate"}, {288, CALL_FD, "accept4"}, {295, CALL_FD, "preadv"},
	{296, CALL_FD, "pwritev"}, {299, CALL_FD, "recvmmsg"}, {306, CALL_FD, "syncfs"},
	{307, CALL_FD, "sendmmsg"}, {326, CALL_FD, "copy_file_range"}, {327, CALL_FD, "preadv2"},
	{328, CALL_FD, "pwritev2"}, {426, CALL_FD, "io_uring_enter"}, {437, CALL_PATH, "openat2"},
	{441, CALL_EPOLL, "epoll_pwait2"}, {449, CALL_FUTEX, "futex_waitv"},
	{455, CALL_FUTEX, "futex_wait"},
};
#else
static const struct call_def calls[] = {{-1, CALL_OTHER, NULL}};
#endif

static const struct call_def *
find_call(long nr)
{
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		if (calls[i].nr == nr && calls[i].name)
			return &calls[i];
	return NULL;
}

const char *
kwait_syscall_name(long nr)
{
	const struct call_def *c = find_call(nr);
	return c ? c->name : NULL;
}

/* ------------------------------------------------------------------
 * Parsers
 * ---------------------------------------------------------------- */

static const char *
skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A number in the given base ending at a space, tab, newline or NUL. */
static bool
parse_number(const char **pp, int base, uint64_t *out, bool allow_minus)
{
	const char *p = skip_spaces(*pp);
	bool neg = false;
	if (allow_minus && *p == '-') {
		neg = true;
		p++;
	}
	if (base == 16 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t v = 0;
	const char *start = p;
	for (;; p++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (p == start || (*p && *p != ' ' && *p != '\t' && *p != '\n'))
		return false;
	*out = neg ? (uint64_t)0 - v : v;
	*pp = p;
	return true;
}

bool
kwait_parse_syscall(const char *text, struct kwait_call *out)
{
	memset(out, 0, sizeof *out);
	out->nr = -1;
	const char *p = skip_spaces(text);
	if (strncmp(p, "running", 7) == 0 && (p[7] == '\0' || p[7] == '\n')) {
		out->state = KWAIT_RUNNING;
		return true;
	}
	uint64_t nr;
	if (!parse_number(&p, 10, &nr, true))
		return false;
	if ((int64_t)nr == -1) {
		/* "-1 sp pc": off CPU but not in a system call. */
		out->state = KWAIT_USER;
		if (parse_number(&p, 16, &out->sp, false))
			parse_number(&p, 16, &out->pc, false);
		return true;
	}
	if ((int64_t)nr < 0 || nr > 100000)
		return false;
	/* nr, six arguments, then the stack and instruction pointers. */
	uint64_t v[8];
	for (int i = 0; i < 8; i++)
		if (!parse_number(&p, 16, &v[i], false))
			return false;
	p = skip_spaces(p);
	if (*p && *p != '\n')
		return false;
	out->state = KWAIT_SYSCALL;
	out->nr = (long)nr;
	memcpy(out->args, v, sizeof out->args);
	out->sp = v[6];
	out->pc = v[7];
	return true;
}

static const char *const tcp_states[] = {
	"?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT",
	"CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING", "NEW_SYN_RECV",
};

/* "0100007F:1F90" or 32 hex digits and a port, as the kernel prints the
 * address words in host byte order. */
static bool
parse_inet_addr(const char **pp, bool v6, char *out, size_t len)
{
	const char *p = skip_spaces(*pp);
	size_t ndig = v6 ? 32 : 8;
	unsigned char bytes[16];
	for (size_t w = 0; w < ndig / 8; w++) {
		uint32_t word = 0;
		for (size_t i = 0; i < 8; i++, p++) {
			int c = (unsigned char)*p;
			if (!isxdigit(c))
				return false;
			word = word << 4 | (uint32_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
		}
		memcpy(bytes + 4 * w, &word, 4);
	}
	if (*p != ':')
		return false;
	p++;
	uint64_t port;
	if (!parse_number(&p, 16, &port, false) || port > 65535)
		return false;
	char addr[INET6_ADDRSTRLEN];
	if (!inet_ntop(v6 ? AF_INET6 : AF_INET, bytes, addr, sizeof addr))
		return false;
	if (v6)
		snprintf(out, len, "[%s]:%u", addr, (unsigned)port);
	else
		snprintf(out, len, "%s:%u", addr, (unsigned)port);
	*pp = p;
	return true;
}

bool
kwait_parse_inet_line(const char *line, const char *proto, unsigned long inode, char *out,
		      size_t len)
{
	bool v6 = proto[strlen(proto) - 1] == '6';
	bool tcp = proto[0] == 't';
	const char *p = skip_spaces(line);
	/* "sl:" */
	uint64_t v;
	if (!parse_number(&p, 10, &v, false)) {
		/* the slot is followed by ':' directly */
		const char *q = p;
		while (isdigit((unsigned char)*q))
			q++;
		if (q == p || *q != ':')
			return false;
		p = q + 1;
	}
	char local[64], remote[64];
	uint64_t st;
	if (!parse_inet_addr(&p, v6, local, sizeof local) ||
	    !parse_inet_addr(&p, v6, remote, sizeof remote) || !parse_number(&p, 16, &st, false))
		return false;
	/* tx:rx  tr:when  retrnsmt  uid  timeout  inode */
	for (int field = 0; field < 5; field++) {
		p = skip_spaces(p);
		if (!*p || *p == '\n')
			return false;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
	}
	uint64_t ino;
	if (!parse_number(&p, 10, &ino, false) || ino != inode)
		return false;
	const char *family = tcp ? (v6 ? "tcp6" : "tcp") : (v6 ? "udp6" : "udp");
	bool connected = strcmp(remote, "0.0.0.0:0") != 0 && strcmp(remote, "[::]:0") != 0;
	if (tcp) {
		const char *state = st < sizeof tcp_states / sizeof tcp_states[0] ? tcp_states[st] : "?";
		if (st == 10 || !connected)
			snprintf(out, len, "%s %s %s", family, local, state);
		else
			snprintf(out, len, "%s %s -> %s %s", family, local, remote, state);
	} else if (connected) {
		snprintf(out, len, "%s %s -> %s", family, local, remote);
	} else {
		snprintf(out, len, "%s %s", family, local);
	}
	return true;
}

/* The next whitespace-separated field of a line into out; false at its end. */
static bool
next_field(const char **pp, char *out, size_t len)
{
	const char *p = skip_spaces(*pp);
	size_t n = 0;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
		if (n + 1 < len)
			out[n++] = *p;
		p++;
	}
	if (len)
		out[n] = '\0';
	*pp = p;
	return n > 0;
}

bool
kwait_parse_inet_tokens(const char *line, char *local, char *remote, size_t len,
			unsigned long *inode)
{
	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
	char field[64];
	const char *p = line;
	if (!next_field(&p, field, sizeof field) || field[strlen(field) - 1] != ':' ||
	    !next_field(&p, local, len) || !next_field(&p, remote, len) ||
	    !strchr(local, ':') || !strchr(remote, ':'))
		return false;
	/* st, tx:rx, tr:when, retrnsmt, uid, timeout, then the inode */
	for (int i = 0; i < 7; i++)
		if (!next_field(&p, field, sizeof field))
			return false;
	const char *q = field;
	uint64_t ino;
	if (!parse_number(&q, 10, &ino, false))
		return false;
	*inode = (unsigned long)ino;
	return true;
}

/* Each row of a table (after its heading): its tokens and inode. */
#define FOR_EACH_INET_ROW(text, line) \
	for (const char *line = strchr(text, '\n'); line && *++line; line = strchr(line, '\n'))

bool
kwait_find_inet_peer(const char *text, const char *local, const char *remote,
		     unsigned long *inode)
{
	FOR_EACH_INET_ROW(text, line) {
		char l[64], r[64];
		unsigned long ino;
		if (kwait_parse_inet_tokens(line, l, r, sizeof l, &ino) && strcmp(l, remote) == 0 &&
		    strcmp(r, local) == 0) {
			*inode = ino;
			return true;
		}
	}
	return false;
}

unsigned long
kwait_find_inet_listener(const char *text, const char *addr)
{
	const char *port = strrchr(addr, ':');
	if (!port)
		return 0;
	FOR_EACH_INET_ROW(text, line) {
		char l[64], r[64];
		unsigned long ino;
		if (!kwait_parse_inet_tokens(line, l, r, sizeof l, &ino) || ino == 0 ||
		    strspn(r, "0:") != strlen(r))
			continue;
		const char *lport = strrchr(l, ':');
		bool wildcard = (size_t)(lport - l) == strspn(l, "0");
		if (strcmp(l, addr) == 0 || (wildcard && strcmp(lport, port) == 0))
			return ino;
	}
	return 0;
}

/* Does this line start an entry of /proc/net/unix ("<hex>: ")? */
static bool
unix_entry_start(const char *line)
{
	const char *p = line;
	while (isxdigit((unsigned char)*p))
		p++;
	return p - line >= 8 && p[0] == ':' && p[1] == ' ';
}

bool
kwait_find_unix(const char *text, unsigned long inode, char *out, size_t len)
{
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *next = eol ? eol + 1 : NULL;
		if (!unix_entry_start(line)) {
			line = next;
			continue;
		}
		/* Num: RefCount Protocol Flags Type St Inode [Path] */
		const char *p = strchr(line, ':') + 1;
		uint64_t refcnt, protocol, flags, type, st, ino;
		if (!parse_number(&p, 16, &refcnt, false) || !parse_number(&p, 16, &protocol, false) ||
		    !parse_number(&p, 16, &flags, false) || !parse_number(&p, 16, &type, false) ||
		    !parse_number(&p, 16, &st, false) || !parse_number(&p, 10, &ino, false) ||
		    ino != inode) {
			line = next;
			continue;
		}
		char path[KWAIT_OBJECT_MAX];
		size_t n = 0;
		if (*p == ' ') {
			p++;
			/* The path runs to the end of the line, and on over lines
			 * that do not start an entry (a path holding newlines). */
			for (;;) {
				const char *end = strchr(p, '\n');
				size_t take = end ? (size_t)(end - p) : strlen(p);
				if (n + take >= sizeof path)
					take = sizeof path - 1 - n;
				memcpy(path + n, p, take);
				n += take;
				if (!end || !end[1] || unix_entry_start(end + 1) || n + 1 >= sizeof path)
					break;
				path[n++] = '\n';
				p = end + 1;
			}
		}
		path[n] = '\0';
		const char *kind = type == 2 ? "unix dgram" : type == 5 ? "unix seqpacket" : "unix";
		bool listening = flags & 0x10000; /* __SO_ACCEPTCON */
		if (n)
			snprintf(out, len, "%s %s%s", kind, path, listening ? " LISTEN" : "");
		else
			snprintf(out, len, "%s (unnamed)%s", kind, listening ? " LISTEN" : "");
		return true;
	}
	return false;
}

size_t
kwait_parse_epoll_fdinfo(const char *text, int *fds, size_t max)
{
	size_t n = 0;
	for (const char *line = text; line && *line;) {
		if (strncmp(line, "tfd:", 4) == 0) {
			const char *p = line + 4;
			uint64_t fd;
			if (parse_number(&p, 10, &fd, false) && fd < 1u << 30) {
				if (n < max)
					fds[n] = (int)fd;
				n++;
			}
		}
		const char *eol = strchr(line, '\n');
		line = eol ? eol + 1 : NULL;
	}
	return n;
}

/* ------------------------------------------------------------------
 * Reading the live target
 * ---------------------------------------------------------------- */

enum { NET_TCP, NET_TCP6, NET_UDP, NET_UDP6, NET_UNIX, NET_COUNT };
static const char *const net_names[NET_COUNT] = {"tcp", "tcp6", "udp", "udp6", "unix"};

struct net_table {
	bool loaded;
	char *text;       /* NULL: unreadable */
};

struct kwait_reader {
	pid_t pid;
	struct remote *mem;
	struct net_table net[NET_COUNT];
	struct owners *owners;       /* not ours; NULL: no processes named */
	struct unixdiag *diag;       /* opened on first need */
	bool diag_tried;
};

struct kwait_reader *
kwait_reader_new(pid_t pid, struct remote *mem, struct owners *owners)
{
	struct kwait_reader *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->pid = pid;
	r->mem = mem;
	r->owners = owners;
	return r;
}

void
kwait_reader_pass(struct kwait_reader *r)
{
	for (int i = 0; i < NET_COUNT; i++) {
		free(r->net[i].text);
		r->net[i].text = NULL;
		r->net[i].loaded = false;
	}
}

void
kwait_reader_free(struct kwait_reader *r)
{
	if (!r)
		return;
	kwait_reader_pass(r);
	unixdiag_close(r->diag);
	free(r);
}

/* A whole /proc file of any size (up to NET_TABLE_MAX), NUL-terminated. */
static char *
read_whole(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t n;
	bool cut;
	char *buf = read_fd_whole(fd, NET_TABLE_MAX, &n, &cut);
	if (buf && cut) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	return buf;
}

static const char *
net_table(struct kwait_reader *r, int which)
{
	struct net_table *t = &r->net[which];
	if (!t->loaded) {
		/* The target's own view: its network namespace, not ours. */
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/net/%s", (int)r->pid, net_names[which]);
		t->text = read_whole(path);
		t->loaded = true;
	}
	return t->text;
}

static bool
find_socket(struct kwait_reader *r, unsigned long inode, char *out, size_t len)
{
	for (int which = NET_TCP; which <= NET_UDP6; which++) {
		const char *text = net_table(r, which);
		if (!text)
			continue;
		const char *line = strchr(text, '\n'); /* skip the heading */
		while (line && *++line) {
			if (kwait_parse_inet_line(line, net_names[which], inode, out, len))
				return true;
			line = strchr(line, '\n');
		}
	}
	const char *text = net_table(r, NET_UNIX);
	return text && kwait_find_unix(text, inode, out, len);
}

static void describe_fd(struct kwait_reader *r, int fd, bool inner, char *out, size_t len);

/* "<before><s><after>" into out, cut to fit (descriptions are cut, not refused). */
static void
wrap(char *out, size_t len, const char *before, const char *s, const char *after)
{
	const char *parts[3] = {before, s, after};
	size_t o = 0;
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(parts[i]);
		if (o + n >= len)
			n = len - 1 - o;
		memcpy(out + o, parts[i], n);
		o += n;
	}
	out[o] = '\0';
}

static void
describe_set(struct kwait_reader *r, const int *fds, size_t n, size_t total, char *out,
	     size_t len)
{
	size_t o = (size_t)snprintf(out, len, "%zu fds: ", total);
	for (size_t i = 0; i < n && i < SET_NAMED && o < len; i++) {
		char one[KWAIT_OBJECT_MAX];
		describe_fd(r, fds[i], true, one, sizeof one);
		o += (size_t)snprintf(out + o, len - o, "%s%s", i ? ", " : "", one);
	}
	if (total > SET_NAMED && o < len)
		snprintf(out + o, len - o, ", ...");
}

static void
describe_fd(struct kwait_reader *r, int fd, bool inner, char *out, size_t len)
{
	char path[64], link[KWAIT_OBJECT_MAX];
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)r->pid, fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	if (n <= 0) {
		snprintf(out, len, "fd %d", fd);
		return;
	}
	link[n] = '\0';
	enum owner_kind kind;
	unsigned long inode;
	if (owners_parse_link(link, &kind, &inode)) {
		if (kind == OWNER_PIPE)
			snprintf(out, len, "pipe");
		else if (!find_socket(r, inode, out, len))
			snprintf(out, len, "socket");
		return;
	}
	if (strcmp(link, "anon_inode:[eventpoll]") == 0) {
		int fds[SET_NAMED];
		size_t total = 0;
		if (!inner) {
			char info[8192];
			snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)r->pid, fd);
			if (read_small_file(path, info, sizeof info) > 0)
				total = kwait_parse_epoll_fdinfo(info, fds, SET_NAMED);
		}
		if (total) {
			char set[KWAIT_OBJECT_MAX];
			describe_set(r, fds, total < SET_NAMED ? total : SET_NAMED, total, set, sizeof set);
			wrap(out, len, "epoll (", set, ")");
		} else {
			snprintf(out, len, "epoll");
		}
		return;
	}
	if (strncmp(link, "anon_inode:", 11) == 0) {
		/* anon_inode:[eventfd], anon_inode:inotify, ... */
		const char *what = link + 11;
		size_t wl = strlen(what);
		if (wl >= 2 && what[0] == '[' && what[wl - 1] == ']')
			snprintf(out, len, "%.*s", (int)(wl - 2), what + 1);
		else
			snprintf(out, len, "%s", what);
		return;
	}
	struct stat st;
	if (link[0] == '/' && stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
		wrap(out, len, "fifo ", link, "");
	else
		snprintf(out, len, "%s", link);
}

/* Fds set in a select() set: nfds bits at addr in the target. */
static size_t
select_fds(struct kwait_reader *r, uint64_t nfds, uint64_t addr, int *fds, size_t n, size_t max)
{
	if (!addr || !r->mem)
		return n;
	unsigned char bits[128];
	size_t bytes = (size_t)((nfds > 1024 ? 1024 : nfds) + 7) / 8;
	struct tt_error err;
	if (bytes == 0 || remote_read(r->mem, addr, bits, bytes, &err) != TT_OK)
		return n;
	for (size_t fd = 0; fd < bytes * 8 && fd < nfds && n < max; fd++) {
		if (!(bits[fd / 8] & (1u << (fd % 8))))
			continue;
		bool dup = false;
		for (size_t i = 0; i < n; i++)
			dup |= fds[i] == (int)fd;
		if (!dup)
			fds[n++] = (int)fd;
	}
	return n;
}

/* Fds of a poll() array in the target; -1 when it cannot be read. */
static long
poll_fds(struct kwait_reader *r, uint64_t addr, uint64_t nfds, int *fds, size_t max)
{
	if (!r->mem || !addr)
		return -1;
	struct { int32_t fd; int16_t events, revents; } pfd[SET_READ];
	size_t want = nfds < SET_READ ? (size_t)nfds : SET_READ;
	struct tt_error err;
	if (want == 0)
		return 0;
	if (remote_read(r->mem, addr, pfd, want * sizeof pfd[0], &err) != TT_OK)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < want && n < max; i++)
		if (pfd[i].fd >= 0)
			fds[n++] = pfd[i].fd;
	return (long)n;
}

/* The process holding the other end (inode of kind), not the waiting
 * descriptor itself; for a pipe, one holding the other direction. */
static void
peer_process(struct kwait_reader *r, enum owner_kind kind, unsigned long inode, int fd,
	     int writes, struct kwait_peer *peer)
{
	if (!r->owners)
		return;
	struct owner found[8];
	size_t n = owners_find(r->owners, kind, inode, r->pid, fd, writes, found, 8);
	if (n == 0)
		return;
	/* Another process is the more telling answer than the target itself. */
	size_t pick = 0;
	for (size_t i = 0; i < n; i++)
		if (found[i].pid != r->pid) {
			pick = i;
			break;
		}
	peer->pid = (int)found[pick].pid;
	unsigned others = 0;
	for (size_t i = 0; i < n; i++)
		others += found[i].pid != found[pick].pid;
	peer->more = others;
	procstat_cmdline(found[pick].pid, peer->cmd, sizeof peer->cmd);
}

/* A TCP socket's other end on this machine: the row of the same table with
 * the addresses swapped. */
static bool
inet_peer(struct kwait_reader *r, unsigned long inode, struct kwait_peer *peer)
{
	for (int which = NET_TCP; which <= NET_TCP6; which++) {
		const char *text = net_table(r, which);
		if (!text)
			continue;
		const char *line = strchr(text, '\n');
		while (line && *++line) {
			char local[64], remote[64];
			unsigned long ino;
			if (kwait_parse_inet_tokens(line, local, remote, sizeof local, &ino) &&
			    ino == inode) {
				const char *p = remote;
				if (strspn(remote, "0:") == strlen(remote) ||
				    !parse_inet_addr(&p, which == NET_TCP6, peer->name, sizeof peer->name))
					return false; /* listening: no other end */
				peer->kind = KWAIT_PEER_INET;
				unsigned long other;
				if (!kwait_find_inet_peer(text, local, remote, &other))
					return true; /* another host, or another namespace */
				if (other == 0) {
					/* Still in the accept queue: its listener's process. */
					other = kwait_find_inet_listener(text, remote);
					peer->unaccepted = other != 0;
				}
				if (other)
					peer_process(r, OWNER_SOCKET, other, -1, -1, peer);
				if (!peer->pid)
					peer->unaccepted = false;
				return true;
			}
			line = strchr(line, '\n');
		}
	}
	return false;
}

/* The other end of the one descriptor a thread waits on: a connected
 * socket's peer or a pipe's other side, and who holds it. */
static void
find_peer(struct kwait_reader *r, int fd, struct kwait_peer *peer)
{
	memset(peer, 0, sizeof *peer);
	enum owner_kind kind;
	unsigned long inode;
	if (!owners_fd_inode(r->pid, fd, &kind, &inode))
		return;
	if (kind == OWNER_PIPE) {
		/* Reading waits on the writers, writing on the readers. */
		peer->kind = KWAIT_PEER_PIPE;
		peer_process(r, OWNER_PIPE, inode, fd, owners_open_for_writing(r->pid, fd) ? 0 : 1,
			     peer);
		return;
	}
	if (inet_peer(r, inode, peer))
		return;
	if (!r->diag_tried) {
		r->diag = unixdiag_open(r->pid);
		r->diag_tried = true;
	}
	unsigned long other = 0;
	if (!unixdiag_peer(r->diag, inode, &other, peer->name, sizeof peer->name) || other == 0) {
		peer->name[0] = '\0';
		return;
	}
	peer->kind = KWAIT_PEER_UNIX;
	peer_process(r, OWNER_SOCKET, other, -1, -1, peer);
}

static void
describe_fd_list(struct kwait_reader *r, struct kwait_info *info, const int *fds, size_t n)
{
	if (n == 1) {
		info->fd = fds[0];
		describe_fd(r, fds[0], false, info->object, sizeof info->object);
		find_peer(r, info->fd, &info->peer);
	} else if (n > 1) {
		describe_set(r, fds, n, n, info->object, sizeof info->object);
	}
	info->object_is_fd = true;
}

static void
describe_call(struct kwait_reader *r, const struct kwait_call *c, struct kwait_info *info)
{
	const struct call_def *def = find_call(c->nr);
	enum call_kind kind = def ? def->kind : CALL_OTHER;
	int fds[SET_READ];
	switch (kind) {
	case CALL_FD:
	case CALL_EPOLL:
		if ((int64_t)c->args[0] >= 0 && c->args[0] < 1u << 30) {
			info->fd = (int)c->args[0];
			describe_fd(r, info->fd, false, info->object, sizeof info->object);
			info->object_is_fd = true;
			if (kind == CALL_FD)
				find_peer(r, info->fd, &info->peer);
		}
		break;
	case CALL_SELECT: {
		size_t n = select_fds(r, c->args[0], c->args[1], fds, 0, SET_READ);
		n = select_fds(r, c->args[0], c->args[2], fds, n, SET_READ);
		if (n)
			describe_fd_list(r, info, fds, n);
		else if (r->mem && !c->args[1] && !c->args[2] && !c->args[3])
			snprintf(info->object, sizeof info->object, "sleep");
		break;
	}
	case CALL_POLL: {
		long n = poll_fds(r, c->args[0], c->args[1], fds, SET_READ);
		if (n > 0)
			describe_fd_list(r, info, fds, (size_t)n);
		else if (n == 0)
			snprintf(info->object, sizeof info->object, "sleep");
		break;
	}
	case CALL_FUTEX:
		snprintf(info->object, sizeof info->object, "lock or condition wait");
		break;
	case CALL_SLEEP:
		snprintf(info->object, sizeof info->object, "sleep");
		break;
	case CALL_WAIT4: {
		int pid = (int)(int32_t)c->args[0];
		if (pid > 0)
			snprintf(info->object, sizeof info->object, "child %d", pid);
		else if (pid == -1)
			snprintf(info->object, sizeof info->object, "any child");
		else if (pid == 0)
			snprintf(info->object, sizeof info->object, "any child in its process group");
		else
			snprintf(info->object, sizeof info->object, "any child in process group %d", -pid);
		break;
	}
	case CALL_WAITID: {
		int idtype = (int)c->args[0], id = (int)(int32_t)c->args[1];
		if (idtype == 1)
			snprintf(info->object, sizeof info->object, "child %d", id);
		else if (idtype == 2)
			snprintf(info->object, sizeof info->object, "any child in process group %d", id);
		else if (idtype == 3)
			snprintf(info->object, sizeof info->object, "child of pidfd %d", id);
		else
			snprintf(info->object, sizeof info->object, "any child");
		break;
	}
	case CALL_SIGNAL:
		snprintf(info->object, sizeof info->object, "signal wait");
		break;
	case CALL_PATH: {
		/* open blocks on a FIFO without a peer: name the path. */
		uint64_t addr = c->nr == 2 ? c->args[0] : c->args[1];
		char path[256];
		struct tt_error err;
		if (r->mem && addr && remote_read(r->mem, addr, path, sizeof path, &err) == TT_OK &&
		    memchr(path, '\0', sizeof path))
			snprintf(info->object, sizeof info->object, "%s", path);
		break;
	}
	case CALL_OTHER:
		break;
	}
}

bool
kwait_read_thread(struct kwait_reader *r, long tid, struct kwait_info *info)
{
	memset(info, 0, sizeof *info);
	info->fd = -1;
	info->nr = -1;
	info->seconds = -1;
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/syscall", (int)r->pid, tid);
	struct kwait_call call;
	if (read_small_file(path, buf, sizeof buf) <= 0 || !kwait_parse_syscall(buf, &call) ||
	    call.state != KWAIT_SYSCALL)
		return false;
	/* Runnable but preempted inside a call is not waiting for anything. */
	if (procstat_cpu_state(r->pid, tid) == RUN_STATE_RUNNING)
		return false;
	info->blocked = true;
	info->nr = call.nr;
	const char *name = kwait_syscall_name(call.nr);
	if (name)
		snprintf(info->name, sizeof info->name, "%s", name);
	else
		snprintf(info->name, sizeof info->name, "syscall %ld", call.nr);
	describe_call(r, &call, info);
	return true;
}

/* At most max bytes of s, cut at a character boundary (UTF-8). */
static int
utf8_prefix(const char *s, int max)
{
	int n = (int)strnlen(s, (size_t)max + 1);
	if (n <= max)
		return n;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

/* ", peer /run/app.sock pid 812 (app-server --workers 4)" or "". */
static void
format_peer(const struct kwait_peer *p, bool short_form, char *out, size_t len)
{
	out[0] = '\0';
	if (p->kind == KWAIT_PEER_NONE || len == 0)
		return;
	/* A TCP peer's address is in the object already. */
	bool name = p->kind == KWAIT_PEER_UNIX && p->name[0];
	if (!name && !p->pid)
		return;
	/* A column has room for little: the program's name without its
	 * directory ("python3 /usr/bin/gunicorn -w 2", not "/usr/bin/pyt"). */
	const char *cmd = p->cmd;
	if (short_form) {
		size_t word = strcspn(cmd, " ");
		for (size_t i = word; i > 0; i--)
			if (cmd[i - 1] == '/') {
				cmd += i;
				break;
			}
	}
	int cmd_max = short_form ? 24 : 72;
	int cut = utf8_prefix(cmd, cmd_max);
	const char *ellipsis = cmd[cut] ? "\u2026" : "";
	size_t o = (size_t)snprintf(out, len, "%s",
				    short_form ? " \u2192"
				    : p->kind == KWAIT_PEER_PIPE ? ", other end" : ", peer");
	if (o < len && name)
		o += (size_t)snprintf(out + o, len - o, " %s", p->name);
	if (o < len && p->pid && short_form)
		o += (size_t)snprintf(out + o, len - o, " %d %.*s%s", p->pid, cut, cmd, ellipsis);
	else if (o < len && p->pid)
		o += (size_t)snprintf(out + o, len - o, " pid %d (%.*s%s)", p->pid, cut, cmd,
				      ellipsis);
	if (o < len && p->pid && p->more && !short_form)
		o += (size_t)snprintf(out + o, len - o, " and %u more", p->more);
	if (o < len && p->unaccepted)
		snprintf(out + o, len - o, short_form ? " (not accepted)"
						      : ", which has not accepted the connection");
}

void
kwait_format(const struct kwait_info *info, double seconds, char *buf, size_t len)
{
	size_t o;
	if (seconds >= 0)
		o = (size_t)snprintf(buf, len, "blocked %s%.1f s in %s",
				     info->seconds_at_least ? "\u2265 " : "", seconds, info->name);
	else
		o = (size_t)snprintf(buf, len, "blocked in %s", info->name);
	if (o < len && info->object[0])
		o += (size_t)snprintf(buf + o, len - o, info->object_is_fd ? " on %s" : " (%s)",
				      info->object);
	char peer[512];
	format_peer(&info->peer, false, peer, sizeof peer);
	if (o < len && peer[0])
		snprintf(buf + o, len - o, "%s", peer);
}

void
kwait_format_short(const struct kwait_info *info, double seconds, char *buf, size_t len)
{
	char dur[32] = "";
	if (seconds >= 0 && seconds < 10)
		snprintf(dur, sizeof dur, "%.1fs ", seconds);
	else if (seconds >= 10 && seconds < 60)
		snprintf(dur, sizeof dur, "%.0fs ", seconds);
	else if (seconds >= 60 && seconds < 3600)
		snprintf(dur, sizeof dur, "%dm%02ds ", (int)seconds / 60, (int)seconds % 60);
	else if (seconds >= 3600)
		snprintf(dur, sizeof dur, "%dh%02dm ", (int)(seconds / 3600), ((int)seconds / 60) % 60);
	const char *bound = dur[0] && info->seconds_at_least ? "\u2265" : "";
	char peer[512];
	format_peer(&info->peer, true, peer, sizeof peer);
	snprintf(buf, len, "%s%s%s%s%s%s", bound, dur, info->name, info->object[0] ? " " : "",
		 info->object, peer);
}
