# SPDX-License-Identifier: Apache-2.0
"""The real lock screens and polkit, in the booted container
(conftest's client_system), each inside a real local logind session that
`login` opened on a pty, with the module as pam-auth-update installs it
(one_prompt password_at_login):

- swaylock on a headless sway, typed into with wtype, shot with grim;
- xsecurelock on Xvfb, typed into with xdotool, shot with xwd and convert;
- pkexec with pkttyagent and polkitd, through /etc/pam.d/polkit-1 written as a
  distribution ships it (Debian ships none).

Each one is unlocked with the pattern, unlocked with the password typed once,
and taken through five wrong patterns, each of which ends its attempt (pam_unix
is never asked after one): the pattern is then locked and no longer
unlocks, the password still does, and after `patternlockd reset` the pattern
does again. The password never reaches the daemon: the daemon's journal lines
for the user are exactly the verify results the patterns explain (a password
that was sent would add one) and `patternlockd status` counts only the wrong
patterns.

Screenshots land in build/lockscreens/ (the chosen ones are in docs/screenshots/,
README.md links them)."""
import re

import pytest

from harness.lockscreen_support import (PASSWORD, PATTERN, PROMPT, SHOTS, WRONG_PATTERN, Desktop, locked_after,
                                password_checks_failed, status, verify_lines, verify_results)
from harness.clients import Clients
from harness.common import MODULE_PASSWORD_PROMPT

# A distribution's /etc/pam.d/polkit-1 (Debian's policykit-1 shipped this one
# until polkit 121; the `other` stack applies without it, with the same auth).
POLKIT_PAM = """#%PAM-1.0
@include common-auth
@include common-account
@include common-password
session       required   pam_env.so readenv=1 user_readenv=0
session       required   pam_env.so readenv=1 envfile=/etc/default/locale user_readenv=0
@include common-session-noninteractive
"""
# The daemon's verify results for one client's run: the pattern; the password
# (nothing); five wrong patterns; the pattern while locked (nothing: the module
# learns from STATUS that the user is locked and asks no VERIFY); the password
# (nothing); after the reset, the pattern.
EXPECTED_RESULTS = ["OK"] + [f"FAIL,remaining={n}" for n in (4, 3, 2, 1, 0)] + ["OK"]


@pytest.fixture(scope="module")
def clients(client_system):
    SHOTS.mkdir(parents=True, exist_ok=True)
    return Clients(client_system)


@pytest.mark.parametrize("kind", ["sway", "x11"])
def test_a_lock_screen_takes_the_pattern_the_password_once_and_locks_the_pattern_after_five_wrong(clients, kind):
    s = clients.system
    user = clients.user(f"pl{kind}", PASSWORD, pattern=PATTERN)
    with Desktop(clients, user, kind) as desk:
        # The pattern unlocks.
        desk.lock()
        desk.shot("locked")
        assert desk.attempt(PATTERN) == "unlocked"
        assert verify_results(clients, user) == ["OK"]
        line = verify_lines(clients, user)[-1]
        assert f" service={desk.SERVICE[kind]} " in line and re.search(r" session=\d+ seat=pts/\d+ ", line), line

        # The password, typed once, unlocks, and the daemon never hears of it.
        desk.lock()
        before = verify_lines(clients, user)
        assert desk.attempt(PASSWORD) == "unlocked"
        assert verify_lines(clients, user) == before, "the password reached the daemon"

        # Five wrong patterns lock the pattern.
        desk.lock()
        for n in range(5):
            # Each wrong pattern ends the attempt: no "Password:" follows that
            # swaylock would answer with the same entry, or xsecurelock show.
            assert desk.attempt(WRONG_PATTERN, shot={0: "wrong", 4: "now-locked"}.get(n)) == "refused"
        assert locked_after(clients, user) == 5, status(clients, user)
        assert password_checks_failed(s.ok("journalctl -o cat --no-pager"), user) == 0, \
            "pam_unix was asked after a wrong pattern"
        # Locked: the right pattern no longer unlocks.
        assert desk.attempt(PATTERN, shot="pattern-locked") == "refused"
        if kind == "x11":
            desk.shot("password-only")  # the module asks only for the password, in its own words
        # The password still does, and moves nothing in the daemon.
        before, counted = verify_lines(clients, user), status(clients, user)
        assert desk.attempt(PASSWORD) == "unlocked"
        assert verify_lines(clients, user) == before and status(clients, user) == counted, \
            "the password reached the daemon"

        # After root's reset the pattern unlocks again.
        s.ok(f"patternlockd reset {user}")
        desk.lock()
        assert desk.attempt(PATTERN) == "unlocked"
    assert verify_results(clients, user) == EXPECTED_RESULTS


@pytest.fixture
def polkit_pam(clients):
    s = clients.system
    assert s.run("test -e /etc/pam.d/polkit-1").returncode != 0, "Debian now ships /etc/pam.d/polkit-1: test it"
    s.ok("cat > /etc/pam.d/polkit-1", input=POLKIT_PAM)
    yield
    s.ok("rm /etc/pam.d/polkit-1")


# pkexec through pkttyagent, which answers polkit for this shell: a plain sh (no
# job control, so the agent may read the terminal in the background), the agent
# registered (--notify-fd closes the fifo) before pkexec asks.
PKEXEC = ("sh -c 'f=$(mktemp -u) && mkfifo $f && { pkttyagent --process $$ --notify-fd 3 3>$f & cat $f; rm $f; "
          "pkexec /usr/bin/id -un; echo PKEXEC=$?; kill $!; }'")


def pkexec_steps(answer, user, ok, locked=False):
    """Steps: pkexec at the shell prompt, answered once. While the pattern is
    locked the module says so and asks for the password itself, in its own
    words (MODULE_PASSWORD_PROMPT); a wrong pattern,
    or a pattern typed while locked, is said, and ends the attempt with
    nothing more asked."""
    asked = ([["expect", f"Pattern unlock for {user} is locked after 5 failed attempts"],
              ["expect", re.escape(MODULE_PASSWORD_PROMPT)]]
             if locked else [["expect", re.escape(PROMPT)]])
    end = [["expect", r"root\r?\nPKEXEC=0"]] if ok else [["expect", "AUTHENTICATION FAILED"],
                                                         ["expect", r"PKEXEC=(?!0)\d+"]]
    return [["send", PKEXEC + "\n"], ["expect", f"Authenticating as: {user}"], *asked,
            ["secret", answer + "\n"], *end]  # Clients.session waits for the shell prompt


def test_pkexec_with_pkttyagent_takes_the_pattern_the_password_once_and_locks_the_pattern_after_five_wrong(
        clients, polkit_pam):
    """polkit asks an administrator (group sudo, Debian's rule) for pkexec: the
    user itself. The prompt is one line with the keys in it, and each pkexec is
    one PAM conversation."""
    s = clients.system
    user = clients.user("plpk", PASSWORD, pattern=PATTERN)
    s.ok(f"usermod -aG sudo {user}")
    try:
        pkexec_runs(clients, user)
    finally:
        # An administrator left in group sudo would be the identity polkit
        # offers every later auth_admin check in this container.
        s.ok(f"gpasswd -d {user} sudo >/dev/null")


def pkexec_runs(clients, user):
    s = clients.system
    out = clients.session(user, PASSWORD, [
        pkexec_steps(PATTERN, user, ok=True),
        pkexec_steps(PASSWORD, user, ok=True),
        *[pkexec_steps(WRONG_PATTERN, user, ok=False) for _ in range(5)],
        pkexec_steps(PATTERN, user, ok=False, locked=True),
        pkexec_steps(PASSWORD, user, ok=True, locked=True),
    ], timeout=180)
    assert out.count(PROMPT) == 7 and out.count("\n" + MODULE_PASSWORD_PROMPT) == 2, \
        "one prompt each time, and the module's for the password only while the pattern is locked"
    assert "Error: Wrong pattern" in out, out
    assert "Error: Pattern unlock is locked, so that pattern was not used." in out, out
    # After each wrong pattern the attempt ended, and the right pattern typed
    # while locked was not used: pam_unix checked nothing.
    assert password_checks_failed(s.ok("journalctl -o cat --no-pager"), user) == 0, out
    results = verify_results(clients, user)
    assert results == EXPECTED_RESULTS[:-1], f"the password reached the daemon, or a pattern did not: {results}"
    assert locked_after(clients, user) == 5, status(clients, user)
    lines = verify_lines(clients, user)
    assert all(" service=polkit-1 " in x and f" caller_user={user} " in x for x in lines), lines
    s.ok(f"patternlockd reset {user}")
    clients.session(user, PASSWORD, [pkexec_steps(PATTERN, user, ok=True)])
    assert verify_results(clients, user) == EXPECTED_RESULTS
