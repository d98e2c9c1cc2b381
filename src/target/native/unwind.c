/* Native frames by call frame information, with elfutils' libdwfl (native/unwind.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "grow.h"
#include "keytab.h"
#include "mem/corefile.h"
#include "waits/kwait.h"
#include "native/mixedstack.h"
#include "native/unwind.h"
#include "native/jitreg.h"
#include "native/perfmap.h"
#include "native/perfsample.h"
#include "native/varloc.h"
#include "mem/procmaps.h"
#include "readfile.h"
#include "clock.h"

/* Threads sampled with perf at once, per process: those that ran most
 * recently (perfsample.h). */
#define NATIVE_PERF_THREADS_MAX 256

/* An evaluator call site (check_frame): where its frame and next
 * instruction were found in callee-saved registers, or how often the
 * frame was and no instruction pointer near the one read. */
struct call_site {
	uint64_t pc;             /* keytab's key: the return address */
	bool learned;            /* frame_reg and instr_reg hold them here */
	uint8_t frame_reg, instr_reg;   /* indexes into check_frame's registers */
	uint32_t frame_only;
	/* what the evaluator's debug information says (varloc.h): */
	uint8_t dwarf;           /* enum site_dwarf */
	uint8_t cfa_reg;         /* the CFA is this DWARF register + cfa_off */
	int64_t cfa_off;
	struct varloc frame_at, instr_at;   /* where `frame` (VARLOC_NONE: not said) and
					       `next_instr` are */
};

enum site_dwarf {
	SITE_DWARF_UNREAD,       /* not looked up yet */
	SITE_DWARF_NONE,         /* no debug information, or none for next_instr */
	SITE_DWARF_KNOWN,        /* instr_at holds, and frame_at unless VARLOC_NONE */
};

/* Samples at a call site with the frame in a register and no instruction
 * pointer near the one read, none with both, after which the site is
 * taken to keep its instruction pointer in a stack slot (pyenv's 3.12):
 * its samples are kept then, not checked. Before that they are left out:
 * at a site that keeps both in registers a thread switching between two
 * functions at one depth gives exactly that, half the time. */
#define SPILL_EVIDENCE 16

struct native_unwinder {
	pid_t pid;
	struct remote mem;                  /* its memory: a live process's or a core's */
	struct corefile *core;              /* a core's process: its memory and files; NULL: live */
	Elf *core_elf;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char debug_dirs[600], *debug_path;  /* the callbacks' debuginfo_path */
	char files_root[512];               /* a core's: corefile_files_root */
	/* the thread being unwound and the registers the kernel gave */
	pid_t tid;
	uint64_t sp, pc;
	uint64_t rbp;    /* a frame pointer found on the stack, 0 when none */
	/* a walk continued past code that unwinds by its known shape (resume):
	 * the caller's registers, taken over from the sample's or the kernel's */
	bool resume;
	uint64_t resume_pc, resume_sp, resume_rbp;
	const struct user_sample *sample;   /* a running thread's: every register and
					       its stack top, else NULL */
	struct perf_threads *perf;          /* running threads' samples; NULL until one */
	/* the registers native_blocked_at read, for the walk that follows it
	 * (a /proc read per thread per pass, not two: pools of thousands) */
	pid_t call_tid;                     /* 0: none kept */
	struct kwait_call call;
	char perf_refused[256];             /* why perf_event_open was refused, once */
	struct keytab syms;                 /* struct sym_entry by address */
	/* code no file holds (a JIT's, perf trampolines): the process's
	 * executable anonymous mappings, and its perf map */
	struct proc_maps maps;
	uint64_t maps_read_ns;
	struct perfmap perfmap;
	/* and what it lists in gdb's JIT interface (jitreg.h) */
	uint64_t jit_descriptor;            /* 0: none */
	bool jit_descriptor_sought;
	struct perfmap jit_names;
	uint64_t jit_names_read_ns;
	bool held_off;                      /* the description being made skipped a
					       re-read (MAPS_REREAD_NS) */
	struct keytab sites;                /* struct call_site by return address */
	/* where the evaluator keeps next_instr and frame, per module holding
	 * one: the build's table (evaluator_table) */
	struct evaluator_locs {
		Dwfl_Module *mod;
		GElf_Addr bias;             /* its load bias: file address = address - bias */
		const struct varloc_table *table;   /* NULL: none */
	} evaluators[4];
	uint32_t nevaluators;
	char *names;                        /* their names and libraries, "" first */
	uint32_t names_len, names_cap;
	/* a sampler's: every thread followed at its rate, no waiting */
	bool continuous;
	uint64_t period_ns;
	size_t stack_bytes;
	/* native_expect_frame's, for the next thread asked about */
	uint64_t expect_frame, expect_instr;
	bool moved, unverified;
};

/* What an address is, looked up once: libdwfl's symbol search goes
 * through a file's whole symbol table each time. */
struct sym_entry {
	uint64_t at;          /* keytab's key: the address looked up */
	uint64_t start;       /* its symbol's start */
	uint32_t name, lib;   /* offsets in the names; name 0: no symbol */
	uint64_t fde_offset;  /* no symbol: its FDE's start from the module's start */
	bool fde_known;
	bool mapped;          /* in a file */
	bool anon_code;       /* in executable memory no file holds */
	bool entry;           /* in the file's entry point (_start) */
	uint64_t retry_ns;    /* 0: final; else described while a re-read of the
				 maps or the JIT interface was held off: described
				 again from then on */
};

/* Most addresses remembered: past it the cache starts over. */
#define SYM_CACHE_MAX 65536

static uint32_t
add_name(struct native_unwinder *n, const char *s)
{
	size_t len = strlen(s) + 1;
	if (n->names_len + len > UINT32_MAX ||
	    !grow_array((void **)&n->names, &n->names_cap, (uint32_t)(n->names_len + len), 1))
		return UINT32_MAX;
	memcpy(n->names + n->names_len, s, len);
	uint32_t at = n->names_len;
	n->names_len += (uint32_t)len;
	return at;
}

/* libdwfl's find_elf has no argument of ours: the process whose files are
 * looked for is the one this thread is unwinding. */
static _Thread_local pid_t finding_for;
static _Thread_local struct corefile *finding_in;   /* a core's files, under its root */

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
	if (finding_in) {   /* a core's module: its file under the core's root */
		for (size_t i = 0; i < finding_in->nmaps; i++) {
			if (strcmp(finding_in->maps[i].path, modname) != 0)
				continue;
			int fd = corefile_map_fd(finding_in, i);
			if (fd < 0)
				return -1;
			*file_name = strdup(modname);
			*elfp = NULL;
			return dup(fd);
		}
		return -1;
	}
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

/* The target's memory (a core's, or a live process's through remote.c):
 * up to len bytes, as many as are mapped. */
static size_t
read_target(struct native_unwinder *n, uint64_t addr, void *buf, size_t len)
{
	return remote_read_upto(&n->mem, addr, buf, len);
}

static bool
memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct native_unwinder *n = arg;
	const struct user_sample *us = n->sample;
	/* the stack top as the kernel copied it at the sample's instant */
	if (us && addr >= us->stack_at && us->stack_len >= sizeof *result &&
	    addr - us->stack_at <= us->stack_len - sizeof *result) {
		memcpy(result, us->stack + (addr - us->stack_at), sizeof *result);
		return true;
	}
	return read_target(n, addr, result, sizeof *result) == sizeof *result;
}

static bool
set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct native_unwinder *n = thread_arg;
	/* The pc goes in twice: as the frame's pc, and as DWARF register 16
	 * (%rip), which call frame information may read: a PLT stub's CFA
	 * depends on where in the stub it is, and without %rip no caller of
	 * a thread sampled there is found. */
	if (n->resume) {
		Dwarf_Word regs[2] = {n->resume_rbp, n->resume_sp}, pc = n->resume_pc;
		if (n->resume_rbp ? !dwfl_thread_state_registers(thread, 6, 2, regs)
				  : !dwfl_thread_state_registers(thread, 7, 1, &regs[1]))
			return false;
		dwfl_thread_state_register_pc(thread, pc);
		return true;
	}
	if (n->sample) {
		Dwarf_Word regs[17];
		for (size_t i = 0; i < 16; i++)
			regs[i] = n->sample->regs[i];
		regs[16] = n->sample->pc;
		if (!dwfl_thread_state_registers(thread, 0, 17, regs))
			return false;
		dwfl_thread_state_register_pc(thread, n->sample->pc);
		return true;
	}
	/* x86-64 DWARF registers 6 and 7 are %rbp and %rsp */
	Dwarf_Word regs[2] = {n->rbp, n->sp}, pc = n->pc;
	if (n->rbp ? !dwfl_thread_state_registers(thread, 6, 2, regs)
		   : !dwfl_thread_state_registers(thread, 7, 1, &regs[1]))
		return false;
	if (!dwfl_thread_state_registers(thread, 16, 1, &pc))
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
	tt_status st = remote_open_pid(&n->mem, pid, err);
	if (st != TT_OK) {
		free(n);
		return st;
	}
	keytab_init(&n->syms, sizeof(struct sym_entry));
	keytab_init(&n->sites, sizeof(struct call_site));
	if (add_name(n, "") != 0) {
		free(n);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the native unwinder");
	}
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

tt_status
native_open_core(struct native_unwinder **out, struct corefile *core, struct tt_error *err)
{
	*out = NULL;
	struct native_unwinder *n = calloc(1, sizeof *n);
	if (!n)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the native unwinder");
	n->core = core;
	n->pid = core->pid;
	remote_open_backend(&n->mem, corefile_backend(core));
	keytab_init(&n->syms, sizeof(struct sym_entry));
	keytab_init(&n->sites, sizeof(struct call_site));
	if (add_name(n, "") != 0) {
		free(n);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for the native unwinder");
	}
	/* debug files under the root of the process's files first, then the host's */
	corefile_files_root(core, n->files_root, sizeof n->files_root);
	snprintf(n->debug_dirs, sizeof n->debug_dirs, "+%s/usr/lib/debug:/usr/lib/debug",
		 strcmp(n->files_root, "/") ? n->files_root : "");
	n->debug_path = n->debug_dirs;
	n->callbacks = (Dwfl_Callbacks){
		.find_elf = find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &n->debug_path,
	};
	elf_version(EV_CURRENT);
	n->dwfl = dwfl_begin(&n->callbacks);
	n->core_elf = n->dwfl ? elf_begin(core->fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!n->core_elf) {
		native_close(n);
		return tt_fail(err, TT_EIO, 0, "libdwfl cannot read the core: %s", dwfl_errmsg(-1));
	}
	finding_in = core;
	dwfl_report_begin(n->dwfl);
	int rc = dwfl_core_file_report(n->dwfl, n->core_elf, NULL);
	dwfl_report_end(n->dwfl, NULL, NULL);
	finding_in = NULL;
	/* its threads are the core's; their registers and memory ours to give */
	if (rc < 0 || !dwfl_attach_state(n->dwfl, n->core_elf, core->pid, &thread_callbacks, n)) {
		tt_fail(err, TT_EIO, 0, "libdwfl cannot unwind the core: %s", dwfl_errmsg(-1));
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
	if (n->core_elf)
		elf_end(n->core_elf);
	perf_threads_free(n->perf);
	keytab_free(&n->syms);
	keytab_free(&n->sites);
	procmaps_free(&n->maps);
	perfmap_free(&n->perfmap);
	perfmap_free(&n->jit_names);
	free(n->names);
	free(n);
}

/* What a running thread's perf sample says of the Python frame expected. */
enum frame_check { FRAME_UNVERIFIED, FRAME_VERIFIED, FRAME_MOVED };

struct walk {
	struct native_unwinder *n;
	struct native_frame *out;
	size_t count, max;
	bool last_in_entry;   /* the last frame is in its file's entry point (_start) */
	uint64_t last_sp;     /* the last frame's stack pointer, 0 when unknown */
	bool last_has_rbp;    /* and whether its %rbp is known */
	uint64_t last_rbp;    /* its value */
	/* native_expect_frame's Python frame, looked for in the registers of
	 * the innermost evaluator call (0: not asked) */
	uint64_t expect_frame, expect_instr;
	bool evaluator_seen;  /* that call was reached */
	bool astray;          /* the walk stopped at a caller in no file */
	bool last_anon;       /* the last frame is in code no file holds */
	bool anon_frame_pointer;   /* and its %rbp looks like its own frame pointer */
	bool no_frame_pointer;   /* the walk stopped after such code: it keeps no
				    frame pointer, and stepping by %rbp skipped frames */
	enum frame_check check;
};

/* The maps of a live process are read again at most this often, when an
 * address lies in none of its executable anonymous mappings. */
#define MAPS_REREAD_NS 50000000ull

static bool
in_anon_code(const struct proc_maps *maps, uint64_t at)
{
	for (size_t i = 0; i < maps->count; i++) {
		const struct map_entry *m = &maps->entries[i];
		if (at >= m->start && at < m->end)
			return m->perms[2] == 'x' && (m->path[0] == '\0' || m->path[0] == '[');
	}
	return false;
}

/* Is at in executable memory that no file holds (a JIT's code, perf
 * trampolines)? */
static bool
anon_code(struct native_unwinder *n, uint64_t at)
{
	if (n->core)
		return corefile_anon_code(n->core, at);
	if (in_anon_code(&n->maps, at))
		return true;
	uint64_t now = clock_now_ns();
	if (n->maps_read_ns && now - n->maps_read_ns < MAPS_REREAD_NS) {
		n->held_off = true;
		return false;
	}
	n->maps_read_ns = now;
	struct proc_maps fresh = {0};
	struct tt_error err;
	if (procmaps_read(n->pid, &fresh, &err) != TT_OK)
		return false;
	procmaps_free(&n->maps);
	n->maps = fresh;
	return in_anon_code(&n->maps, at);
}

struct module_list {
	Dwfl_Module **mods;
	size_t count;
};

static int
collect_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)userdata;
	(void)name;
	(void)start;
	struct module_list *l = arg;
	if (l->count == 64)
		return DWARF_CB_ABORT;
	l->mods[l->count++] = mod;
	return DWARF_CB_OK;
}

/* Where a module of the process exports gdb's JIT descriptor, or 0. */
static uint64_t
find_jit_descriptor(struct native_unwinder *n)
{
	Dwfl_Module *mods[64];
	struct module_list found = {mods, 0};
	dwfl_getmodules(n->dwfl, collect_module, &found, 0);
	for (size_t m = 0; m < found.count; m++) {
		int count = dwfl_module_getsymtab(mods[m]);
		for (int i = 1; i < count; i++) {
			GElf_Sym sym;
			GElf_Addr addr;
			const char *name = dwfl_module_getsym_info(mods[m], i, &sym, &addr, NULL, NULL,
								   NULL);
			if (name && GELF_ST_TYPE(sym.st_info) == STT_OBJECT &&
			    strcmp(name, "__jit_debug_descriptor") == 0)
				return addr;
		}
	}
	return 0;
}

/* The name gdb's JIT interface gives the code at at (its objects read
 * again when none does, at most every MAPS_REREAD_NS), or NULL. */
static const char *
jit_interface_name(struct native_unwinder *n, uint64_t at, uint64_t *start)
{
	if (!n->jit_descriptor_sought) {
		n->jit_descriptor_sought = true;
		n->jit_descriptor = find_jit_descriptor(n);
	}
	if (!n->jit_descriptor)
		return NULL;
	const char *name = perfmap_lookup(&n->jit_names, at, start);
	uint64_t now = clock_now_ns();
	if (name)
		return name;
	if (n->jit_names_read_ns && now - n->jit_names_read_ns < MAPS_REREAD_NS) {
		n->held_off = true;
		return NULL;
	}
	n->jit_names_read_ns = now;
	perfmap_free(&n->jit_names);
	perfmap_init(&n->jit_names);
	jitreg_read(&n->mem, n->jit_descriptor, &n->jit_names);
	return perfmap_lookup(&n->jit_names, at, start);
}

/* Code no file holds: named from the process's perf map when it names it
 * (read again when it does not: the map grows; a core's process's, as the
 * file under the root of its files is now), else from gdb's JIT interface,
 * else "[jit]". */
static void
describe_anon_code(struct native_unwinder *n, Dwarf_Addr at, struct sym_entry *e)
{
	uint64_t start = 0;
	const char *name = perfmap_lookup(&n->perfmap, at, &start);
	if (!name && (n->core ? perfmap_update_in(&n->perfmap, n->files_root, n->pid)
			  : perfmap_update(&n->perfmap, n->pid)))
		name = perfmap_lookup(&n->perfmap, at, &start);
	bool in_map = name != NULL;
	if (!name)
		name = jit_interface_name(n, at, &start);
	uint32_t lib = add_name(n, in_map ? n->perfmap.file : "[jit]");
	uint32_t sym = name ? add_name(n, name) : 0;
	if (lib == UINT32_MAX || sym == UINT32_MAX)
		return;
	e->anon_code = true;
	e->lib = lib;
	e->name = sym;
	e->start = start;
}

static void
describe(struct native_unwinder *n, Dwarf_Addr at, struct sym_entry *e)
{
	Dwfl_Module *mod = dwfl_addrmodule(n->dwfl, at);
	Dwarf_Addr start = 0, end = 0;
	const char *modname = mod ? dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL)
				  : NULL;
	if (!mod || at < start || at >= end) {  /* libdwfl may answer for an address past a file */
		if (anon_code(n, at))
			describe_anon_code(n, at, e);
		return;
	}
	uint32_t lib = add_name(n, modname ? procmaps_basename(modname) : "");
	if (lib == UINT32_MAX)
		return;
	e->mapped = true;
	e->lib = lib;
	/* The main thread's first frame is the executable's _start: its entry
	 * point, a few instructions long. */
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	e->entry = elf && gelf_getehdr(elf, &eh) && eh.e_entry && at >= eh.e_entry + bias &&
		   at < eh.e_entry + bias + 64;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	uint32_t at_name = name && name[0] ? add_name(n, name) : UINT32_MAX;
	if (at_name != UINT32_MAX) {
		e->name = at_name;
		e->start = at - off;
		return;
	}
	/* No symbol (a static function of a stripped library): the FDE that
	 * covers it says where its function starts. */
	Dwarf_Addr cfi_bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &cfi_bias);
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &cfi_bias);
	Dwarf_Frame *frame;
	if (cfi && dwarf_cfi_addrframe(cfi, at - cfi_bias, &frame) == 0) {
		Dwarf_Addr fde_start, fde_end;
		if (dwarf_frame_info(frame, &fde_start, &fde_end, NULL) >= 0 &&
		    fde_start + cfi_bias >= start) {
			e->fde_known = true;
			e->fde_offset = fde_start + cfi_bias - start;
		}
		free(frame);
	}
}

static const struct sym_entry *
lookup(struct native_unwinder *n, Dwarf_Addr at)
{
	struct sym_entry *e = keytab_find(&n->syms, at);
	if (e && (!e->retry_ns || clock_now_ns() < e->retry_ns))
		return e;
	if (e) {   /* described while a re-read was held off: again now */
		*e = (struct sym_entry){.at = at};
		n->held_off = false;
		describe(n, at, e);
		e->retry_ns = n->held_off ? clock_now_ns() + MAPS_REREAD_NS : 0;
		return e;
	}
	if (n->syms.count >= SYM_CACHE_MAX) {
		keytab_clear(&n->syms);
		n->names_len = 1;   /* offset 0 stays "" */
	}
	bool added;
	if (!(e = keytab_put(&n->syms, at, &added)))
		return NULL;
	n->held_off = false;
	describe(n, at, e);
	e->retry_ns = n->held_off ? clock_now_ns() + MAPS_REREAD_NS : 0;
	return e;
}

/* Is v within 64 bytes of instr, either way? (An evaluator holds its next
 * instruction, a few code units past the one its frame records.) */
static bool
near_instr(uint64_t v, uint64_t instr)
{
	return v - instr + 64 <= 128;
}

/* Each build's table of where its evaluator keeps its locals, read once
 * and shared by every process's unwinder (a server's workers run one
 * build: one read, not one a worker), by build-id; kept to the end. */
#define EVALUATOR_BUILDS 8

static struct evaluator_build {
	unsigned char id[64];
	int idlen;
	struct varloc_table table;
	uint8_t tries;                  /* reads that did not find the evaluator there */
} evaluator_builds[EVALUATOR_BUILDS];
static unsigned nevaluator_builds;
static pthread_mutex_t evaluator_builds_lock = PTHREAD_MUTEX_INITIALIZER;

/* The table of mod's build, read when not yet (addr, in the module: where
 * the evaluator is looked for); NULL when there is none or no room. */
static const struct varloc_table *
evaluator_table(struct native_unwinder *n, Dwfl_Module *mod, uint64_t addr, GElf_Addr bias)
{
	static const char *const names[VARLOC_VARS] = {"frame", "next_instr"};
	const unsigned char *id;
	GElf_Addr id_at;
	int idlen = dwfl_module_build_id(mod, &id, &id_at);
	const char *file = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	if (idlen <= 0 || idlen > 64 || !file)
		return NULL;
	pthread_mutex_lock(&evaluator_builds_lock);
	struct evaluator_build *b = NULL;
	for (unsigned i = 0; i < nevaluator_builds && !b; i++)
		if (evaluator_builds[i].idlen == idlen && !memcmp(evaluator_builds[i].id, id, (size_t)idlen))
			b = &evaluator_builds[i];
	if (!b && nevaluator_builds < EVALUATOR_BUILDS) {
		b = &evaluator_builds[nevaluator_builds++];
		memcpy(b->id, id, (size_t)idlen);
		b->idlen = idlen;
	}
	/* An address that was not the evaluator's (another function taken
	 * for it) is not the build's last word: a few more are tried. */
	if (b && !b->table.found && b->tries < 3) {
		b->tries++;
		varloc_table_free(&b->table);
		varloc_table_read(&b->table, file, n->debug_path, addr - bias,
				  "_PyEval_EvalFrameDefault", names);
	}
	pthread_mutex_unlock(&evaluator_builds_lock);
	return b && b->table.found ? &b->table : NULL;
}

/* This unwinder's entry for module mod (its bias, its build's table). */
static const struct evaluator_locs *
evaluator_locs(struct native_unwinder *n, Dwfl_Module *mod, uint64_t addr)
{
	struct evaluator_locs *e = NULL;
	for (uint32_t i = 0; i < n->nevaluators && !e; i++)
		if (n->evaluators[i].mod == mod)
			e = &n->evaluators[i];
	if (!e && n->nevaluators == sizeof n->evaluators / sizeof n->evaluators[0])
		return NULL;
	if (!e) {
		e = &n->evaluators[n->nevaluators++];
		e->mod = mod;
		if (!dwfl_module_getelf(mod, &e->bias))
			return e;
	}
	if (!e->table)
		e->table = evaluator_table(n, mod, addr, e->bias);
	return e;
}

/* Where this call site's evaluator keeps `next_instr`, and `frame` when
 * said, from its debug information: a site of the evaluator function
 * itself, slots off a CFA whose rule is known. The instruction pointer is
 * what counts: it points into one code object's bytecode, at one place
 * (Debian's 3.14 describes `frame` at few of its calls, `next_instr` at
 * most, in a stack slot). */
static void
read_site_dwarf(struct native_unwinder *n, struct call_site *site, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(n->dwfl, pc - 1);
	const struct evaluator_locs *e = mod ? evaluator_locs(n, mod, pc - 1) : NULL;
	site->dwarf = SITE_DWARF_NONE;
	if (!e || !e->table)
		return;
	struct varloc frame_at = varloc_table_at(e->table, 0, pc - 1 - e->bias),
		      instr_at = varloc_table_at(e->table, 1, pc - 1 - e->bias);
	if (instr_at.kind == VARLOC_NONE)
		return;
	if ((frame_at.kind == VARLOC_CFA_SLOT || instr_at.kind == VARLOC_CFA_SLOT) &&
	    !varloc_cfa_rule(mod, pc - 1, &site->cfa_reg, &site->cfa_off))
		return;
	site->frame_at = frame_at;
	site->instr_at = instr_at;
	site->dwarf = SITE_DWARF_KNOWN;
}

/* The value a location holds in the unwound state of a perf sample: a
 * register libdwfl recovered, or a stack word the sample copied (a slot
 * the copy does not reach is not read: the live stack has moved on). */
static bool
site_value(const struct native_unwinder *n, Dwfl_Frame *state, const struct call_site *site,
	   const struct varloc *v, uint64_t *out)
{
	Dwarf_Word r;
	uint64_t addr;
	const struct user_sample *us = n->sample;
	switch (v->kind) {
	case VARLOC_REG:
		if (dwfl_frame_reg(state, v->reg, &r) != 0)
			return false;
		*out = r;
		return true;
	case VARLOC_CFA_SLOT:
		if (dwfl_frame_reg(state, site->cfa_reg, &r) != 0)
			return false;
		addr = r + (uint64_t)site->cfa_off + (uint64_t)v->off;
		break;
	case VARLOC_REG_SLOT:
		if (dwfl_frame_reg(state, v->reg, &r) != 0)
			return false;
		addr = r + (uint64_t)v->off;
		break;
	default:
		return false;
	}
	if (!us || addr < us->stack_at || us->stack_len < 8 || addr - us->stack_at > us->stack_len - 8)
		return false;
	memcpy(out, us->stack + (addr - us->stack_at), 8);
	return true;
}

/* Was the evaluator call whose unwound state this is (returning to pc)
 * running the Python frame at `frame`, at instruction pointer `instr`? At
 * a given call site the evaluator keeps its frame and next instruction
 * either in callee-saved registers (their values in it, as the walk
 * recovers them) or in stack slots, the same way every time. Where a
 * sample found both in registers, the site is learned: from then on those
 * registers must hold them. Stack slots are never read: a frame the
 * evaluator ran before may have left its own there. */
static enum frame_check
check_frame(struct native_unwinder *n, Dwfl_Frame *state, uint64_t pc, uint64_t frame,
	    uint64_t instr)
{
	static const unsigned saved[] = {3, 6, 12, 13, 14, 15};   /* rbx rbp r12..r15 */
	int8_t has_frame = -1, has_instr = -1;
	Dwarf_Word v[sizeof saved / sizeof saved[0]] = {0};
	for (size_t i = 0; i < sizeof saved / sizeof saved[0]; i++) {
		if (dwfl_frame_reg(state, saved[i], &v[i]) != 0)
			continue;
		if (has_frame < 0 && v[i] == frame)
			has_frame = (int8_t)i;
		if (has_instr < 0 && near_instr(v[i], instr))
			has_instr = (int8_t)i;
	}
	struct call_site *site = keytab_find(&n->sites, pc);
	bool added;
	if (!site && n->sample && (site = keytab_put(&n->sites, pc, &added)))
		site->dwarf = SITE_DWARF_UNREAD;
	if (site && n->sample && site->dwarf == SITE_DWARF_UNREAD)
		read_site_dwarf(n, site, pc);
	if (site && n->sample && site->dwarf == SITE_DWARF_KNOWN) {
		/* The debug information says where they are at this call. */
		uint64_t f = frame, i;
		if (!site_value(n, state, site, &site->instr_at, &i) ||
		    (site->frame_at.kind != VARLOC_NONE &&
		     !site_value(n, state, site, &site->frame_at, &f)))
			return FRAME_UNVERIFIED;
		return f == frame && near_instr(i, instr) ? FRAME_VERIFIED : FRAME_MOVED;
	}
	if (site && site->learned)
		return v[site->frame_reg] == frame && near_instr(v[site->instr_reg], instr)
			       ? FRAME_VERIFIED : FRAME_MOVED;
	if (has_frame < 0)
		return FRAME_UNVERIFIED;   /* the frame is kept in a stack slot here */
	if (!site && !(site = keytab_put(&n->sites, pc, &added)))
		return FRAME_UNVERIFIED;
	if (has_instr >= 0) {
		site->learned = true;
		site->frame_reg = (uint8_t)has_frame;
		site->instr_reg = (uint8_t)has_instr;
		return FRAME_VERIFIED;
	}
	/* The frame in a register and no instruction pointer near the one
	 * read: it ran another function at this depth (a frame's address
	 * alone is the same for two functions one loop calls), or the site
	 * keeps its instruction pointer in a slot. */
	/* One look (dump) gathers no evidence: not checked. */
	if (!n->continuous)
		return FRAME_UNVERIFIED;
	return ++site->frame_only > SPILL_EVIDENCE ? FRAME_UNVERIFIED : FRAME_MOVED;
}

static bool call_ends_at(struct native_unwinder *n, uint64_t ra);

/* Code no file holds that keeps a frame pointer has a small frame: %rbp
 * at most this far above its stack pointer (a perf trampoline's is 0
 * bytes, 3.15's JIT code's 64-80). Code that keeps none leaves %rbp as a
 * caller set it: 3.14's JIT code, called by the evaluator, 776-784 bytes
 * below the evaluator's %rbp, or %rbp holding no stack address at all. */
#define ANON_FRAME_MAX 256
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
	/* A return address points after the call: look up the call itself. */
	Dwarf_Addr at = activation ? pc : pc - 1;
	const struct sym_entry *e = lookup(w->n, at);
	if (!activation && (!e || (!e->mapped && (!e->anon_code || !call_ends_at(w->n, pc))))) {
		/* A caller in no file: the step that found it went astray (code
		 * without call frame information unwound by an %rbp that held
		 * no frame pointer), not a frame to show. The walk ends before
		 * it, as where no call frame information leads on. Code no file
		 * holds (a JIT's, a perf trampoline) is a caller when a call
		 * ends there; libdwfl steps on from it by its frame pointer. */
		w->astray = true;
		return DWARF_CB_ABORT;
	}
	if (w->last_anon && !w->anon_frame_pointer) {
		/* found by an %rbp that was not the code's own frame pointer */
		w->no_frame_pointer = true;
		return DWARF_CB_ABORT;
	}
	w->last_in_entry = false;
	w->last_anon = e && e->anon_code;
	if (w->last_anon) {
		Dwarf_Word rbp, rsp;
		w->anon_frame_pointer = dwfl_frame_reg(state, 6, &rbp) == 0 &&
					dwfl_frame_reg(state, 7, &rsp) == 0 && rbp >= rsp &&
					rbp - rsp <= ANON_FRAME_MAX;
	}
	struct native_frame *f = &w->out[w->count++];
	memset(f, 0, sizeof *f);
	f->pc = pc;
	Dwarf_Word reg;
	w->last_sp = dwfl_frame_reg(state, 7, &reg) == 0 ? reg : 0;
	w->last_has_rbp = dwfl_frame_reg(state, 6, &reg) == 0;
	w->last_rbp = w->last_has_rbp ? reg : 0;
	if (!e || (!e->mapped && !e->anon_code))
		return DWARF_CB_OK;   /* running code in no file nor executable memory */
	snprintf(f->library, sizeof f->library, "%s", w->n->names + e->lib);
	f->anon_code = e->anon_code;
	w->last_in_entry = e->entry;
	if (e->name) {
		snprintf(f->symbol, sizeof f->symbol, "%s", w->n->names + e->name);
		f->offset = pc - e->start;
	}
	f->fde_known = e->fde_known;
	f->fde_offset = e->fde_offset;
	if (w->expect_frame && !w->evaluator_seen && mixed_is_evaluator(f)) {
		w->evaluator_seen = true;
		w->check = check_frame(w->n, state, pc, w->expect_frame, w->expect_instr);
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

/* Does an x86-64 call instruction end just before ra? A direct call
 * (e8 rel32) or an indirect one (ff /2: register, memory, rip-relative,
 * with an optional REX prefix), its length worked out from its ModRM. */
static bool
call_ends_at(struct native_unwinder *n, uint64_t ra)
{
	uint8_t code[8];
	if (ra < sizeof code || read_target(n, ra - sizeof code, code, sizeof code) != sizeof code)
		return false;
	const uint8_t *end = code + sizeof code;
	if (end[-5] == 0xe8)
		return true;
	for (int len = 2; len <= 7; len++) {
		const uint8_t *op = end - len;
		if (op[0] != 0xff || ((op[1] >> 3) & 7) != 2)
			continue;
		unsigned mod = op[1] >> 6, rm = op[1] & 7;
		int want = 2 + (mod == 1 ? 1 : mod == 2 || (mod == 0 && rm == 5) ? 4 : 0);
		if (mod != 3 && rm == 4)   /* a SIB byte, with a disp32 when its base is 5 */
			want += 1 + (mod == 0 && op + 2 < end && (op[2] & 7) == 5 ? 4 : 0);
		if (want == len)   /* a REX prefix before it changes nothing here */
			return true;
	}
	return false;
}

/* Where the frame whose stack pointer is sp may keep its frame pointer:
 * each stack word above sp that is followed by a return address (a word
 * just after a call instruction). Code built with frame pointers pushes
 * its caller's %rbp beside the return address and points %rbp there. */
static size_t
frame_pointer_candidates(struct native_unwinder *n, uint64_t sp, uint64_t *out, size_t max)
{
	uint64_t words[1024];   /* 8 KiB of stack above sp */
	size_t got = read_target(n, sp, words, sizeof words) / sizeof words[0];
	size_t k = 0;
	/* A caller built the same way saved its own frame pointer, higher on
	 * the stack: those first, then the rest (a caller without one). */
	for (int chained = 1; chained >= 0; chained--)
		for (size_t i = 0; i + 1 < got && k < max; i++) {
			uint64_t at = sp + i * sizeof words[0], saved = words[i];
			if ((saved > at && saved - at < (1u << 20)) == (bool)chained &&
			    call_ends_at(n, words[i + 1]))
				out[k++] = at;
		}
	return k;
}

/* CPython 3.12's perf trampoline keeps no frame pointer: "sub $8, %rsp;
 * call *%rcx; add $8, %rsp; ret". Its caller's return address lies 8 bytes
 * above its stack pointer. */
static const uint8_t TRAMPOLINE_312[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					 0x48, 0x83, 0xc4, 0x08, 0xc3};
#define TRAMPOLINE_312_CALL_END 6   /* where its call ends: the return address */
/* Walks continued past such code, at most. */
#define RESUME_HOPS 64

/* Can the walk go on past its last frame, code no file holds, by the
 * code's known shape? Sets the caller's registers (n->resume_*). */
static bool
resume_past(struct native_unwinder *n, const struct walk *w)
{
	const struct native_frame *f = &w->out[w->count - 1];
	uint8_t code[sizeof TRAMPOLINE_312];
	uint64_t ret;
	if (!w->last_sp || f->pc < TRAMPOLINE_312_CALL_END ||
	    read_target(n, f->pc - TRAMPOLINE_312_CALL_END, code, sizeof code) != sizeof code ||
	    memcmp(code, TRAMPOLINE_312, sizeof code) != 0 ||
	    read_target(n, w->last_sp + 8, &ret, sizeof ret) != sizeof ret)
		return false;
	n->resume_pc = ret;
	n->resume_sp = w->last_sp + 16;
	n->resume_rbp = w->last_has_rbp ? w->last_rbp : 0;
	return true;
}

static int
walk_thread(struct native_unwinder *n, struct walk *w)
{
	w->count = 0;
	w->evaluator_seen = false;
	w->check = FRAME_UNVERIFIED;
	w->last_in_entry = false;
	w->last_sp = 0;
	w->last_has_rbp = false;
	w->astray = false;
	w->last_anon = false;
	w->anon_frame_pointer = false;
	w->no_frame_pointer = false;
	finding_for = n->pid;
	int rc = dwfl_getthread_frames(n->dwfl, n->tid, take_frame, w);
	for (int hops = 0; hops < RESUME_HOPS && w->last_anon && w->count < w->max &&
			   resume_past(n, w); hops++) {
		w->astray = w->no_frame_pointer = w->last_anon = false;
		n->resume = true;
		rc = dwfl_getthread_frames(n->dwfl, n->tid, take_frame, w);
		n->resume = false;
	}
	return w->astray || w->no_frame_pointer ? 0 : rc;
}

/* The kernel gives a blocked thread's %rsp and %rip, not its %rbp: the
 * walk stops at the first frame built with frame pointers (python3.13+
 * on Debian sid), whose caller is found by %rbp. No frame between it and
 * the system call saved %rbp (the walk would have read it back), so the
 * thread's %rbp is still that frame's: try the stack words that look like
 * one, and keep the first walk that then reaches the thread's start with
 * the same frames as far as the first went. Never a guess left standing:
 * a walk that does not get to the start is not taken. */
static bool
recover_frame_pointer(struct native_unwinder *n, struct walk *w, int *rc)
{
	if (n->sample || w->count == 0 || w->count == w->max || w->last_has_rbp || !w->last_sp ||
	    at_thread_start(w))
		return false;
	uint64_t cand[8];
	size_t ncand = frame_pointer_candidates(n, w->last_sp, cand, 8);
	struct native_frame *first = malloc(w->count * sizeof *first);
	if (!first)
		return false;
	memcpy(first, w->out, w->count * sizeof *first);
	size_t nfirst = w->count;
	for (size_t i = 0; i < ncand; i++) {
		n->rbp = cand[i];
		*rc = walk_thread(n, w);
		bool same = w->count > nfirst;
		for (size_t k = 0; same && k < nfirst; k++)
			same = w->out[k].pc == first[k].pc;
		/* stale words in a frame's locals lead to addresses in no file,
		 * or to words that follow no call */
		for (size_t k = nfirst; same && k < w->count; k++)
			same = w->out[k].library[0] != '\0' && call_ends_at(n, w->out[k].pc);
		if (same && (w->count == w->max || (*rc == 0 && at_thread_start(w)))) {
			n->rbp = 0;
			free(first);
			return true;
		}
	}
	n->rbp = 0;
	*rc = walk_thread(n, w);
	free(first);
	return false;
}

/* Why a walk of count frames ended where it did; "" at the thread's start. */
static void
end_reason(const struct native_unwinder *n, const struct walk *w, int rc, char *why, size_t wlen)
{
	if (w->count == w->max)
		snprintf(why, wlen, "more than %zu frames: the rest left out", w->max);
	else if (w->count && (w->no_frame_pointer || (w->last_anon && !at_thread_start(w))))
		snprintf(why, wlen, "the walk ends in code no file holds (%s): it keeps no frame "
				    "pointer that leads to its caller",
			 w->out[w->count - 1].library);
	else if (w->astray && w->count)
		snprintf(why, wlen, "the walk ends in %s: the return address its unwinding gave "
				    "lies in no file", w->out[w->count - 1].library[0]
							    ? w->out[w->count - 1].library
							    : "an address in no file");
	else if (rc == 0 && w->count && !at_thread_start(w) && !n->sample)
		snprintf(why, wlen, "the walk ends in %s: its caller is found by a register "
				    "(%%rbp: code built with frame pointers) that the kernel gives "
				    "only for a stopped thread", w->out[w->count - 1].library);
	else if (rc == 0 && w->count && !at_thread_start(w))
		snprintf(why, wlen, "the walk ends in %s: no call frame information leads on",
			 w->out[w->count - 1].library[0] ? w->out[w->count - 1].library
							 : "an address in no file");
	else if (rc != 0 && w->count && !n->sample)
		snprintf(why, wlen, "the stack's next frame needs a register the kernel does not "
				    "give without stopping the thread (%s)", dwfl_errmsg(-1));
	else if (rc != 0 && w->count)
		snprintf(why, wlen, "the sampled stack leads no further (%s)", dwfl_errmsg(-1));
	else if (rc != 0)
		snprintf(why, wlen, "not unwound: %s", dwfl_errmsg(-1));
}

/* Is thread tid in a system call now? *call gets its registers. */
static bool
read_call(pid_t pid, pid_t tid, struct kwait_call *call)
{
	char path[64], text[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	return read_small_file(path, text, sizeof text) > 0 && kwait_parse_syscall(text, call);
}

/* Sample thread tid while it runs (every 0.2 ms of its CPU time); false
 * with why when the kernel refuses (said the same for every thread from
 * then on) or has no room for it now. */
static bool
follow_running(struct native_unwinder *n, pid_t tid, char *why, size_t wlen)
{
	if (n->perf_refused[0]) {
		snprintf(why, wlen, "%s", n->perf_refused);
		return false;
	}
	if (!n->perf && !(n->perf = n->continuous ? perf_threads_new(n->period_ns, n->stack_bytes,
								     NATIVE_PERF_THREADS_MAX)
						  : perf_threads_new(200000, PERFSAMPLE_STACK_MAX,
								     NATIVE_PERF_THREADS_MAX))) {
		snprintf(why, wlen, "running on a CPU; out of memory for its perf sample");
		return false;
	}
	switch (perf_threads_follow(n->perf, tid, why, wlen)) {
	case PERF_FOLLOWED:
		return true;
	case PERF_REFUSED:
		snprintf(n->perf_refused, sizeof n->perf_refused, "%s", why);
		return false;
	case PERF_NO_ROOM:
	case PERF_GONE:
		break;
	}
	return false;
}

void
native_prepare(struct native_unwinder *n, const pid_t *tids, size_t count)
{
	pid_t *running = malloc((count ? count : 1) * sizeof *running);
	if (!running)
		return;
	size_t k = 0;
	char why[256];
	for (size_t i = 0; i < count; i++) {
		struct kwait_call call;
		if (read_call(n->pid, tids[i], &call) && call.state == KWAIT_RUNNING &&
		    follow_running(n, tids[i], why, sizeof why))
			running[k++] = tids[i];
	}
	if (k)
		perf_threads_wait(n->perf, running, k, 250);
	free(running);
}

/* A running thread: the kernel's newest sample of its registers and stack
 * top (waiting up to 250 ms for one when none was asked for before). */
static size_t
running_thread_frames(struct native_unwinder *n, pid_t tid, struct native_frame *out, size_t max,
		      char *why, size_t wlen, uint64_t frame, uint64_t instr)
{
	if (!follow_running(n, tid, why, wlen))
		return 0;
	struct user_sample *us = malloc(sizeof *us);
	if (!us) {
		snprintf(why, wlen, "running on a CPU; out of memory for its sample");
		return 0;
	}
	if (!n->continuous)
		perf_threads_wait(n->perf, &tid, 1, 250);
	if (!perf_threads_newest(n->perf, tid, us)) {
		if (n->continuous)
			snprintf(why, wlen, "running on a CPU, no sample of it since the last");
		else
			snprintf(why, wlen, "running on a CPU, but no sample of it came within 250 ms "
					    "(it did not run for 0.2 ms of CPU time)");
		free(us);
		return 0;
	}
	n->tid = tid;
	n->sample = us;
	struct walk w = {.n = n, .out = out, .max = max, .expect_frame = frame,
			 .expect_instr = instr};
	int rc = walk_thread(n, &w);
	end_reason(n, &w, rc, why, wlen);
	n->sample = NULL;
	free(us);
	n->unverified = frame && w.check == FRAME_UNVERIFIED;
	if (frame && w.check == FRAME_MOVED) {
		snprintf(why, wlen, "running on a CPU; its native sample was not taken in the Python "
				    "frame just read (it moved in between)");
		n->moved = true;
		return 0;
	}
	return w.count;
}

/* A core's thread: every register from its NT_PRSTATUS note. */
static size_t
core_thread_frames(struct native_unwinder *n, pid_t tid, struct native_frame *out, size_t max,
		   char *why, size_t wlen)
{
	const struct core_thread *ct = NULL;
	for (size_t i = 0; i < n->core->nthreads && !ct; i++)
		if (n->core->threads[i].tid == tid)
			ct = &n->core->threads[i];
	if (!ct) {
		snprintf(why, wlen, "the core has no registers of thread %d", (int)tid);
		return 0;
	}
	/* user_regs_struct order to DWARF's: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 */
	static const int from[16] = {10, 12, 11, 5, 13, 14, 4, 19, 9, 8, 7, 6, 3, 2, 1, 0};
	struct user_sample *us = calloc(1, sizeof *us);
	if (!us) {
		snprintf(why, wlen, "out of memory for its registers");
		return 0;
	}
	for (size_t i = 0; i < 16; i++)
		us->regs[i] = ct->regs[from[i]];
	us->pc = ct->regs[CORE_REG_RIP];
	us->stack_at = ct->regs[CORE_REG_RSP];
	n->tid = tid;
	n->sample = us;
	finding_in = n->core;
	struct walk w = {.n = n, .out = out, .max = max};
	int rc = walk_thread(n, &w);
	end_reason(n, &w, rc, why, wlen);
	finding_in = NULL;
	n->sample = NULL;
	free(us);
	return w.count;
}

size_t
native_thread_frames(struct native_unwinder *n, pid_t tid, struct native_frame *out, size_t max,
		     char *why, size_t wlen)
{
	why[0] = '\0';
	uint64_t frame = n->expect_frame, instr = n->expect_instr;
	n->expect_frame = n->expect_instr = 0;
	n->moved = n->unverified = false;
	if (n->core)
		return core_thread_frames(n, tid, out, max, why, wlen);
	struct kwait_call call;
	/* A sampler follows a thread from the first time it is seen running
	 * (its samples come from the next pass on), not every thread it sees:
	 * a pool of thousands mostly waits, and each followed thread costs a
	 * file descriptor and a locked ring. */
	bool kept = n->call_tid == tid;
	n->call_tid = 0;
	if (kept) {
		call = n->call;
	} else if (!read_call(n->pid, tid, &call)) {
		snprintf(why, wlen, "its registers are not readable (the thread ended?)");
		return 0;
	}
	if (call.state == KWAIT_RUNNING) {
		size_t got = running_thread_frames(n, tid, out, max, why, wlen, frame, instr);
		if (n->moved)
			return 0;
		/* No sample: it stopped running (a GIL handoff, a lock) and is
		 * blocked now, which gives its registers another way. */
		if (got || n->continuous || !read_call(n->pid, tid, &call) ||
		    call.state == KWAIT_RUNNING)
			return got;
		why[0] = '\0';
	}
	if (!call.sp || !call.pc) {
		snprintf(why, wlen, "no registers from the kernel");
		return 0;
	}
	n->tid = tid;
	n->sp = call.sp;
	n->pc = call.pc;
	n->rbp = 0;
	struct walk w = {.n = n, .out = out, .max = max};
	int rc = walk_thread(n, &w);
	recover_frame_pointer(n, &w, &rc);
	end_reason(n, &w, rc, why, wlen);
	return w.count;
}

void
native_continuous(struct native_unwinder *n, uint64_t period_ns, size_t stack_bytes)
{
	n->continuous = true;
	n->period_ns = period_ns;
	n->stack_bytes = stack_bytes;
}

const char *
native_perf_refusal(const struct native_unwinder *n)
{
	return n->perf_refused[0] ? n->perf_refused : NULL;
}

uint64_t
native_sampling(struct native_unwinder *n, bool on)
{
	return n->perf ? perf_threads_enable(n->perf, on) : 0;
}

void
native_expect_frame(struct native_unwinder *n, uint64_t frame, uint64_t instr)
{
	n->expect_frame = frame;
	n->expect_instr = instr;
}

bool
native_moved(const struct native_unwinder *n)
{
	return n->moved;
}

bool
native_unverified(const struct native_unwinder *n)
{
	return n->unverified;
}

void
native_forget(struct native_unwinder *n, pid_t tid)
{
	if (n->perf)
		perf_threads_forget(n->perf, tid);
}

bool
native_blocked_at(struct native_unwinder *n, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	struct kwait_call call;
	n->call_tid = 0;
	if (!read_call(n->pid, tid, &call))
		return false;
	n->call_tid = tid;
	n->call = call;
	if (call.state == KWAIT_RUNNING || !call.sp || !call.pc)
		return false;
	*sp = call.sp;
	*pc = call.pc;
	return true;
}
