/* Print the _Py_DebugOffsets field list tachyon-top assumes for a minor
 * version, one "group.field" per line; tests/check-layouts.sh compares it
 * with the headers of the real interpreter. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "python/pylayout.h"

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: layout_fields MINOR\n");
		return 2;
	}
	size_t n;
	const char *const *names = pylayout_field_names((unsigned)atoi(argv[1]), &n);
	if (!names)
		return 1;
	for (size_t i = 0; i < n; i++)
		printf("%s\n", names[i]);
	return 0;
}
