/* The live screen: `tachyon-top -p PID` / `tachyon-top -- COMMAND`. */
#ifndef TT_TUI_H
#define TT_TUI_H

#include "live.h"

int tui_run(const struct live_options *o);

/* --theme for --batch, which shows no colours: a theme that cannot be
 * loaded is still an error. Returns 0 or the exit code, reported. */
int tui_check_theme(const struct live_options *o);

#endif
