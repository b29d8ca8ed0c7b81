// SPDX-License-Identifier: Apache-2.0
#ifndef CPATTERNLOCKSHIMS_H
#define CPATTERNLOCKSHIMS_H
/* What Swift cannot spell on Linux: struct ucred (SO_PEERCRED), getrandom with
   a full-length guarantee, explicit_bzero. Every function is prefixed pl_ and
   returns 0 on success or -1 with errno set. */
#include <stddef.h>
#include <sys/types.h>

#if defined(__clang__)
#define PL_NONNULL _Nonnull
#else
#define PL_NONNULL
#endif

/* The pid, uid and gid of the process at the other end of a connected AF_UNIX
   socket, as the kernel recorded them at connect(). The corresponding C call is
   getsockopt(fd, SOL_SOCKET, SO_PEERCRED). Fails with ENOTSOCK/EAFNOSUPPORT
   when fd is not an AF_UNIX socket. */
int pl_peer_credentials(int fd, pid_t *PL_NONNULL pid, uid_t *PL_NONNULL uid,
			gid_t *PL_NONNULL gid);

/* A pidfd (close-on-exec) of the very process at the other end of a connected
   AF_UNIX socket, the one that called connect(): it can be asked whether that
   process is still alive, so a pid read with SO_PEERCRED is known not to have
   been reused. The corresponding C call is getsockopt(fd, SOL_SOCKET,
   SO_PEERPIDFD) (Linux 6.5); fails with ENOPROTOOPT on older kernels. */
int pl_peer_pidfd(int fd);

/* 1 when the process a pidfd refers to has exited, 0 when it is still alive,
   -1 with errno set. The corresponding C call is poll(2) on the pidfd. */
int pl_pidfd_exited(int pidfd);

/* Sends sig to the process a pidfd refers to. The corresponding C call is
   pidfd_send_signal(2). */
int pl_pidfd_kill(int pidfd, int sig);

/* Starts the program at path (absolute; no PATH search, no shell) with argv
   and envp, default signal dispositions and an empty signal mask. in_fd,
   out_fd and err_fd become its stdin, stdout and stderr (-1: inherited);
   pass_fd, when not -1, is given to it as fd 3, open across exec. On success
   stores its pid and returns a pidfd (close-on-exec) for it; -1 with errno set
   otherwise (ENOENT: no such program). The corresponding C calls are
   posix_spawn(3) and pidfd_open(2). */
#if defined(__clang__)
#define PL_NULLABLE _Nullable
#else
#define PL_NULLABLE
#endif
int pl_spawn(const char *PL_NONNULL path,
	     char *PL_NULLABLE const *PL_NONNULL argv,
	     char *PL_NULLABLE const *PL_NONNULL envp, int in_fd, int out_fd,
	     int err_fd, int pass_fd, pid_t *PL_NONNULL pid);

/* pl_spawn for a helper that must not outlive the thread that starts it (the
   CLI's pkttyagent, whatever ends the CLI: SIGKILL, a closed terminal):
   inherits stdin, stdout and stderr, gets pass_fd (when not -1) as fd 3, and
   is sent death_signal when the starting thread ends, or exits at once when
   the parent ended before that was set. Returns a pidfd as pl_spawn does. The
   corresponding C calls are fork(2), prctl(2) PR_SET_PDEATHSIG and execve(2).
 */
int pl_spawn_tied(const char *PL_NONNULL path,
		  char *PL_NULLABLE const *PL_NONNULL argv,
		  char *PL_NULLABLE const *PL_NONNULL envp, int pass_fd,
		  int death_signal, pid_t *PL_NONNULL pid);

/* pl_spawn_tied, started in a session of its own whose controlling terminal
   is tty_fd (-1: none, as pl_spawn_tied), which also becomes its stdin,
   stdout and stderr: for a helper that reads /dev/tty (pkttyagent) on a
   terminal this process holds the other side of. The corresponding C calls
   are setsid(2) and ioctl(2) TIOCSCTTY. */
int pl_spawn_tied_on(const char *PL_NONNULL path,
		     char *PL_NULLABLE const *PL_NONNULL argv,
		     char *PL_NULLABLE const *PL_NONNULL envp, int pass_fd,
		     int death_signal, int tty_fd, pid_t *PL_NONNULL pid);

/* A new pseudo-terminal: its master side and its terminal side, both
   close-on-exec, neither made this process's controlling terminal. 0, or -1
   with errno set. The corresponding C calls are posix_openpt(3), grantpt(3),
   unlockpt(3) and ptsname_r(3). */
int pl_open_pty(int *PL_NONNULL master, int *PL_NONNULL terminal);

/* Waits for the child pid to end and returns its exit status (0-255), 128 +
   the signal that ended it, or -1 with errno set. The corresponding C call is
   waitpid(2). */
int pl_wait_exit(pid_t pid);

/* Fill buf with len bytes from the kernel's CSPRNG, retrying short reads and
   EINTR. The corresponding C function is getrandom(2). */
int pl_random_bytes(void *PL_NONNULL buf, size_t len);

/* Overwrite len bytes at buf with zeros the compiler may not remove. */
void pl_wipe(void *PL_NONNULL buf, size_t len);

/* Makes this process non-dumpable: the kernel writes no core of it (not even to
   a core_pattern pipe), and only root may ptrace it or read its memory. For a
   process that is about to hold a pattern. The corresponding C call is
   prctl(PR_SET_DUMPABLE, 0), which Swift cannot call (it is variadic). */
int pl_set_undumpable(void);

/* Number of file descriptors passed by systemd socket activation (LISTEN_FDS
   for this pid), starting at fd 3; 0 when none. Unsets the variables, as
   sd_listen_fds(1). */
int pl_listen_fds(void);

/* accept4(fd, NULL, NULL, SOCK_CLOEXEC); glibc hides accept4 behind
 * _GNU_SOURCE. */
int pl_accept_cloexec(int fd);

/* pipe2(fds, O_CLOEXEC | O_NONBLOCK). */
int pl_pipe_cloexec(int fds[PL_NONNULL 2]);

/* Renames from to to unless to exists (then fails with EEXIST): how a socket
   bound under a temporary name is put in place without displacing another. The
   corresponding C function is renameat2(AT_FDCWD, from, AT_FDCWD, to,
   RENAME_NOREPLACE). */
int pl_rename_noreplace(const char *PL_NONNULL from, const char *PL_NONNULL to);

/* Gives the free pages inside the heap back to the kernel: malloc_trim(0),
   which glibc declares in <malloc.h>, a header Swift's Glibc module does not
   bring in. */
void pl_trim_heap(void);

#endif
