/* The open-file limit: raised for tachyon-top itself, as it was for the
 * commands it starts. */
#ifndef TT_FDLIMIT_H
#define TT_FDLIMIT_H

/* Raise the soft RLIMIT_NOFILE to the hard one, keeping the old value. */
void fdlimit_raise(void);
/* In a child about to exec a command: the soft limit as it was given to
 * tachyon-top (some programs still walk every descriptor up to it, or use
 * select()). Async-signal-safe. */
void fdlimit_restore(void);

#endif
