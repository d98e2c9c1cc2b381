/* What every fuzz target (tests/fuzz/fuzz_*.c) shares. A target is one
 * LLVMFuzzerTestOneInput that hands the bytes to the real parsers of one
 * family through their public API. Linked with libFuzzer
 * (--enable-fuzzing, tests/fuzz.sh) it is fuzzed; linked with replay.c it
 * runs over its corpus in the normal suite. A broken promise of a parser
 * (a string not terminated, a count beyond its array) aborts: fuzz_check. */
#ifndef TT_FUZZ_H
#define TT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: once before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A NUL-terminated copy of the bytes (the text parsers' input). */
char *fuzz_text(const uint8_t *data, size_t size);

/* A file holding the bytes (for parsers that take a path or a descriptor):
 * its descriptor, its path in *path ("/proc/self/fd/N"). Aborts when it
 * cannot be made. */
int fuzz_file(const uint8_t *data, size_t size, char *path, size_t pathlen);

/* With TT_FUZZ_SAY set, what an input reached, on stderr (to check that a
 * seed reaches what it was taken for). */
__attribute__((format(printf, 1, 2))) void fuzz_say(const char *fmt, ...);

/* Abort, naming the promise, when ok is false: a finding like a crash. */
#define fuzz_check(ok) ((ok) ? (void)0 : fuzz_fail(#ok, __FILE__, __LINE__))
_Noreturn void fuzz_fail(const char *what, const char *file, int line);

/* The string in buf (of size len) is terminated within it. */
#define fuzz_check_str(buf, len) fuzz_check(memchr((buf), '\0', (len)) != NULL)

#endif
