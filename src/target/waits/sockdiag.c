#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "waits/sockdiag.h"
#include "workers.h"

static int
netlink_socket(void)
{
	return socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
}

struct in_netns {
	int nsfd;
	int sock;
};

/* On a thread of its own: enter the namespace, make the socket there. The
 * thread ends with it; the socket stays in that namespace. */
static void *
socket_in_netns(void *arg)
{
	struct in_netns *job = arg;
	job->sock = setns(job->nsfd, CLONE_NEWNET) == 0 ? netlink_socket() : -1;
	return NULL;
}

static bool
same_netns(pid_t pid, int *nsfd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
	struct stat theirs, ours;
	*nsfd = -1;
	if (stat(path, &theirs) != 0 || stat("/proc/self/ns/net", &ours) != 0)
		return true; /* cannot tell: ask in ours */
	if (theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev)
		return true;
	*nsfd = open(path, O_RDONLY | O_CLOEXEC);
	return false;
}

bool
sockdiag_send(int fd, const void *msg, size_t len)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	return sendto(fd, msg, len, 0, (struct sockaddr *)&kernel, sizeof kernel) >= 0;
}

ssize_t
sockdiag_recv(int fd, void *buf, size_t len)
{
	ssize_t got;
	while ((got = recv(fd, buf, len, 0)) < 0 && errno == EINTR)
		;
	return got;
}

int
sockdiag_socket(pid_t pid)
{
	int fd = -1, nsfd;
	if (!same_netns(pid, &nsfd) && nsfd >= 0) {
		struct in_netns job = {nsfd, -1};
		pthread_t t;
		if (worker_start(&t, "tt-netns", socket_in_netns, &job) == 0)
			pthread_join(t, NULL);
		close(nsfd);
		fd = job.sock;
	}
	if (fd < 0)
		fd = netlink_socket();
	if (fd >= 0) {
		struct timeval tv = {0, 200000}; /* never hang on a reply */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	}
	return fd;
}

const struct nlmsghdr *
sockdiag_next(const void *buf, size_t len, size_t *off)
{
	if (*off >= len || len - *off < sizeof(struct nlmsghdr))
		return NULL;
	const struct nlmsghdr *h = (const struct nlmsghdr *)((const char *)buf + *off);
	if (h->nlmsg_len < sizeof *h || h->nlmsg_len > len - *off)
		return NULL;
	size_t step = NLMSG_ALIGN((size_t)h->nlmsg_len);
	*off = step > len - *off ? len : *off + step;
	return h;
}
