#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "grow.h"
#include "watchreport.h"
#include "order.h"

extern char **environ;

/* A report being written: PARTIAL, the writer's pid, "-", its name. */
#define PARTIAL ".partial-"

/* The files a report may hold, for removing one (or a partial one). */
static const char *const REPORT_FILES[] = {"summary.txt", "dump.txt", "dump.json",
					   "recording.ttrec", "errors.txt"};

/* Remove a report directory and the files it may hold (a dump's error
 * file too): false when something else in it is left. */
static bool
remove_report(const char *dir)
{
	char path[4200];
	for (size_t i = 0; i < sizeof REPORT_FILES / sizeof REPORT_FILES[0]; i++) {
		if (snprintf(path, sizeof path, "%s/%s", dir, REPORT_FILES[i]) < (int)sizeof path)
			unlink(path);
		if (snprintf(path, sizeof path, "%s/.%s.err", dir, REPORT_FILES[i]) <
		    (int)sizeof path)
			unlink(path);
	}
	return rmdir(dir) == 0;
}

static tt_status
write_file(const char *dir, const char *name, const char *text, struct tt_error *err)
{
	char path[4200];
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return tt_fail(err, TT_EIO, ENAMETOOLONG, "cannot create %s/%s: %s", dir, name,
			       strerror(ENAMETOOLONG));
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return tt_fail(err, TT_EIO, errno, "cannot create %s: %s", path,
			       strerror(errno));
	size_t len = strlen(text), done = 0;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			return tt_fail(err, TT_EIO, e, "cannot write %s: %s", path,
				       strerror(e));
		}
		done += (size_t)n;
	}
	if (close(fd) != 0)
		return tt_fail(err, TT_EIO, errno, "cannot write %s: %s", path, strerror(errno));
	return TT_OK;
}

/* posix_spawn with no signal blocked and every one at its default (ours
 * are caught through a pipe, and the sampler's threads block them all):
 * 0, or the error number. */
static int
spawn(pid_t *child, const char *path, const posix_spawn_file_actions_t *fa, char *const argv[])
{
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int rc = posix_spawn(child, path, fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	return rc;
}

/* Wait for pid at most timeout_ns (then kill it): its wait status, or -1. */
static int
wait_for(pid_t pid, uint64_t timeout_ns)
{
	uint64_t end = clock_now_ns() + timeout_ns;
	int status;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (clock_now_ns() >= end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
		struct timespec ts = {0, 10000000L};
		nanosleep(&ts, NULL);
	}
}

/* Run this program's dump of the tree into dir/name; what went wrong (its
 * exit, its messages) into why. false when it could not be started. */
static bool
run_dump(const struct watch_report_opts *o, const char *dir, const char *name, bool json,
	 char *why, size_t wlen)
{
	char out_path[4200], err_path[4200], pid[24];
	if (snprintf(out_path, sizeof out_path, "%s/%s", dir, name) >= (int)sizeof out_path ||
	    snprintf(err_path, sizeof err_path, "%s/.%s.err", dir, name) >= (int)sizeof err_path) {
		snprintf(why, wlen, "%s: not taken: the report's path is too long\n", name);
		return false;
	}
	snprintf(pid, sizeof pid, "%d", (int)o->root);
	char *argv[12];
	int n = 0;
	argv[n++] = "tachyon-top";
	argv[n++] = "dump";
	argv[n++] = "-p";
	argv[n++] = pid;
	argv[n++] = o->tree ? "--subprocesses" : "--no-subprocesses";
	argv[n++] = "--tasks";
	if (o->native)
		argv[n++] = "--native";
	if (o->locals)
		argv[n++] = "--locals";
	if (json)
		argv[n++] = "--json";
	argv[n] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t child;
	int rc = spawn(&child, "/proc/self/exe", &fa, argv);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		snprintf(why, wlen, "%s: not taken: %s\n", name, strerror(rc));
		return false;
	}
	int status = wait_for(child, WATCH_DUMP_TIMEOUT_NS);
	char msg[600] = "";
	FILE *f = fopen(err_path, "r");
	if (f) {
		size_t got = fread(msg, 1, sizeof msg - 1, f);
		msg[got] = '\0';
		fclose(f);
	}
	unlink(err_path);
	if (status == -1)
		snprintf(why, wlen, "%s: given up after %llu s\n", name,
			 (unsigned long long)(WATCH_DUMP_TIMEOUT_NS / 1000000000ull));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || msg[0])
		snprintf(why, wlen, "%s: dump %s%s", name,
			 WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "said: " : "failed: ",
			 msg[0] ? msg : "(no message)\n");
	return true;
}

tt_status
watch_report_write(const struct watch_report_opts *o, const char *name, const char *summary,
		   watch_recording_fn *recording, void *ctx, char *path, size_t len,
		   struct tt_error *err)
{
	if (mkdir(o->dir, 0755) != 0 && errno != EEXIST)
		return tt_fail(err, TT_EIO, errno, "cannot make the reports' directory %s: %s",
			       o->dir, strerror(errno));
	char tmp[4096];
	/* the watcher's pid in it: a partial report of a watcher gone is removed */
	if (snprintf(tmp, sizeof tmp, "%s/" PARTIAL "%d-%s", o->dir, (int)getpid(), name) >=
	    (int)sizeof tmp)
		return tt_fail(err, TT_EIO, ENAMETOOLONG, "cannot make a report in %s: %s", o->dir,
			       strerror(ENAMETOOLONG));
	if (mkdir(tmp, 0700) != 0)
		return tt_fail(err, TT_EIO, errno, "cannot make %s: %s", tmp, strerror(errno));
	tt_status st = write_file(tmp, "summary.txt", summary, err);
	if (st == TT_OK && recording) {
		char rec[4200];
		snprintf(rec, sizeof rec, "%s/recording.ttrec", tmp);
		st = recording(ctx, rec, err);
	}
	char why[2][800] = {"", ""};
	if (st == TT_OK && (!run_dump(o, tmp, "dump.txt", false, why[0], sizeof why[0]) ||
			    !run_dump(o, tmp, "dump.json", true, why[1], sizeof why[1])))
		st = tt_fail(err, TT_EIO, 0, "cannot run the dumps: %s", why[0][0] ? why[0] : why[1]);
	if (st == TT_OK && (why[0][0] || why[1][0])) {
		char both[1700];
		snprintf(both, sizeof both, "%s%s", why[0], why[1]);
		st = write_file(tmp, "errors.txt", both, err);
	}
	for (int i = 0; st == TT_OK && i < 10; i++) {
		snprintf(path, len, i ? "%s/%s-%d" : "%s/%s", o->dir, name, i + 1);
		if (rename(tmp, path) == 0)
			return TT_OK;
		if (errno != EEXIST && errno != ENOTEMPTY)
			st = tt_fail(err, TT_EIO, errno, "cannot rename %s to %s: %s", tmp,
				      path, strerror(errno));
	}
	if (st == TT_OK)
		st = tt_fail(err, TT_EIO, EEXIST, "cannot name the report %s/%s: %s", o->dir,
			       name, strerror(EEXIST));
	remove_report(tmp);
	return st;
}

/* Is name a report's: a UTC stamp, then "-"? */
static bool
report_name(const char *name)
{
	for (int i = 0; i < 16; i++) {
		char c = name[i];
		bool ok = i == 8 ? c == 'T' : i == 15 ? c == 'Z' : c >= '0' && c <= '9';
		if (!ok)
			return false;
	}
	return name[16] == '-';
}

/* The bytes of the files in a directory (not below). */
static uint64_t
dir_bytes(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	uint64_t bytes = 0;
	struct dirent *e;
	struct stat st;
	while ((e = readdir(d)))
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			bytes += (uint64_t)st.st_size;
	closedir(d);
	return bytes;
}

struct report_entry {
	char name[256];
	uint64_t bytes;
};

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct report_entry *)a)->name,
		      ((const struct report_entry *)b)->name);
}

int
watch_report_prune(const char *dir, uint64_t max_bytes, const char *keep,
		   watch_removed_fn *removed, void *ctx)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct report_entry *all = NULL;
	uint32_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!report_name(e->d_name) || strlen(e->d_name) >= sizeof all->name)
			continue;
		if (!grow_array((void **)&all, &cap, n + 1, sizeof *all))
			break;
		snprintf(all[n].name, sizeof all[n].name, "%s", e->d_name);
		all[n].bytes = dir_bytes(dirfd(d), e->d_name);
		total += all[n++].bytes;
	}
	closedir(d);
	/* oldest first: the names start with their UTC time */
	order_sort(all, n, sizeof *all, by_name);
	int gone = 0;
	for (uint32_t i = 0; i < n && total > max_bytes; i++) {
		if (strcmp(all[i].name, keep) == 0)
			continue;
		char path[4200];
		snprintf(path, sizeof path, "%s/%s", dir, all[i].name);
		if (!remove_report(path))
			continue;
		total -= all[i].bytes;
		gone++;
		if (removed)
			removed(ctx, path);
	}
	free(all);
	return gone;
}

int
watch_report_clean(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int gone = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t plen = strlen(PARTIAL);
		if (strncmp(e->d_name, PARTIAL, plen) != 0)
			continue;
		char *end;
		long pid = strtol(e->d_name + plen, &end, 10);
		if (end == e->d_name + plen || *end != '-' || pid <= 0)
			continue;   /* not a partial report */
		/* ours at the start: a gone watcher's, whose pid we have now */
		if (pid != getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;   /* its watcher is alive */
		char path[4200];
		if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
		    remove_report(path))
			gone++;
	}
	closedir(d);
	return gone;
}

pid_t
watch_report_exec(const char *cmd, const char *path)
{
	char *argv[] = {"sh", "-c", (char *)cmd, "tachyon-top-watch", (char *)path, NULL};
	pid_t child;
	return spawn(&child, "/bin/sh", NULL, argv) == 0 ? child : -1;
}

void
watch_report_reap(pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == pids[i])
			pids[i] = 0;
}
