/* A one-line progress report on stderr for long commands, only when stderr
 * is a terminal: redrawn in place about once a second, erased at the end so
 * the final summary starts on a clean line. */
#ifndef TT_PROGRESS_H
#define TT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	bool enabled;
	bool shown;
	uint64_t next_ns;
};

void progress_init(struct progress *p);
/* Redraw if a second has passed: elapsed of duration (0: open-ended),
 * samples and the error rate. */
void progress_update(struct progress *p, uint64_t now_ns, uint64_t elapsed_ns,
		     uint64_t duration_ns, uint64_t samples, uint64_t errors);
void progress_clear(struct progress *p);

#endif
