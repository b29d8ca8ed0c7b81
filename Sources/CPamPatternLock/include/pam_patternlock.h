// SPDX-License-Identifier: Apache-2.0
/*
 * pam_patternlock — the module's pure internals: option parsing, request
 * encoding, reply parsing and the sentences the user sees. Nothing here does
 * I/O or needs a PAM handle, so the Swift unit tests can call it directly.
 * The shipped module hides every one of these symbols (-fvisibility=hidden and
 * the version script); only pam_sm_* are exported.
 */
#ifndef PAM_PATTERNLOCK_H
#define PAM_PATTERNLOCK_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

/* Every sentence the user can be shown, PL_PROMPT among them. */
#include "pl_sentences.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_DEFAULT_SOCKET "/run/patternlock/socket"
/* Seconds for connect + reply. */
#define PL_DEFAULT_TIMEOUT 3
#define PL_MAX_TIMEOUT 300
/* A VERIFY reply may take this much longer: hashing and per-user queueing. */
#define PL_VERIFY_EXTRA_SECONDS 10
/* Protocol limits, both counting the terminating LF (docs/PROTOCOL.md). */
#define PL_MAX_REQUEST 1024
#define PL_MAX_REPLY 4096
/* The daemon's lockout policy, named in the messages. */
#define PL_MAX_ATTEMPTS 5
/* A pattern connects at least this many dots (after a straight move over an
 * unused dot took it). */
#define PL_MIN_DOTS 4
/* Longest entry worth sending: a pattern has at most 9 dots. */
#define PL_MAX_ENTRY 64
/* service/tty/rhost/ruser are cut to this many bytes (the daemon keeps 64). */
#define PL_MAX_CONTEXT 64
/* sizeof(((struct sockaddr_un *)0)->sun_path) on Linux. */
#define PL_MAX_SOCKET_PATH 108
/* services= and login_services=: comma-separated PAM service names, the whole
 * list shorter than this. */
#define PL_MAX_SERVICE_LIST 256
/* A PAM service name in those lists: 1 to this many bytes. */
#define PL_MAX_SERVICE_NAME 64
/* The logins asked from a process in no logind session: login and the display
 * managers, which authenticate before the session they open exists. */
#define PL_DEFAULT_LOGIN_SERVICES                                              \
	"login,gdm-password,lightdm,sddm,xdm,lxdm,greetd"
/* The PAM services GDM's reauthentication worker runs (GNOME's unlock dialog).
 */
#define PL_GDM_SERVICES "gdm-password,gdm-fingerprint,gdm-smartcard"
/* The caller's logind session id and its seat (or tty) sent to the daemon are
 * cut to this many bytes (logind's are "3", "c2", "seat0", "pts/1"). */
#define PL_MAX_SESSION_FIELD 16

/* The keys the dots are typed on (layout=). The dots never move: a numeric
 * keypad's keys are mapped to the dots they sit on, so the same drawn shape is
 * the same pattern on either. */
enum pl_layout {
	PL_LAYOUT_PHONE = 0, /* 1 2 3 is the top row (the default) */
	PL_LAYOUT_NUMPAD,    /* 7 8 9 is the top row, as on a numeric keypad */
};

/* How the grid is shown (grid=; nogrid is grid=none). */
enum pl_grid {
	/* full on a terminal (PAM_TTY a tty or pts device), compact for
	 * anything else: an X display, none (a Wayland locker, a polkit
	 * agent). The default. */
	PL_GRID_AUTO = 0,
	/* The 4-line grid as an informational message before the prompt. */
	PL_GRID_FULL,
	/* No message: the prompt itself carries the keys on one line,
	 * "Pattern [123 456 789]: ", so it stays on screens that show each
	 * message for a moment only, and costs nothing where none is shown. */
	PL_GRID_COMPACT,
	/* The prompt alone. */
	PL_GRID_NONE,
};

struct pl_config {
	char socket_path[PL_MAX_SOCKET_PATH];
	int timeout; /* seconds, 1..PL_MAX_TIMEOUT */
	bool debug;
	enum pl_grid grid;
	bool quiet;
	/* one_prompt: ask once, "Pattern or password: "; an entry that is not
	 * a pattern goes to the next module as PAM_AUTHTOK, unsent. */
	bool one_prompt;
	/* password_at_login: a new login (login, a display manager, a
	 * greeter) is not offered the pattern, so the password it asks opens
	 * the keyring too; a session's sudo, su, lock screen and polkit are. */
	bool password_at_login;
	/* Ask without positive evidence that a person is at this machine:
	 * remote logins and network services too (see pl_presence_decide). */
	bool allow_remote;
	enum pl_layout layout;
	/* services=: where logind does not run, the PAM services that are
	 * asked (comma-separated); "" when the option is not given, and then
	 * nothing is asked on such a host. */
	char services[PL_MAX_SERVICE_LIST];
	/* login_services=: the services asked from a process in no logind
	 * session (login, a display manager), when PAM_TTY is a VT, a pty or an
	 * X display of this machine. PL_DEFAULT_LOGIN_SERVICES unless given;
	 * "" asks none. */
	char login_services[PL_MAX_SERVICE_LIST];
	/* digit_passwords=: services whose client answers every prompt with one
	 * field and shows no PAM text (phosh), where a password made only of
	 * the dots must still work: there an entry shaped like a pattern that
	 * the pattern cannot take now (locked, or no answer from the daemon)
	 * goes on as the password. "" (the default) lists none: such an entry
	 * never reaches another module. */
	char digit_passwords[PL_MAX_SERVICE_LIST];
};

enum pl_option_result {
	PL_OPTION_OK = 0,
	/* Not an option of this module: ignored. */
	PL_OPTION_UNKNOWN,
	/* A known option with an unusable value: the default is kept. */
	PL_OPTION_BAD_VALUE,
};

/* Sets every field to its default. */
void pl_config_init(struct pl_config *cfg);
/* Applies one argv word ("socket=/run/x", "debug", ...). */
enum pl_option_result pl_config_apply(struct pl_config *cfg, const char *arg);
/* pl_config_init, then pl_config_apply for each word; returns how many were
 * ignored (unknown or bad). */
int pl_config_parse(struct pl_config *cfg, int argc, const char **argv);

enum pl_verb {
	PL_VERB_NONE = 0, /* not a reply this module understands */
	PL_VERB_OK,
	PL_VERB_FAIL,
	PL_VERB_LOCKED,
	PL_VERB_NOT_ENROLLED,
	PL_VERB_INVALID,
	PL_VERB_DENIED,
	PL_VERB_BUSY,
	PL_VERB_ERROR,
	PL_VERB_STATUS,
};

enum pl_reason {
	PL_REASON_NONE = 0, /* no reason= field */
	PL_REASON_EMPTY,
	PL_REASON_NOT_A_DOT,
	PL_REASON_REPEATED_DOT,
	PL_REASON_TOO_SHORT,
	PL_REASON_CURRENT_REQUIRED,
	PL_REASON_OTHER, /* a reason this module does not know */
};

struct pl_reply {
	enum pl_verb verb;
	/* FAIL (required), STATUS (optional); -1 when absent. */
	long remaining;
	/* LOCKED, STATUS; 0 when absent. */
	long retry_after;
	/* INVALID (required). */
	enum pl_reason reason;
	/* STATUS (required): 0 or 1; -1 when absent. */
	int enrolled;
	/* STATUS (required): 0 or 1; -1 when absent. */
	int locked;
	/* OK: 1 for "OK weak=1" (the enroll policy would refuse this pattern
	 * today), else 0. */
	int weak;
};

/*
 * Parses one reply line of len bytes, without its LF. Strict: the verb must be
 * known, fields are single-space separated key=value words, a known key may
 * appear once and must hold a well-formed value, each verb's required fields
 * must be present, and "OK" is only "OK" or "OK weak=0|1" — nothing else.
 * A NUL, CR or other control byte anywhere, or a line of PL_MAX_REPLY bytes
 * or more, is malformed.
 * Returns 0 and fills *out, or -1 (out->verb is then PL_VERB_NONE).
 */
int pl_parse_reply(const char *line, size_t len, struct pl_reply *out);

/* Sets every field to its "absent" value: PL_VERB_NONE, remaining, enrolled
 * and locked -1, retry_after and weak 0, PL_REASON_NONE. */
void pl_reply_reset(struct pl_reply *r);

/*
 * Percent-encodes len bytes of in (RFC 3986: A-Z a-z 0-9 - . _ ~ kept) into
 * out, NUL-terminated. Returns the encoded length, or -1 when it does not fit
 * in outsize bytes (out is then wiped).
 */
long pl_percent_encode(char *out, size_t outsize, const char *in, size_t len);

/* True when name is a user name the daemon accepts: 1-64 bytes of
 * A-Z a-z 0-9 . _ @ -, optionally ending in $, not starting with - or . */
bool pl_user_name_valid(const char *name);

/* "STATUS user=U\n". Returns the line length, or -1 when it does not fit. */
long pl_format_status_request(char *out, size_t outsize, const char *user);

/*
 * Who asks (docs/PROTOCOL.md): the real uid of the process that runs PAM
 * (getuid(): inside a setuid program such as sudo or polkit-agent-helper-1,
 * the user who ran it), its logind session id and that session's seat, or
 * its tty when it has no seat ("" when there is no session).
 */
struct pl_caller {
	uint32_t uid;
	char session[PL_MAX_SESSION_FIELD + 1];
	char seat[PL_MAX_SESSION_FIELD + 1];
};

/* "STATUS user=U caller=N session=S seat=T\n" (session and seat only when
 * not empty; no caller fields for a NULL caller). Returns the line length, or
 * -1 when it does not fit. */
long pl_format_status_request_from(char *out, size_t outsize, const char *user,
				   const struct pl_caller *caller);

/*
 * "VERIFY user=U pattern=P service=S tty=T rhost=R ruser=X caller=N
 * session=S seat=T\n"; NULL context values are sent empty and each is cut to
 * PL_MAX_CONTEXT bytes; the caller fields as for
 * pl_format_status_request_from. Returns the line length, or -1 when it does
 * not fit (out is then wiped: it may hold part of the pattern).
 */
long pl_format_verify_request_from(char *out, size_t outsize, const char *user,
				   const char *pattern, const char *service,
				   const char *tty, const char *rhost,
				   const char *ruser,
				   const struct pl_caller *caller);

/* pl_format_verify_request_from without caller fields. */
long pl_format_verify_request(char *out, size_t outsize, const char *user,
			      const char *pattern, const char *service,
			      const char *tty, const char *rhost,
			      const char *ruser);

/*
 * True when the login comes from another machine: PAM_RHOST names a host other
 * than this one (NULL, empty, localhost, 127.0.0.1, ::1 and hostname are
 * local), or PAM_TTY is "ssh" (what sshd sets while it authenticates). Such
 * logins are not asked for a pattern unless the allow_remote option is given:
 * sshd answers every echo-off prompt with the password the client typed.
 */
bool pl_session_is_remote(const char *rhost, const char *tty,
			  const char *hostname);

/*
 * What is known about the process that runs PAM (the application) and its
 * login: the input of pl_presence_decide. logind.c fills the logind fields on
 * a real system; the unit tests fill them by hand.
 */
struct pl_presence {
	/* logind runs on this host (/run/systemd/seats/ exists). */
	bool logind;
	/* The process belongs to a logind session: its own, or, for a process
	 * of a user's service manager (a terminal or polkit agent of GNOME or
	 * KDE), that user's graphical session (sd_uid_get_display). */
	bool in_session;
	/* That session: 1 remote (logind's Remote=yes, or opened by sshd), 0
	 * local, -1 unknown (counted as remote). */
	int session_remote;
	/* That session has a seat, a VT, a tty. */
	bool session_seat;
	bool session_vt;
	bool session_tty;
	/* That session is a display manager's greeter (logind's class
	 * "greeter"): what authenticates there opens a new session. */
	bool session_greeter;
	/* GDM's reauthentication worker: a root process GDM started with
	 * GDM_SESSION_FOR_REAUTH, through which the lock screen of a session
	 * already open asks (GNOME's unlock dialog). GDM runs it inside the
	 * session it started, and outside any session for one it did not (a
	 * session started another way: in_session is then the user's
	 * graphical session, active or online, if the user has no remote
	 * session). Never a new login. */
	bool gdm_reauth;
	/* PAM_USER's uid, for the session GDM unlocks (user_known false when
	 * PAM_USER is unset or nobody's). */
	bool user_known;
	uid_t user_uid;
	/* PAM_SERVICE, PAM_TTY, PAM_RHOST (NULL when unset) and this host's
	 * name. */
	const char *service;
	const char *tty;
	const char *rhost;
	const char *hostname;
};

/* pl_presence_decide's answer: ask, or why not. */
enum pl_presence_verdict {
	/* A person at this machine: a local logind session with a seat, a VT
	 * or a tty, or a login service on a local terminal. */
	PL_PRESENCE_ASK = 0,
	/* allow_remote: asked without evidence. */
	PL_PRESENCE_ASK_ALLOWED,
	/* No logind, and services= lists this service. */
	PL_PRESENCE_ASK_LISTED,
	/* PAM_RHOST names another host, or PAM_TTY is "ssh". */
	PL_PRESENCE_REMOTE_HOST,
	/* The logind session is remote (or its locality is unknown). */
	PL_PRESENCE_REMOTE_SESSION,
	/* A local session with no seat, VT or tty (cron's, a background one).
	 */
	PL_PRESENCE_NO_TERMINAL,
	/* In no session, and not a login service on a VT, pty or X display of
	 * this machine (a daemon: saslauthd, xrdp-sesman, dovecot; sudo from a
	 * service). */
	PL_PRESENCE_NO_SESSION,
	/* No logind, and services= does not list this service. */
	PL_PRESENCE_NOT_LISTED,
	/* No logind and no services= option. */
	PL_PRESENCE_NO_LOGIND,
	/* password_at_login: this opens a new session (a login service in no
	 * session, a greeter's session, or without logind a service listed in
	 * both services= and login_services=): the password, for the keyring.
	 */
	PL_PRESENCE_NEW_LOGIN,
	/* GDM unlocking a session from outside it, and no session of PAM_USER
	 * can be taken for the one it unlocks: no graphical one open, or one of
	 * them remote. */
	PL_PRESENCE_REAUTH_NO_SESSION,
};

/*
 * Whether to ask for a pattern at all (docs/pam_patternlock.8, "WHO IS
 * ASKED"): only with positive evidence of a person at this machine, and never
 * for a remote PAM_RHOST. Anything but an ASK verdict means: say nothing,
 * contact no daemon, return PAM_AUTHINFO_UNAVAIL. Pure: no I/O.
 */
enum pl_presence_verdict pl_presence_decide(const struct pl_presence *p,
					    const struct pl_config *cfg);

/* True for the verdicts that ask. */
bool pl_presence_asks(enum pl_presence_verdict verdict);

/* A few words for the log saying why a verdict does not ask (or how it
 * asks), e.g. "the logind session is remote". Never NULL. */
const char *pl_presence_reason(enum pl_presence_verdict verdict);

/* True when tty (PAM_TTY) is a terminal of this machine a login runs on: a VT
 * (/dev/ttyN, ttyN), a pseudo-terminal (/dev/pts/N, pts/N) or a local X
 * display (:N, :N.M). */
bool pl_local_terminal(const char *tty);

/* True when name is one of the comma-separated names of list, byte for byte. */
bool pl_service_listed(const char *list, const char *name);

/* True when tty (PAM_TTY) is a terminal device, where the 4-line grid reads
 * well: /dev/ttyN, /dev/pts/N, ttyN, pts/N and any other /dev/ or tty name
 * (a serial console). An X display, NULL and anything else are not. */
bool pl_tty_is_terminal(const char *tty);

/* The form of the grid to show: grid= as given, or for PL_GRID_AUTO full on a
 * terminal (pl_tty_is_terminal) and compact otherwise. Never PL_GRID_AUTO. */
enum pl_grid pl_grid_choose(enum pl_grid option, const char *tty);

/* The prompt: PL_PROMPT or PL_PROMPT_ONE (one_prompt) for the full grid and
 * none, PL_PROMPT_NUMPAD or PL_PROMPT_ONE_NUMPAD there for layout=numpad; for
 * the compact form the same words with the keys of layout on one line,
 * "Pattern [123 456 789]: " or "Pattern [123 456 789] or password: ". Every
 * form names the layout (the phone's plain words only the phone's).
 * Returns the length, or -1 when it does not fit. */
long pl_format_prompt(char *out, size_t outsize, enum pl_grid form,
		      bool one_prompt, enum pl_layout layout);

/* The keys of layout on one line, "123 456 789" for phone. */
const char *pl_layout_keys(enum pl_layout layout);

/*
 * Whether entry (phone-layout digits) is a pattern by the daemon's rule:
 * PL_REASON_NONE when it is, else the reason the daemon would give
 * (PL_REASON_EMPTY, _NOT_A_DOT, _REPEATED_DOT, _TOO_SHORT). Each dot 1-9
 * once; a straight move over an unused dot takes it; at least PL_MIN_DOTS
 * dots after that. Tests/Contract/patterns.txt holds the answers both sides
 * must give.
 */
enum pl_reason pl_pattern_check(const char *entry);

/* pl_pattern_check on entry typed in layout (mapped to phone digits on a
 * copy, which is wiped): true for a pattern. */
bool pl_is_pattern(const char *entry, enum pl_layout layout);

/* The grid shown before the prompt, as the keys of layout show it. Returns
 * the length, or -1 when it does not fit. */
long pl_format_grid(char *out, size_t outsize, const char *user,
		    enum pl_layout layout);

/* The three rows of keys of layout, "  1 2 3\n  4 5 6\n  7 8 9" for phone. */
const char *pl_layout_rows(enum pl_layout layout);

/* Rewrites typed keys in place as the phone-layout digits of the dots they
 * sit on (numpad 7 is dot 1, 1 is dot 7); other bytes are left as they are. */
void pl_layout_to_phone(enum pl_layout layout, char *entry);

/* A wait rounded up to whole minutes ("1 minute", "2 minutes" for 90
 * seconds), from 2 hours in hours, from 2 days in days. -1 for seconds <= 0 or
 * when it does not fit. */
long pl_format_duration(char *out, size_t outsize, long seconds);

/* "Pattern unlock for U is locked after 5 failed attempts. ..." with the way
 * out: a timed unlock in retry_after seconds (when > 0), and an administrator.
 * The same words as the CLI's (LockoutWording.swift). */
long pl_format_locked(char *out, size_t outsize, const char *user,
		      long retry_after);

/* "Wrong pattern — N attempts left.", or at 0 the lockout sentence with the
 * way out (retry_after as for pl_format_locked). */
long pl_format_wrong(char *out, size_t outsize, const char *user,
		     long remaining, long retry_after);

/* The sentence for an INVALID reply; NULL for PL_REASON_EMPTY (an empty entry
 * is not worth a message). */
const char *pl_invalid_message(enum pl_reason reason);

/* The advice shown after an unlock with a pattern the enroll policy refuses
 * (the daemon's "OK weak=1"). */
const char *pl_weak_advice(void);

/* Why an entry shaped like a pattern was not used: the pattern is locked, or
 * the daemon gave no verdict. */
enum pl_unused {
	PL_UNUSED_LOCKED,
	PL_UNUSED_UNAVAILABLE,
};

/* The sentence for an entry shaped like a pattern that was not used and
 * ended the attempt (unused.locked, unused.unavailable). */
const char *pl_unused_message(enum pl_unused why);

/* "Pattern unlock unavailable: WHY", shown with the debug option when the
 * daemon cannot be used; "unknown error" for a NULL or empty why. */
long pl_format_unavailable(char *out, size_t outsize, const char *why);

#ifdef __cplusplus
}
#endif

#endif /* PAM_PATTERNLOCK_H */
