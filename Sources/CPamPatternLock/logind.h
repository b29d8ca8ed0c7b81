// SPDX-License-Identifier: Apache-2.0
/* What logind knows about this process (sd-login). */
#ifndef PL_LOGIND_H
#define PL_LOGIND_H

#include "pam_patternlock.h"

/*
 * Fills p's logind fields (logind, in_session, session_remote, session_seat,
 * session_vt, session_tty, session_greeter) for the calling process, and
 * caller's session and seat (the seat, or the session's tty when it has none;
 * "" without a session). Leaves p's PAM fields and caller's uid alone.
 */
void pl_logind_probe(struct pl_presence *p, struct pl_caller *caller);

#endif /* PL_LOGIND_H */
