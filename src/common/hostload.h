/* What the machine's scheduler says: CPU time left idle or stolen by the
 * host (/proc/stat), tasks wanting a CPU, time tasks spent waiting for one
 * (/proc/pressure/cpu), and one thread's time on and waiting for a CPU
 * (schedstat). Cumulative figures: callers take differences. */
#ifndef TT_HOSTLOAD_H
#define TT_HOSTLOAD_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct host_cpu {
	uint64_t idle_ns;      /* idle and iowait, over the CPUs asked for */
	uint64_t steal_ns;     /* taken by the host (a VM's hypervisor) */
	uint64_t total_ns;     /* all of their time */
	uint32_t cpus;         /* CPUs counted */
	uint32_t running;      /* tasks running or runnable now, the reader among them */
	uint64_t pressure_us;  /* some task waited for a CPU (0 without PSI) */
	bool has_pressure;
};

/* Read the figures, summed over the CPUs in `only` (NULL: every CPU);
 * false when /proc/stat cannot be read. */
bool hostload_read(const cpu_set_t *only, struct host_cpu *out);

/* The parsing of hostload_read: /proc/stat's text, summed over the CPUs
 * in `only` (NULL: every CPU), into out (cleared first); false when no CPU
 * line counted. Then /proc/pressure/cpu's text into out->pressure_us. */
bool hostload_parse_stat(const char *text, const cpu_set_t *only, struct host_cpu *out);
void hostload_parse_pressure(const char *text, struct host_cpu *out);

/* A schedstat line (/proc/PID/task/TID/schedstat): time on a CPU and
 * waiting for one (ns), and how many times it ran; runs may be NULL.
 * false when the text is not one. */
bool hostload_parse_schedstat(const char *text, uint64_t *on_ns, uint64_t *wait_ns,
			      uint64_t *runs);

/* Thread tid's time on a CPU and runnable but waiting for one (tid 0: the
 * calling thread); false when the kernel does not say. */
bool hostload_thread(pid_t tid, uint64_t *on_ns, uint64_t *wait_ns);

#endif
