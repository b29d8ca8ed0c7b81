// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include "CPatternLockShims.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* Linux 6.5; the value of the asm-generic architectures (x86-64, arm64). */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

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

int pl_set_undumpable(void)
{
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
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

int pl_peer_pidfd(int fd)
{
	int pidfd = -1;
	socklen_t len = sizeof pidfd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0)
		return -1;
	if (len != sizeof pidfd || pidfd < 0) {
		errno = EINVAL;
		return -1;
	}
	return pidfd;
}

int pl_pidfd_exited(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	int rc;
	do
		rc = poll(&p, 1, 0);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -1;
	return rc > 0 ? 1 : 0;
}

int pl_pidfd_kill(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int pl_spawn(const char *path, char *const *argv, char *const *envp, int in_fd,
	     int out_fd, int err_fd, int pass_fd, pid_t *pid)
{
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int rc, pidfd = -1, moved = -1;

	/* dup2(3, 3) would keep close-on-exec: move a pass_fd of 3 first. */
	if (pass_fd == 3) {
		moved = fcntl(pass_fd, F_DUPFD_CLOEXEC, 10);
		if (moved < 0)
			return -1;
		pass_fd = moved;
	}
	if ((rc = posix_spawn_file_actions_init(&actions)) != 0) {
		if (moved >= 0)
			close(moved);
		errno = rc;
		return -1;
	}
	if ((rc = posix_spawnattr_init(&attr)) != 0) {
		posix_spawn_file_actions_destroy(&actions);
		if (moved >= 0)
			close(moved);
		errno = rc;
		return -1;
	}
	sigemptyset(&none);
	sigfillset(&all);
	rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
						     POSIX_SPAWN_SETSIGDEF);
	if (rc == 0)
		rc = posix_spawnattr_setsigmask(&attr, &none);
	if (rc == 0)
		rc = posix_spawnattr_setsigdefault(&attr, &all);
	if (rc == 0 && in_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
	if (rc == 0 && out_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
	if (rc == 0 && err_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
	if (rc == 0 && pass_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&actions, pass_fd, 3);
	if (rc == 0)
		rc = posix_spawn(pid, path, &actions, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	if (moved >= 0)
		close(moved);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	/* The child is ours until it is waited for, so its pid cannot be reused
	 * here. */
	pidfd = (int)syscall(SYS_pidfd_open, *pid, 0);
	if (pidfd < 0) {
		int e = errno;
		kill(*pid, SIGKILL);
		(void)pl_wait_exit(*pid);
		errno = e;
		return -1;
	}
	(void)fcntl(pidfd, F_SETFD, FD_CLOEXEC);
	return pidfd;
}

/* A pipe whose ends are close-on-exec and above fd 3, so that giving the child
 * its fd 3 never touches them. */
static int pipe_above_3(int fds[2])
{
	int i;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	for (i = 0; i < 2; i++) {
		if (fds[i] > 3)
			continue;
		int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
		if (moved < 0) {
			int e = errno;
			close(fds[0]);
			close(fds[1]);
			errno = e;
			return -1;
		}
		close(fds[i]);
		fds[i] = moved;
	}
	return 0;
}

int pl_spawn_tied(const char *path, char *const *argv, char *const *envp,
		  int pass_fd, int death_signal, pid_t *pid)
{
	return pl_spawn_tied_on(path, argv, envp, pass_fd, death_signal, -1,
				pid);
}

int pl_spawn_tied_on(const char *path, char *const *argv, char *const *envp,
		     int pass_fd, int death_signal, int tty_fd, pid_t *pid)
{
	int report[2], e, pidfd;
	pid_t parent = getpid(), child;
	sigset_t all, old;
	ssize_t n;

	if (pipe_above_3(report) != 0)
		return -1;
	/* No handler of this process may run in the child before exec: it
	 * starts with every signal blocked and unblocks them once they are all
	 * default. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	child = fork();
	if (child == 0) {
		/* Only async-signal-safe calls from here to exec. */
		struct sigaction dfl;
		sigset_t none;
		int sig;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		for (sig = 1; sig < NSIG; sig++)
			(void)sigaction(sig, &dfl, NULL);
		if (prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0) != 0)
			goto failed;
		/* The parent may have ended before prctl: then no signal would
		 * come, and the child is already an orphan. */
		if (getppid() != parent)
			_exit(127);
		if (pass_fd == 3) {
			if (fcntl(3, F_SETFD, 0) != 0)
				goto failed;
		} else if (pass_fd >= 0 && dup2(pass_fd, 3) < 0) {
			goto failed;
		}
		/* A session of its own whose controlling terminal is tty_fd,
		 * which is also its stdin, stdout and stderr. */
		if (tty_fd >= 0) {
			if (setsid() < 0 || ioctl(tty_fd, TIOCSCTTY, 0) != 0)
				goto failed;
			if (dup2(tty_fd, 0) < 0 || dup2(tty_fd, 1) < 0 ||
			    dup2(tty_fd, 2) < 0)
				goto failed;
		}
		/* Nothing else of this process's crosses exec, whatever a
		 * library left open without close-on-exec (Linux 5.11; older
		 * kernels keep the flags as they are). */
		(void)syscall(SYS_close_range, 4U, ~0U, CLOSE_RANGE_CLOEXEC);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(path, argv, envp);
	failed:
		e = errno;
		(void)!write(report[1], &e, sizeof(e));
		_exit(127);
	}
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(report[1]);
	if (child < 0) {
		close(report[0]);
		errno = e;
		return -1;
	}
	/* exec closes the report pipe; an error comes through it first. */
	do
		n = read(report[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == (ssize_t)sizeof(e)) {
		(void)pl_wait_exit(child);
		errno = e;
		return -1;
	}
	*pid = child;
	pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	if (pidfd < 0) {
		e = errno;
		kill(child, SIGKILL);
		(void)pl_wait_exit(child);
		errno = e;
		return -1;
	}
	(void)fcntl(pidfd, F_SETFD, FD_CLOEXEC);
	return pidfd;
}

int pl_open_pty(int *master, int *terminal)
{
	char name[64];
	int m, t, e;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return -1;
	if (grantpt(m) != 0 || unlockpt(m) != 0 ||
	    ptsname_r(m, name, sizeof(name)) != 0)
		goto failed;
	t = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t < 0)
		goto failed;
	/* Above fd 3, so that a child's dup2 of its fd 3 never touches it. */
	if (t <= 3) {
		int moved = fcntl(t, F_DUPFD_CLOEXEC, 10);
		e = errno;
		close(t);
		errno = e;
		if (moved < 0)
			goto failed;
		t = moved;
	}
	*master = m;
	*terminal = t;
	return 0;
failed:
	e = errno;
	close(m);
	errno = e;
	return -1;
}

int pl_wait_exit(pid_t pid)
{
	int status = 0;
	pid_t r;
	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

void pl_trim_heap(void)
{
	(void)malloc_trim(0);
}
