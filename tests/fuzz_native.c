/* Fuzzing the native frames' ELF and CFI path on damaged libraries.
 *
 * This process is its own target: it maps a damaged copy of a real
 * library (truncated, bytes flipped in its call frame information, huge
 * lengths, an FDE whose CIE pointer points at itself, a broken section
 * table) as code, and parks a thread in a system call whose return address
 * lies in that copy's .text. native.c then unwinds that thread, so
 * libdwfl reads the damaged file's CFI and symbols through our callbacks.
 * Each case must come back, within a few seconds, with frames or a
 * reason: no crash, no hang, and memory that does not keep growing.
 * Likewise frame-pointer chains through code no file holds (a JIT's):
 * chains that loop, go round, run into unmapped memory, or are random. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "native/unwind.h"
#include "tap.h"

#define CASES 120

/* Park the calling thread in read(fd) with `ra` as its return address:
 * the default CFI at a function's entry (CFA = %rsp + 8, the return
 * address below it) stays true, so an unwinder goes from here to ra. */
void tt_park_with_ra(uint64_t ra, int fd, void *buf);
__asm__(".text\n"
	".globl tt_park_with_ra\n"
	".type tt_park_with_ra, @function\n"
	"tt_park_with_ra:\n"
	".cfi_startproc\n"
	"	mov %rdi, (%rsp)\n"
	"	mov %esi, %edi\n"
	"	mov %rdx, %rsi\n"
	"	mov $1, %edx\n"
	"	xor %eax, %eax\n"
	"	syscall\n"
	"	mov $60, %eax\n"       /* woken: end this thread alone, never return */
	"	xor %edi, %edi\n"
	"	syscall\n"
	".cfi_endproc\n"
	".size tt_park_with_ra, .-tt_park_with_ra\n");

/* The same with the caller's %rbp saved as rbp: a frame-pointer chain for
 * an unwinder to follow from ra. */
void tt_park_with_ra_rbp(uint64_t ra, int fd, void *buf, uint64_t rbp);
__asm__(".text\n"
	".globl tt_park_with_ra_rbp\n"
	".type tt_park_with_ra_rbp, @function\n"
	"tt_park_with_ra_rbp:\n"
	".cfi_startproc\n"
	"	mov %rdi, (%rsp)\n"
	"	push %rcx\n"              /* the caller's %rbp, saved as a C function */
	".cfi_adjust_cfa_offset 8\n"  /* saves it: a blocked thread's registers */
	".cfi_offset %rbp, -16\n"     /* are only its %rsp and %rip */
	"	mov %esi, %edi\n"
	"	mov %rdx, %rsi\n"
	"	mov $1, %edx\n"
	"	xor %eax, %eax\n"
	"	syscall\n"
	"	mov $60, %eax\n"
	"	xor %edi, %edi\n"
	"	syscall\n"
	".cfi_endproc\n"
	".size tt_park_with_ra_rbp, .-tt_park_with_ra_rbp\n");

struct parked {
	uint64_t ra;
	int fd;
	_Atomic pid_t tid;
	char buf[8];
};

static void *
park(void *arg)
{
	struct parked *p = arg;
	atomic_store(&p->tid, (pid_t)syscall(SYS_gettid));
	tt_park_with_ra(p->ra, p->fd, p->buf);
	return NULL;
}

/* Start fn(arg), which stores its tid in *tid and parks in a read; wait
 * until it is in its read. Its tid, or 0 when it could not be started. */
static pid_t
start_parked(void *(*fn)(void *), void *arg, _Atomic pid_t *tid)
{
	pthread_t th;
	if (pthread_create(&th, NULL, fn, arg) != 0)
		return 0;
	pthread_detach(th);
	while (!atomic_load(tid))
		usleep(100);
	usleep(2000);   /* into its read */
	return atomic_load(tid);
}

/* A thread parked in read(fd) with return address ra, once in its read;
 * its tid (0 when it could not be started). */
static pid_t
park_thread(uint64_t ra, int fd)
{
	struct parked *p = calloc(1, sizeof *p);
	if (!p)
		return 0;
	p->ra = ra;
	p->fd = fd;
	return start_parked(park, p, &p->tid);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

/* Anonymous executable memory as a JIT's: a direct call (e8 rel32) ends
 * before each return address chain_ra gives, as the unwinder asks. */
#define CODE_CALLS 800
static uint8_t *anon_code_page;

static uint64_t
chain_ra(void)
{
	return (uint64_t)(uintptr_t)anon_code_page + 5 * (1 + rnd(CODE_CALLS - 1));
}

#define CHAIN_WORDS 32
enum chain_kind { CHAIN_SELF, CHAIN_CYCLE, CHAIN_INTO_UNMAPPED, CHAIN_RA_UNMAPPED,
		  CHAIN_CLIMBING, CHAIN_RANDOM, CHAIN_KINDS };

struct chained {
	enum chain_kind kind;
	uint64_t unmapped;   /* an address nothing is mapped at */
	int fd;
	_Atomic pid_t tid;
	char buf[8];
};

/* Lays out frames (saved %rbp, return address pairs) on this thread's
 * own stack, as the unwinder's checks expect of a frame pointer, then
 * parks with %rbp at the first. */
static void *
park_chain(void *arg)
{
	struct chained *p = arg;
	uint64_t f[CHAIN_WORDS];
	uint64_t at = (uint64_t)(uintptr_t)f;
	for (int i = 0; i < CHAIN_WORDS; i++)
		f[i] = i % 2 ? chain_ra() : at + 8 * (uint64_t)(i + 2);   /* climbing */
	f[CHAIN_WORDS - 2] = 0;
	switch (p->kind) {
	case CHAIN_SELF:
		f[0] = at;
		break;
	case CHAIN_CYCLE:
		f[2] = at;
		break;
	case CHAIN_INTO_UNMAPPED:
		f[4] = p->unmapped;
		break;
	case CHAIN_RA_UNMAPPED:
		f[3] = p->unmapped + 64;
		break;
	case CHAIN_CLIMBING:
		break;
	default:
		for (int i = 0; i < CHAIN_WORDS; i++) {
			switch (rnd(5)) {
			case 0: f[i] = at + 8 * rnd(CHAIN_WORDS + 4); break;
			case 1: f[i] = chain_ra(); break;
			case 2: f[i] = ((uint64_t)rnd(~0u) << 32) | rnd(~0u); break;
			case 3: f[i] = p->unmapped + rnd(4096); break;
			default: f[i] = 0; break;
			}
		}
	}
	atomic_store(&p->tid, (pid_t)syscall(SYS_gettid));
	tt_park_with_ra_rbp(chain_ra(), p->fd, p->buf, at);
	return NULL;   /* never reached */
}

/* A thread parked in read(fd) at the start of a chain of kind; its tid. */
static pid_t
park_chain_thread(enum chain_kind kind, uint64_t unmapped, int fd)
{
	struct chained *p = calloc(1, sizeof *p);
	if (!p)
		return 0;
	p->kind = kind;
	p->unmapped = unmapped;
	p->fd = fd;
	return start_parked(park_chain, p, &p->tid);
}

#define CHAIN_CASES 120

/* Every chain's walk comes back; the looping ones end within a few frames
 * saying why. false: the code page could not be made. */
static bool
fuzz_chains(int fd)
{
	anon_code_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon_code_page == MAP_FAILED || gone == MAP_FAILED)
		return false;
	for (int i = 0; i < CODE_CALLS; i++)
		memcpy(anon_code_page + 5 * i, "\xe8\0\0\0\0", 5);
	munmap(gone, 4096);
	int walked = 0, looped_long = 0, most = 0, in_code = 0, climbed = 0;
	char why_loop[256] = "", why_climb[256] = "";
	for (int i = 0; i < CHAIN_CASES; i++) {
		enum chain_kind kind = i < CHAIN_RANDOM ? (enum chain_kind)i : CHAIN_RANDOM;
		pid_t tid = park_chain_thread(kind, (uint64_t)(uintptr_t)gone, fd);
		if (!tid)
			return false;
		alarm(10);
		struct native_unwinder *n;
		struct tt_error err;
		if (native_open(&n, getpid(), &err) == TT_OK) {
			struct native_frame nf[NATIVE_MAX_FRAMES];
			char why[256] = "";
			size_t got = native_thread_frames(n, tid, nf, NATIVE_MAX_FRAMES, why,
							  sizeof why);
			size_t anon = 0;
			for (size_t k = 0; k < got; k++)
				anon += nf[k].anon_code;
			in_code += anon > 0;
			if (kind == CHAIN_CLIMBING && getenv("TT_FUZZ_VERBOSE"))
				for (size_t k = 0; k < got; k++)
					printf("# %#llx %s %s\n", (unsigned long long)nf[k].pc,
					       nf[k].library, nf[k].symbol);
			if (kind == CHAIN_CLIMBING) {
				climbed = (int)anon;
				snprintf(why_climb, sizeof why_climb, "%s", why);
			}
			if ((kind == CHAIN_SELF || kind == CHAIN_CYCLE) && (got > 4 || !why[0]))
				looped_long++;
			if (kind == CHAIN_SELF)
				snprintf(why_loop, sizeof why_loop, "%s", why);
			if ((int)got > most)
				most = (int)got;
			walked++;
			native_close(n);
		}
		alarm(0);
	}
	tap_ok(walked == CHAIN_CASES && in_code >= CHAIN_RANDOM,
	       "%d frame-pointer chains through code no file holds (looping, round, into "
	       "unmapped memory, random): every walk came back (%d walked, %d through that code, "
	       "at most %d frames)", CHAIN_CASES, walked, in_code, most);
	tap_ok(looped_long == 0, "a chain that loops or goes round ends within a few frames "
	       "saying why: %s", why_loop);
	/* the code parked in, then one frame per (saved %rbp, return address) */
	tap_ok(climbed == CHAIN_WORDS / 2 + 1, "a chain climbing its stack is followed: %d of "
	       "its %d frames; %s", climbed, CHAIN_WORDS / 2 + 1, why_climb);
	return true;
}

struct section {
	uint64_t off, size;
};

/* A section's place in the file, by name. */
static struct section
find_section(const char *path, const char *want)
{
	struct section s = {0, 0};
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstr;
	if (e && elf_getshdrstrndx(e, &shstr) == 0) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
			if (name && strcmp(name, want) == 0) {
				s.off = sh.sh_offset;
				s.size = sh.sh_size;
			}
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return s;
}

static void
put_u32(uint8_t *b, size_t len, uint64_t at, uint32_t v)
{
	if (at + 4 <= len)
		memcpy(b + at, &v, 4);
}

/* One damage of the library's bytes; *len may shrink. */
static const char *
damage(uint8_t *b, size_t *len, struct section eh, struct section hdr, int kind)
{
	switch (kind) {
	case 0:
		*len = 64 + rnd((uint32_t)*len - 64);
		return "truncated";
	case 1:
		for (int i = 0, n = 1 + (int)rnd(16); i < n && eh.size; i++)
			b[eh.off + rnd((uint32_t)eh.size)] ^= (uint8_t)(1 + rnd(255));
		return "bytes flipped in .eh_frame";
	case 2:
		for (int i = 0, n = 1 + (int)rnd(8); i < n && hdr.size; i++)
			b[hdr.off + rnd((uint32_t)hdr.size)] ^= (uint8_t)(1 + rnd(255));
		return "bytes flipped in .eh_frame_hdr";
	case 3:
		put_u32(b, *len, eh.off + (rnd((uint32_t)eh.size) & ~3u), 0xfffffff0u - rnd(64));
		return "a huge length in .eh_frame";
	case 4: {
		/* walk the records to the k-th FDE; point its CIE pointer at itself */
		uint64_t at = eh.off, end = eh.off + eh.size;
		uint32_t k = rnd(40);
		while (at + 8 <= end) {
			uint32_t rlen, id;
			memcpy(&rlen, b + at, 4);
			memcpy(&id, b + at + 4, 4);
			if (rlen == 0 || rlen == 0xffffffffu || at + 4 + rlen > end)
				break;
			if (id != 0 && k-- == 0) {
				put_u32(b, *len, at + 4, 0);   /* "a CIE" that has an FDE's body */
				put_u32(b, *len, at + 4, 4);   /* ...or the pointer back at itself */
				break;
			}
			at += 4 + rlen;
		}
		return "an FDE's CIE pointer pointing at itself";
	}
	default: {
		/* the section header table out of the file, or its count huge */
		GElf_Ehdr *eh64 = (GElf_Ehdr *)b;
		if (rnd(2))
			eh64->e_shoff = ~0ull - rnd(1000);
		else
			eh64->e_shnum = (uint16_t)(0xff00 + rnd(255));
		return "a broken section header table";
	}
	}
}

/* Heap in use, KB: what the unwinders keep (the parked threads' stacks and
 * the copies' mappings are not on it). */
static long
heap_kb(void)
{
	struct mallinfo2 mi = mallinfo2();
	return (long)(mi.uordblks / 1024);
}

static void
on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "Bail out! a native walk on a damaged library hung\n";
	if (write(1, msg, sizeof msg - 1) < 0) {
		/* nothing left to say it with */
	}
	_exit(1);
}

int
main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libz.so.1";
	elf_version(EV_CURRENT);
	int fd = open(lib, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		printf("1..0 # SKIP %s not found\n", lib);
		return 0;
	}
	size_t size = (size_t)st.st_size;
	uint8_t *orig = malloc(size), *copy = malloc(size);
	if (!orig || !copy || read(fd, orig, size) != (ssize_t)size)
		return 99;
	close(fd);
	struct section eh = find_section(lib, ".eh_frame"), hdr = find_section(lib, ".eh_frame_hdr");
	struct section text = find_section(lib, ".text");
	if (!eh.size || !text.size) {
		printf("1..0 # SKIP %s has no .eh_frame or .text\n", lib);
		return 0;
	}
	char dir[] = "/tmp/tt-fuzz-native-XXXXXX";
	if (!mkdtemp(dir))
		return 99;
	int pipefd[2];
	if (pipe(pipefd) != 0)
		return 99;
	signal(SIGALRM, on_alarm);
	/* A return address in no file (anonymous memory: where a step that
	 * went astray lands) is not a frame: the walk ends before it. */
	{
		void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
		uint64_t ra = (uint64_t)(uintptr_t)anon + 64;
		pid_t tid = anon == MAP_FAILED ? 0 : park_thread(ra, pipefd[0]);
		if (!tid)
			return 99;
		alarm(10);
		struct native_unwinder *n;
		struct tt_error err;
		size_t got = 0, astray = 0;
		char why[512] = "";
		if (native_open(&n, getpid(), &err) == TT_OK) {
			struct native_frame nf[NATIVE_MAX_FRAMES];
			got = native_thread_frames(n, tid, nf, NATIVE_MAX_FRAMES, why, sizeof why);
			for (size_t k = 0; k < got; k++)
				astray += nf[k].pc == ra;
			native_close(n);
		}
		alarm(0);
		tap_ok(got >= 1 && astray == 0 && why[0],
		       "a return address in anonymous memory ends the walk before it: %zu frames, "
		       "%zu at it; %s", got, astray, why);
	}
	if (!fuzz_chains(pipefd[0]))
		return 99;
	int walked = 0, refused = 0, frames_total = 0, in_copy = 0, counts[6] = {0};
	long heap_at_10 = 0, heap_end = 0;
	for (int i = 0; i < CASES; i++) {
		int kind = i % 6;
		memcpy(copy, orig, size);
		size_t len = size;
		const char *what = damage(copy, &len, eh, hdr, kind);
		counts[kind]++;
		char path[64];
		snprintf(path, sizeof path, "%s/lib%d.so", dir, i);
		int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0 || write(out, copy, len) != (ssize_t)len)
			return 99;
		close(out);
		int in = open(path, O_RDONLY);
		void *map = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, in, 0);
		close(in);
		if (map == MAP_FAILED)
			return 99;
		/* a return address in the middle of its code (when not cut off) */
		uint64_t at = text.off + rnd((uint32_t)text.size);
		if (at >= len)
			at = len / 2;
		pid_t tid = park_thread((uint64_t)(uintptr_t)map + at, pipefd[0]);
		if (!tid)
			return 99;
		alarm(10);
		struct native_unwinder *n;
		struct tt_error err;
		if (native_open(&n, getpid(), &err) != TT_OK) {
			refused++;
		} else {
			struct native_frame nf[NATIVE_MAX_FRAMES];
			char why[512];
			size_t got = native_thread_frames(n, tid, nf, NATIVE_MAX_FRAMES,
							  why, sizeof why);
			frames_total += (int)got;
			for (size_t k = 0; k < got; k++)
				in_copy += nf[k].pc >= (uint64_t)(uintptr_t)map &&
					   nf[k].pc < (uint64_t)(uintptr_t)map + len;
			walked++;
			native_close(n);
		}
		alarm(0);
		/* the thread never returns there: the copy can go */
		munmap(map, len);
		if (getenv("TT_FUZZ_VERBOSE"))
			printf("# case %d: %s\n", i, what);
		if (i == 10)
			heap_at_10 = heap_kb();
	}
	heap_end = heap_kb();
	tap_ok(walked + refused == CASES, "%d damaged copies of %s: every walk came back (%d walked, "
	       "%d with modules refused, %d frames in all)", CASES, lib, walked, refused, frames_total);
	tap_ok(in_copy >= CASES / 2, "the walks reached the damaged copies: %d frames in them",
	       in_copy);
	tap_ok(counts[0] && counts[1] && counts[2] && counts[3] && counts[4] && counts[5],
	       "each damage made: truncated %d, .eh_frame flips %d, .eh_frame_hdr flips %d, huge "
	       "lengths %d, cyclic CIE pointers %d, broken section tables %d", counts[0], counts[1],
	       counts[2], counts[3], counts[4], counts[5]);
	tap_ok(heap_end - heap_at_10 < 512, "memory bounded: %ld KB of heap in use after 10 cases, "
	       "%ld KB after %d (each case's unwinder freed)", heap_at_10, heap_end, CASES);
	free(orig);
	free(copy);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0) {
		/* a temporary directory left behind */
	}
	return tap_done();
}
