/* The live views' command line: `tachyon-top [OPTIONS] -p PID` and
 * `tachyon-top [OPTIONS] -- COMMAND ARGS...`, shared by the TUI and batch
 * mode. */
#ifndef TT_LIVE_H
#define TT_LIVE_H

#include "liveopts.h"   /* struct live_options */

/* Parse; returns -1 when the caller should exit 0 (help, version), 0 to
 * run, or a positive exit status after printing a usage error. */
int live_parse(int argc, char **argv, struct live_options *o);

void live_print_help(void);

#endif
