// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include "CPatternLockShims.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int pl_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid)
{
	struct sockaddr_storage addr;
	socklen_t addrlen = sizeof addr;
	if (getsockname(fd, (struct sockaddr *)&addr, &addrlen) != 0)
		return -1;
	if (addr.ss_family != AF_UNIX) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return -1;
	if (len != sizeof cred) {
		errno = EINVAL;
		return -1;
	}
	*pid = cred.pid;
	*uid = cred.uid;
	*gid = cred.gid;
	return 0;
}

int pl_random_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;
	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void pl_wipe(void *buf, size_t len)
{
	explicit_bzero(buf, len);
}

int pl_listen_fds(void)
{
	const char *pid_s = getenv("LISTEN_PID");
	const char *fds_s = getenv("LISTEN_FDS");
	int n = 0;
	if (pid_s && fds_s) {
		char *end = NULL;
		errno = 0;
		long pid = strtol(pid_s, &end, 10);
		if (errno == 0 && end && *end == '\0' &&
		    pid == (long)getpid()) {
			long fds = strtol(fds_s, &end, 10);
			if (errno == 0 && end && *end == '\0' && fds > 0 &&
			    fds < 64) {
				n = (int)fds;
				for (int fd = 3; fd < 3 + n; fd++)
					(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
			}
		}
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return n;
}

int pl_accept_cloexec(int fd)
{
	return accept4(fd, NULL, NULL, SOCK_CLOEXEC);
}

int pl_pipe_cloexec(int fds[2])
{
	return pipe2(fds, O_CLOEXEC | O_NONBLOCK);
}

int pl_rename_noreplace(const char *from, const char *to)
{
	return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
