/* The frame inspector's reader (framewatch.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "framewatch.h"
#include "target.h"
#include "walk/plainwalk.h"
#include "workers.h"

/* A view that stops asking stops the reads this long after. */
#define ASKED_FOR_NS 3000000000ull

void
frame_snapshot_free(struct frame_snapshot *s)
{
	if (!s)
		return;
	free(s->frames);
	free(s->locals);
	free(s);
}

/* What the reader keeps between reads: the process it attached to. */
struct reader {
	struct target t;
	bool attached;
	struct plainwalk u;
	struct tt_sample sample;
	struct pyvalue values;
};

static void
reader_close(struct reader *r)
{
	if (!r->attached)
		return;
	pyvalue_free(&r->values);
	tt_sample_free(&r->sample);
	plainwalk_free(&r->u);
	r->attached = false;
}

static bool
reader_open(struct reader *r, pid_t pid, struct tt_error *err)
{
	if (r->attached && r->t.pid == pid)
		return true;
	reader_close(r);
	if (target_attach(&r->t, pid, err) != TT_OK)
		return false;
	if (plainwalk_init(&r->u, &r->t, 0, err) != TT_OK)
		return false;
	memset(&r->sample, 0, sizeof r->sample);
	struct pyvalue_limits lim = PYVALUE_LIMITS_DEFAULT;
	pyvalue_init(&r->values, &r->t.mem, &r->t.layout, &lim);
	r->attached = true;
	return true;
}

/* The locals of frame fr with their values into s. */
static void
read_locals(struct reader *r, const struct tt_frame *fr, struct frame_snapshot *s)
{
	struct tt_error err = {0};
	s->nlocals = -1;
	s->locals = calloc(PYLOCALS_MAX, sizeof *s->locals);
	if (!s->locals) {
		snprintf(s->locals_error, sizeof s->locals_error, "out of memory");
		return;
	}
	int n = pylocals_read(&r->values, fr->addr, codecache_get(&r->u.codes, fr->code_id)->addr,
			      s->locals, PYLOCALS_MAX, &err);
	if (n < 0) {
		snprintf(s->locals_error, sizeof s->locals_error, "%s", err.msg);
		return;
	}
	/* kept a second: no room for the 500 a frame may have */
	struct pylocal *fit = realloc(s->locals, (n ? (size_t)n : 1) * sizeof *fit);
	if (fit)
		s->locals = fit;
	s->nlocals = n;
}

static struct frame_snapshot *
read_thread(struct reader *r, pid_t pid, uint64_t tid, uint64_t frame_addr)
{
	struct frame_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->pid = pid;
	s->tid = tid;
	s->nlocals = -1;
	struct tt_error err = {0};
	tt_status st = TT_OK;
	if (!reader_open(r, pid, &err)) {
		snprintf(s->error, sizeof s->error, "%s", err.msg);
		goto out;
	}
	/* a torn read (the target moved) is read again, twice at most */
	for (int again = 0; again < 3; again++)
		if ((st = plainwalk_sample(&r->u, &r->sample, &err)) == TT_OK)
			break;
	if (st != TT_OK) {
		snprintf(s->error, sizeof s->error, "%s", err.msg);
		reader_close(r);   /* exec'ed or gone: attach afresh next time */
		goto out;
	}
	const struct tt_thread *th = NULL;
	for (uint32_t i = 0; i < r->sample.nthreads && !th; i++)
		if (r->sample.threads[i].native_tid == tid)
			th = &r->sample.threads[i];
	if (!th) {
		snprintf(s->error, sizeof s->error, "thread %llu has ended",
			 (unsigned long long)tid);
		goto out;
	}
	s->frames = calloc(th->nframes ? th->nframes : 1, sizeof *s->frames);
	if (!s->frames) {
		snprintf(s->error, sizeof s->error, "out of memory");
		goto out;
	}
	s->nframes = th->nframes;
	s->moved = frame_addr != 0;
	for (uint32_t k = 0; k < th->nframes; k++) {
		const struct tt_frame *fr = &r->sample.frames[th->first_frame + k];
		const struct code_entry *c = codecache_get(&r->u.codes, fr->code_id);
		struct framewatch_frame *f = &s->frames[k];
		snprintf(f->func, sizeof f->func, "%s", c->qualname);
		snprintf(f->file, sizeof f->file, "%s", c->filename);
		f->line = fr->line;
		f->addr = fr->addr;
		if (frame_addr && fr->addr == frame_addr && s->moved) {
			s->selected = k;
			s->moved = false;
		}
	}
	if (s->nframes)
		read_locals(r, &r->sample.frames[th->first_frame + s->selected], s);
	else
		snprintf(s->locals_error, sizeof s->locals_error, "no Python frames");
out:
	s->taken_ns = clock_now_ns();
	return s;
}

static void *
framewatch_main(void *arg)
{
	struct framewatch *w = arg;
	struct reader r = {0};
	pid_t last_pid = 0;
	uint64_t last_tid = 0, last_frame = 0, last_read = 0;
	pthread_mutex_lock(&w->worker.lock);
	while (!atomic_load(&w->worker.stop)) {
		uint64_t now = clock_now_ns();
		bool asked = w->asked_until_ns > now && w->tid;
		bool changed = w->pid != last_pid || w->tid != last_tid || w->frame_addr != last_frame;
		if (!asked || (!changed && now - last_read < FRAMEWATCH_INTERVAL_NS)) {
			worker_sleep_until(&w->worker, asked ? last_read + FRAMEWATCH_INTERVAL_NS
							     : now + 500000000ull);
			continue;
		}
		last_pid = w->pid;
		last_tid = w->tid;
		last_frame = w->frame_addr;
		pthread_mutex_unlock(&w->worker.lock);
		struct frame_snapshot *s = read_thread(&r, last_pid, last_tid, last_frame);
		pthread_mutex_lock(&w->worker.lock);
		last_read = clock_now_ns();
		if (s) {
			frame_snapshot_free(w->latest);
			w->latest = s;
		}
	}
	pthread_mutex_unlock(&w->worker.lock);
	reader_close(&r);
	return NULL;
}

int
framewatch_start(struct framewatch *w)
{
	memset(w, 0, sizeof *w);
	return worker_run(&w->worker, "tt-frames", framewatch_main, w);
}

void
framewatch_ask(struct framewatch *w, pid_t pid, uint64_t tid, uint64_t frame_addr)
{
	if (!w->worker.started)
		return;
	pthread_mutex_lock(&w->worker.lock);
	bool changed = w->pid != pid || w->tid != tid || w->frame_addr != frame_addr;
	w->pid = pid;
	w->tid = tid;
	w->frame_addr = frame_addr;
	w->asked_until_ns = clock_now_ns() + ASKED_FOR_NS;
	if (changed)
		worker_wake(&w->worker);
	pthread_mutex_unlock(&w->worker.lock);
}

struct frame_snapshot *
framewatch_take(struct framewatch *w)
{
	if (!w->worker.started)
		return NULL;
	pthread_mutex_lock(&w->worker.lock);
	struct frame_snapshot *s = w->latest;
	w->latest = NULL;
	pthread_mutex_unlock(&w->worker.lock);
	return s;
}

void
framewatch_stop(struct framewatch *w)
{
	if (!w->worker.started)
		return;
	worker_stop(&w->worker);
	frame_snapshot_free(w->latest);
	w->latest = NULL;
}
