/* `bench --cost`: what a target pays for being sampled, Python-only and
 * --native, measured on its own throughput. */
#ifndef TT_BENCHCOST_H
#define TT_BENCHCOST_H

#include <stdbool.h>

/* Run python (argv, NULL-terminated: an interpreter and its options, "-c
 * PROGRAM" appended) as a target that counts its own work, and measure its
 * throughput sampled and alone for about `seconds` per setting; print the
 * figures (text or JSON). Returns the process exit status. */
int benchcost_run(char **python, double seconds, bool json);

#endif
