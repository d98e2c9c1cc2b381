/* Diagnosing a refused read. Linux lets a process read another's memory when
 * (roughly) it has the same uid and the target is dumpable, or it holds
 * CAP_SYS_PTRACE in the target's user namespace; Yama's ptrace_scope narrows
 * that, and security modules (Landlock, SELinux, AppArmor, BPF) or a seccomp
 * filter can refuse on top. Each check below looks at one of those. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/access.h"
#include "proc/procstat.h"
#include "readfile.h"
#include "sanitize.h"

#define CAP_SYS_PTRACE_BIT 19
#define PF_KTHREAD_FLAG 0x00200000UL

/* The file read whole (empty counts): read_small_file's answer as a yes/no. */
static bool
read_small(const char *path, char *buf, size_t len)
{
	return read_small_file(path, buf, len) >= 0;
}

/* A "Field:\t..." line of /proc/PID/status (pid 0: ourselves). */
static bool
status_field(pid_t pid, const char *field, char *out, size_t len)
{
	char path[64], text[4096];
	if (pid)
		snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof path, "/proc/self/status");
	if (!read_small(path, text, sizeof text))
		return false;
	size_t fl = strlen(field);
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, field, fl) == 0 && line[fl] == ':') {
			const char *v = line + fl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t n = strcspn(v, "\n");
			snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), v);
			return true;
		}
	}
	return false;
}

static bool
have_cap_sys_ptrace(void)
{
	char v[64];
	if (!status_field(0, "CapEff", v, sizeof v))
		return geteuid() == 0;
	unsigned long long caps = strtoull(v, NULL, 16);
	return (caps >> CAP_SYS_PTRACE_BIT) & 1;
}

/* The target's flags from /proc/PID/stat (field 9), or 0. */
static unsigned long
task_flags(pid_t pid)
{
	struct stat_fields f;
	return procstat_read_fields(pid, 0, &f) ? f.flags : 0;
}

static int
ptrace_scope(void)
{
	char v[16];
	if (!read_small("/proc/sys/kernel/yama/ptrace_scope", v, sizeof v))
		return -1;
	return v[0] - '0';
}

/* Our confinement, as far as /proc tells: a seccomp filter or an LSM label. */
static void
confinement(char *out, size_t len)
{
	char v[256];
	out[0] = '\0';
	if (status_field(0, "Seccomp", v, sizeof v) && atoi(v) == 2) {
		snprintf(out, len, "a seccomp filter");
		return;
	}
	if (read_small("/proc/self/attr/current", v, sizeof v)) {
		v[strcspn(v, "\n")] = '\0';
		if (v[0] && strcmp(v, "unconfined") != 0 && strncmp(v, "unconfined_", 11) != 0 &&
		    !strstr(v, ":unconfined_t:")) {
			char safe[300];
			sanitize_for_terminal(v, safe, sizeof safe);
			snprintf(out, len, "its security label %s", safe);
		}
	}
}

void
access_explain(pid_t pid, char *buf, size_t len)
{
	int scope = ptrace_scope();
	bool cap = have_cap_sys_ptrace();
	char uid_s[64] = "", path[64];
	long target_uid = -1;
	if (status_field(pid, "Uid", uid_s, sizeof uid_s))
		target_uid = strtol(uid_s, NULL, 10);
	if (task_flags(pid) & PF_KTHREAD_FLAG) {
		snprintf(buf, len, "it is a kernel thread: it has no user memory and runs no Python");
		return;
	}
	if (scope == 3) {
		snprintf(buf, len, "kernel.yama.ptrace_scope is 3, which forbids every process, root "
			 "included, to read another's memory until the next reboot");
		return;
	}
	if (!cap) {
		uid_t me = geteuid();
		if (target_uid >= 0 && (uid_t)target_uid != me)
			snprintf(buf, len, "it belongs to uid %ld and tachyon-top runs as uid %ld without "
				 "CAP_SYS_PTRACE: run it as root or as that user, or grant it "
				 "CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep tachyon-top)",
				 target_uid, (long)me);
		else if (scope == 1)
			snprintf(buf, len, "kernel.yama.ptrace_scope is 1, so only a process's ancestors "
				 "may read it: start the program under tachyon-top (tachyon-top -- "
				 "COMMAND), run as root, or set kernel.yama.ptrace_scope=0");
		else if (scope == 2)
			snprintf(buf, len, "kernel.yama.ptrace_scope is 2, so only CAP_SYS_PTRACE may read "
				 "another process: run as root or grant it (setcap cap_sys_ptrace+ep "
				 "tachyon-top)");
		else
			snprintf(buf, len, "it is not dumpable or holds capabilities tachyon-top lacks (a "
				 "setuid or file-capability program): run as root or grant CAP_SYS_PTRACE "
				 "(setcap cap_sys_ptrace+ep tachyon-top)");
		return;
	}
	/* We hold CAP_SYS_PTRACE: permissions are not the problem. */
	char mine[64], theirs[64];
	ssize_t a = readlink("/proc/self/ns/user", mine, sizeof mine - 1);
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
	ssize_t b = readlink(path, theirs, sizeof theirs - 1);
	if (a > 0)
		mine[a] = '\0';
	/* Inside a user namespace (rootless podman, unshare --user), "root" and
	 * its CAP_SYS_PTRACE count only for that namespace's processes; one
	 * outside it cannot even have its namespace looked at. */
	char map[128];
	if (read_small("/proc/self/uid_map", map, sizeof map) && !strstr(map, "4294967295") &&
	    (b <= 0 || (theirs[b] = '\0', strcmp(mine, theirs) != 0))) {
		snprintf(buf, len, "tachyon-top runs in a user namespace (%s), where its root and "
			 "CAP_SYS_PTRACE count only for that namespace's processes, and process %d "
			 "is outside it: run tachyon-top from the host (or the namespace that made "
			 "this one), or attach to a process inside the namespace", a > 0 ? mine : "?",
			 (int)pid);
		return;
	}
	if (a > 0 && b > 0) {
		theirs[b] = '\0';
		if (strcmp(mine, theirs) != 0) {
			snprintf(buf, len, "it is in another user namespace (%s, tachyon-top's is %s) where "
				 "tachyon-top's CAP_SYS_PTRACE does not count: run tachyon-top in that "
				 "namespace or one above it (on the host, not in a container)", theirs, mine);
			return;
		}
	}
	char conf[320];
	confinement(conf, sizeof conf);
	/* In the initial user namespace, CAP_SYS_PTRACE counts in every other. */
	bool initial = a > 0 && strcmp(mine, "user:[4026531837]") == 0;
	snprintf(buf, len, "the kernel refused although tachyon-top has CAP_SYS_PTRACE%s%s, so no "
		 "permission setting will help: %s%s; run tachyon-top outside it",
		 geteuid() == 0 ? " as root" : "", initial ? " in the initial user namespace" : "",
		 conf[0] ? "tachyon-top is confined by " : "a sandbox (e.g. Landlock) or a security "
		 "module (SELinux, AppArmor) confines tachyon-top or protects that process", conf);
}
