#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <time.h>

#include "binrec.h"
#include "clock.h"
#include "watchrecord.h"

/* The records into the log, as record takes them: one taken before its
 * slot's present thread was born counts under the process of the thread
 * before it. */
static tt_status
put_records(struct samplelog *log, const struct flightrec *fr, const struct procset *live,
	    struct tt_error *err)
{
	tt_status st = samplelog_sync(log, live, err);
	uint32_t nslots = appendlog_count(log->mirror.threads.log);
	for (uint32_t i = 0; st == TT_OK && i < flightrec_count(fr); i++) {
		const struct sample_record *r = flightrec_at(fr, i);
		if (r->thread_slot < nslots)
			st = samplelog_take(log, live, r, err);
	}
	return st;
}

tt_status
watch_recording_write(const char *path, const struct flightrec *fr, const struct session *s,
		      double rate_hz, bool tree, struct tt_error *err)
{
	struct binrec_writer *rec;
	if (binrec_open(&rec, path, err) != TT_OK)
		return err->status;
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	uint64_t since_start = clock_now_ns() - s->sampler.start_ns;
	/* the times are the sampler's, from its start: the header says when that was */
	struct binrec_header h = {
		.pid = s->pid, .python_version = s->target.layout.version_str,
		.command = s->cmdline, .mode = PROFILE_WALL, .rate_hz = rate_hz,
		.start_unix_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec -
				 since_start,
		.subprocesses = tree,
	};
	if (binrec_begin(rec, &h, err) != TT_OK) {
		binrec_abort(rec);
		return err->status;
	}
	struct profile prof;
	profile_init(&prof);
	struct samplelog log;
	if (samplelog_init(&log, &prof, PROFILE_WALL) != 0) {
		profile_free(&prof);
		binrec_abort(rec);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory for a recording");
	}
	log.sink = binrec_put;
	log.sink_ctx = rec;
	tt_status st = put_records(&log, fr, &s->sampler.procs, err);
	struct binrec_progress p = {0};
	uint64_t from, to;
	if (flightrec_span(fr, &from, &to, &p.passes))
		p.duration_ns = to - from;
	if (st == TT_OK) {
		struct export_sources src;
		export_sources_open(&src, s->target.pid);
		profile_settle(&prof, &log.mirror);
		binrec_put_sources(rec, &prof, &log.mirror, &src);
		export_sources_close(&src);
		st = binrec_finish(rec, s->cmdline, &p, err);
		if (st == TT_OK)
			chmod(path, 0600);   /* as the report's other files */
	} else {
		binrec_abort(rec);
	}
	samplelog_free(&log);
	profile_free(&prof);
	return st;
}
