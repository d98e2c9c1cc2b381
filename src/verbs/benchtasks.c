#include "config.h"

#include <stdio.h>

#include "async/asynctasks.h"
#include "benchtasks.h"
#include "cli.h"
#include "clock.h"
#include "async/greenlets.h"
#include "jsonw.h"
#include "sanitize.h"

struct readers {
	struct task_reader tasks;
	struct greenlet_reader greenlets;
	bool of_greenlets;      /* which one this measure reads */
};

static tt_status
read_once(struct readers *rd, struct tt_tasks *ts, struct tt_error *err)
{
	if (!rd->of_greenlets)
		return task_reader_read(&rd->tasks, ts, err);
	tt_tasks_clear(ts);
	return greenlet_reader_read(&rd->greenlets, ts, err);
}

struct figures {
	double first_ms, mean_ms, best_ms, per_read, calls, lost, scan_ms, scan_mb;
	uint64_t reads;
};

/* The first read fills the code cache; later ones show the steady cost. */
static tt_status
measure(struct readers *rd, struct tt_tasks *ts, double seconds, struct figures *f,
	struct tt_error *err)
{
	uint64_t t0 = clock_now_ns();
	tt_status st = read_once(rd, ts, err);
	if (st != TT_OK)
		return st;
	f->first_ms = (double)(clock_now_ns() - t0) / 1e6;
	uint64_t syscalls = 0, lost = 0, n = 0, best = UINT64_MAX, total = 0, bytes0;
	double scan_ms = 0;
	bytes0 = rd->greenlets.bytes_scanned;
	uint64_t end = clock_now_ns() + (uint64_t)(seconds * 1e9);
	f->reads = 0;
	do {
		uint64_t s = clock_now_ns();
		if ((st = read_once(rd, ts, err)) != TT_OK)
			return st;
		uint64_t d = clock_now_ns() - s;
		total += d;
		best = d < best ? d : best;
		f->reads++;
		syscalls += ts->syscalls;
		lost += ts->lost;
		n += ts->n;
		scan_ms += rd->greenlets.pass_ms;   /* a whole pass each read */
	} while (clock_now_ns() < end);
	double reads = (double)f->reads;
	f->mean_ms = (double)total / reads / 1e6;
	f->best_ms = (double)best / 1e6;
	f->per_read = (double)n / reads;
	f->calls = (double)syscalls / reads;
	f->lost = (double)lost / reads;
	f->scan_ms = scan_ms / reads;
	f->scan_mb = (double)(rd->greenlets.bytes_scanned - bytes0) / reads / 1048576.0;
	return TT_OK;
}

static void
print_json(struct jsonw *w, const char *key, const struct figures *f, double floor_us)
{
	jsonw_object(w, key);
	jsonw_double(w, "count", 0, f->per_read);
	jsonw_u64(w, "reads", f->reads);
	jsonw_double(w, "first_read_ms", 3, f->first_ms);
	jsonw_double(w, "mean_read_ms", 3, f->mean_ms);
	jsonw_double(w, "best_read_ms", 3, f->best_ms);
	jsonw_double(w, "syscalls_per_read", 1, f->calls);
	jsonw_double(w, "us_each", 3, f->per_read > 0 ? f->mean_ms * 1e3 / f->per_read : 0.0);
	jsonw_double(w, "lost_per_read", 2, f->lost);
	jsonw_double(w, "floor_ms", 3, f->calls * floor_us / 1e3);
	if (f->scan_mb > 0) {
		jsonw_double(w, "scan_mb", 1, f->scan_mb);
		jsonw_double(w, "scan_ms", 3, f->scan_ms);
	}
	jsonw_end(w);
}

static void
print_text(const char *what, pid_t pid, const struct figures *f, double floor_us)
{
	double floor_ms = f->calls * floor_us / 1e3;
	printf("%s reads of process %d: %.0f per read, %llu reads\n", what, (int)pid, f->per_read,
	       (unsigned long long)f->reads);
	printf("  first read (code cache cold): %.3f ms\n", f->first_ms);
	printf("  per read: mean %.3f ms, best %.3f ms, %.2f us each\n", f->mean_ms, f->best_ms,
	       f->per_read > 0 ? f->mean_ms * 1e3 / f->per_read : 0.0);
	if (f->scan_mb > 0)
		printf("  of which the scan of %.1f MB of anonymous memory: %.3f ms (%.0f MB/s)\n",
		       f->scan_mb, f->scan_ms, f->scan_ms > 0 ? f->scan_mb * 1e3 / f->scan_ms : 0.0);
	printf("  remote reads per read: %.1f, lost to torn memory: %.2f\n", f->calls, f->lost);
	printf("  floor: %.3f us per 8-byte read; as many reads at the floor: %.3f ms (%.2fx)\n",
	       floor_us, floor_ms, floor_ms > 0 ? f->mean_ms / floor_ms : 0.0);
}

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
	struct readers rd = {0};
	struct tt_tasks ts = {0};
	struct figures tasks = {0}, greenlets = {0};
	bool have_tasks = false, have_greenlets = false;
	int rc = 0;
	if (task_reader_init(&rd.tasks, &t, &codes, 0, &err) != TT_OK ||
	    greenlet_reader_init(&rd.greenlets, &t, &codes, 0, 0, &err) != TT_OK) {
		rc = cli_report(&err);
		goto out;
	}
	struct remote_floor floor = {0};
	if (remote_measure_floor(&t.mem, t.runtime_addr, 0.3, &floor, &err) != TT_OK ||
	    measure(&rd, &ts, seconds, &tasks, &err) != TT_OK) {
		rc = cli_report(&err);
		goto out;
	}
	have_tasks = ts.state == TASKS_READ;
	rd.of_greenlets = true;
	if (read_once(&rd, &ts, &err) != TT_OK) {
		rc = cli_report(&err);
		goto out;
	}
	if (rd.greenlets.state == GREENLETS_READ) {
		if (measure(&rd, &ts, seconds, &greenlets, &err) != TT_OK) {
			rc = cli_report(&err);
			goto out;
		}
		have_greenlets = true;
	}
	if (json) {
		struct jsonw w;
		jsonw_init(&w, stdout);
		jsonw_object(&w, NULL);
		jsonw_i64(&w, "pid", pid);
		jsonw_double(&w, "floor_readv_us", 3, floor.readv_us);
		if (have_tasks)
			print_json(&w, "tasks", &tasks, floor.readv_us);
		if (have_greenlets)
			print_json(&w, "greenlets", &greenlets, floor.readv_us);
		jsonw_end(&w);
		putchar('\n');
	} else {
		if (have_tasks)
			print_text("asyncio task", pid, &tasks, floor.readv_us);
		else
			printf("asyncio tasks of process %d: not read (%s)\n", (int)pid,
			       ts.state == TASKS_UNSUPPORTED ? "Python 3.14 or newer reads them"
							     : "asyncio is not imported");
		if (have_greenlets)
			print_text("greenlet", pid, &greenlets, floor.readv_us);
		else if (rd.greenlets.state == GREENLETS_UNKNOWN) {
			char safe[sizeof rd.greenlets.why];
			sanitize_for_terminal(rd.greenlets.why, safe, sizeof safe);
			printf("%s\n", safe);
		}
		else
			printf("greenlets of process %d: none (greenlet is not imported)\n", (int)pid);
	}
out:
	tt_tasks_free(&ts);
	task_reader_free(&rd.tasks);
	greenlet_reader_free(&rd.greenlets);
	codecache_free(&codes);
	return rc;
}
