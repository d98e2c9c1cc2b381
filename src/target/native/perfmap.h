/* A runtime's perf map: the text file /tmp/perf-PID.map in which CPython's
 * perf trampolines (-X perf), JIT compilers and the like name code that
 * no file holds, one "START SIZE NAME" line (hex) per piece of code, the
 * file only ever appended to. Read from the target's own root, in parts as
 * it grows. */
#ifndef TT_PERFMAP_H
#define TT_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Longest name kept (longer ones are cut), and the largest file read. */
#define PERFMAP_NAME_MAX 200
#define PERFMAP_FILE_MAX (64u << 20)

struct perfmap_entry {
	uint64_t start, size;
	uint32_t name;      /* offset in names */
	uint32_t line;      /* its line's number: a later line names reused code */
};

struct perfmap {
	struct perfmap_entry *v;
	uint32_t n, cap;
	uint32_t lines;
	char *names;
	uint32_t names_len, names_cap;
	uint64_t consumed;  /* bytes of the file parsed: whole lines */
	char file[32];      /* "perf-NSPID.map", once perfmap_update looked for it */
	bool sorted;
};

void perfmap_init(struct perfmap *m);
void perfmap_free(struct perfmap *m);

/* Parses the whole lines of text (a last line without its newline is left
 * for later) and returns the bytes they took. A line that is not two hex
 * numbers and a name is skipped; control bytes in a name become '?'. */
size_t perfmap_parse(struct perfmap *m, const char *text, size_t len);

/* Names size bytes of code at start (the first len bytes of s, control
 * bytes made '?'), as a later line would. False when empty or wrapping. */
bool perfmap_add(struct perfmap *m, uint64_t start, uint64_t size, const char *s, size_t len);

/* The name of the code at addr, from the latest line that covers it, and
 * in *start (when not NULL) where that code starts; NULL when none does. */
const char *perfmap_lookup(struct perfmap *m, uint64_t addr, uint64_t *start);

/* Reads what process pid's map (/tmp/perf-NSPID.map inside its root)
 * holds beyond what was parsed. False when there is no such regular file
 * to read (nothing is followed out of the target's root, nothing but a
 * regular file opened). */
bool perfmap_update(struct perfmap *m, pid_t pid);

/* The same for a process no longer there (a core's): /tmp/perf-PID.map
 * under root ("" or "/": the machine's own), pid as the process saw it. */
bool perfmap_update_in(struct perfmap *m, const char *root, pid_t pid);

#endif
