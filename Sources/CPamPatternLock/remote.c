// SPDX-License-Identifier: Apache-2.0
/* Is this a remote login? Pattern unlock is for someone at the machine. */
#include <string.h>
#include <strings.h>

#include "pam_patternlock.h"

bool pl_session_is_remote(const char *rhost, const char *tty,
			  const char *hostname)
{
	/* The names a local program puts in PAM_RHOST: none at all, the
	 * loopback names, or this machine's own name (sudo sets PAM_RHOST to
	 * the host it runs on). */
	static const char *const local[] = {
		"localhost", "localhost.localdomain", "127.0.0.1",
		"::1",	     "::ffff:127.0.0.1",
	};

	/* sshd sets PAM_TTY to "ssh" while it authenticates, whatever the
	 * client's address: that also covers an SSH login from this host. */
	if (tty != NULL && strcmp(tty, "ssh") == 0)
		return true;
	if (rhost == NULL || rhost[0] == '\0')
		return false;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++) {
		if (strcasecmp(rhost, local[i]) == 0)
			return false;
	}
	if (hostname != NULL && hostname[0] != '\0' &&
	    strcasecmp(rhost, hostname) == 0)
		return false;
	return true;
}
