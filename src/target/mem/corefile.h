/* An ELF core file (gcore, systemd-coredump, the kernel's) as a process to
 * read: its memory (the PT_LOAD segments, and for pages the core left out
 * the files its NT_FILE note names, looked up under a root), its mappings,
 * its threads and their registers (NT_PRSTATUS), its name (NT_PRPSINFO).
 * x86-64 cores. */
#ifndef TT_COREFILE_H
#define TT_COREFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "mem/remote.h"

/* user_regs_struct order: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx
 * rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs */
#define CORE_NREGS 27
#define CORE_REG_RBP 4
#define CORE_REG_RIP 16
#define CORE_REG_RSP 19

struct core_thread {
	pid_t tid;
	int signo;                 /* the signal it stopped on (the dumping one) */
	uint64_t regs[CORE_NREGS];
};

struct core_load {
	uint64_t vaddr, memsz;
	uint64_t filesz;           /* bytes of it in the core (0: left out) */
	uint64_t offset;
	bool writable;             /* the mapping was writable (PF_W) */
	bool executable;           /* and executable (PF_X) */
};

struct core_map {
	uint64_t start, end, offset;   /* offset: in the file, bytes */
	char *path;                    /* as the process saw it */
	int fd;                        /* its file under the root; -1 not opened, -2 missing */
};

struct corefile {
	int fd;
	uint64_t size;
	char root[512];            /* "" for the machine's own */
	struct core_load *loads;
	size_t nloads;
	struct core_map *maps;
	size_t nmaps;
	struct core_thread *threads;
	size_t nthreads;
	pid_t pid;                 /* the process's, from NT_PRPSINFO (0 when absent) */
	char fname[17];            /* its command name */
	char psargs[81];           /* its command line, as far as the note keeps */
	uint64_t missing_bytes;    /* of the segments, past the end of a cut core */
	uint64_t entry;            /* the executable's entry point (NT_AUXV AT_ENTRY); 0 */
	char exe[512];             /* the executable's file instead of the one mapped */
};

/* Read the core's headers and notes. A file that is not an x86-64 ELF core
 * is one clear error; a core cut short opens (missing_bytes says how much
 * is gone). root: where the mapped files are looked for (NULL: "/"). */
tt_status corefile_open(struct corefile *c, const char *path, const char *root,
			struct tt_error *err);
void corefile_close(struct corefile *c);

/* Its memory: the core's segments, then the mapped files. */
struct remote_backend corefile_backend(struct corefile *c);

/* Read the executable from `path` (as given, not under the root): it was
 * moved or deleted since. false when the core does not say which mapping
 * is the executable's. */
bool corefile_set_exe(struct corefile *c, const char *path);

/* The root the process's own files are under: the one given, else the
 * part before "/usr/" of the executable's path (a process in a chroot or
 * container dumped from the host), else "/". Where its debug files and
 * its /tmp are. */
void corefile_files_root(const struct corefile *c, char *out, size_t len);

/* Is at in executable memory that no file of the core's NT_FILE note
 * holds (a JIT's code, perf trampolines)? */
bool corefile_anon_code(const struct corefile *c, uint64_t at);

/* The file of mapping i under the root, opened once (-1 when missing). */
int corefile_map_fd(struct corefile *c, size_t i);

enum core_file_state {
	CORE_FILE_SAME,        /* its build-id is the one the core's copy of its headers has */
	CORE_FILE_UNCHECKED,   /* no build-id on one side (the core kept no headers) */
	CORE_FILE_DIFFERS,     /* another build: what is read from it may be wrong */
	CORE_FILE_MISSING,
};
/* Is the file of mapping i (the first of its file) the one the process
 * had? Compares the build-id in the headers the core kept (kernel cores
 * keep each ELF file's first page) with the file's. */
enum core_file_state corefile_check_map(struct corefile *c, size_t i);

#endif
