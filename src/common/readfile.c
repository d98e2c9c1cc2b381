#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <unistd.h>

#include "readfile.h"

ssize_t
read_small_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	bool failed = false;
	while (n + 1 < len) {
		ssize_t k = read(fd, buf + n, len - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		failed = k < 0 && n == 0;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (failed)
		return -1;
	buf[n] = '\0';
	return (ssize_t)n;
}
