/* A `watch` report's recording.ttrec: the flight recorder's last seconds
 * of samples, written through a sample log over the live processes and
 * threads as `record` writes a recording, so `replay` turns it into a
 * flame graph or any other output. */
#ifndef TT_WATCHRECORD_H
#define TT_WATCHRECORD_H

#include <stdbool.h>

#include "error.h"
#include "flightrec.h"
#include "session.h"

/* Write fr's records of session s (sampled at rate_hz; a tree when tree)
 * to path; the heatmap's sources read as they stand now. */
tt_status watch_recording_write(const char *path, const struct flightrec *fr,
				const struct session *s, double rate_hz, bool tree,
				struct tt_error *err);

#endif
