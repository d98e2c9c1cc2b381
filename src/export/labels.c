#include "config.h"

#include <string.h>

#include "labels.h"
#include "sanitize.h"

/* Escape for the folded format: terminal-safe, and ';' (the frame
 * separator) shown as \x3b. */
static void
folded_escape(const char *in, char *out, size_t cap)
{
	char tmp[2048];
	sanitize_for_terminal(in, tmp, sizeof tmp);
	size_t o = 0;
	for (const char *p = tmp; *p && o + 5 < cap; p++) {
		if (*p == ';') {
			memcpy(out + o, "\\x3b", 4);
			o += 4;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

void
profile_frame_label(const struct intern *in, uint32_t frame_id, char *buf, size_t len)
{
	const struct interned_frame *fr = intern_frame_at(in, frame_id);
	const struct interned_func *c = intern_func_at(in, fr->func_id);
	char q[1024], f[1024];
	folded_escape(c->qualname, q, sizeof q);
	if (c->kind == FUNC_MADE_UP) {
		/* a made-up frame (an asyncio task's): its name says it all */
		snprintf(buf, len, "%s", q);
		return;
	}
	folded_escape(c->filename, f, sizeof f);
	if (c->kind == FUNC_NATIVE) {
		/* C code: its symbol and library, no line */
		snprintf(buf, len, "%s (%s)", q, f);
		return;
	}
	snprintf(buf, len, "%s (%s:%d)", q, f, fr->line);
}

void
profile_proc_label(const struct procset *ps, uint32_t proc, char *buf, size_t len)
{
	if (proc == PROFILE_EXITED_PROC || proc >= procset_count(ps)) {
		snprintf(buf, len, "exited processes");
		return;
	}
	const struct proc_info *p = procset_at(ps, proc);
	char cmd[200];
	folded_escape(procset_cmdline(p)[0] ? procset_cmdline(p) : "?", cmd, sizeof cmd);
	/* long command lines: the start says what it is */
	if (strlen(cmd) > 60)
		memcpy(cmd + 57, "...", 4);
	snprintf(buf, len, "process %d (%s)", (int)p->pid, cmd);
}

void
profile_thread_label(const struct procset *ps, uint32_t slot, char *buf, size_t len)
{
	if (slot == PROFILE_EXITED_SLOT) {
		/* Threads that left, their slots given to other processes' threads
		 * (and the live view's bucket of them). */
		snprintf(buf, len, "exited threads");
		return;
	}
	const struct thread_slot *s = procset_slot(ps, slot);
	const char *name = atomic_load_explicit(&((struct thread_slot *)s)->name, memory_order_acquire);
	char safe[256];
	folded_escape(name ? name : "?", safe, sizeof safe);
	snprintf(buf, len, "thread %llu %s", (unsigned long long)s->native_tid, safe);
}
