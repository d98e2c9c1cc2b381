/* Batch mode (`--batch`): the top-functions table as plain text, printed
 * every refresh and at the end, like `top -b`, for scripts and ssh. */
#ifndef TT_BATCH_H
#define TT_BATCH_H

#include "live.h"

int batch_run(const struct live_options *o);

#endif
