/* Native frames by call frame information, with elfutils' libdwfl (native.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "kwait.h"
#include "native.h"
#include "procmaps.h"
#include "readfile.h"

struct native_unwinder {
	pid_t pid;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char debug_dirs[96], *debug_path;   /* the callbacks' debuginfo_path */
	/* the thread being unwound and the registers the kernel gave */
	pid_t tid;
	uint64_t sp, pc;
};

/* libdwfl's find_elf has no argument of ours: the process whose files are
 * looked for is the one this thread is unwinding. */
static _Thread_local pid_t finding_for;

/* The module's file, the very one mapped: /proc/PID/map_files names each
 * mapping whatever the namespaces (a chroot's maps show our view of its
 * paths, a container's its own); else the path through the target's root,
 * then as the maps show it. */
static int
open_mapped(pid_t pid, const char *modname, Dwarf_Addr base, char *path, size_t len)
{
	char dir[64], prefix[40];
	snprintf(dir, sizeof dir, "/proc/%d/map_files", (int)pid);
	snprintf(prefix, sizeof prefix, "%llx-", (unsigned long long)base);
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(path, len, "%s/%s", dir, e->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				closedir(d);
				return fd;
			}
		}
		closedir(d);
	}
	snprintf(path, len, "/proc/%d/root%s", (int)pid, modname);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(path, len, "%s", modname);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int
find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
	 char **file_name, Elf **elfp)
{
	if (modname[0] != '/')   /* [vdso] and the like: from the target's memory */
		return dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name, elfp);
	char path[4200];
	int fd = open_mapped(finding_for, modname, base, path, sizeof path);
	if (fd >= 0) {
		*file_name = strdup(path);
		*elfp = NULL;
	}
	return fd;
}

/* Separate debug files (libc6-dbg, dbgsym packages, python3.X-dbg: names
 * for .symtab-less files) are looked for by build-id, first under the
 * target's own root, where a container's or a chroot's packages put them,
 * then the host's: a build-id names one build, so either is the file's.
 * By name (.gnu_debuglink), only with a matching checksum. */
static void
set_callbacks(struct native_unwinder *n)
{
	snprintf(n->debug_dirs, sizeof n->debug_dirs, "+/proc/%d/root/usr/lib/debug:/usr/lib/debug",
		 (int)n->pid);
	n->debug_path = n->debug_dirs;
	n->callbacks = (Dwfl_Callbacks){
		.find_elf = find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &n->debug_path,
	};
}

/* Thread callbacks: one thread at a time, the one asked for. */
static pid_t
next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl;
	struct native_unwinder *n = arg;
	if (*thread_arg)
		return 0;
	*thread_arg = n;
	return n->tid;
}

static bool
get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	(void)dwfl;
	struct native_unwinder *n = arg;
	*thread_arg = n;
	return tid == n->tid;
}

static bool
memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct native_unwinder *n = arg;
	struct iovec local = {result, sizeof *result};
	struct iovec remote = {(void *)(uintptr_t)addr, sizeof *result};
	return process_vm_readv(n->pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof *result;
}

static bool
set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct native_unwinder *n = thread_arg;
	/* x86-64 DWARF register 7 is %rsp; the pc goes apart */
	Dwarf_Word sp = n->sp;
	if (!dwfl_thread_state_registers(thread, 7, 1, &sp))
		return false;
	dwfl_thread_state_register_pc(thread, n->pc);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

tt_status
native_open(struct native_unwinder **out, pid_t pid, struct tt_error *err)
{
	*out = NULL;
	struct native_unwinder *n = calloc(1, sizeof *n);
	if (!n)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the native unwinder");
	n->pid = pid;
	finding_for = pid;
	set_callbacks(n);
	n->dwfl = dwfl_begin(&n->callbacks);
	if (!n->dwfl) {
		free(n);
		return tt_fail(err, TT_EIO, 0, "libdwfl: %s", dwfl_errmsg(-1));
	}
	dwfl_report_begin(n->dwfl);
	int rc = dwfl_linux_proc_report(n->dwfl, pid);
	dwfl_report_end(n->dwfl, NULL, NULL);
	if (rc != 0) {
		native_close(n);
		return tt_fail(err, TT_EIO, rc > 0 ? rc : 0,
			       "cannot list process %d's modules for native frames: %s", (int)pid,
			       rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
	}
	/* No ptrace: the registers and memory are ours to give. */
	if (!dwfl_attach_state(n->dwfl, NULL, pid, &thread_callbacks, n)) {
		tt_fail(err, TT_EIO, 0, "libdwfl cannot unwind process %d: %s", (int)pid,
			dwfl_errmsg(-1));
		native_close(n);
		return err->status;
	}
	*out = n;
	return TT_OK;
}

void
native_close(struct native_unwinder *n)
{
	if (!n)
		return;
	if (n->dwfl)
		dwfl_end(n->dwfl);
	free(n);
}

struct walk {
	struct native_unwinder *n;
	struct native_frame *out;
	size_t count, max;
	bool last_in_entry;   /* the last frame is in its file's entry point (_start) */
};

static int
take_frame(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (w->count == w->max)
		return DWARF_CB_ABORT;
	struct native_frame *f = &w->out[w->count++];
	memset(f, 0, sizeof *f);
	f->pc = pc;
	/* A return address points after the call: look up the call itself. */
	Dwarf_Addr at = activation ? pc : pc - 1;
	Dwfl_Module *mod = dwfl_addrmodule(w->n->dwfl, at);
	if (!mod)
		return DWARF_CB_OK;
	const char *modname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	snprintf(f->library, sizeof f->library, "%s", modname ? procmaps_basename(modname) : "");
	/* The main thread's first frame is the executable's _start: its entry
	 * point, a few instructions long. */
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	w->last_in_entry = elf && gelf_getehdr(elf, &eh) && eh.e_entry &&
			   at >= eh.e_entry + bias && at < eh.e_entry + bias + 64;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	if (name) {
		snprintf(f->symbol, sizeof f->symbol, "%s", name);
		f->offset = pc - (at - off);
	}
	return DWARF_CB_OK;
}

static bool
in_libc(const struct native_frame *f)
{
	return strncmp(f->library, "libc.so", 7) == 0 || strncmp(f->library, "libc-", 5) == 0 ||
	       strncmp(f->library, "ld-linux", 8) == 0;
}

/* Did the walk reach the thread's first frame? A thread starts in libc
 * (start_thread, clone), the main thread in the executable's _start. Any
 * other last frame is where the walk lost the thread's stack. */
static bool
at_thread_start(const struct walk *w)
{
	return in_libc(&w->out[w->count - 1]) || w->last_in_entry;
}

size_t
native_thread_frames(struct native_unwinder *n, pid_t tid, struct native_frame *out, size_t max,
		     char *why, size_t wlen)
{
	why[0] = '\0';
	char path[64], text[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)n->pid, (int)tid);
	struct kwait_call call;
	if (read_small_file(path, text, sizeof text) <= 0 || !kwait_parse_syscall(text, &call)) {
		snprintf(why, wlen, "its registers are not readable (the thread ended?)");
		return 0;
	}
	if (call.state == KWAIT_RUNNING) {
		snprintf(why, wlen, "running on a CPU: the kernel gives no registers of a running "
				    "thread without stopping it");
		return 0;
	}
	if (!call.sp || !call.pc) {
		snprintf(why, wlen, "no registers from the kernel");
		return 0;
	}
	n->tid = tid;
	n->sp = call.sp;
	n->pc = call.pc;
	finding_for = n->pid;
	struct walk w = {.n = n, .out = out, .max = max};
	int rc = dwfl_getthread_frames(n->dwfl, tid, take_frame, &w);
	if (w.count == max)
		snprintf(why, wlen, "more than %zu frames: the rest left out", max);
	else if (rc == 0 && w.count && !at_thread_start(&w))
		snprintf(why, wlen, "the walk ends in %s: its caller is found by a register "
				    "(%%rbp: code built with frame pointers) that the kernel gives "
				    "only for a stopped thread", out[w.count - 1].library);
	else if (rc != 0 && w.count)
		snprintf(why, wlen, "the stack's next frame needs a register the kernel does not "
				    "give without stopping the thread (%s)", dwfl_errmsg(-1));
	else if (rc != 0)
		snprintf(why, wlen, "not unwound: %s", dwfl_errmsg(-1));
	return w.count;
}
