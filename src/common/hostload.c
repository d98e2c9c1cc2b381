#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostload.h"
#include "readfile.h"

#define STAT_MAX (4u << 20)

static uint64_t
ticks_ns(unsigned long long ticks)
{
	static long hz;
	if (hz <= 0) {
		hz = sysconf(_SC_CLK_TCK);
		if (hz <= 0)
			hz = 100;
	}
	return (uint64_t)ticks * (1000000000ull / (uint64_t)hz);
}

/* One "cpuN ..." or "cpu ..." line's fields into out. */
static bool
add_cpu_line(const char *line, struct host_cpu *out)
{
	unsigned long long f[8] = {0};
	const char *p = line + 3;
	while (*p >= '0' && *p <= '9')
		p++;
	if (sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4],
		   &f[5], &f[6], &f[7]) < 4)
		return false;
	uint64_t total = 0;
	for (int i = 0; i < 8; i++)
		total += f[i];
	out->idle_ns += ticks_ns(f[3] + f[4]);
	out->steal_ns += ticks_ns(f[7]);
	out->total_ns += ticks_ns(total);
	out->cpus++;
	return true;
}

void
hostload_parse_pressure(const char *text, struct host_cpu *out)
{
	const char *t = strstr(text, "total=");
	if (strncmp(text, "some ", 5) != 0 || !t)
		return;
	out->pressure_us = strtoull(t + 6, NULL, 10);
	out->has_pressure = true;
}

bool
hostload_parse_stat(const char *text, const cpu_set_t *only, struct host_cpu *out)
{
	memset(out, 0, sizeof *out);
	for (const char *line = text; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
			unsigned long cpu = strtoul(line + 3, NULL, 10);
			if (!only || (cpu < CPU_SETSIZE && CPU_ISSET(cpu, only)))
				add_cpu_line(line, out);
		} else if (strncmp(line, "procs_running ", 14) == 0) {
			out->running = (uint32_t)strtoul(line + 14, NULL, 10);
		}
	}
	return out->cpus > 0;
}

bool
hostload_read(const cpu_set_t *only, struct host_cpu *out)
{
	memset(out, 0, sizeof *out);
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t len;
	bool cut;
	char *text = read_fd_whole(fd, STAT_MAX, &len, &cut);
	close(fd);
	if (!text)
		return false;
	bool ok = hostload_parse_stat(text, only, out);
	free(text);
	char buf[256];
	if (read_small_file("/proc/pressure/cpu", buf, sizeof buf) > 0)
		hostload_parse_pressure(buf, out);
	return ok;
}

bool
hostload_parse_schedstat(const char *text, uint64_t *on_ns, uint64_t *wait_ns, uint64_t *runs)
{
	unsigned long long on, wait, n = 0;
	int got = sscanf(text, "%llu %llu %llu", &on, &wait, &n);
	if (got < (runs ? 3 : 2))
		return false;
	*on_ns = on;
	*wait_ns = wait;
	if (runs)
		*runs = n;
	return true;
}

bool
hostload_thread(pid_t tid, uint64_t *on_ns, uint64_t *wait_ns)
{
	char path[64], buf[128];
	if (tid > 0)
		snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
	else
		snprintf(path, sizeof path, "/proc/thread-self/schedstat");
	return read_small_file(path, buf, sizeof buf) > 0 &&
	       hostload_parse_schedstat(buf, on_ns, wait_ns, NULL);
}
