// SPDX-License-Identifier: Apache-2.0
/*
 * What logind knows about the process that runs PAM: the thin sd-login
 * wrapper under presence.c's pure decision. Every string libsystemd returns is
 * freed here; what the module keeps is copied into fixed buffers.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-login.h>

#include "logind.h"

/* Copies at most PL_MAX_SESSION_FIELD bytes of src (without "/dev/"); "" for
 * NULL. wire.c cuts it again on a character boundary for the request. */
static void copy_field(char *dest, const char *src)
{
	size_t n;

	dest[0] = '\0';
	if (src == NULL)
		return;
	if (strncmp(src, "/dev/", 5) == 0)
		src += 5;
	n = strnlen(src, PL_MAX_SESSION_FIELD);
	memcpy(dest, src, n);
	dest[n] = '\0';
}

/* An SSH session never has a person at this machine's keyboard: logind calls
 * it remote, or (sshd from 127.0.0.1 with UseDNS) at least sshd opened it. */
static bool session_is_remote(const char *session)
{
	char *service = NULL;
	bool remote = sd_session_is_remote(session) != 0;

	if (sd_session_get_service(session, &service) >= 0 && service != NULL &&
	    strcmp(service, "sshd") == 0)
		remote = true;
	free(service);
	return remote;
}

/* Whether any of the n sessions sd-login listed (n < 0: it could not say) is
 * remote; true when logind cannot say. Frees the list. */
static bool list_has_remote(char **sessions, int n)
{
	bool remote = n < 0;

	for (int i = 0; i < n && sessions != NULL && sessions[i] != NULL; i++) {
		if (session_is_remote(sessions[i]))
			remote = true;
	}
	for (int i = 0; sessions != NULL && sessions[i] != NULL; i++)
		free(sessions[i]);
	free(sessions);
	return remote;
}

/* Whether uid has any session, in any state, that is remote. */
static bool uid_has_remote_session(uid_t uid)
{
	char **sessions = NULL;
	int n = sd_uid_get_sessions(uid, 0, &sessions);

	return list_has_remote(sessions, n);
}

/* Whether any session of this machine, of any user, is remote. */
static bool any_remote_session(void)
{
	char **sessions = NULL;
	int n = sd_get_sessions(&sessions);

	return list_has_remote(sessions, n);
}

/* uid's graphical session, if it is active and uid has no remote session
 * (which could be the one meant); NULL when none. The caller frees the id. */
static char *active_display_session(uid_t uid)
{
	char *session = NULL;

	if (uid_has_remote_session(uid) ||
	    sd_uid_get_display(uid, &session) < 0 || session == NULL ||
	    sd_session_is_active(session) <= 0) {
		free(session);
		return NULL;
	}
	return session;
}

/*
 * The session GDM unlocks for uid from outside it: uid's graphical session, as
 * GDM's manager finds the session of a caller in none (a graphical session of
 * the user, "active" or "online", that is one on a seat is taken as the
 * caller's), when no session of the machine is remote. A locked session
 * need not be its seat's active one. NULL when none; the
 * caller frees the id.
 */
static char *reauth_session(uid_t uid)
{
	char *session = NULL;
	char *state = NULL;
	bool open;

	/* Any user may open GDM's reauthentication channel and name any other
	 * user (GDM's temporary channel for a caller in no display of its
	 * own): with anyone logged in from elsewhere, the one asking may be
	 * remote, so nobody is asked here (the user's own sessions among
	 * them). */
	if (any_remote_session() || sd_uid_get_display(uid, &session) < 0 ||
	    session == NULL)
		goto none;
	open = sd_session_get_state(session, &state) >= 0 && state != NULL &&
	       (strcmp(state, "active") == 0 || strcmp(state, "online") == 0);
	free(state);
	if (open)
		return session;
none:
	free(session);
	return NULL;
}

/*
 * The session this process belongs to or, for a process of a user's service
 * manager (GNOME and KDE run terminals and the polkit agent there, outside any
 * session), that user's graphical session, if it is active and the user has no
 * remote session: a user logged in over SSH can leave their SSH session for
 * the service manager (`systemd-run --user --scope sudo`), and nothing then
 * tells that process from one of the desktop's. NULL when none; the caller
 * frees the id.
 */
static char *own_session(void)
{
	char *session = NULL;
	char *unit = NULL;
	uid_t owner;

	if (sd_pid_get_session(0, &session) >= 0 && session != NULL)
		return session;
	free(session);
	session = NULL;
	if (sd_pid_get_user_unit(0, &unit) < 0)
		return NULL;
	free(unit);
	if (sd_pid_get_owner_uid(0, &owner) < 0)
		return NULL;
	return active_display_session(owner);
}

void pl_logind_probe(struct pl_presence *p, struct pl_caller *caller)
{
	char *session = NULL;
	char *seat = NULL;
	char *tty = NULL;
	char *class = NULL;
	unsigned vt = 0;
	int remote;

	p->in_session = false;
	p->session_remote = -1;
	p->session_seat = p->session_vt = p->session_tty = false;
	p->session_greeter = false;
	caller->session[0] = caller->seat[0] = '\0';
	/* How libsystemd itself tells that logind runs. */
	p->logind = access("/run/systemd/seats/", F_OK) == 0;
	if (!p->logind)
		return;
	session = own_session();
	/* GDM unlocking a session it did not start, from outside it: the
	 * session is the user's graphical one, as GDM itself finds it. */
	if (session == NULL && p->gdm_reauth && p->user_known)
		session = reauth_session(p->user_uid);
	if (session == NULL)
		return;
	p->in_session = true;
	remote = sd_session_is_remote(session);
	/* pam_systemd calls a session remote only when PAM_RHOST is not
	 * "localhost": sshd from 127.0.0.1 with UseDNS is "local". */
	if (remote == 0 && session_is_remote(session))
		remote = 1;
	p->session_remote = remote < 0 ? -1 : remote > 0;
	p->session_seat = sd_session_get_seat(session, &seat) >= 0 &&
			  seat != NULL && seat[0] != '\0';
	p->session_vt = sd_session_get_vt(session, &vt) >= 0 && vt > 0;
	p->session_tty = sd_session_get_tty(session, &tty) >= 0 &&
			 tty != NULL && tty[0] != '\0';
	if (sd_session_get_class(session, &class) >= 0 && class != NULL)
		p->session_greeter = strcmp(class, "greeter") == 0;
	free(class);
	copy_field(caller->session, session);
	copy_field(caller->seat, p->session_seat  ? seat
				 : p->session_tty ? tty
						  : NULL);
	free(tty);
	free(seat);
	free(session);
}
