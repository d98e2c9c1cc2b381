/* The processes panel: one row per process of the followed tree (pid,
 * parent, Python version, threads, samples, GIL and CPU shares, what its
 * busiest thread runs now, state), and selecting one process to restrict
 * the function table and the threads panel to it. */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "sanitize.h"
#include "theme.h"
#include "ui.h"
#include "walk/sample.h"

struct proc_row {
	uint32_t threads;
	uint64_t samples, gil, on_cpu;
	int32_t busiest;         /* slot with most samples in scope, -1 */
	uint64_t busiest_n;
};

/* Everything per process, from the per-thread counts (O(threads)). */
static struct proc_row *
gather(const struct ui *u, uint32_t nprocs)
{
	struct proc_row *rows = calloc(nprocs ? nprocs : 1, sizeof *rows);
	if (!rows)
		return NULL;
	for (uint32_t p = 0; p < nprocs; p++)
		rows[p].busiest = -1;
	const struct procset *ps = &u->s->sampler.procs;
	uint32_t nslots = appendlog_count(ps->threads.log);
	int sc = u->scope;
	for (uint32_t i = 0; i < u->agg.nthreads && i < nslots; i++) {
		const struct agg_thread *t = &u->agg.threads[i];
		if (!t->seen)
			continue;
		uint32_t p = t->proc;
		if (p >= nprocs)
			continue;
		struct proc_row *r = &rows[p];
		/* THR: threads alive; ended ones not yet folded still count below */
		r->threads += procset_slot_live(ps, i);
		r->samples += t->samples[sc];
		r->gil += t->gil[sc];
		r->on_cpu += t->on_cpu[sc];
		/* Busiest now: most samples on a CPU or holding the GIL, else most samples. */
		uint64_t busy = t->on_cpu[sc] + t->gil[sc];
		if (r->busiest < 0 || busy > r->busiest_n) {
			r->busiest = (int32_t)i;
			r->busiest_n = busy;
		}
	}
	/* Threads folded into the exited bucket still count for their process. */
	for (uint32_t p = 0; p < nprocs; p++) {
		const struct agg_thread *t = agg_exited_of(&u->agg, p);
		if (!t)
			continue;
		rows[p].samples += t->samples[sc];
		rows[p].gil += t->gil[sc];
		rows[p].on_cpu += t->on_cpu[sc];
	}
	return rows;
}

/* "gunicorn: worker [app:app]" from "/usr/bin/python3 /usr/bin/gunicorn ..."
 * is the kernel's business; we only drop the directories of the program. */
static void
short_command(const char *cmd, char *out, size_t len)
{
	const char *end = strchr(cmd, ' ');
	size_t first = end ? (size_t)(end - cmd) : strlen(cmd);
	const char *base = cmd;
	for (const char *p = cmd; p < cmd + first; p++)
		if (*p == '/')
			base = p + 1;
	snprintf(out, len, "%s", base);
}

int
procs_panel_height(const struct ui *u)
{
	uint32_t n = procset_count(&u->s->sampler.procs);
	if (!u->show_procs || n < 2)
		return 0;
	int max = (LINES - 8) / 3;
	int want = (int)n + 2;
	return want < max ? want : (max > 3 ? max : 3);
}

int
procs_draw(struct ui *u, int y, int height)
{
	const struct procset *ps = &u->s->sampler.procs;
	uint32_t n = procset_count(ps);
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, " Processes  ([ ]: show one process, o: hide) ", theme_attr(ROLE_BORDER));
	y++;
	draw_bar(y, theme_attr(ROLE_TABLE_HEADER));
	draw_text(y, 0, COLS,
		     "  PID     PPID    PYTHON   THR  SAMPLES   GIL%   CPU%  STATE   COMMAND              NOW",
		     theme_attr(ROLE_TABLE_HEADER));
	y++;
	struct proc_row *rows = gather(u, n);
	uint32_t *order = procset_table_order(ps, n);
	if (!rows || !order) {
		free(rows);
		free(order);
		return y;
	}
	int nrows = height - 2;
	int first = 0, at = -1;   /* the selected process's row */
	for (uint32_t r = 0; r < n && u->proc >= 0; r++)
		if (order[r] == (uint32_t)u->proc)
			at = (int)r;
	if (at >= nrows)
		first = at - nrows + 1;
	for (int k = 0; k < nrows && (uint32_t)(first + k) < n; k++) {
		uint32_t i = order[first + k];
		const struct proc_info *p = procset_at(ps, i);
		const struct proc_row *r = &rows[i];
		enum proc_state st = procset_state(p);
		bool sel = u->proc == (int32_t)i;
		int base = sel ? theme_attr(ROLE_SELECTED)
			   : st == PROC_LIVE ? theme_attr(ROLE_DEFAULT) : theme_attr(ROLE_DIM);
		if (sel)
			draw_bar(y, base);
		move(y, 0);
		if (!sel)
			clrtoeol();
		char buf[256], cnt[32], cmd[256];
		live_format_count((double)r->samples, cnt, sizeof cnt);
		snprintf(buf, sizeof buf, "%c %-7d %-7d %-8s %3u %8s %6.1f %6.1f  ", sel ? '>' : ' ',
			 (int)p->pid, (int)p->ppid, p->version, r->threads, cnt, ui_pct(r->gil, r->samples),
			 ui_pct(r->on_cpu, r->samples));
		int x = draw_text(y, 0, COLS, buf, base);
		x += draw_text(y, x, 8, procset_state_label(p), sel ? base
				  : theme_attr(st == PROC_LIVE || st == PROC_OTHER ? ROLE_DEFAULT
					       : st == PROC_EXITED ? ROLE_DIM : ROLE_ERROR));
		x = x < 64 ? 64 : x;
		short_command(procset_cmdline(p)[0] ? procset_cmdline(p) : "?", cmd, sizeof cmd);
		if (p->ns_pid) {
			/* In a container: its pid there first (what its logs say). */
			char tag[32];
			size_t tl = (size_t)snprintf(tag, sizeof tag, "[ns %llu] ",
						     (unsigned long long)p->ns_pid);
			size_t keep = strlen(cmd);
			if (keep + tl >= sizeof cmd)
				keep = sizeof cmd - 1 - tl;
			memmove(cmd + tl, cmd, keep);
			memcpy(cmd, tag, tl);
			cmd[tl + keep] = '\0';
		}
		x += draw_text(y, x, 20, cmd, base) + 1;
		x = x < 85 ? 85 : x;
		if (st == PROC_EXITED || st == PROC_STALE) {
			/* nothing runs there now (or we are finding out) */
		} else if (st == PROC_LOST) {
			draw_text(y, x, COLS - x, p->note, sel ? base : theme_attr(ROLE_ERROR));
		} else if (st == PROC_OTHER) {
			draw_text(y, x, COLS - x, "(not Python: its Python descendants are shown)",
				     sel ? base : theme_attr(ROLE_DIM));
		} else if (r->busiest >= 0) {
			const struct agg_thread *t = &u->agg.threads[r->busiest];
			int32_t line = -1;
			uint32_t f = agg_innermost_python_func(&u->agg, t->last_stack, &line);
			if (f != UINT32_MAX) {
				agg_func_at_line(&u->agg.funcs[f], line, buf, sizeof buf);
				draw_text(y, x, COLS - x, buf, sel ? base : theme_attr(ROLE_FUNCTION));
			} else {
				draw_text(y, x, COLS - x, "(no Python frames)", sel ? base : theme_attr(ROLE_DIM));
			}
		}
		y++;
	}
	free(rows);
	free(order);
	return y;
}

void
procs_cycle(struct ui *u, int dir)
{
	/* in the panel's order: the order processes started */
	int32_t n = (int32_t)procset_count(&u->s->sampler.procs);
	uint32_t *order = procset_table_order(&u->s->sampler.procs, (uint32_t)n);
	int32_t at = -1;
	for (int32_t r = 0; order && r < n && u->proc >= 0; r++)
		if (order[r] == (uint32_t)u->proc)
			at = r;
	at += dir;
	if (at >= n)
		at = -1;
	if (at < -1)
		at = n - 1;
	int32_t p = at < 0 ? -1 : order ? (int32_t)order[at] : at;
	free(order);
	u->proc = p;
	/* A thread of another process is no longer a valid choice. */
	if (u->slot >= 0 && p >= 0 &&
	    procset_slot(&u->s->sampler.procs, (uint32_t)u->slot)->proc != (uint32_t)p)
		u->slot = -1;
	u->show_procs = true;
	tableview_restart(u);
}

void
procs_note_changes(struct ui *u)
{
	const struct procset *ps = &u->s->sampler.procs;
	uint32_t n = procset_count(ps);
	for (uint32_t i = 0; i < n; i++) {
		const struct proc_info *p = procset_at(ps, i);
		if (i < u->procs_reported_n && u->procs_reported[i] == p->start_ns)
			continue;
		if (procset_state(p) != PROC_LOST || p->root)
			continue;
		if (!grow_array((void **)&u->procs_reported, &u->procs_reported_n, i + 1,
				sizeof *u->procs_reported))
			return;
		/* Once per process, on the status line (an index goes to a new
		 * process once its own has ended: told again for that one). */
		u->procs_reported[i] = p->start_ns;
		ui_message(u, true, "process %d: %s", (int)p->pid, p->note);
	}
}
