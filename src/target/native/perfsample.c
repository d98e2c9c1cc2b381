/* Running threads' registers and stack tops from perf samples (perfsample.h). */
#include "config.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "keytab.h"
#include "native/perfsample.h"
#include "readfile.h"

/* The sampled registers, in perf's numbering, in the order of the DWARF
 * numbers they fill (user_sample.regs), then the pc. */
static const int dwarf_to_perf[16] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
};

static uint64_t
regs_mask(void)
{
	uint64_t mask = 1ull << PERF_REG_X86_IP;
	for (size_t i = 0; i < 16; i++)
		mask |= 1ull << dwarf_to_perf[i];
	return mask;
}


static void
refused(int e, char *why, size_t wlen)
{
	char text[32];
	long paranoid = read_small_file("/proc/sys/kernel/perf_event_paranoid", text,
					sizeof text) > 0 ? strtol(text, NULL, 10) : -9;
	if (paranoid != -9)
		snprintf(why, wlen, "running on a CPU, and perf_event_open, which would sample "
				    "its registers, is refused: %s (perf_event_paranoid %ld)",
			 strerror(e), paranoid);
	else
		snprintf(why, wlen, "running on a CPU, and perf_event_open, which would sample "
				    "its registers, is refused: %s", strerror(e));
}

/* Copy len bytes at offset off of the ring's data area (it wraps). */
static void
ring_copy(const uint8_t *data, size_t size, uint64_t off, void *dst, size_t len)
{
	size_t at = (size_t)(off & (size - 1)), first = size - at < len ? size - at : len;
	memcpy(dst, data + at, first);
	memcpy((uint8_t *)dst + first, data, len - first);
}

/* A PERF_RECORD_SAMPLE of h.size bytes at off: pid/tid, time, the
 * registers' ABI and values, the stack copy's size, bytes and the part of
 * it that is filled (dyn_size). */
static bool
parse_sample(const uint8_t *data, size_t size, uint64_t off, uint32_t rec_size,
	     struct user_sample *out)
{
	uint64_t pos = sizeof(struct perf_event_header) + 8, end = rec_size;
	if (pos + 8 > end)
		return false;
	ring_copy(data, size, off + pos, &out->time_ns, 8);   /* perf's clock: CLOCK_MONOTONIC */
	pos += 8;
	uint64_t abi, regs[PERF_REG_X86_64_MAX] = {0}, stack_size, dyn = 0;
	uint64_t mask = regs_mask();
	if (pos + 8 > end)
		return false;
	ring_copy(data, size, off + pos, &abi, 8);
	pos += 8;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return false;   /* taken where the thread had no user registers */
	for (int r = 0; r < PERF_REG_X86_64_MAX; r++) {
		if (!(mask & (1ull << r)))
			continue;
		if (pos + 8 > end)
			return false;
		ring_copy(data, size, off + pos, &regs[r], 8);
		pos += 8;
	}
	if (pos + 8 > end)
		return false;
	ring_copy(data, size, off + pos, &stack_size, 8);
	pos += 8;
	if (stack_size > end - pos || stack_size > sizeof out->stack)
		return false;
	if (stack_size && pos + stack_size + 8 <= end)
		ring_copy(data, size, off + pos + stack_size, &dyn, 8);
	out->stack_len = (size_t)(dyn < stack_size ? dyn : stack_size);
	ring_copy(data, size, off + pos, out->stack, out->stack_len);
	for (size_t i = 0; i < 16; i++)
		out->regs[i] = regs[dwarf_to_perf[i]];
	out->pc = regs[PERF_REG_X86_IP];
	out->stack_at = regs[PERF_REG_X86_SP];
	return true;
}

bool
perf_ring_newest(const uint8_t *data, size_t size, uint64_t *tail, uint64_t head,
		 struct user_sample *out)
{
	bool got = false;
	while (*tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		ring_copy(data, size, *tail, &h, sizeof h);
		/* a record longer than the ring would be copied from it twice over */
		if (h.size < sizeof h || *tail + h.size > head || h.size > size)
			break;
		if (h.type == PERF_RECORD_SAMPLE && parse_sample(data, size, *tail, h.size, out))
			got = true;
		*tail += h.size;
	}
	return got;
}

/* The newest sample in the ring with user registers; every record read
 * is consumed. */
static bool
take_newest(struct perf_event_mmap_page *meta, size_t page, size_t data_pages,
	    struct user_sample *out)
{
	const uint8_t *data = (const uint8_t *)meta + page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	bool got = perf_ring_newest(data, data_pages * page, &tail, head, out);
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return got;
}

static bool
has_record(const struct perf_event_mmap_page *meta)
{
	return __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) != meta->data_tail;
}

struct followed {
	uint64_t tid;                       /* keytab's key */
	int fd;                             /* -1: not followed now */
	struct perf_event_mmap_page *ring;
	uint64_t active;                    /* pt->clock when followed or last sampled */
};

struct perf_threads {
	uint64_t period_ns;
	bool disabled;                      /* perf_threads_enable(false) */
	size_t stack_bytes, page, data_pages, ring_len;
	struct keytab threads;              /* struct followed by tid */
	uint32_t live;                      /* of which followed now (fd >= 0) */
	uint32_t max_live;
	uint64_t clock;                     /* counts follows and samples taken */
};

struct perf_threads *
perf_threads_new(uint64_t period_ns, size_t stack_bytes, uint32_t max_live)
{
	struct perf_threads *pt = calloc(1, sizeof *pt);
	if (!pt)
		return NULL;
	pt->max_live = max_live ? max_live : 1;
	pt->period_ns = period_ns ? period_ns : 1;
	pt->stack_bytes = stack_bytes > PERFSAMPLE_STACK_MAX ? PERFSAMPLE_STACK_MAX
							     : stack_bytes & ~(size_t)7;
	pt->page = (size_t)sysconf(_SC_PAGESIZE);
	/* room for two samples with their stack copies, a power of two pages */
	pt->data_pages = 1;
	while (pt->data_pages * pt->page < 2 * pt->stack_bytes + 2048)
		pt->data_pages *= 2;
	pt->ring_len = (1 + pt->data_pages) * pt->page;
	keytab_init(&pt->threads, sizeof(struct followed));
	return pt;
}

static void
close_followed(struct perf_threads *pt, struct followed *f)
{
	if (f->fd < 0)
		return;
	munmap(f->ring, pt->ring_len);
	close(f->fd);
	f->fd = -1;
	f->ring = NULL;
	pt->live--;
}

/* Threads come and go by the thousand in a day: once the ended ones
 * outnumber the followed, keep only the followed. */
static void
compact(struct perf_threads *pt)
{
	uint32_t dead = pt->threads.count - pt->live;
	if (dead <= pt->live + 64)
		return;
	struct followed *keep = malloc((pt->live ? pt->live : 1) * sizeof *keep);
	if (!keep)
		return;
	uint32_t n = 0;
	for (uint32_t i = 0; i < pt->threads.count; i++) {
		const struct followed *f = keytab_at(&pt->threads, i);
		if (f->fd >= 0)
			keep[n++] = *f;
	}
	keytab_clear(&pt->threads);
	for (uint32_t i = 0; i < n; i++) {
		bool added;
		struct followed *f = keytab_put(&pt->threads, keep[i].tid, &added);
		if (f) {
			*f = keep[i];
		} else {   /* no memory to keep it: stop following it */
			munmap(keep[i].ring, pt->ring_len);
			close(keep[i].fd);
			pt->live--;
		}
	}
	free(keep);
}

/* Drop every record in the ring: the count of samples among them. */
static uint64_t
drop_records(struct perf_event_mmap_page *meta, size_t page, size_t data_pages)
{
	const uint8_t *data = (const uint8_t *)meta + page;
	size_t size = data_pages * page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail, samples = 0;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		ring_copy(data, size, tail, &h, sizeof h);
		if (h.size < sizeof h || tail + h.size > head)
			break;
		samples += h.type == PERF_RECORD_SAMPLE;
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return samples;
}

uint64_t
perf_threads_enable(struct perf_threads *pt, bool on)
{
	uint64_t stale = 0;
	for (uint32_t i = 0; i < pt->threads.count; i++) {
		struct followed *f = keytab_at(&pt->threads, i);
		if (f->fd < 0)
			continue;
		if (on) {
			stale += drop_records(f->ring, pt->page, pt->data_pages);
			ioctl(f->fd, PERF_EVENT_IOC_ENABLE, 0);
		} else {
			ioctl(f->fd, PERF_EVENT_IOC_DISABLE, 0);
			drop_records(f->ring, pt->page, pt->data_pages);   /* from before */
		}
	}
	pt->disabled = !on;
	return stale;
}

uint32_t
perf_threads_live(const struct perf_threads *pt)
{
	return pt->live;
}

size_t
perf_threads_kept(const struct perf_threads *pt)
{
	return pt->threads.count;
}

void
perf_threads_free(struct perf_threads *pt)
{
	if (!pt)
		return;
	for (uint32_t i = 0; i < pt->threads.count; i++)
		close_followed(pt, keytab_at(&pt->threads, i));
	keytab_free(&pt->threads);
	free(pt);
}

/* Let go of the followed thread that was active longest ago. */
static void
let_go_oldest(struct perf_threads *pt, const struct followed *keep)
{
	struct followed *oldest = NULL;
	for (uint32_t i = 0; i < pt->threads.count; i++) {
		struct followed *f = keytab_at(&pt->threads, i);
		if (f->fd >= 0 && f != keep && (!oldest || f->active < oldest->active))
			oldest = f;
	}
	if (oldest)
		close_followed(pt, oldest);
}

/* Errors that say nothing about the permission to sample this process:
 * a lack of descriptors or memory, now. */
static bool
out_of_room(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM || e == EBUSY || e == EAGAIN;
}

enum perf_follow
perf_threads_follow(struct perf_threads *pt, pid_t tid, char *why, size_t wlen)
{
	bool added;
	struct followed *f = keytab_put(&pt->threads, (uint64_t)tid, &added);
	if (!f) {
		snprintf(why, wlen, "running on a CPU; out of memory for its perf event");
		return PERF_NO_ROOM;
	}
	if (added)
		f->fd = -1;
	f->active = ++pt->clock;
	if (f->fd >= 0)
		return PERF_FOLLOWED;
	if (pt->live >= pt->max_live)
		let_go_oldest(pt, f);
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;   /* advances only while the thread runs */
	attr.sample_period = pt->period_ns;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
			   PERF_SAMPLE_STACK_USER;
	attr.sample_regs_user = regs_mask();
	attr.sample_stack_user = (uint32_t)pt->stack_bytes;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.wakeup_events = 1;
	attr.disabled = pt->disabled;
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ESRCH) {   /* a thread of a churning pool, ended since it was seen */
			snprintf(why, wlen, "it ended as it was to be followed");
			return PERF_GONE;
		}
		if (out_of_room(e)) {
			snprintf(why, wlen, "running on a CPU; no room for another perf event "
					    "(%u followed): %s", pt->live, strerror(e));
			return PERF_NO_ROOM;
		}
		refused(e, why, wlen);
		return PERF_REFUSED;
	}
	void *ring = mmap(NULL, pt->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		/* EPERM here is the locked-memory limit (perf_event_mlock_kb,
		 * RLIMIT_MEMLOCK), reached by the rings already mapped */
		snprintf(why, wlen, "running on a CPU; no room for another perf ring (%u "
				    "followed, perf_event_mlock_kb): %s", pt->live, strerror(errno));
		close(fd);
		return PERF_NO_ROOM;
	}
	f->fd = fd;
	f->ring = ring;
	pt->live++;
	return PERF_FOLLOWED;
}

void
perf_threads_forget(struct perf_threads *pt, pid_t tid)
{
	struct followed *f = keytab_find(&pt->threads, (uint64_t)tid);
	if (f) {
		close_followed(pt, f);
		compact(pt);
	}
}

void
perf_threads_wait(struct perf_threads *pt, const pid_t *tids, size_t n, int timeout_ms)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (size_t i = 0; i < n; i++) {
		struct followed *f = keytab_find(&pt->threads, (uint64_t)tids[i]);
		while (f && f->fd >= 0 && !has_record(f->ring)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			long spent = (now.tv_sec - start.tv_sec) * 1000 +
				     (now.tv_nsec - start.tv_nsec) / 1000000;
			if (spent >= timeout_ms)
				return;
			struct pollfd pfd = {.fd = f->fd, .events = POLLIN};
			poll(&pfd, 1, (int)(timeout_ms - spent));
		}
	}
}

bool
perf_threads_newest(struct perf_threads *pt, pid_t tid, struct user_sample *out)
{
	struct followed *f = keytab_find(&pt->threads, (uint64_t)tid);
	if (!f || f->fd < 0 || !take_newest(f->ring, pt->page, pt->data_pages, out))
		return false;
	f->active = ++pt->clock;
	return true;
}
