/* An application that embeds CPython by loading libpython3.X.so at run time:
 *     tt-embedhost /usr/lib/x86_64-linux-gnu/libpython3.15.so.1.0 script.py ARGS
 * runs like `python3.15 script.py ARGS`. The functional tests use it to
 * cover a runtime that lives in a position-independent shared object,
 * mapped at a random bias, inside a program whose name is not "python".
 * It needs only libc, so it runs in the target root whatever its glibc. */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>

typedef int (*bytes_main_fn)(int, char **);

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBPYTHON [python arguments]\n", argv[0]);
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "%s: %s\n", argv[0], dlerror());
		return 1;
	}
	bytes_main_fn py_main;
	*(void **)&py_main = dlsym(lib, "Py_BytesMain");
	if (!py_main) {
		fprintf(stderr, "%s: no Py_BytesMain in %s\n", argv[0], argv[1]);
		return 1;
	}
	/* Python sees argv[1..] as its command line: argv[0] becomes the library. */
	return py_main(argc - 1, argv + 1);
}
