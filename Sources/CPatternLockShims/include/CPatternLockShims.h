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
/* Renames from to to unless to exists (then fails with EEXIST): how a socket
   bound under a temporary name is put in place without displacing another. The
   corresponding C function is renameat2(AT_FDCWD, from, AT_FDCWD, to,
   RENAME_NOREPLACE). */
int pl_rename_noreplace(const char *PL_NONNULL from, const char *PL_NONNULL to);

#endif

/* The pid, uid and gid of the process at the other end of a connected AF_UNIX
   socket, as the kernel recorded them at connect(). The corresponding C call is
   getsockopt(fd, SOL_SOCKET, SO_PEERCRED). Fails with ENOTSOCK/EAFNOSUPPORT
   when fd is not an AF_UNIX socket. */
int pl_peer_credentials(int fd, pid_t *PL_NONNULL pid, uid_t *PL_NONNULL uid,
			gid_t *PL_NONNULL gid);

/* Fill buf with len bytes from the kernel's CSPRNG, retrying short reads and
   EINTR. The corresponding C function is getrandom(2). */
int pl_random_bytes(void *PL_NONNULL buf, size_t len);

/* Overwrite len bytes at buf with zeros the compiler may not remove. */
void pl_wipe(void *PL_NONNULL buf, size_t len);

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

#endif
