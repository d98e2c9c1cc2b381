#include "config.h"

#include <stdio.h>

#include "asynctasks.h"
#include "benchtasks.h"
#include "cli.h"
#include "clock.h"

int
benchtasks_run(pid_t pid, double seconds, bool json)
{
	struct tt_error err = {0};
	struct target t;
	if (target_attach(&t, pid, &err) != TT_OK)
		return cli_report(&err);
	struct code_cache codes;
	if (codecache_init(&codes) != 0) {
		tt_fail(&err, TT_ENOMEM, 0, "out of memory for the code cache");
		return cli_report(&err);
	}
	struct task_reader r;
	struct tt_tasks ts = {0};
	int rc = 0;
	if (task_reader_init(&r, &t, &codes, 0, &err) != TT_OK) {
		rc = cli_report(&err);
		goto out;
	}
	struct remote_floor floor = {0};
	if (remote_measure_floor(&t.mem, t.runtime_addr, 0.3, &floor, &err) != TT_OK) {
		rc = cli_report(&err);
		goto out;
	}
	/* The first read fills the code cache; later ones show the steady cost. */
	uint64_t t0 = clock_now_ns();
	if (task_reader_read(&r, &ts, &err) != TT_OK) {
		rc = cli_report(&err);
		goto out;
	}
	double first_ms = (double)(clock_now_ns() - t0) / 1e6;
	uint64_t reads = 0, syscalls = 0, lost = 0, tasks = 0, best = UINT64_MAX, total = 0;
	uint64_t end = clock_now_ns() + (uint64_t)(seconds * 1e9);
	do {
		uint64_t s = clock_now_ns();
		if (task_reader_read(&r, &ts, &err) != TT_OK) {
			rc = cli_report(&err);
			goto out;
		}
		uint64_t d = clock_now_ns() - s;
		total += d;
		best = d < best ? d : best;
		reads++;
		syscalls += ts.syscalls;
		lost += ts.lost;
		tasks += ts.n;
	} while (clock_now_ns() < end);
	double mean_ms = (double)total / (double)reads / 1e6;
	double per_read_tasks = (double)tasks / (double)reads;
	double per_read_calls = (double)syscalls / (double)reads;
	/* The floor: the same number of reads, each as cheap as one 8-byte read. */
	double floor_ms = per_read_calls * floor.readv_us / 1e3;
	if (json) {
		printf("{\"pid\": %d, \"tasks\": %.0f, \"reads\": %llu, \"first_read_ms\": %.3f, "
		       "\"mean_read_ms\": %.3f, \"best_read_ms\": %.3f, \"syscalls_per_read\": %.1f, "
		       "\"us_per_task\": %.3f, \"lost_per_read\": %.2f, \"floor_readv_us\": %.3f, "
		       "\"floor_ms\": %.3f}\n",
		       (int)pid, per_read_tasks, (unsigned long long)reads, first_ms, mean_ms,
		       (double)best / 1e6, per_read_calls,
		       per_read_tasks > 0 ? mean_ms * 1e3 / per_read_tasks : 0.0,
		       (double)lost / (double)reads, floor.readv_us, floor_ms);
	} else {
		printf("asyncio task reads of process %d: %.0f tasks per read, %llu reads\n",
		       (int)pid, per_read_tasks, (unsigned long long)reads);
		printf("  first read (code cache cold): %.3f ms\n", first_ms);
		printf("  per read: mean %.3f ms, best %.3f ms, %.2f us per task\n", mean_ms,
		       (double)best / 1e6, per_read_tasks > 0 ? mean_ms * 1e3 / per_read_tasks : 0.0);
		printf("  remote reads per read: %.1f (page cache), lost to torn memory: %.2f\n",
		       per_read_calls, (double)lost / (double)reads);
		printf("  floor: %.3f us per 8-byte read; as many reads at the floor: %.3f ms "
		       "(%.2fx)\n", floor.readv_us, floor_ms, floor_ms > 0 ? mean_ms / floor_ms : 0.0);
	}
out:
	tt_tasks_free(&ts);
	task_reader_free(&r);
	codecache_free(&codes);
	return rc;
}
