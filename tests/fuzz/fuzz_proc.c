/* The kernel's text files as tachyon-top reads them: /proc/PID/maps, a
 * thread's stat, status, sched, schedstat and syscall, /proc/stat,
 * /proc/pressure/cpu, /proc/net/{tcp,udp}[6] and unix, a descriptor's
 * fdinfo (an epoll's too), a descriptor's link. Every parser gets every
 * input: the corpus holds real files of each kind, and what one parser
 * takes for garbage another must survive too. *
 * parsers: src/target/mem/procmaps.c src/target/proc/procstat.c src/target/proc/schedclock.c src/target/proc/tidmap.c src/target/waits/kwait.c src/target/waits/owners.c src/common/hostload.c
 */
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fuzz.h"
#include "hostload.h"
#include "mem/procmaps.h"
#include "proc/procstat.h"
#include "proc/schedclock.h"
#include "proc/tidmap.h"
#include "waits/kwait.h"
#include "waits/owners.h"

static void
maps(const char *text)
{
	struct proc_maps m = {0};
	struct tt_error err;
	if (procmaps_parse(text, &m, &err) == TT_OK) {
		for (size_t i = 0; i < m.count; i++) {
			fuzz_check_str(m.entries[i].path, sizeof m.entries[i].path);
			fuzz_check_str(m.entries[i].perms, sizeof m.entries[i].perms);
			procmaps_basename(m.entries[i].path);
		}
		procmaps_free(&m);
	}
}

/* The /proc/net tables: each line's addresses and inode, then the lookups
 * a wait makes with them. */
static void
inet(const char *text)
{
	char local[64], remote[64], out[256];
	unsigned long inode, peer;
	const char *line = text;
	for (int lines = 0; line && *line && lines < 64; lines++) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char one[512];
		if (n >= sizeof one)
			n = sizeof one - 1;
		memcpy(one, line, n);
		one[n] = '\0';
		if (kwait_parse_inet_tokens(one, local, remote, sizeof local, &inode)) {
			fuzz_check_str(local, sizeof local);
			fuzz_check_str(remote, sizeof remote);
			if (kwait_parse_inet_line(one, "tcp6", inode, out, sizeof out))
				fuzz_check_str(out, sizeof out);
			if (lines < 4) {
				kwait_find_inet_peer(text, local, remote, &peer);
				kwait_find_inet_listener(text, local);
				if (kwait_find_unix(text, inode, out, sizeof out))
					fuzz_check_str(out, sizeof out);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	/* /proc/net/unix: the inode is its seventh field */
	unsigned long ino;
	const char *nl = strchr(text, '\n');
	if (nl && sscanf(nl + 1, "%*s %*s %*s %*s %*s %*s %lu", &ino) == 1 &&
	    kwait_find_unix(text, ino, out, sizeof out))
		fuzz_check_str(out, sizeof out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);

	maps(text);

	procstat_parse_stat(text, size);
	struct stat_fields f;
	if (procstat_parse_fields(text, size, &f))
		fuzz_check(f.state != '\0' && f.cpu >= -1);

	struct host_cpu host;
	cpu_set_t only;
	CPU_ZERO(&only);
	CPU_SET(1, &only);
	hostload_parse_stat(text, NULL, &host);
	if (hostload_parse_stat(text, &only, &host))
		fuzz_check(host.cpus > 0);
	hostload_parse_pressure(text, &host);
	uint64_t on, wait, runs;
	hostload_parse_schedstat(text, &on, &wait, &runs);
	owners_parse_fdinfo_writes(text);

	uint64_t ns, ours, inner;
	schedclock_parse_exec_start(text, &ns);
	tidmap_parse_nspid(text, &ours, &inner);

	struct kwait_call call;
	if (kwait_parse_syscall(text, &call) && call.state == KWAIT_SYSCALL)
		kwait_syscall_name(call.nr);

	inet(text);

	int fds[16];
	size_t nfds = kwait_parse_epoll_fdinfo(text, fds, 16);
	(void)nfds;

	enum owner_kind kind;
	unsigned long inode;
	owners_parse_link(text, &kind, &inode);

	free(text);
	return 0;
}
