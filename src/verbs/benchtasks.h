/* `bench --tasks`: what one read of every asyncio task, and of every
 * greenlet, costs. */
#ifndef TT_BENCHTASKS_H
#define TT_BENCHTASKS_H

#include <stdbool.h>
#include <sys/types.h>

/* Read the tasks, then the greenlets, of pid for `seconds` each; print
 * figures (text or JSON). Returns the process exit status. */
int benchtasks_run(pid_t pid, double seconds, bool json);

#endif
