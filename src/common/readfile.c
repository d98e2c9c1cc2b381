#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "grow.h"
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

char *
read_fd_whole(int fd, size_t max, size_t *len, bool *cut)
{
	char *buf = NULL;
	uint32_t cap = 0;
	size_t n = 0;
	*cut = false;
	if (max >= UINT32_MAX)
		max = UINT32_MAX - 1;
	for (;;) {
		/* room for the next read and the NUL, by at least 16 KiB */
		if (n + 1 >= cap) {
			size_t need = n + 16384 < max ? n + 16384 : max;
			if (!grow_array((void **)&buf, &cap, (uint32_t)need + 1, 1)) {
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
		}
		if (n == max) {
			/* full: is there more? */
			char one;
			ssize_t k = read(fd, &one, 1);
			if (k < 0 && errno == EINTR)
				continue;
			*cut = k > 0;
			break;
		}
		size_t room = cap - 1 - n;
		if (room > max - n)
			room = max - n;
		ssize_t k = read(fd, buf + n, room);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

bool
read_fd_at(int fd, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

int
open_in_root(int root_fd, int dir_fd, const char *path)
{
	int dir = path[0] == '/' ? root_fd : dir_fd;
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	int fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof how);
	if (fd < 0 && errno == ENOSYS)
		fd = openat(dir, path[0] == '/' ? path + 1 : path,
			    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	return fd;
}
