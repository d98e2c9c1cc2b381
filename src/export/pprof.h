/* pprof: a gzipped profile.proto (github.com/google/pprof/proto/profile.proto),
 * as read by `go tool pprof`, Grafana Pyroscope and Parca. */
#ifndef TT_PPROF_H
#define TT_PPROF_H

#include <stdio.h>

#include "export.h"

int pprof_write(const struct profile *p, const struct procset *ps,
		const struct export_meta *meta, FILE *f);

#endif
