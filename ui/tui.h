/* The live screen: `tachyon-top -p PID` / `tachyon-top -- COMMAND`. */
#ifndef TT_TUI_H
#define TT_TUI_H

#include "error.h"
#include "liveopts.h"

/* Run the live screen until the user quits or the session ends. What
 * fails before the screen is up (no terminal, a bad theme, the target)
 * comes back in err, for the caller to report. */
tt_status tui_run(const struct live_options *o, struct tt_error *err);

/* --theme for --batch, which shows no colours: a theme that cannot be
 * loaded is still an error. */
tt_status tui_check_theme(const struct live_options *o, struct tt_error *err);

#endif
