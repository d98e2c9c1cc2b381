/* The frame inspector (frameview.h). */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frameview.h"
#include "theme.h"
#include "ui.h"

struct frames_ui {
	pid_t pid;
	uint64_t tid;
	char name[64];                 /* the thread's name when opened */
	struct frame_snapshot *snap;   /* the last read (owned), or NULL before one */
	int32_t selected;              /* frame index in snap */
	uint64_t selected_addr;        /* the frame asked for; 0: the innermost */
	int32_t top;                   /* first frame row shown */
	int32_t locals_top;            /* first local row shown */
	bool left;                     /* the frame asked for had returned at the last read */
};

struct frames_ui *
frameview_new(void)
{
	return calloc(1, sizeof(struct frames_ui));
}

void
frameview_free(struct frames_ui *f)
{
	if (!f)
		return;
	frame_snapshot_free(f->snap);
	free(f);
}

void
frameview_open(struct ui *u, uint32_t slot)
{
	struct frames_ui *f = u->frames;
	if (!f)
		return;
	if (!u->s->frames.worker.started) {
		ui_message(u, true, "the frame inspector's reader could not start");
		return;
	}
	const struct procset *ps = &u->s->sampler.procs;
	const struct thread_slot *ts = procset_slot(ps, slot);
	if (ts->tid_unknown) {
		ui_message(u, true, "this thread's id in the kernel is unknown: cannot inspect it");
		return;
	}
	frame_snapshot_free(f->snap);
	memset(f, 0, sizeof *f);
	f->pid = procset_at(ps, ts->proc)->pid;
	f->tid = ts->native_tid;
	const char *name = atomic_load_explicit(&((struct thread_slot *)ts)->name,
						memory_order_acquire);
	snprintf(f->name, sizeof f->name, "%s", name ? name : "");
	framewatch_ask(&u->s->frames, f->pid, f->tid, 0);
	if (view_top(u) != VIEW_FRAMES)
		view_push(u, VIEW_FRAMES);
}

/* The newest read, if one came; the selection follows the frame asked for. */
static void
take_snapshot(struct ui *u)
{
	struct frames_ui *f = u->frames;
	struct frame_snapshot *s = framewatch_take(&u->s->frames);
	if (!s)
		return;
	if (s->pid != f->pid || s->tid != f->tid) {
		frame_snapshot_free(s);   /* for a thread asked about before */
		return;
	}
	frame_snapshot_free(f->snap);
	f->snap = s;
	f->left = s->moved;
	f->selected = (int32_t)s->selected;
	if (s->moved || !s->nframes)
		f->selected_addr = 0;
	if (s->nframes && f->selected_addr != s->frames[s->selected].addr)
		f->locals_top = 0;
	if (s->nframes)
		f->selected_addr = s->moved ? 0 : s->frames[s->selected].addr;
}

static void
frameview_draw(struct ui *u, int y, int height)
{
	struct frames_ui *f = u->frames;
	framewatch_ask(&u->s->frames, f->pid, f->tid, f->selected_addr);
	take_snapshot(u);
	const struct frame_snapshot *s = f->snap;
	char line[2 * PYVALUE_TEXT_MAX];
	char age[64] = "reading...";
	if (s)
		snprintf(age, sizeof age, "values as read %.1f s ago",
			 (double)(clock_now_ns() - s->taken_ns) / 1e9);
	snprintf(line, sizeof line, " Thread %llu \"%s\" of process %d: frames and locals, %s ",
		 (unsigned long long)f->tid, f->name, (int)f->pid, age);
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, line, theme_attr(ROLE_BORDER));
	int end = y + height;
	y++;
	for (int r = y; r < end; r++) {
		move(r, 0);
		clrtoeol();
	}
	if (!s)
		return;
	if (s->error[0]) {
		snprintf(line, sizeof line, "  %s", s->error);
		draw_text(y, 0, COLS, line, theme_attr(ROLE_ERROR));
		return;
	}
	/* the frames above, a third of the height at most; the locals below */
	int frame_rows = (int)s->nframes < (end - y) / 3 ? (int)s->nframes : (end - y) / 3;
	if (frame_rows < 1)
		frame_rows = 1;
	list_keep_visible(&f->top, f->selected, frame_rows, s->nframes);
	for (int r = 0; r < frame_rows && f->top + r < (int32_t)s->nframes; r++) {
		const struct framewatch_frame *fr = &s->frames[f->top + r];
		bool sel = f->top + r == f->selected;
		snprintf(line, sizeof line, "%s %s (%s:%d)", sel ? ">" : " ", fr->func, fr->file,
			 fr->line);
		draw_text(y + r, 0, COLS, line, theme_attr(sel ? ROLE_SELECTED : ROLE_FUNCTION));
	}
	y += frame_rows;
	if (y >= end)
		return;
	if (f->left)
		snprintf(line, sizeof line, " Locals of the innermost frame (the frame chosen has "
					    "returned) ");
	else
		snprintf(line, sizeof line, " Locals of %s ",
			 s->nframes ? s->frames[s->selected].func : "?");
	draw_bar(y, theme_attr(ROLE_BORDER));
	draw_text(y, 0, COLS, line, theme_attr(ROLE_BORDER));
	y++;
	if (s->nlocals < 0) {
		snprintf(line, sizeof line, "  (locals not read: %s)", s->locals_error);
		draw_text(y, 0, COLS, line, theme_attr(ROLE_DIM));
		return;
	}
	if (s->nlocals == 0)
		draw_text(y, 0, COLS, "  (no locals)", theme_attr(ROLE_DIM));
	int rows = end - y;
	if (f->locals_top > s->nlocals - rows)
		f->locals_top = s->nlocals - rows > 0 ? s->nlocals - rows : 0;
	for (int r = 0; r < rows && f->locals_top + r < s->nlocals; r++) {
		const struct pylocal *l = &s->locals[f->locals_top + r];
		snprintf(line, sizeof line, "  %s = %s", l->name, l->repr);
		draw_text(y + r, 0, COLS, line, theme_attr(ROLE_DEFAULT));
	}
}

static void
frameview_status(struct ui *u, char *buf, size_t len)
{
	(void)u;
	snprintf(buf, len, " ↑/↓: frame  PgUp/PgDn: locals  Esc or i: back  q: quit");
}

static void
select_frame(struct frames_ui *f, int32_t to)
{
	if (!f->snap || !f->snap->nframes)
		return;
	to = list_row_in(to, f->snap->nframes);
	if (to == f->selected)
		return;
	f->selected = to;
	f->selected_addr = f->snap->frames[to].addr;
	f->locals_top = 0;
	f->left = false;
}

static enum view_key
frameview_key(struct ui *u, const TermKeyKey *k)
{
	struct frames_ui *f = u->frames;
	bool unicode = k->type == TERMKEY_TYPE_UNICODE && !(k->modifiers & TERMKEY_KEYMOD_CTRL);
	uint32_t c = unicode ? (uint32_t)k->code.codepoint : 0;
	if (unicode) {
		switch (c) {
		case 'i': view_pop(u); break;
		case 'j': select_frame(f, f->selected + 1); break;
		case 'k': select_frame(f, f->selected - 1); break;
		default: return VIEW_KEY_UNUSED;
		}
		framewatch_ask(&u->s->frames, f->pid, f->tid, f->selected_addr);
		return VIEW_KEY_USED;
	}
	if (k->type != TERMKEY_TYPE_KEYSYM)
		return VIEW_KEY_UNUSED;
	switch (k->code.sym) {
	case TERMKEY_SYM_ESCAPE: view_pop(u); return VIEW_KEY_USED;
	case TERMKEY_SYM_UP: select_frame(f, f->selected - 1); break;
	case TERMKEY_SYM_DOWN: select_frame(f, f->selected + 1); break;
	case TERMKEY_SYM_PAGEUP:
		f->locals_top = f->locals_top > 10 ? f->locals_top - 10 : 0;
		break;
	case TERMKEY_SYM_PAGEDOWN: f->locals_top += 10; break;
	default: return VIEW_KEY_UNUSED;
	}
	framewatch_ask(&u->s->frames, f->pid, f->tid, f->selected_addr);
	return VIEW_KEY_USED;
}

const struct view_ops frameview_ops = {
	.name = "frames",
	.draw = frameview_draw,
	.key = frameview_key,
	.status = frameview_status,   /* its keys: few, and the help is full at 80x24 */
};
