#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "progress.h"

#define PROGRESS_EVERY_NS 1000000000ull

void
progress_init(struct progress *p)
{
	p->enabled = isatty(STDERR_FILENO) == 1;
	p->shown = false;
	p->next_ns = clock_now_ns() + PROGRESS_EVERY_NS;
}

void
progress_update(struct progress *p, uint64_t now_ns, uint64_t elapsed_ns, uint64_t duration_ns,
		uint64_t samples, uint64_t errors)
{
	if (!p->enabled || now_ns < p->next_ns)
		return;
	p->next_ns = now_ns + PROGRESS_EVERY_NS;
	char of[48] = "";
	if (duration_ns)
		snprintf(of, sizeof of, " of %.0f s", (double)duration_ns / 1e9);
	/* \r and erase-to-end: the line is redrawn in place, never scrolls */
	fprintf(stderr, "\rtachyon-top: recording %.0f s%s, %llu samples, %.2f%% errors%s\033[K",
		(double)elapsed_ns / 1e9, of, (unsigned long long)samples,
		samples ? 100.0 * (double)errors / (double)samples : 0.0,
		duration_ns ? "" : " (Ctrl-C stops)");
	fflush(stderr);
	p->shown = true;
}

void
progress_clear(struct progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->shown = false;
	}
}
