// SPDX-License-Identifier: Apache-2.0
/*
 * The calls pam_sm_authenticate makes to the outside, answered from the fuzz
 * input (auth_world.h). Linked with -Wl,--wrap=NAME, so the module's call to
 * NAME lands in __wrap_NAME here; outside a fuzz_auth run (libFuzzer's own
 * calls, another thread) each goes on to the real function.
 *
 * - libpam: pam_get_item, pam_set_item, pam_get_user, pam_syslog,
 *   pam_strerror on a fake handle that keeps libpam's rules (items are copies,
 *   PAM_AUTHTOK is wiped when replaced and at pam_end, pam_get_user asks the
 *   conversation "login: " when PAM_USER is unset). Not libpam's own handle:
 *   called directly rather than through pam_authenticate's dispatcher, libpam
 *   takes the module for the application and refuses its
 *   pam_set_item(PAM_AUTHTOK), which one_prompt needs; the dispatcher would
 *   need a pam.d file and a dlopen of the module per input.
 * - The socket to patternlockd: lstat, socket, connect, getsockopt, poll,
 *   send, recv, close on fake descriptors, and CLOCK_MONOTONIC, which moves
 *   only when a poll times out, so every deadline is reached at once.
 * - logind: access("/run/systemd/seats/") and the sd_* calls of logind.c,
 *   defined here (libsystemd is not linked), with libsystemd's ownership rules:
 *   every string returned is the caller's to free.
 * - getuid, gethostname, and free: a conversation response must be wiped
 *   before it is freed.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <systemd/sd-login.h>

#include "auth_world.h"

struct fz_world fz;

#define FZ_CHECK(cond)                                                         \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"fuzz_auth: invariant broken: %s (%s:%d)\n",   \
				#cond, __FILE__, __LINE__);                    \
			abort();                                               \
		}                                                              \
	} while (0)

uint8_t fz_u8(struct fz_reader *r)
{
	uint8_t b;

	if (r->n == 0)
		return 0;
	b = r->p[0];
	r->p++;
	r->n--;
	return b;
}

uint16_t fz_u16(struct fz_reader *r)
{
	uint16_t lo = fz_u8(r);

	return (uint16_t)(lo | (uint16_t)(fz_u8(r) << 8));
}

struct fz_reader fz_blob(struct fz_reader *r)
{
	size_t len = fz_u16(r);
	struct fz_reader b;

	if (len > r->n)
		len = r->n;
	b.p = r->p;
	b.n = len;
	r->p += len;
	r->n -= len;
	return b;
}

/* A string of the fuzz input: u8 length, bytes, cut at a NUL. */
static char *take_string(struct fz_reader *r)
{
	size_t len = fz_u8(r);
	char *s;

	if (len > r->n)
		len = r->n;
	s = strndup((const char *)r->p, len);
	FZ_CHECK(s != NULL);
	r->p += len;
	r->n -= len;
	return s;
}

/* Whether this call is the module's, during a run on the fuzzing thread. */
static bool ours(void)
{
	return fz.active && pthread_equal(pthread_self(), fz.thread);
}

/* ---- libpam ----------------------------------------------------------------
 */

/* Only its address matters: the module never looks inside. */
static char fake_handle;

pam_handle_t *fz_handle(void)
{
	return (pam_handle_t *)&fake_handle;
}

static void check_handle(const pam_handle_t *pamh)
{
	FZ_CHECK(pamh == fz_handle());
}

static bool string_item(int type)
{
	return type >= PAM_SERVICE && type < FZ_ITEMS && type != PAM_CONV;
}

static void drop_item(int type)
{
	char *old = fz.items[type];

	if (old == NULL)
		return;
	if (type == PAM_AUTHTOK || type == PAM_OLDAUTHTOK)
		explicit_bzero(old, strlen(old));
	free(old);
	fz.items[type] = NULL;
}

void fz_set_item(int type, const char *value)
{
	FZ_CHECK(string_item(type));
	drop_item(type);
	if (value != NULL) {
		fz.items[type] = strdup(value);
		FZ_CHECK(fz.items[type] != NULL);
	}
}

void fz_pam_end(void)
{
	for (int type = 0; type < FZ_ITEMS; type++) {
		if (string_item(type))
			drop_item(type);
	}
}

int __wrap_pam_get_item(const pam_handle_t *pamh, int type, const void **item);
int __wrap_pam_get_item(const pam_handle_t *pamh, int type, const void **item)
{
	check_handle(pamh);
	FZ_CHECK(item != NULL);
	if (type == PAM_CONV) {
		*item = &fz.conv;
		return PAM_SUCCESS;
	}
	if (!string_item(type))
		return PAM_BAD_ITEM;
	*item = fz.items[type];
	return PAM_SUCCESS;
}

int __wrap_pam_set_item(pam_handle_t *pamh, int type, const void *item);
int __wrap_pam_set_item(pam_handle_t *pamh, int type, const void *item)
{
	check_handle(pamh);
	/* The module sets nothing but the token it hands on. */
	FZ_CHECK(type == PAM_AUTHTOK);
	fz.authtok_sets++;
	if (fz.set_item_fails)
		return PAM_BUF_ERR;
	fz_set_item(type, item);
	return PAM_SUCCESS;
}

/* libpam's: PAM_USER when set, else one echo-on prompt through the
 * conversation, whose answer becomes PAM_USER. */
int __wrap_pam_get_user(pam_handle_t *pamh, const char **user,
			const char *prompt);
int __wrap_pam_get_user(pam_handle_t *pamh, const char **user,
			const char *prompt)
{
	struct pam_message message = {.msg_style = PAM_PROMPT_ECHO_ON};
	const struct pam_message *messages[1] = {&message};
	struct pam_response *resp = NULL;
	int ret;

	check_handle(pamh);
	if (user == NULL)
		return PAM_PERM_DENIED;
	*user = NULL;
	if (fz.items[PAM_USER] != NULL) {
		*user = fz.items[PAM_USER];
		return PAM_SUCCESS;
	}
	message.msg = prompt != NULL ? prompt
		      : fz.items[PAM_USER_PROMPT] != NULL
			      ? fz.items[PAM_USER_PROMPT]
			      : "login: ";
	ret = fz.conv.conv(1, messages, &resp, fz.conv.appdata_ptr);
	if (ret == PAM_CONV_AGAIN) {
		/* libpam keeps the state to resume; nothing to keep here. */
	} else if (ret != PAM_SUCCESS) {
		/* returned as it is */
	} else if (resp == NULL || resp[0].resp == NULL) {
		ret = PAM_CONV_ERR;
	} else {
		fz_set_item(PAM_USER, resp[0].resp);
		*user = fz.items[PAM_USER];
	}
	if (resp != NULL) {
		if (resp[0].resp != NULL) {
			explicit_bzero(resp[0].resp, strlen(resp[0].resp));
			free(resp[0].resp);
		}
		free(resp);
	}
	return ret;
}

/* Formatted (so a bad format or argument shows under ASan and UBSan) and
 * dropped: a million inputs do not go to the host's journal. */
void __wrap_pam_syslog(const pam_handle_t *pamh, int priority, const char *fmt,
		       ...) __attribute__((format(printf, 3, 4)));
void __wrap_pam_syslog(const pam_handle_t *pamh, int priority, const char *fmt,
		       ...)
{
	char line[2048];
	va_list ap;

	check_handle(pamh);
	FZ_CHECK(priority >= LOG_EMERG && priority <= LOG_DEBUG);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fz_check_log(line);
}

const char *__real_pam_strerror(pam_handle_t *pamh, int errnum);
const char *__wrap_pam_strerror(pam_handle_t *pamh, int errnum);
const char *__wrap_pam_strerror(pam_handle_t *pamh, int errnum)
{
	check_handle(pamh);
	/* libpam's own table; it never looks at the handle. */
	return __real_pam_strerror(NULL, errnum);
}

/* ---- free: responses are wiped first
 * ----------------------------------------- */

void __real_free(void *p);
void __wrap_free(void *p);
void __wrap_free(void *p)
{
	for (int i = 0; p != NULL && i < fz.nsecrets; i++) {
		const unsigned char *b = p;

		if (fz.secret[i] != p)
			continue;
		for (size_t j = 0; j < fz.secret_len[i]; j++) {
			if (b[j] != 0) {
				fprintf(stderr, "fuzz_auth: a conversation "
						"response was freed unwiped\n");
				abort();
			}
		}
		fz.nsecrets--;
		fz.secret[i] = fz.secret[fz.nsecrets];
		fz.secret_len[i] = fz.secret_len[fz.nsecrets];
		break;
	}
	__real_free(p);
}

/* ---- the socket to patternlockd
 * ----------------------------------------------- */

static struct fz_conn *conn_of(int fd)
{
	int i = fd - FZ_FD_BASE;

	if (i < 0 || i >= fz.nconn || fz.conn[i].fd != fd)
		return NULL;
	return &fz.conn[i];
}

/* The connection an fd call is on: it must be one of ours and open. */
static struct fz_conn *open_conn(int fd)
{
	struct fz_conn *c = conn_of(fd);

	FZ_CHECK(c != NULL && !c->closed);
	return c;
}

static struct fz_conn *current(void)
{
	FZ_CHECK(fz.nconn > 0);
	return &fz.conn[fz.nconn - 1];
}

int __real_lstat(const char *path, struct stat *st);
int __wrap_lstat(const char *path, struct stat *st);
int __wrap_lstat(const char *path, struct stat *st)
{
	struct fz_conn *c;

	if (!ours())
		return __real_lstat(path, st);
	/* A connection attempt begins here (connect_daemon). */
	FZ_CHECK(fz.nconn < FZ_MAX_CONN);
	FZ_CHECK(path != NULL && path[0] == '/');
	c = &fz.conn[fz.nconn++];
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->lstat_kind = fz_u8(&fz.conn_records);
	c->socket_kind = fz_u8(&fz.conn_records);
	c->peer_kind = fz_u8(&fz.conn_records);
	c->tape = fz_blob(&fz.conn_records);
	c->reply = fz_blob(&fz.conn_records);
	c->reply_start = c->reply.p;

	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFSOCK | 0666;
	switch (c->lstat_kind % 8) {
	case 1:
		errno = ENOENT;
		return -1;
	case 2:
		st->st_mode = S_IFREG | 0644;
		break;
	case 3:
		st->st_uid = 1000;
		break;
	case 4:
		errno = EACCES;
		return -1;
	case 5:
		/* A symlink put where the socket was. */
		st->st_mode = S_IFLNK | 0777;
		break;
	default:
		break;
	}
	return 0;
}

int __real_socket(int domain, int type, int protocol);
int __wrap_socket(int domain, int type, int protocol);
int __wrap_socket(int domain, int type, int protocol)
{
	struct fz_conn *c;

	if (!ours())
		return __real_socket(domain, type, protocol);
	c = current();
	FZ_CHECK(c->fd == -1);
	FZ_CHECK(domain == AF_UNIX && protocol == 0);
	/* Close-on-exec and non-blocking, as the deadlines need. */
	FZ_CHECK(type == (SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK));
	if (c->socket_kind % 8 == 7) {
		errno = EMFILE;
		return -1;
	}
	c->fd = FZ_FD_BASE + (int)(c - fz.conn);
	return c->fd;
}

int __real_connect(int fd, const struct sockaddr *addr, socklen_t len);
int __wrap_connect(int fd, const struct sockaddr *addr, socklen_t len);
int __wrap_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct fz_conn *c;

	if (!ours())
		return __real_connect(fd, addr, len);
	c = open_conn(fd);
	FZ_CHECK(addr != NULL && addr->sa_family == AF_UNIX);
	switch (fz_u8(&c->tape) % 8) {
	case 1:
		errno = EINPROGRESS;
		return -1;
	case 2:
		/* A full backlog: the module tries again. */
		errno = EAGAIN;
		return -1;
	case 3:
		errno = EINTR;
		return -1;
	case 4:
		errno = ECONNREFUSED;
		return -1;
	case 5:
		errno = ENOENT;
		return -1;
	default:
		return 0;
	}
}

int __real_getsockopt(int fd, int level, int name, void *value, socklen_t *len);
int __wrap_getsockopt(int fd, int level, int name, void *value, socklen_t *len);
int __wrap_getsockopt(int fd, int level, int name, void *value, socklen_t *len)
{
	struct fz_conn *c;

	if (!ours())
		return __real_getsockopt(fd, level, name, value, len);
	c = open_conn(fd);
	FZ_CHECK(level == SOL_SOCKET && value != NULL && len != NULL);
	if (name == SO_ERROR) {
		FZ_CHECK(*len == sizeof(int));
		switch (fz_u8(&c->tape) % 4) {
		case 1:
			*(int *)value = ECONNREFUSED;
			return 0;
		case 2:
			errno = EBADF;
			return -1;
		default:
			*(int *)value = 0;
			return 0;
		}
	}
	FZ_CHECK(name == SO_PEERCRED && *len == sizeof(struct ucred));
	switch (c->peer_kind % 4) {
	case 1:
		*(struct ucred *)value =
			(struct ucred){.pid = 4242, .uid = 1000};
		return 0;
	case 2:
		errno = EINVAL;
		return -1;
	default:
		*(struct ucred *)value = (struct ucred){.pid = 4242, .uid = 0};
		return 0;
	}
}

int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct fz_conn *c;

	if (!ours())
		return __real_poll(fds, n, timeout);
	/* A wait of at most timeout ms, never forever. */
	FZ_CHECK(timeout >= 0);
	if (n == 0) {
		/* A sleep between connect attempts. */
		fz.now_ms += timeout;
		return 0;
	}
	FZ_CHECK(n == 1 && fds != NULL);
	c = open_conn(fds[0].fd);
	switch (fz_u8(&c->tape) % 8) {
	case 5:
		fz.now_ms += timeout;
		return 0;
	case 6:
		errno = EINTR;
		return -1;
	case 7:
		errno = ENOMEM;
		return -1;
	default:
		fds[0].revents = fds[0].events;
		return 1;
	}
}

ssize_t __real_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
	struct fz_conn *c;
	uint8_t t;
	size_t n = len;

	if (!ours())
		return __real_send(fd, buf, len, flags);
	c = open_conn(fd);
	/* A daemon gone away must not kill the application with SIGPIPE. */
	FZ_CHECK((flags & MSG_NOSIGNAL) != 0);
	FZ_CHECK(buf != NULL && len > 0);
	t = fz_u8(&c->tape);
	switch (t % 8) {
	case 4:
		/* Part of it: (t >> 3) + 1 bytes. */
		if (n > (size_t)(t >> 3) + 1)
			n = (size_t)(t >> 3) + 1;
		break;
	case 5:
		errno = EAGAIN;
		return -1;
	case 6:
		errno = EINTR;
		return -1;
	case 7:
		errno = EPIPE;
		return -1;
	default:
		break;
	}
	if (c->sent_len + n > sizeof(c->sent))
		c->sent_overflow = true;
	else
		memcpy(c->sent + c->sent_len, buf, n);
	c->sent_len += n;
	return (ssize_t)n;
}

ssize_t __real_recv(int fd, void *buf, size_t len, int flags);
ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags);
ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags)
{
	struct fz_conn *c;
	uint8_t t;
	size_t n;

	if (!ours())
		return __real_recv(fd, buf, len, flags);
	c = open_conn(fd);
	FZ_CHECK(buf != NULL && len > 0 && flags == 0);
	t = fz_u8(&c->tape);
	n = c->reply.n;
	switch (t % 8) {
	case 1:
		if (n > (size_t)(t >> 3) + 1)
			n = (size_t)(t >> 3) + 1;
		break;
	case 2:
		errno = EAGAIN;
		return -1;
	case 3:
		errno = EINTR;
		return -1;
	case 4:
		errno = ECONNRESET;
		return -1;
	case 5:
		/* The daemon closes early. */
		n = 0;
		break;
	default:
		break;
	}
	if (n > len)
		n = len;
	memcpy(buf, c->reply.p, n);
	c->reply.p += n;
	c->reply.n -= n;
	c->delivered += n;
	return (ssize_t)n;
}

int __real_close(int fd);
int __wrap_close(int fd);
int __wrap_close(int fd)
{
	struct fz_conn *c;

	if (!ours())
		return __real_close(fd);
	c = conn_of(fd);
	/* The module closes only its own socket, once. */
	FZ_CHECK(c != NULL && !c->closed);
	c->closed = true;
	return 0;
}

int __real_clock_gettime(clockid_t clock, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clock, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clock, struct timespec *ts)
{
	if (!ours() || clock != CLOCK_MONOTONIC)
		return __real_clock_gettime(clock, ts);
	ts->tv_sec = fz.now_ms / 1000;
	ts->tv_nsec = (fz.now_ms % 1000) * 1000000;
	return 0;
}

/* ---- who asks
 * ----------------------------------------------------------------- */

uid_t __real_getuid(void);
uid_t __wrap_getuid(void);
uid_t __wrap_getuid(void)
{
	if (!ours())
		return __real_getuid();
	return fz.uid;
}

int __real_gethostname(char *name, size_t len);
int __wrap_gethostname(char *name, size_t len);
int __wrap_gethostname(char *name, size_t len)
{
	size_t need;

	if (!ours())
		return __real_gethostname(name, len);
	if (fz.hostname == NULL) {
		errno = EFAULT;
		return -1;
	}
	need = strlen(fz.hostname) + 1;
	/* glibc: the name cut to len bytes, and ENAMETOOLONG. */
	memcpy(name, fz.hostname, need < len ? need : len);
	if (need > len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* ---- logind
 * -------------------------------------------------------------------- */

int __real_access(const char *path, int mode);
int __wrap_access(const char *path, int mode);
int __wrap_access(const char *path, int mode)
{
	if (!ours() || strcmp(path, "/run/systemd/seats/") != 0)
		return __real_access(path, mode);
	if (fz_u8(&fz.logind) % 2 == 1)
		return 0;
	errno = ENOENT;
	return -1;
}

/* A string answer: -ENODATA, a string (the caller's to free), -ENXIO. */
static int logind_string(char **out)
{
	FZ_CHECK(out != NULL);
	switch (fz_u8(&fz.logind) % 4) {
	case 0:
		return -ENODATA;
	case 2:
		return -ENXIO;
	default:
		*out = take_string(&fz.logind);
		return 0;
	}
}

/* A yes/no answer: 0, 1, -ENXIO. */
static int logind_bool(void)
{
	switch (fz_u8(&fz.logind) % 3) {
	case 1:
		return 1;
	case 2:
		return -ENXIO;
	default:
		return 0;
	}
}

static void check_session(const char *session)
{
	FZ_CHECK(session != NULL && strlen(session) < 256);
}

int sd_pid_get_session(pid_t pid, char **session)
{
	FZ_CHECK(ours() && pid == 0);
	return logind_string(session);
}

int sd_pid_get_user_unit(pid_t pid, char **unit)
{
	FZ_CHECK(ours() && pid == 0);
	return logind_string(unit);
}

int sd_pid_get_owner_uid(pid_t pid, uid_t *uid)
{
	FZ_CHECK(ours() && pid == 0 && uid != NULL);
	if (fz_u8(&fz.logind) % 2 == 0)
		return -ENODATA;
	*uid = 1000 + fz_u8(&fz.logind);
	return 0;
}

/* A list of sessions: -ENXIO, none, or one to four (the caller's to free). */
static int logind_sessions(char ***sessions)
{
	char **list;
	int n;

	switch (fz_u8(&fz.logind) % 3) {
	case 0:
		return -ENXIO;
	case 2:
		*sessions = NULL;
		return 0;
	default:
		break;
	}
	n = 1 + fz_u8(&fz.logind) % 4;
	list = calloc((size_t)n + 1, sizeof(*list));
	FZ_CHECK(list != NULL);
	for (int i = 0; i < n; i++)
		list[i] = take_string(&fz.logind);
	*sessions = list;
	return n;
}

int sd_uid_get_sessions(uid_t uid, int require_active, char ***sessions)
{
	(void)uid;
	FZ_CHECK(ours() && sessions != NULL);
	FZ_CHECK(require_active >= 0 && require_active <= 2);
	return logind_sessions(sessions);
}

int sd_get_sessions(char ***sessions)
{
	FZ_CHECK(ours() && sessions != NULL);
	return logind_sessions(sessions);
}

int sd_uid_get_display(uid_t uid, char **session)
{
	(void)uid;
	FZ_CHECK(ours());
	return logind_string(session);
}

int sd_session_is_active(const char *session)
{
	FZ_CHECK(ours());
	check_session(session);
	return logind_bool();
}

int sd_session_is_remote(const char *session)
{
	FZ_CHECK(ours());
	check_session(session);
	return logind_bool();
}

int sd_session_get_service(const char *session, char **service)
{
	FZ_CHECK(ours());
	check_session(session);
	return logind_string(service);
}

int sd_session_get_seat(const char *session, char **seat)
{
	FZ_CHECK(ours());
	check_session(session);
	return logind_string(seat);
}

int sd_session_get_vt(const char *session, unsigned *vtnr)
{
	FZ_CHECK(ours() && vtnr != NULL);
	check_session(session);
	switch (fz_u8(&fz.logind) % 3) {
	case 1:
		*vtnr = fz_u8(&fz.logind);
		return 0;
	case 2:
		return -ENXIO;
	default:
		return -ENODATA;
	}
}

int sd_session_get_tty(const char *session, char **tty)
{
	FZ_CHECK(ours());
	check_session(session);
	return logind_string(tty);
}

int sd_session_get_state(const char *session, char **state)
{
	FZ_CHECK(ours());
	check_session(session);
	return logind_string(state);
}

int sd_session_get_class(const char *session, char **class)
{
	FZ_CHECK(ours());
	check_session(session);
	return logind_string(class);
}
