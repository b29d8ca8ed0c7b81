// SPDX-License-Identifier: Apache-2.0
/* One request, one reply, over the daemon's Unix socket. */
#ifndef PL_EXCHANGE_H
#define PL_EXCHANGE_H

#include <stddef.h>

#include <security/pam_modules.h>

#include "pam_patternlock.h"

/*
 * Checks that cfg->socket_path is a socket owned by root, connects, checks the
 * peer is uid 0, sends request (len bytes, LF included) and parses the reply
 * line, all before timeout_seconds have passed. Returns 0 with *reply filled,
 * or -1 after logging why with pam_syslog; why also goes to errbuf for the
 * debug message.
 */
int pl_client_exchange(pam_handle_t *pamh, const struct pl_config *cfg,
		       const char *request, size_t len, int timeout_seconds,
		       struct pl_reply *reply, char *errbuf, size_t errsize);

#endif /* PL_EXCHANGE_H */
