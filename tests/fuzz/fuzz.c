#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

char *
fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

int
fuzz_file(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	return fd;
}

void
fuzz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "%s:%d: broken promise: %s\n", file, line, what);
	abort();
}

void
fuzz_say(const char *fmt, ...)
{
	if (!getenv("TT_FUZZ_SAY"))
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
