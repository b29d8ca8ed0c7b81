// SPDX-License-Identifier: Apache-2.0
/*
 * Is a person at this machine to ask? Pattern unlock answers a prompt that only
 * someone at the keyboard should see: a network service (saslauthd, xrdp,
 * dovecot behind webmail) or a login over SSH answers every prompt with the
 * network password, which would then reach the daemon and be counted as a
 * wrong pattern. So the module asks only on positive evidence, the way
 * pam_fprintd asks logind; the evidence itself is gathered by logind.c. Pure:
 * no I/O, so the unit tests drive it with a table of inputs.
 */
#include <string.h>

#include "pam_patternlock.h"

static bool all_digits(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return false;
	}
	return true;
}

bool pl_local_terminal(const char *tty)
{
	size_t n;

	if (tty == NULL)
		return false;
	/* An X display of this machine: ":0", ":1.0"; "host:0" is another
	 * machine's. */
	if (tty[0] == ':') {
		n = strspn(tty + 1, "0123456789");
		if (n == 0)
			return false;
		return tty[1 + n] == '\0' ||
		       (tty[1 + n] == '.' && all_digits(tty + 2 + n));
	}
	if (strncmp(tty, "/dev/", 5) == 0)
		tty += 5;
	/* A VT, and a pseudo-terminal: `login` on a pty is how a container's
	 * console logs in. */
	if (strncmp(tty, "tty", 3) == 0)
		return all_digits(tty + 3);
	if (strncmp(tty, "pts/", 4) == 0)
		return all_digits(tty + 4);
	return false;
}

bool pl_service_listed(const char *list, const char *name)
{
	size_t len;

	if (list == NULL || name == NULL || name[0] == '\0')
		return false;
	len = strlen(name);
	while (*list != '\0') {
		size_t item = strcspn(list, ",");

		if (item == len && memcmp(list, name, len) == 0)
			return true;
		list += item;
		if (*list == ',')
			list++;
	}
	return false;
}

enum pl_presence_verdict pl_presence_decide(const struct pl_presence *p,
					    const struct pl_config *cfg)
{
	if (cfg->allow_remote) {
		/* allow_remote widens who is asked; password_at_login still
		 * leaves a new session's login (a greeter, or a login service
		 * before its session) to the password. */
		if (cfg->password_at_login &&
		    (p->in_session ? p->session_greeter
				   : pl_service_listed(cfg->login_services,
						       p->service)))
			return PL_PRESENCE_NEW_LOGIN;
		return PL_PRESENCE_ASK_ALLOWED;
	}
	/* (b) Whatever logind says, PAM_RHOST of another host (or sshd's "ssh"
	 * tty) is a login from elsewhere. */
	if (pl_session_is_remote(p->rhost, p->tty, p->hostname))
		return PL_PRESENCE_REMOTE_HOST;
	/* Without logind nothing tells a person from a daemon: only the
	 * services the administrator listed. */
	if (!p->logind) {
		if (cfg->services[0] == '\0')
			return PL_PRESENCE_NO_LOGIND;
		if (!pl_service_listed(cfg->services, p->service))
			return PL_PRESENCE_NOT_LISTED;
		/* Nothing tells a login from a session's su here: a service
		 * that logs in is taken as a new login. */
		if (cfg->password_at_login &&
		    pl_service_listed(cfg->login_services, p->service))
			return PL_PRESENCE_NEW_LOGIN;
		return PL_PRESENCE_ASK_LISTED;
	}
	/* (a) A session logind knows to be local, with a place a person sits:
	 * a seat, a VT or a tty. */
	if (p->in_session) {
		if (p->session_remote != 0)
			return PL_PRESENCE_REMOTE_SESSION;
		if (!p->session_seat && !p->session_vt && !p->session_tty)
			return PL_PRESENCE_NO_TERMINAL;
		/* A greeter's session logs someone in: a new session. */
		if (cfg->password_at_login && p->session_greeter)
			return PL_PRESENCE_NEW_LOGIN;
		return PL_PRESENCE_ASK;
	}
	/* GDM's reauthentication worker unlocks a session already open: never
	 * a login, so the rule for logins below is not its. */
	if (p->gdm_reauth)
		return PL_PRESENCE_REAUTH_NO_SESSION;
	/* Or a login or greeter before its session exists, on a terminal or
	 * display of this machine. sudo, saslauthd and cron jobs in no
	 * session are never asked. */
	if (pl_service_listed(cfg->login_services, p->service) &&
	    pl_local_terminal(p->tty))
		/* password_at_login: the password this login asks also opens
		 * the keyring (pam_gnome_keyring, pam_kwallet5), which a
		 * pattern cannot. */
		return cfg->password_at_login ? PL_PRESENCE_NEW_LOGIN
					      : PL_PRESENCE_ASK;
	return PL_PRESENCE_NO_SESSION;
}

bool pl_presence_asks(enum pl_presence_verdict verdict)
{
	return verdict == PL_PRESENCE_ASK ||
	       verdict == PL_PRESENCE_ASK_ALLOWED ||
	       verdict == PL_PRESENCE_ASK_LISTED;
}

const char *pl_presence_reason(enum pl_presence_verdict verdict)
{
	switch (verdict) {
	case PL_PRESENCE_ASK:
		return "a person at this machine";
	case PL_PRESENCE_ASK_ALLOWED:
		return "allow_remote is set";
	case PL_PRESENCE_ASK_LISTED:
		return "no logind, and services= lists this service";
	case PL_PRESENCE_REMOTE_HOST:
		return "PAM_RHOST names another host, or PAM_TTY is ssh";
	case PL_PRESENCE_REMOTE_SESSION:
		return "the logind session is remote";
	case PL_PRESENCE_NO_TERMINAL:
		return "the logind session has no seat, VT or tty";
	case PL_PRESENCE_NO_SESSION:
		return "the process is in no logind session and is not a "
		       "login on a terminal of this machine";
	case PL_PRESENCE_NOT_LISTED:
		return "no logind, and services= does not list this service";
	case PL_PRESENCE_NO_LOGIND:
		return "no logind, and no services= option";
	case PL_PRESENCE_REAUTH_NO_SESSION:
		return "GDM is unlocking a session of this user from outside "
		       "it, and the user has no open graphical session or has "
		       "a remote one";
	case PL_PRESENCE_NEW_LOGIN:
		return "password_at_login, and this opens a new session (a "
		       "login service in no session, a greeter, or without "
		       "logind a service in login_services=)";
	}
	return "unknown";
}
