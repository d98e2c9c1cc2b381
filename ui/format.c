#include "config.h"

#include <stdio.h>

#include "liveopts.h"

void
live_format_count(double v, char *buf, size_t len)
{
	if (v < 1000)
		snprintf(buf, len, "%.0f", v);
	else if (v < 1e6)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v < 1e9)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else
		snprintf(buf, len, "%.1fG", v / 1e9);
}

void
live_format_duration(double s, char *buf, size_t len)
{
	if (s < 10)
		snprintf(buf, len, "%.2fs", s);
	else if (s < 60)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%d:%02d", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%d:%02d:%02d", (int)s / 3600, ((int)s / 60) % 60, (int)s % 60);
}
