# SPDX-License-Identifier: Apache-2.0
"""Remote logins are not asked for a pattern: sshd (UsePAM, password login)
answers every echo-off prompt with the password its client typed, so a pattern
prompt would send every SSH password to the daemon, count it, and let the
pattern in as an SSH password. The stack is the documented common-auth that
pam-auth-update writes (pam/pam.d-example), loaded through the real libpam."""
import time

import pytest


from harness.pam_support import (ONE_PROMPT, GRID, PAM_AUTH_ERR, PAM_AUTHINFO_UNAVAIL, PAM_SUCCESS, RIGHT,
                         documented_stack, on, set_password)


PASSWORD = "correct horse battery"
REMOTE = "203.0.113.7"  # TEST-NET-3: never a real peer; only a string in PAM_RHOST


@pytest.fixture
def account(live, user):
    """A user with a password and the pattern RIGHT."""
    set_password(user, PASSWORD)
    live.enroll(user, RIGHT)
    return user


def stack(daemon, *options):
    return [line.replace("{module}", " ".join(["{module}", on(daemon), *options]))
            for line in documented_stack()]


def daemon_heard_of(daemon, user):
    """Log lines of the daemon's requests about `user` (every request is logged)."""
    return [line for line in daemon.read_log().splitlines() if f"user={user}" in line]


def test_an_ssh_password_login_is_never_asked_for_a_pattern(pam, live, account):
    before = daemon_heard_of(live, account)
    r = pam.authenticate(account, PASSWORD, stack=stack(live), rhost=REMOTE, tty="ssh",
                         repeat=True)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == ["Password: "], r
    assert r.infos == [] and r.errors == []
    assert daemon_heard_of(live, account) == before


def test_the_pattern_typed_as_an_ssh_password_does_not_log_in(pam, live, account):
    before = daemon_heard_of(live, account)
    r = pam.authenticate(account, RIGHT, stack=stack(live), rhost=REMOTE, repeat=True)
    assert r.code == PAM_AUTH_ERR, r
    assert r.prompts == ["Password: "], r
    assert daemon_heard_of(live, account) == before


def test_digit_passwords_over_ssh_never_count_against_the_pattern(pam, live, account):
    # A password of distinct digits is a valid pattern: asked, it would be counted
    # as a wrong pattern and lock the user after five SSH logins.
    for _ in range(6):
        r = pam.authenticate(account, "9876", stack=stack(live), rhost=REMOTE, repeat=True)
        assert r.code == PAM_AUTH_ERR, r
    status = live.request(f"STATUS user={account}")
    assert " failures=0 " in status and " locked=0 " in status, status


@pytest.mark.parametrize("rhost, tty", [
    (REMOTE, None), ("client.example.org", "/dev/pts/3"), ("10.1.2.3", None),
    ("127.0.0.1", "ssh"), ("", "ssh"),
], ids=["address", "name", "private-address", "ssh-from-localhost", "ssh-tty-only"])
def test_no_request_reaches_the_daemon_from_a_remote_login(pam, fake, rhost, tty):
    daemon = fake(lambda line: b"OK\n")
    r = pam.authenticate("alice", RIGHT, args=[on(daemon)], rhost=rhost, tty=tty, repeat=True)
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.events == []
    assert daemon.connections == 0 and daemon.lines == []


@pytest.mark.parametrize("rhost", [None, "", "localhost", "127.0.0.1", "::1", "LOCALHOST", "@hostname"])
def test_a_local_login_is_asked_as_before(pam, live, account, rhost):
    if rhost == "@hostname":
        import socket
        rhost = socket.gethostname()  # what sudo puts in PAM_RHOST
    r = pam.authenticate(account, RIGHT, stack=stack(live), rhost=rhost, tty="/dev/pts/0")
    assert r.code == PAM_SUCCESS, r
    assert r.events == [("TEXT_INFO", GRID.format(user=account)), ("PROMPT_ECHO_OFF", ONE_PROMPT)]


def test_allow_remote_asks_remote_logins_and_then_an_ssh_password_reaches_the_daemon(
        pam, live, account):
    # The documented consequence of allow_remote: sshd answers the pattern prompt
    # with the SSH password, so the pattern itself logs in over SSH.
    r = pam.authenticate(account, RIGHT, stack=stack(live, "allow_remote"), rhost=REMOTE,
                         tty="ssh", repeat=True)
    assert r.code == PAM_SUCCESS, r
    # The daemon answers OK before it writes the cleared count, and logs after.
    deadline = time.monotonic() + 10
    while not any("verify" in line and "result=OK" in line for line in daemon_heard_of(live, account)):
        assert time.monotonic() < deadline, daemon_heard_of(live, account)
        time.sleep(0.05)


def test_allow_remote_counts_an_ssh_password_as_a_wrong_pattern(pam, live, account):
    r = pam.authenticate(account, "9876", stack=stack(live, "allow_remote"), rhost=REMOTE,
                         repeat=True)
    assert r.code == PAM_AUTH_ERR, r
    assert " failures=1 " in live.request(f"STATUS user={account}")
