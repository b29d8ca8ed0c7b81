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
#include <stddef.h>

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
/* Longest entry worth sending: a pattern has at most 9 dots. */
#define PL_MAX_ENTRY 64
/* service/tty/rhost/ruser are cut to this many bytes (the daemon keeps 64). */
#define PL_MAX_CONTEXT 64
/* sizeof(((struct sockaddr_un *)0)->sun_path) on Linux. */
#define PL_MAX_SOCKET_PATH 108

/* The keys the dots are typed on (layout=). The dots never move: a numeric
 * keypad's keys are mapped to the dots they sit on, so the same drawn shape is
 * the same pattern on either. */
enum pl_layout {
	PL_LAYOUT_PHONE = 0, /* 1 2 3 is the top row (the default) */
	PL_LAYOUT_NUMPAD,    /* 7 8 9 is the top row, as on a numeric keypad */
};

struct pl_config {
	char socket_path[PL_MAX_SOCKET_PATH];
	int timeout; /* seconds, 1..PL_MAX_TIMEOUT */
	bool debug;
	bool nogrid;
	bool quiet;
	/* Also ask remote logins (PAM_RHOST of another host). */
	bool allow_remote;
	enum pl_layout layout;
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
 * "VERIFY user=U pattern=P service=S tty=T rhost=R ruser=X\n"; NULL context
 * values are sent empty and each is cut to PL_MAX_CONTEXT bytes. Returns the
 * line length, or -1 when it does not fit (out is then wiped: it may hold
 * part of the pattern).
 */
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

/* "Pattern unlock unavailable: WHY", shown with the debug option when the
 * daemon cannot be used; "unknown error" for a NULL or empty why. */
long pl_format_unavailable(char *out, size_t outsize, const char *why);

#ifdef __cplusplus
}
#endif

#endif /* PAM_PATTERNLOCK_H */
