// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include "CWaylandClient.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

const struct wl_interface *pls_compositor_interface(void)
{
	return &wl_compositor_interface;
}

const struct wl_interface *pls_shm_interface(void)
{
	return &wl_shm_interface;
}

const struct wl_interface *pls_seat_interface(void)
{
	return &wl_seat_interface;
}

const struct wl_interface *pls_output_interface(void)
{
	return &wl_output_interface;
}

const struct wl_interface *pls_lock_manager_interface(void)
{
	return &ext_session_lock_manager_v1_interface;
}

const struct wl_interface *pls_subcompositor_interface(void)
{
	return &wl_subcompositor_interface;
}

const struct wl_interface *pls_viewporter_interface(void)
{
	return &wp_viewporter_interface;
}

const struct wl_interface *pls_single_pixel_interface(void)
{
	return &wp_single_pixel_buffer_manager_v1_interface;
}

const struct wl_interface *pls_xdg_wm_base_interface(void)
{
	return &xdg_wm_base_interface;
}

int pls_shm_file(long size)
{
	int fd = memfd_create("patternlock-screen",
			      MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, size) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL);
	return fd;
}

int pls_timerfd(void)
{
	return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
}

int pls_timerfd_arm(int fd, long ms)
{
	struct itimerspec spec = {0};

	spec.it_value.tv_sec = ms / 1000;
	spec.it_value.tv_nsec = (ms % 1000) * 1000000L;
	return timerfd_settime(fd, 0, &spec, NULL);
}

int pls_seqpacket_pair(int fds[2])
{
	return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds);
}

int pls_no_core_dumps(void)
{
	struct rlimit none = {0, 0};
	int rc = setrlimit(RLIMIT_CORE, &none);

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		rc = -1;
	return rc;
}

int pls_fork(void)
{
	return fork();
}

long pls_send(int fd, const void *buf, unsigned long len)
{
	ssize_t n;

	do
		n = send(fd, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

int pls_reap(int pid)
{
	int status;
	pid_t r;

	do
		r = waitpid(pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (r == 0)
		return -2;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
