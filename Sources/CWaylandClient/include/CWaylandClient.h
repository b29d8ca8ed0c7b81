// SPDX-License-Identifier: Apache-2.0
#ifndef CWAYLANDLOCK_H
#define CWAYLANDLOCK_H
/* The Wayland side of patternlock-screen (and patternlock-setup's window) that
   Swift cannot spell: the protocol code wayland-scanner generated
   (scripts/gen-wayland-protocols), the addresses of the wl_interface structs
   (Swift imports an extern const struct as a value, a copy, so its address must
   be taken here), and a few Linux calls glibc hides behind _GNU_SOURCE. */
#include <wayland-client.h>
#include "ext-session-lock-v1-client-protocol.h"
#include "single-pixel-buffer-v1-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

const struct wl_interface *pls_compositor_interface(void);
const struct wl_interface *pls_shm_interface(void);
const struct wl_interface *pls_seat_interface(void);
const struct wl_interface *pls_output_interface(void);
const struct wl_interface *pls_lock_manager_interface(void);
const struct wl_interface *pls_subcompositor_interface(void);
const struct wl_interface *pls_viewporter_interface(void);
const struct wl_interface *pls_single_pixel_interface(void);
/* patternlock-setup's window. */
const struct wl_interface *pls_xdg_wm_base_interface(void);

/* An anonymous shared-memory file of size bytes (memfd_create, sealed against
   shrinking), close-on-exec; -1 with errno set. */
int pls_shm_file(long size);

/* A close-on-exec, non-blocking monotonic timerfd; -1 with errno set. */
int pls_timerfd(void);
/* Arms it to fire once after ms milliseconds (0 disarms). */
int pls_timerfd_arm(int fd, long ms);

/* socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC). */
int pls_seqpacket_pair(int fds[2]);

/* No core dump of this process, whatever core_pattern says: RLIMIT_CORE 0 (a
   file core_pattern) and PR_SET_DUMPABLE 0 (a pipe core_pattern ignores the
   rlimit; not dumpable also keeps other processes of the user from ptrace and
   from /proc/PID/mem). Survives fork, not execve: the PAM child, started by
   posix_spawn, calls it again. 0, or -1 with errno set. */
int pls_no_core_dumps(void);

/* fork(2), for --daemonize (before any thread exists). */
int pls_fork(void);

/* mlockall is not used: only the secret buffers are locked. Sends one datagram
   with MSG_NOSIGNAL; returns bytes sent or -1. */
long pls_send(int fd, const void *buf, unsigned long len);

/* Waits for pid without blocking: its status as pl_wait_exit says, or -2 when
   it is still running, -1 with errno set. */
int pls_reap(int pid);

#endif
