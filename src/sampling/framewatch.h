/* The live view's frame inspector, read on a thread of its own: one
 * thread's Python stack and the locals of one of its frames, once a second
 * while the view asks (never otherwise: locals are read only when asked
 * for). Each read is published as a snapshot the UI takes. */
#ifndef TT_FRAMEWATCH_H
#define TT_FRAMEWATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/pyvalue.h"
#include "workers.h"

struct framewatch_frame {
	char func[256];            /* raw from the target: sanitize to show */
	char file[512];
	int line;
	uint64_t addr;             /* the _PyInterpreterFrame */
};

struct frame_snapshot {
	pid_t pid;
	uint64_t tid;
	char error[384];           /* why nothing was read ("" when it was) */
	struct framewatch_frame *frames;   /* innermost first */
	uint32_t nframes;
	uint32_t selected;         /* the frame whose locals these are */
	bool moved;                /* the frame asked for was gone: selected is the
				      innermost */
	struct pylocal *locals;
	int nlocals;               /* -1: not read (locals_error says why) */
	char locals_error[384];
	uint64_t taken_ns;         /* CLOCK_MONOTONIC */
};

struct framewatch {
	struct worker worker;
	/* what is asked (under worker.lock) */
	pid_t pid;
	uint64_t tid, frame_addr;  /* frame_addr 0: the innermost */
	uint64_t asked_until_ns;   /* reads stop when the view stops asking */
	struct frame_snapshot *latest;
};

#define FRAMEWATCH_INTERVAL_NS 1000000000ull

/* The watcher's thread, idle until asked. */
int framewatch_start(struct framewatch *w);
/* Read thread tid of process pid, the locals of the frame at frame_addr
 * (0: the innermost), now and each second for the next few seconds: the
 * view asks again while it is open. */
void framewatch_ask(struct framewatch *w, pid_t pid, uint64_t tid, uint64_t frame_addr);
/* The newest snapshot if one came since the last call (the caller owns
 * it), else NULL. */
struct frame_snapshot *framewatch_take(struct framewatch *w);
void framewatch_stop(struct framewatch *w);
void frame_snapshot_free(struct frame_snapshot *s);

#endif
