// SPDX-License-Identifier: Apache-2.0
/*
 * One exchange with the daemon over its Unix socket: connect with a deadline,
 * check the socket and the peer are root's, send one request line and read one
 * reply line, all before a single deadline. The line itself is wire.c's.
 */
/* struct ucred for SO_PEERCRED. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_ext.h>

#include "exchange.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left before deadline, 0 once it has passed. */
static int left_ms(long long deadline)
{
	long long left = deadline - now_ms();

	if (left <= 0)
		return 0;
	return left > 1000000 ? 1000000 : (int)left;
}

/* Waits for events on fd until the deadline. Returns 0, or -1 with errno
 * (ETIMEDOUT when the deadline passed). */
static int wait_for(int fd, short events, long long deadline)
{
	struct pollfd p = {.fd = fd, .events = events};

	for (;;) {
		int ms = left_ms(deadline);
		int n;

		if (ms == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

static void describe(char *errbuf, size_t errsize, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void describe(char *errbuf, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	if (errbuf == NULL || errsize == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errsize, fmt, ap);
	va_end(ap);
}

/* strerror without its shared buffer (the GNU strerror_r, thanks to
 * _GNU_SOURCE): a PAM module may run in a threaded program. */
#define error_text(err) strerror_r((err), (char[128]){0}, 128)

/* connect(2) on a non-blocking socket, finished before the deadline.
 * Returns 0, or -1 with errno. */
static int connect_within(int fd, const struct sockaddr_un *addr,
			  long long deadline)
{
	int err = 0;
	socklen_t errlen = sizeof(err);

	for (;;) {
		int ms;

		if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) ==
		    0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno == EINPROGRESS)
			break;
		if (errno != EAGAIN)
			return -1;
		/* A Unix socket whose backlog is full fails with EAGAIN
		 * rather than waiting: try again until the deadline. */
		ms = left_ms(deadline);
		if (ms == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		poll(NULL, 0, ms < 20 ? ms : 20);
	}
	if (wait_for(fd, POLLOUT, deadline) != 0)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) != 0)
		return -1;
	if (err != 0) {
		errno = err;
		return -1;
	}
	return 0;
}

/* Connects to the daemon, trusting only a root-owned socket served by root.
 * Returns the fd (non-blocking, close-on-exec) or -1 with errbuf set. */
static int connect_daemon(const char *path, long long deadline, char *errbuf,
			  size_t errsize)
{
	struct sockaddr_un addr;
	struct ucred peer;
	socklen_t peerlen = sizeof(peer);
	struct stat st;
	int fd = -1;
	int ret = -1;

	/* lstat, not stat: a symlink put in place of the socket is refused. */
	if (lstat(path, &st) != 0) {
		describe(errbuf, errsize, "cannot use socket %s: %s", path,
			 error_text(errno));
		goto out;
	}
	if (!S_ISSOCK(st.st_mode)) {
		describe(errbuf, errsize, "%s is not a socket", path);
		goto out;
	}
	if (st.st_uid != 0) {
		describe(errbuf, errsize,
			 "socket %s is owned by uid %u, not root", path,
			 (unsigned)st.st_uid);
		goto out;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		describe(errbuf, errsize, "socket path too long: %s", path);
		goto out;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		describe(errbuf, errsize, "socket: %s", error_text(errno));
		goto out;
	}
	if (connect_within(fd, &addr, deadline) != 0) {
		describe(errbuf, errsize, "cannot connect to %s: %s", path,
			 error_text(errno));
		goto out;
	}
	/* The file was root's when we looked; make sure root is answering. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peerlen) != 0) {
		describe(errbuf, errsize, "SO_PEERCRED on %s: %s", path,
			 error_text(errno));
		goto out;
	}
	if (peer.uid != 0) {
		describe(errbuf, errsize,
			 "daemon on %s runs as uid %u, not root", path,
			 (unsigned)peer.uid);
		goto out;
	}
	ret = fd;
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int send_all(int fd, const char *buf, size_t len, long long deadline)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_for(fd, POLLOUT, deadline) != 0)
				return -1;
			continue;
		}
		if (n == 0)
			errno = EPIPE;
		return -1;
	}
	return 0;
}

/* Reads up to the first LF. Returns the line length without the LF, or -1
 * with errbuf set. */
static long read_line(int fd, char *buf, size_t size, long long deadline,
		      char *errbuf, size_t errsize)
{
	size_t have = 0;

	while (have < size) {
		ssize_t n;
		char *lf;

		if (wait_for(fd, POLLIN, deadline) != 0) {
			describe(errbuf, errsize, "no reply: %s",
				 error_text(errno));
			return -1;
		}
		n = recv(fd, buf + have, size - have, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			describe(errbuf, errsize, "reading the reply: %s",
				 error_text(errno));
			return -1;
		}
		if (n == 0) {
			describe(errbuf, errsize,
				 "the daemon closed the connection without a "
				 "complete reply");
			return -1;
		}
		lf = memchr(buf + have, '\n', (size_t)n);
		if (lf != NULL)
			return (long)(lf - buf);
		have += (size_t)n;
	}
	describe(errbuf, errsize, "reply longer than %d bytes", PL_MAX_REPLY);
	return -1;
}

int pl_client_exchange(pam_handle_t *pamh, const struct pl_config *cfg,
		       const char *request, size_t len, int timeout_seconds,
		       struct pl_reply *reply, char *errbuf, size_t errsize)
{
	long long deadline = now_ms() + (long long)timeout_seconds * 1000;
	char line[PL_MAX_REPLY];
	long linelen;
	int fd = -1;
	int ret = -1;

	if (errbuf != NULL && errsize > 0)
		errbuf[0] = '\0';
	fd = connect_daemon(cfg->socket_path, deadline, errbuf, errsize);
	if (fd < 0)
		goto out;
	if (send_all(fd, request, len, deadline) != 0) {
		describe(errbuf, errsize, "sending to %s: %s", cfg->socket_path,
			 error_text(errno));
		goto out;
	}
	linelen = read_line(fd, line, sizeof(line), deadline, errbuf, errsize);
	if (linelen < 0)
		goto out;
	if (pl_parse_reply(line, (size_t)linelen, reply) != 0) {
		describe(errbuf, errsize, "malformed reply from %s",
			 cfg->socket_path);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret != 0) {
		pam_syslog(pamh, LOG_ERR, "%s",
			   errbuf && errbuf[0] ? errbuf
					       : "daemon exchange failed");
		pl_reply_reset(reply);
	}
	return ret;
}
