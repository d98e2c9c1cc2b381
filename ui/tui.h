/* The live screen: `tachyon-top -p PID` / `tachyon-top -- COMMAND`. */
#ifndef TT_TUI_H
#define TT_TUI_H

#include "live.h"

int tui_run(const struct live_options *o);

#endif
