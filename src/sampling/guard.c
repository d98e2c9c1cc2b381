#include "config.h"

#include <stdatomic.h>
#include <string.h>

#include "clock.h"
#include "guard.h"
#include "sampler.h"

/* The machine's figures for the header are taken over this long. */
#define HOST_WINDOW_NS (500ull * 1000000ull)

static uint64_t
load(_Atomic uint64_t *field)
{
	return atomic_load_explicit(field, memory_order_relaxed);
}

static void
store(_Atomic uint64_t *field, uint64_t v)
{
	atomic_store_explicit(field, v, memory_order_relaxed);
}

static uint64_t
per_mille(uint64_t part, uint64_t whole)
{
	return whole ? (part > whole ? 1000 : part * 1000 / whole) : 0;
}

/* The machine's load over the last window, for the header: tasks wanting
 * a CPU (the guard, reading, not counted), time stolen by the host, time
 * some task waited for a CPU. */
static void
publish_host(struct guard *g, const struct host_cpu *now_all, uint64_t now_ns)
{
	struct engine_stats *st = &g->sampler->stats;
	g->runnable_sum += now_all->running > 0 ? now_all->running - 1 : 0;
	g->runnable_n++;
	if (g->last_ns && now_ns - g->last_ns < HOST_WINDOW_NS)
		return;
	if (g->last_ns) {
		store(&st->host_cpus, now_all->cpus);
		store(&st->host_runnable_milli, g->runnable_sum * 1000 / g->runnable_n);
		store(&st->host_steal_pm, per_mille(now_all->steal_ns - g->last.steal_ns,
						    now_all->total_ns - g->last.total_ns));
		store(&st->host_pressure_pm,
		      now_all->has_pressure
			      ? per_mille((now_all->pressure_us - g->last.pressure_us) * 1000,
					  now_ns - g->last_ns)
			      : 0);
	}
	g->last = *now_all;
	g->last_ns = now_ns;
	g->runnable_sum = g->runnable_n = 0;
}

static void
tick(struct guard *g, uint64_t now)
{
	struct sampler *s = g->sampler;
	struct engine_stats *st = &s->stats;
	if (s->cfg.duration_ns && now - s->start_ns >= s->cfg.duration_ns &&
	    !atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		atomic_store_explicit(&s->duration_over, true, memory_order_relaxed);
		atomic_store_explicit(&s->stop, true, memory_order_release);
	}
	pid_t tid = atomic_load_explicit(&s->tid, memory_order_acquire);
	uint64_t on, wait;
	if (!tid || !hostload_thread(tid, &on, &wait))
		return;
	store(&st->sched_cpu_ns, on);
	store(&st->sched_wait_ns, wait);
	struct host_cpu all, mine;
	bool known = hostload_read(NULL, &all);
	if (known)
		publish_host(g, &all, now);
	if (!g->started_gentle)
		g->all_cpus = sched_getaffinity(tid, sizeof g->cpus, &g->cpus) != 0 ||
			      (known && (uint32_t)CPU_COUNT(&g->cpus) >= all.cpus);
	if (known && !g->all_cpus)
		known = hostload_read(&g->cpus, &mine);
	else
		mine = all;
	struct gentle_counts gc = {wait, load(&st->samples), load(&st->missed),
				   known ? mine.idle_ns : 0, known};
	if (!g->started_gentle) {
		gentle_start(&g->gentle, g->want_idle, tid, now, &gc);
		g->started_gentle = true;
		return;
	}
	gentle_check(&g->gentle, now, &gc);
	store(&st->sched_idle_ns, g->gentle.idle_ns);
	store(&st->sched_fallbacks, g->gentle.fallbacks);
}

static void *
guard_main(void *arg)
{
	struct guard *g = arg;
	struct sampler *s = g->sampler;
	pthread_mutex_lock(&g->worker.lock);
	while (!atomic_load(&g->worker.stop)) {
		uint64_t now = clock_now_ns();
		tick(g, now);
		uint64_t next = now + GENTLE_TICK_NS;
		uint64_t end = s->start_ns + s->cfg.duration_ns;
		if (s->cfg.duration_ns && end > now && end < next)
			next = end;
		worker_sleep_until(&g->worker, next);
	}
	pthread_mutex_unlock(&g->worker.lock);
	return NULL;
}

int
guard_start(struct guard *g, struct sampler *s, bool want_idle)
{
	memset(g, 0, sizeof *g);
	g->sampler = s;
	g->want_idle = want_idle;
	return worker_run(&g->worker, "tt-guard", guard_main, g);
}

void
guard_stop(struct guard *g)
{
	worker_stop(&g->worker);
}
