/* What /proc says of a process and its threads (the kernel's tasks, not
 * asyncio's): a thread's scheduler state, last CPU and name; the
 * process's command line and whether it has exited. */
#ifndef TT_PROCSTAT_H
#define TT_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum run_state {
	RUN_STATE_UNKNOWN = 0,
	RUN_STATE_RUNNING,   /* 'R': on a CPU or runnable */
	RUN_STATE_IDLE,      /* sleeping, blocked, stopped, dead */
};

/* The fields of a stat line (/proc/PID/stat, /proc/PID/task/TID/stat)
 * tachyon-top reads. The comm field may hold spaces and parentheses: the
 * others follow its last ')'. */
struct stat_fields {
	char state;            /* field 3: 'R', 'S', 'D', 'Z', ... */
	pid_t ppid;            /* field 4; 0: missing */
	unsigned long flags;   /* field 9, the kernel's PF_* flags; 0: missing */
	int cpu;               /* field 39, the CPU it last ran on; -1: missing */
};

/* Parse the first len bytes of a stat line (no terminator needed); false
 * when it has no state (a letter) after its comm. A field missing or not a number
 * reads as its "missing" value, and so do the fields after it. */
bool procstat_parse_fields(const char *text, size_t len, struct stat_fields *out);

/* The live file's fields: thread tid's (0: the process's own stat); false
 * when it is gone or unreadable. */
bool procstat_read_fields(pid_t pid, long tid, struct stat_fields *out);

/* The run state of a stat line (procstat_parse_fields's state). */
enum run_state procstat_parse_stat(const char *text, size_t len);

enum run_state procstat_cpu_state(pid_t pid, long tid);

/* The same from the live file: the CPU thread tid of pid last ran on, or -1. */
int procstat_last_cpu(pid_t pid, long tid);

/* Thread name from /proc/PID/task/TID/comm, without the newline; "" if gone. */
void procstat_comm(pid_t pid, long tid, char *buf, size_t len);

/* The process's command line, arguments joined by spaces ("" if gone).
 * Raw bytes from the target: sanitize before display. */
void procstat_cmdline(pid_t pid, char *buf, size_t len);

/* Has the process exited, though not yet been reaped (a zombie)? Its memory
 * and mappings are gone. A leader thread that exited while other threads run
 * is a zombie too, but the process is not: it has other tasks. */
bool procstat_process_exited(pid_t pid);

#endif
