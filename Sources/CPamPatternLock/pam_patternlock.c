// SPDX-License-Identifier: Apache-2.0
/*
 * pam_patternlock — Android-style pattern unlock: the PAM entry points.
 *
 * Asks patternlockd (over its root-owned Unix socket) whether the user has a
 * pattern and is not locked, shows the 3x3 grid (in full on a terminal, as
 * one line in the prompt elsewhere), reads the dots with echo off and has the
 * daemon verify them. With one_prompt the same prompt takes the password:
 * what is not a pattern goes unsent to the next module as PAM_AUTHTOK. Only an
 * exact "OK" (or "OK weak=1", after which one line advises a change) to the
 * VERIFY is success. An entry shaped like a pattern never reaches another
 * module: refused (wrong, the one that locked it), or not checked (locked
 * before the prompt, no verdict from the daemon), it is PAM_AUTH_ERR, which
 * the profile's auth_err=die makes the end of the attempt, as is an invalid
 * entry. Every way nothing was entered that could be the pattern (no
 * pattern, an empty entry, the password at the one prompt) is
 * PAM_AUTHINFO_UNAVAIL or PAM_USER_UNKNOWN, so the stack goes on to the
 * password.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <pwd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_appl.h>
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>

#include "cfg.h"
#include "exchange.h"
#include "logind.h"
#include "pam_patternlock.h"

#define PL_EXPORT __attribute__((visibility("default")))

#define MESSAGE_SIZE 512
#define ERRBUF_SIZE 256

struct session {
	pam_handle_t *pamh;
	struct pl_config cfg;
	const char *user;
	/* Who asks, sent with every request (the daemon logs it and keeps it
	 * with a failure). */
	struct pl_caller caller;
	/* GDM's reauthentication worker (struct pl_presence): the grid goes in
	 * the prompt, as GDM's dialog shows each message for a while and holds
	 * the answer until every message was shown. */
	bool gdm_reauth;
	/* PAM_SILENT: no informational message (the grid). Errors still show:
	 * sudo passes PAM_SILENT on every call, and a user who is not told the
	 * pattern was wrong or is locked cannot act on it. */
	bool silent;
};

/*
 * One message through the application's conversation. With a response
 * wanted, *response takes ownership of it (the caller wipes and frees);
 * otherwise any response is wiped and dropped. Returns a PAM code.
 */
static int converse(pam_handle_t *pamh, int style, const char *text,
		    char **response)
{
	const struct pam_conv *conv = NULL;
	const void *item = NULL;
	struct pam_message message = {.msg_style = style, .msg = text};
	const struct pam_message *messages[1] = {&message};
	struct pam_response *replies = NULL;
	int ret;

	if (response != NULL)
		*response = NULL;
	ret = pam_get_item(pamh, PAM_CONV, &item);
	if (ret != PAM_SUCCESS)
		goto done;
	conv = item;
	if (conv == NULL || conv->conv == NULL) {
		ret = PAM_CONV_ERR;
		goto done;
	}
	ret = conv->conv(1, messages, &replies, conv->appdata_ptr);
	if (ret != PAM_SUCCESS)
		goto done;
	if (replies != NULL && replies[0].resp != NULL) {
		if (response != NULL) {
			*response = replies[0].resp;
		} else {
			explicit_bzero(replies[0].resp,
				       strlen(replies[0].resp));
			free(replies[0].resp);
		}
		replies[0].resp = NULL;
	}
done:
	/* A conversation may fill replies and still fail. */
	if (replies != NULL) {
		if (replies[0].resp != NULL) {
			explicit_bzero(replies[0].resp,
				       strlen(replies[0].resp));
			free(replies[0].resp);
		}
		free(replies);
	}
	return ret;
}

static void tell(const struct session *s, int style, const char *text)
{
	if (text == NULL)
		return;
	if (style == PAM_TEXT_INFO && (s->silent || s->cfg.quiet))
		return;
	(void)converse(s->pamh, style, text, NULL);
}

/* Why the daemon could not be used: in syslog always (the exchange did that),
 * on the screen only with debug. */
static int unavailable(const struct session *s, const char *why)
{
	char text[MESSAGE_SIZE];

	/* why fits: ERRBUF_SIZE is well under MESSAGE_SIZE. */
	if (s->cfg.debug && pl_format_unavailable(text, sizeof(text), why) > 0)
		tell(s, PAM_ERROR_MSG, text);
	return PAM_AUTHINFO_UNAVAIL;
}

/* The lock sentence. What it returns is the caller's to choose: locked
 * before the prompt, nothing was entered and the password is still to be
 * asked (PAM_AUTHINFO_UNAVAIL); locked by the pattern just entered (the fifth
 * wrong one), that pattern was refused (PAM_AUTH_ERR). */
static int locked(const struct session *s, long retry_after, int ret)
{
	char text[MESSAGE_SIZE];

	pam_syslog(s->pamh, LOG_NOTICE, "user %s is locked out", s->user);
	if (pl_format_locked(text, sizeof(text), s->user, retry_after) > 0)
		tell(s, PAM_ERROR_MSG, text);
	return ret;
}

/* STATUS before any prompt: only an enrolled, unlocked user is asked.
 * Returns PAM_SUCCESS to go on to the prompt, or the module's answer, never
 * PAM_AUTH_ERR: nothing was entered yet, so the password is still to be
 * asked (a locked user is told so first). With PAM_AUTHINFO_UNAVAIL, *why
 * says whether the pattern is locked or the daemon could not be used. */
static int check_status(const struct session *s, enum pl_unused *why_unused)
{
	char request[PL_MAX_REQUEST];
	char why[ERRBUF_SIZE];
	struct pl_reply reply;
	long len;
	int ret = PAM_AUTHINFO_UNAVAIL;

	*why_unused = PL_UNUSED_UNAVAILABLE;
	len = pl_format_status_request_from(request, sizeof(request), s->user,
					    &s->caller);
	if (len < 0) {
		snprintf(why, sizeof(why), "user name too long for a request");
		pam_syslog(s->pamh, LOG_ERR, "%s", why);
		ret = unavailable(s, why);
		goto done;
	}
	if (pl_client_exchange(s->pamh, &s->cfg, request, (size_t)len,
			       s->cfg.timeout, &reply, why, sizeof(why)) != 0) {
		ret = unavailable(s, why);
		goto done;
	}
	switch (reply.verb) {
	case PL_VERB_STATUS:
		if (reply.enrolled != 1) {
			if (s->cfg.debug)
				pam_syslog(s->pamh, LOG_DEBUG,
					   "user %s has no pattern", s->user);
			ret = PAM_USER_UNKNOWN;
		} else if (reply.locked == 1) {
			*why_unused = PL_UNUSED_LOCKED;
			ret = locked(s, reply.retry_after,
				     PAM_AUTHINFO_UNAVAIL);
		} else {
			ret = PAM_SUCCESS;
		}
		break;
	case PL_VERB_NOT_ENROLLED:
		ret = PAM_USER_UNKNOWN;
		break;
	case PL_VERB_LOCKED:
		*why_unused = PL_UNUSED_LOCKED;
		ret = locked(s, reply.retry_after, PAM_AUTHINFO_UNAVAIL);
		break;
	case PL_VERB_DENIED:
		snprintf(why, sizeof(why),
			 "the daemon denied STATUS for %s to this process",
			 s->user);
		pam_syslog(s->pamh, LOG_ERR, "%s", why);
		ret = unavailable(s, why);
		break;
	default:
		snprintf(why, sizeof(why), "unexpected reply to STATUS");
		pam_syslog(s->pamh, LOG_ERR, "%s", why);
		ret = unavailable(s, why);
		break;
	}
done:
	return ret;
}

/* One prompt with echo off. Returns PAM_SUCCESS with a non-empty *entry
 * (caller wipes and frees), or PAM_AUTHINFO_UNAVAIL for an empty entry, a
 * cancelled prompt or a failed conversation: none of those reach the daemon
 * or another module, so none is counted. */
static int read_entry(const struct session *s, const char *shown, char **entry)
{
	char *response = NULL;
	int ret = PAM_AUTHINFO_UNAVAIL;
	int rc;

	*entry = NULL;
	rc = converse(s->pamh, PAM_PROMPT_ECHO_OFF, shown, &response);
	if (rc != PAM_SUCCESS) {
		pam_syslog(s->pamh, LOG_NOTICE,
			   "pattern prompt for %s ended: %s", s->user,
			   pam_strerror(s->pamh, rc));
		goto done;
	}
	if (response == NULL || response[0] == '\0') {
		if (s->cfg.debug)
			pam_syslog(s->pamh, LOG_DEBUG,
				   "empty entry for %s, not sent", s->user);
		goto done;
	}
	*entry = response;
	response = NULL;
	ret = PAM_SUCCESS;
done:
	if (response != NULL) {
		explicit_bzero(response, strlen(response));
		free(response);
	}
	return ret;
}

/* The grid in the chosen form, then the prompt (read_entry). */
static int ask_pattern(const struct session *s, enum pl_grid form, char **entry)
{
	char grid[MESSAGE_SIZE];
	char ask[MESSAGE_SIZE];
	char prompt[2 * MESSAGE_SIZE];
	const char *shown = ask;

	*entry = NULL;
	if (pl_format_prompt(ask, sizeof(ask), form, s->cfg.one_prompt,
			     s->cfg.layout) < 0)
		return PAM_AUTHINFO_UNAVAIL;
	if (form == PL_GRID_FULL && !s->cfg.quiet &&
	    pl_format_grid(grid, sizeof(grid), s->user, s->cfg.layout) > 0) {
		if (!s->silent) {
			tell(s, PAM_TEXT_INFO, grid);
		} else {
			/* PAM_SILENT forbids the informational message, and
			 * sudo always sets it; the user still needs the grid to
			 * type a pattern, so it becomes part of the prompt
			 * itself. */
			snprintf(prompt, sizeof(prompt), "%s\n%s", grid, ask);
			shown = prompt;
		}
	}
	return read_entry(s, shown, entry);
}

/* What was typed goes to the next module as the password, unsent (pam_unix
 * try_first_pass / use_first_pass). libpam keeps its own copy and wipes it
 * at pam_end. PAM_AUTHINFO_UNAVAIL, like every other way the pattern was not
 * used, so a stack treats it as the module's absence. */
static int pass_on(const struct session *s, const char *entry)
{
	int rc = pam_set_item(s->pamh, PAM_AUTHTOK, entry);

	if (rc != PAM_SUCCESS)
		pam_syslog(s->pamh, LOG_ERR,
			   "could not hand the entry on as PAM_AUTHTOK: %s",
			   pam_strerror(s->pamh, rc));
	return PAM_AUTHINFO_UNAVAIL;
}

static const char *item_string(pam_handle_t *pamh, int type)
{
	const void *item = NULL;

	if (pam_get_item(pamh, type, &item) != PAM_SUCCESS)
		return NULL;
	return item;
}

/*
 * An entry shaped like a pattern that the pattern could not take: it is
 * locked, or the daemon gave no verdict. It may be the user's pattern, so it
 * never goes to another module: a client that answers every prompt with its
 * one field (swaylock, phosh, KDE's Breeze) would hand it to pam_unix's
 * "Password:" and pam_faillock would count it, or pam_krb5 would send it
 * where it can be attacked offline. The attempt ends here (PAM_AUTH_ERR, the
 * profile's auth_err=die), with the way to the password said. Only at a
 * service the administrator listed in digit_passwords= does it go on as the
 * password, for a password made only of dots.
 */
static int pattern_unused(const struct session *s, const char *entry,
			  enum pl_unused why)
{
	if (pl_service_listed(s->cfg.digit_passwords,
			      item_string(s->pamh, PAM_SERVICE))) {
		if (s->cfg.debug)
			pam_syslog(s->pamh, LOG_DEBUG,
				   "digit_passwords: an entry of dots handed "
				   "on as the password, not sent");
		return pass_on(s, entry);
	}
	pam_syslog(s->pamh, LOG_NOTICE,
		   "an entry shaped like a pattern for %s was not used (%s); "
		   "the attempt ends",
		   s->user,
		   why == PL_UNUSED_LOCKED ? "the pattern is locked"
					   : "no verdict from the daemon");
	tell(s, PAM_ERROR_MSG, pl_unused_message(why));
	return PAM_AUTH_ERR;
}

/* one_prompt while the pattern cannot be used (locked, or no answer from the
 * daemon to STATUS): the module still reads the one field, as its own
 * "Password (not the pattern): " (PL_PROMPT_PASSWORD),
 * so that what a client types into it goes through the same rule as at the
 * pattern prompt. A password goes on, unsent; an entry shaped like a pattern
 * is not used (pattern_unused). An empty entry lets the next module ask:
 * the way for a password made only of dots. */
static int ask_password(const struct session *s, enum pl_unused why)
{
	char *entry = NULL;
	int ret = read_entry(s, PL_PROMPT_PASSWORD, &entry);

	if (ret != PAM_SUCCESS)
		return ret;
	if (pl_is_pattern(entry, s->cfg.layout))
		ret = pattern_unused(s, entry, why);
	else
		ret = pass_on(s, entry);
	explicit_bzero(entry, strlen(entry));
	free(entry);
	return ret;
}

/* What the daemon said about the entry, as a PAM code and a sentence.
 * PAM_AUTH_ERR means exactly "a pattern was entered and refused" (wrong,
 * invalid, or the one that locked it): the profile's auth_err=die ends the
 * whole attempt there. Every failure to get an answer is
 * PAM_AUTHINFO_UNAVAIL, so the stack goes on to the password. */
static int verify_outcome(const struct session *s, const struct pl_reply *r)
{
	char text[MESSAGE_SIZE];
	char why[ERRBUF_SIZE];

	switch (r->verb) {
	case PL_VERB_OK:
		if (s->cfg.debug)
			pam_syslog(s->pamh, LOG_DEBUG,
				   "pattern accepted for %s", s->user);
		/* Unlocking is never refused for a weak pattern; one line of
		 * advice, which quiet and PAM_SILENT suppress. */
		if (r->weak == 1)
			tell(s, PAM_TEXT_INFO, pl_weak_advice());
		return PAM_SUCCESS;
	case PL_VERB_FAIL:
		pam_syslog(s->pamh, LOG_NOTICE,
			   "wrong pattern for %s; %ld attempts left", s->user,
			   r->remaining);
		if (pl_format_wrong(text, sizeof(text), s->user, r->remaining,
				    r->retry_after) > 0)
			tell(s, PAM_ERROR_MSG, text);
		return PAM_AUTH_ERR;
	case PL_VERB_LOCKED:
		/* The entry was the one that locked the pattern (or the
		 * daemon locked it between STATUS and VERIFY): refused. */
		return locked(s, r->retry_after, PAM_AUTH_ERR);
	case PL_VERB_INVALID:
		/* Never for an entry the module sent: it sends none empty. */
		if (r->reason == PL_REASON_EMPTY)
			return PAM_AUTHINFO_UNAVAIL;
		tell(s, PAM_ERROR_MSG, pl_invalid_message(r->reason));
		return PAM_AUTH_ERR;
	case PL_VERB_NOT_ENROLLED:
		return PAM_USER_UNKNOWN;
	case PL_VERB_DENIED:
		snprintf(why, sizeof(why),
			 "the daemon denied VERIFY for %s to this process",
			 s->user);
		break;
	case PL_VERB_BUSY:
		snprintf(why, sizeof(why), "the daemon is busy");
		break;
	default:
		snprintf(why, sizeof(why), "unexpected reply to VERIFY");
		break;
	}
	pam_syslog(s->pamh, LOG_ERR, "%s", why);
	return unavailable(s, why);
}

/* Too long to be a pattern (at most 9 dots): answered here, like the daemon
 * would, without sending it. Not counted. */
static int overlong_entry(const struct session *s, const char *entry)
{
	bool all_dots = strspn(entry, "123456789") == strlen(entry);

	tell(s, PAM_ERROR_MSG,
	     pl_invalid_message(all_dots ? PL_REASON_REPEATED_DOT
					 : PL_REASON_NOT_A_DOT));
	return PAM_AUTH_ERR;
}

/* Said once per process (the module is linked -z nodelete, so it stays
 * loaded between pam_start and pam_end): a long-running service such as
 * saslauthd would otherwise repeat it on every login. */
static atomic_flag said_no_logind = ATOMIC_FLAG_INIT;
static atomic_flag said_listed = ATOMIC_FLAG_INIT;

/*
 * Whether a person at this machine is there to ask (pl_presence_decide).
 * Fills s->caller on the way. When not, nothing is shown and the daemon is
 * not contacted: the caller returns PAM_AUTHINFO_UNAVAIL and the stack asks
 * the password as if the module were absent.
 */
static bool person_present(struct session *s)
{
	struct pl_presence p = {
		.service = item_string(s->pamh, PAM_SERVICE),
		.tty = item_string(s->pamh, PAM_TTY),
		.rhost = item_string(s->pamh, PAM_RHOST),
	};
	enum pl_presence_verdict verdict;
	char hostname[256];

	if (gethostname(hostname, sizeof(hostname)) != 0)
		hostname[0] = '\0';
	hostname[sizeof(hostname) - 1] = '\0';
	p.hostname = hostname;
	s->caller.uid = (uint32_t)getuid();
	/* GDM marks the worker it starts for a session already open in the
	 * worker's environment; only a root process running one of GDM's PAM
	 * services is believed (secure_getenv: never in a setuid program such
	 * as sudo). */
	p.gdm_reauth = s->caller.uid == 0 &&
		       pl_service_listed(PL_GDM_SERVICES, p.service) &&
		       secure_getenv("GDM_SESSION_FOR_REAUTH") != NULL;
	if (p.gdm_reauth) {
		const void *user = NULL;
		const struct passwd *pw = NULL;

		if (pam_get_item(s->pamh, PAM_USER, &user) == PAM_SUCCESS &&
		    user != NULL)
			pw = pam_modutil_getpwnam(s->pamh, user);
		p.user_known = pw != NULL;
		p.user_uid = pw != NULL ? pw->pw_uid : 0;
	}
	s->gdm_reauth = p.gdm_reauth;
	pl_logind_probe(&p, &s->caller);
	verdict = pl_presence_decide(&p, &s->cfg);

	if (verdict == PL_PRESENCE_NO_LOGIND &&
	    !atomic_flag_test_and_set(&said_no_logind))
		pam_syslog(s->pamh, LOG_NOTICE,
			   "logind does not run here, so nothing tells a "
			   "person at this machine from a network service: "
			   "pattern unlock asks nobody. List the services to "
			   "ask in the module's options, e.g. "
			   "services=sudo,su,login (pam_patternlock(8))");
	if (verdict == PL_PRESENCE_ASK_LISTED &&
	    !atomic_flag_test_and_set(&said_listed))
		pam_syslog(s->pamh, LOG_INFO,
			   "logind does not run here: pattern unlock asks the "
			   "services listed in services=%s",
			   s->cfg.services);
	if (pl_presence_asks(verdict)) {
		if (s->cfg.debug)
			pam_syslog(s->pamh, LOG_DEBUG, "asking: %s",
				   pl_presence_reason(verdict));
		return true;
	}
	pam_syslog(s->pamh, LOG_DEBUG,
		   "not asked: %s (service=%s tty=%s rhost=%s session=%s "
		   "uid=%lu)",
		   pl_presence_reason(verdict), p.service ? p.service : "",
		   p.tty ? p.tty : "", p.rhost ? p.rhost : "",
		   s->caller.session, (unsigned long)s->caller.uid);
	return false;
}

PL_EXPORT int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc,
				  const char **argv)
{
	struct session s = {.pamh = pamh, .silent = (flags & PAM_SILENT) != 0};
	char request[PL_MAX_REQUEST];
	char why[ERRBUF_SIZE];
	char dots[PL_MAX_ENTRY + 1];
	struct pl_reply reply;
	enum pl_unused why_unused;
	const void *authtok = NULL;
	char *entry = NULL;
	long len;
	int ret;

	pl_cfg_load(pamh, argc, argv, &s.cfg);

	/* Before anything is asked or sent to the daemon: a network service
	 * or a remote login would answer the pattern prompt with a password. */
	if (!person_present(&s)) {
		ret = PAM_AUTHINFO_UNAVAIL;
		goto done;
	}

	ret = pam_get_user(pamh, &s.user, NULL);
	if (ret != PAM_SUCCESS) {
		if (ret == PAM_CONV_AGAIN)
			ret = PAM_INCOMPLETE;
		/* An application's conversation may answer with any code;
		 * PAM_AUTH_ERR is kept for a refused pattern. */
		else if (ret == PAM_AUTH_ERR)
			ret = PAM_AUTHINFO_UNAVAIL;
		goto done;
	}
	/* A name the daemon cannot store has no pattern: no need to ask. */
	if (!pl_user_name_valid(s.user)) {
		if (s.cfg.debug)
			pam_syslog(pamh, LOG_DEBUG,
				   "user name not usable with patternlock");
		ret = PAM_USER_UNKNOWN;
		goto done;
	}

	/* one_prompt: a module before this one already asked for the
	 * password (PAM_AUTHTOK is set). A second prompt would be answered with
	 * the same text by most clients; the token is left for the next module
	 * and nothing is asked or sent. */
	if (s.cfg.one_prompt &&
	    pam_get_item(pamh, PAM_AUTHTOK, &authtok) == PAM_SUCCESS &&
	    authtok != NULL) {
		/* A module above this one asked first, so a client with one
		 * field gave it whatever was typed there, a pattern too (to
		 * pam_krb5, where it can be attacked offline). The profile's
		 * priority puts this module above every Debian profile that
		 * asks; a stack written by hand may not. */
		pam_syslog(pamh, LOG_WARNING,
			   "PAM_AUTHTOK was already set by a module above "
			   "pam_patternlock, so nothing is asked: put "
			   "pam_patternlock above every module that asks for "
			   "a password (pam_patternlock(8))");
		ret = PAM_AUTHINFO_UNAVAIL;
		goto done;
	}

	ret = check_status(&s, &why_unused);
	/* Locked, or the daemon could not be used: nothing was entered yet.
	 * With one_prompt the module still reads the one field (a client that
	 * answers every prompt with it would otherwise give pam_unix the
	 * pattern). Without it, the next module asks its own prompt. */
	if (ret == PAM_AUTHINFO_UNAVAIL && s.cfg.one_prompt)
		ret = ask_password(&s, why_unused);
	if (ret != PAM_SUCCESS)
		goto done;

	ret = ask_pattern(&s,
			  pl_grid_choose(s.cfg.grid,
					 s.gdm_reauth
						 ? NULL
						 : item_string(pamh, PAM_TTY)),
			  &entry);
	if (ret != PAM_SUCCESS)
		goto done;
	/* one_prompt: anything but a pattern is the password. It is not sent,
	 * so it is neither counted nor seen by the daemon. */
	if (s.cfg.one_prompt && !pl_is_pattern(entry, s.cfg.layout)) {
		if (s.cfg.debug)
			pam_syslog(pamh, LOG_DEBUG,
				   "not a pattern: handed on, not sent");
		ret = pass_on(&s, entry);
		goto done;
	}
	if (strlen(entry) > PL_MAX_ENTRY) {
		ret = overlong_entry(&s, entry);
		goto done;
	}

	/* The daemon knows only the phone layout's digits; the entry itself is
	 * kept as typed for one_prompt's hand-on. */
	memcpy(dots, entry, strlen(entry) + 1);
	pl_layout_to_phone(s.cfg.layout, dots);
	len = pl_format_verify_request_from(
		request, sizeof(request), s.user, dots,
		item_string(pamh, PAM_SERVICE), item_string(pamh, PAM_TTY),
		item_string(pamh, PAM_RHOST), item_string(pamh, PAM_RUSER),
		&s.caller);
	explicit_bzero(dots, sizeof(dots));
	if (len < 0) {
		snprintf(why, sizeof(why), "VERIFY request does not fit");
		pam_syslog(pamh, LOG_ERR, "%s", why);
		ret = unavailable(&s, why);
	} else if (pl_client_exchange(pamh, &s.cfg, request, (size_t)len,
				      s.cfg.timeout + PL_VERIFY_EXTRA_SECONDS,
				      &reply, why, sizeof(why)) != 0) {
		ret = unavailable(&s, why);
	} else {
		ret = verify_outcome(&s, &reply);
	}
	/* A pattern that did not unlock is not handed on, though it may be a
	 * password made of digits, and it ends the whole attempt (the
	 * profile's auth_err=die): pam_unix is not asked in it. Handed on,
	 * pam_unix's try_first_pass would check the pattern as a password
	 * (one more for pam_faillock's count); not handed on but ignored,
	 * pam_unix would ask "Password:" in the same attempt, and a client
	 * that keeps its field (KDE's Breeze, xsecurelock) or answers every
	 * prompt with the same text (swaylock, phosh) would answer it with the
	 * pattern. So a pattern the daemon gave no verdict on (BUSY, DENIED,
	 * NOT_ENROLLED, ERROR, no answer in time, a reply not understood) ends
	 * the attempt too. Ended, the client says the attempt failed and the
	 * next one starts again at the one prompt. A password shaped like a
	 * pattern gets to pam_unix by an empty entry at the module's prompt,
	 * or at a service listed in digit_passwords= once the pattern cannot
	 * be used. */
	if (ret != PAM_SUCCESS && ret != PAM_AUTH_ERR &&
	    pl_is_pattern(entry, s.cfg.layout))
		ret = pattern_unused(&s, entry, PL_UNUSED_UNAVAILABLE);
done:
	explicit_bzero(request, sizeof(request));
	if (entry != NULL) {
		explicit_bzero(entry, strlen(entry));
		free(entry);
	}
	return ret;
}

PL_EXPORT int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc,
			     const char **argv)
{
	(void)pamh;
	(void)flags;
	(void)argc;
	(void)argv;
	return PAM_SUCCESS;
}
