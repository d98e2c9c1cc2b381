/* A profiling session for the live views: attach to a process, or start a
 * command and attach to it, then run the sampler. */
#ifndef TT_SESSION_H
#define TT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "framewatch.h"
#include "waitwatch.h"
#include "sampler.h"
#include "target.h"
#include "taskwatch.h"

struct session_options {
	pid_t pid;                 /* attach to this, or 0 */
	char **command;            /* or start this (argv, NULL-terminated) */
	const char *child_output;  /* where the command's stdout/stderr go (NULL: /dev/null) */
	bool child_keeps_output;   /* or: the command writes to our stdout and stderr */
	double rate_hz;            /* 0: as fast as possible */
	double duration_s;         /* 0: until stopped */
	bool no_subprocesses;      /* sample the process alone, not its descendants */
	bool async_aware;          /* --async: task stacks on their await chains */
	bool native;               /* --native: native frames with the Python ones */
	bool kernel_waits;         /* watch what threads wait for in the kernel (waitwatch) */
	uint64_t tasks_every_ns;   /* read the asyncio tasks of every followed process this
				      often from the start, on a thread of their own (0: not) */
	bool frame_inspector;      /* a reader of one thread's frames and locals, idle
				      until asked (framewatch.h) */
	/* The engine's settings (NULL: sampler_default_config); the rate,
	 * duration, following and --async above override theirs. */
	const struct sampler_config *config;
};

struct session {
	pid_t pid;                 /* the root: the process named or the command started */
	pid_t other_root;          /* pid again when it is not Python (a shell, tini), else 0 */
	struct target target;      /* the root's, or under other_root its first Python descendant's */
	struct sampler sampler;
	bool sampling;
	pid_t child;               /* the command we started, or 0 */
	bool child_exited;
	int child_status;          /* wait status once exited */
	char cmdline[512];         /* the target's command line (raw) */
	double rate_hz;
	struct waitwatch *waitwatch;       /* what threads wait for in the kernel, or NULL */
	struct taskwatch tasks;      /* the followed processes' asyncio tasks, once watching_tasks */
	bool watching_tasks;
	char tasks_error[384];       /* why they are not read, when asked for ("" if they are) */
	struct framewatch frames;    /* the frame inspector's reader (frames.worker.started: there) */
};

tt_status session_start(struct session *s, const struct session_options *o, struct tt_error *err);

/* The signals that end or wake a session, caught the one way: each one
 * caught is written to a pipe (session_signal_fd, for poll) and remembered
 * (session_stop_signal). SIGPIPE is ignored. Main thread, before
 * session_start (its threads block every signal). */
tt_status session_catch_signals(const int *sigs, size_t n, struct tt_error *err);
/* What the verbs catch: SIGINT, SIGTERM and SIGHUP (a dropped ssh
 * session) end the run in order, the profile or tables still written. */
tt_status session_catch_stop_signals(struct tt_error *err);
/* The read end of the pipe (-1 before session_catch_signals). */
int session_signal_fd(void);
/* The next signal caught, from the pipe, or 0 when none is waiting. */
int session_next_signal(void);
/* The last signal caught (0: none yet). */
int session_stop_signal(void);

/* Reap the started command if it exited (non-blocking). */
void session_poll_child(struct session *s);
/* Reap a started command that is ending, waiting at most timeout_ns. */
void session_wait_child(struct session *s, uint64_t timeout_ns);

/* "exited with status 3" / "killed by signal 9" */
void session_describe_exit(const struct session *s, char *buf, size_t len);

/* Terminate a command we started that still runs (SIGTERM to its process
 * group, SIGKILL after a second), and reap it. */
void session_stop_child(struct session *s);

/* Stop sampling; terminate a command we started that still runs. */
void session_end(struct session *s);

/* The sampling rate so far, and the share of deadlines missed: -r is per
 * process, so each process's life at that rate is what was asked for (0
 * when the rate is max). */
struct session_rate {
	double per_s;             /* passes per second of the session */
	double life_s;            /* the processes' lives added up (the session's
				     length for one process) */
	double missed_pct;
	double errors_pct;        /* of passes */
};
void session_rate_now(struct session *s, uint64_t now_ns, struct session_rate *r);

#endif
