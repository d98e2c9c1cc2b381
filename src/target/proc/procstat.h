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

/* Parse the text of /proc/PID/task/TID/stat (the comm field may hold spaces
 * and parentheses; the state follows the last ')'). */
enum run_state procstat_parse_stat(const char *text, size_t len);

enum run_state procstat_cpu_state(pid_t pid, long tid);

/* The CPU the thread last ran on (field 39, "processor", of the same text).
 * False when the text has no such field. */
bool procstat_parse_stat_cpu(const char *text, size_t len, int *cpu);

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
