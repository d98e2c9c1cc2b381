/* Without libFuzzer, a fuzz target is a unit test (TAP): it runs once on
 * each input of its corpus, tests/fuzz/corpus/NAME under $TT_SRCDIR (NAME:
 * the program's name less "fuzz_"), or on the files and directories given.
 * The corpus holds real inputs and the inputs of every bug the fuzzers
 * found, so each stays fixed. A crash or a broken promise ends the run. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef TT_FUZZ_ENGINE

__attribute__((weak)) int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static unsigned ran;

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("not ok %u - %s: %s\n", ++ran, path, strerror(errno));
		return 1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf) {
		printf("not ok %u - %s: out of memory\n", ++ran, path);
		return 1;
	}
	fflush(stdout);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	printf("ok %u - %s (%zu bytes)\n", ++ran, path, len);
	return 0;
}

static int
run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		printf("not ok %u - %s: %s\n", ++ran, path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	DIR *d = opendir(path);
	if (!d) {
		printf("not ok %u - %s: %s\n", ++ran, path, strerror(errno));
		return 1;
	}
	char **names = NULL;
	size_t count = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (count + 1) * sizeof *names);
		if (!names || asprintf(&names[count], "%s/%s", path, e->d_name) < 0)
			abort();
		count++;
	}
	closedir(d);
	int bad = 0;
	if (count == 0) {
		printf("not ok %u - %s: no inputs\n", ++ran, path);
		bad = 1;
	}
	qsort(names, count, sizeof *names, by_name);
	for (size_t i = 0; i < count; i++) {
		bad |= run_file(names[i]);
		free(names[i]);
	}
	free(names);
	return bad;
}

int
main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	int bad = 0;
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			bad |= run_path(argv[i]);
	} else {
		const char *src = getenv("TT_SRCDIR");
		const char *base = strrchr(argv[0], '/');
		base = base ? base + 1 : argv[0];
		if (strncmp(base, "fuzz_", 5) == 0)
			base += 5;
		char *dir;
		if (asprintf(&dir, "%s/tests/fuzz/corpus/%s", src ? src : ".", base) < 0)
			abort();
		bad = run_path(dir);
		free(dir);
	}
	printf("1..%u\n", ran);
	return bad;
}

#endif
