# SPDX-License-Identifier: Apache-2.0
"""Pattern unlock next to pam_faillock: the documented faillock-aware stack
(pam/pam.d-example-faillock) loaded through the real libpam with the real
pam_faillock.so, its tally in a private directory."""
import subprocess

import pytest


from harness.pam_support import (ONE_PROMPT, GRID, LOCKED, PAM_AUTH_ERR, PAM_SUCCESS, PASSWORD_PROMPT, RIGHT, ROOT,
                         UNUSED_LOCKED, UNUSED_UNAVAILABLE, WRONG, by_verb, documented_stack, on, set_password,
                         status_line)


PASSWORD = "tr0ub4dor&3"
EXAMPLE = ROOT / "pam" / "pam.d-example-faillock"


@pytest.fixture
def tally(tmp_path):
    d = tmp_path / "faillock"
    d.mkdir()
    return d


@pytest.fixture
def account(live, user):
    set_password(user, PASSWORD)
    live.enroll(user, RIGHT)
    return user


def faillock_stack(daemon, tally, lines):
    """The lines with the test daemon's socket and a private faillock tally (3 wrong
    passwords lock the account)."""
    out = []
    for line in lines:
        line = line.replace("{module}", "{module} " + on(daemon))
        if "pam_faillock.so" in line:
            line += f" dir={tally} deny=3 unlock_time=600"
        out.append(line)
    return out


def documented(daemon, tally):
    return faillock_stack(daemon, tally, documented_stack(EXAMPLE))


def faillock_count(tally, user):
    r = subprocess.run(["faillock", "--dir", str(tally), "--user", user],
                       capture_output=True, text=True, check=True)
    return sum(1 for line in r.stdout.splitlines()[2:] if line.strip())


def lock_with_passwords(pam, user, stack):
    for _ in range(3):
        # No pattern (Enter), then a wrong password: faillock counts it.
        r = pam.authenticate(user, "", "wrong password", stack=stack)
        assert r.code != PAM_SUCCESS, r


def test_the_example_puts_the_pattern_after_faillock_preauth():
    lines = documented_stack(EXAMPLE)
    preauth = next(i for i, l in enumerate(lines) if "pam_faillock.so preauth" in l)
    pattern = next(i for i, l in enumerate(lines) if "{module}" in l)
    assert preauth < pattern


def test_a_user_locked_by_faillock_is_not_let_in_by_the_pattern(pam, live, account, tally):
    stack = documented(live, tally)
    lock_with_passwords(pam, account, stack)
    assert faillock_count(tally, account) == 3
    r = pam.authenticate(account, RIGHT, PASSWORD, stack=stack)
    assert r.code != PAM_SUCCESS, r
    assert ONE_PROMPT not in r.prompts, "faillock refuses before the pattern is asked"
    assert " failures=0 " in live.request(f"STATUS user={account}")


def test_above_preauth_the_pattern_would_let_a_faillock_locked_user_in(pam, live, account, tally):
    # Why the order matters: the naive stack (pattern first, as the plain example
    # and the pam-auth-update profile put it, then faillock's recipe).
    rest = [line for line in documented_stack(EXAMPLE) if "{module}" not in line]
    stack = faillock_stack(live, tally, ["auth [success=done default=ignore] {module}"] + rest)
    lock_with_passwords(pam, account, stack)
    r = pam.authenticate(account, RIGHT, stack=stack)
    assert r.code == PAM_SUCCESS, r


def test_a_wrong_pattern_ends_the_attempt_and_faillock_counts_nothing(pam, live, account, tally):
    """The pattern line's auth_err=die: a refused pattern fails the attempt
    before pam_unix and faillock's authfail; the daemon counts it, faillock
    does not, and "Password:" is not asked."""
    stack = documented(live, tally)
    for _ in range(3):  # faillock's deny=3 would lock the account were they counted
        r = pam.authenticate(account, WRONG, PASSWORD, stack=stack)
        assert r.code == PAM_AUTH_ERR, r
        assert r.prompts == [ONE_PROMPT]
    assert faillock_count(tally, account) == 0
    assert " failures=3 " in live.request(f"STATUS user={account}")
    r = pam.authenticate(account, PASSWORD, stack=stack)
    assert r.code == PAM_SUCCESS, r


def test_the_password_still_works_when_the_pattern_is_locked(pam, live, account, tally):
    stack = documented(live, tally)
    for _ in range(5):
        r = pam.authenticate(account, WRONG, PASSWORD, stack=stack)
        assert r.code == PAM_AUTH_ERR, r
    assert " locked=1 " in live.request(f"STATUS user={account}")
    r = pam.authenticate(account, PASSWORD, stack=stack)
    assert r.code == PAM_SUCCESS, r
    assert r.errors == [LOCKED.format(user=account)]
    assert r.prompts == [PASSWORD_PROMPT]
    assert faillock_count(tally, account) == 0, "wrong patterns are not faillock's to count"


def test_the_right_pattern_clears_faillocks_count(pam, live, account, tally):
    stack = documented(live, tally)
    for _ in range(2):
        assert pam.authenticate(account, "", "wrong password", stack=stack).code != PAM_SUCCESS
    assert faillock_count(tally, account) == 2
    r = pam.authenticate(account, RIGHT, stack=stack)
    assert r.code == PAM_SUCCESS, r
    assert r.events[:2] == [("TEXT_INFO", GRID.format(user=account)), ("PROMPT_ECHO_OFF", ONE_PROMPT)]
    assert faillock_count(tally, account) == 0


def test_a_password_at_the_one_prompt_is_counted_by_faillock_once_and_a_right_one_clears(pam, live, account, tally):
    """one_prompt: a wrong password typed at "Pattern or password:"
    reaches pam_unix as its token (try_first_pass) and faillock's authfail
    once, never the daemon; the right one unlocks with that one answer and
    clears faillock's count."""
    stack = documented(live, tally)
    r = pam.authenticate(account, "not my password", stack=stack)
    assert r.code != PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT], "pam_unix used the entry and asked nothing more"
    assert faillock_count(tally, account) == 1
    assert " failures=0 " in live.request(f"STATUS user={account}")
    r = pam.authenticate(account, PASSWORD, stack=stack)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT]
    assert faillock_count(tally, account) == 0
    assert " failures=0 " in live.request(f"STATUS user={account}")


# ---- a pattern never reaches pam_unix or faillock, whatever the daemon says ------
#
# A client that answers every prompt with its one field (swaylock, phosh, KDE's
# Breeze) would give pam_unix's "Password:" the pattern the moment the module
# let the stack go on after reading one: pam_faillock would count it, and with
# deny=3 three tries of the right pattern would lock the account. The
# conversation here answers every prompt with the same text (repeat=True).

class NoDaemon:
    """A socket path where nothing listens."""

    def __init__(self, path):
        self.socket = str(path)


def with_timeout(stack):
    """timeout=1: a daemon that never answers is given up on in 1 s (STATUS)
    or 11 s (VERIFY, the hash's allowance) instead of 3 and 13."""
    return [line.replace("{module} ", "{module} timeout=1 ", 1) for line in stack]


VERIFY_WITHOUT_VERDICT = {
    "busy": b"BUSY\n",
    "error": b"ERROR message=store_failed\n",
    "denied": b"DENIED\n",
    "not-enrolled": b"NOT_ENROLLED\n",
    "malformed": b"OKAY\n",
    "invalid-empty": b"INVALID reason=empty\n",
    "closed": b"<close>",
    "no-answer": None,
}


@pytest.mark.parametrize("verify", VERIFY_WITHOUT_VERDICT.values(), ids=VERIFY_WITHOUT_VERDICT.keys())
def test_a_pattern_the_daemon_gives_no_verdict_on_ends_the_attempt_and_faillock_counts_nothing(
        pam, fake, user, tally, syslog, verify):
    set_password(user, PASSWORD)
    d = fake(by_verb(user=user, verify=verify))
    stack = with_timeout(documented(d, tally))
    logged = []
    for _ in range(3):  # deny=3: were they counted, the account would be locked now
        r = pam.authenticate(user, RIGHT, stack=stack, repeat=True, syslog=syslog)
        logged += syslog.messages()  # read each time: a full queue would block syslog(3)
        assert r.code == PAM_AUTH_ERR, r
        assert r.prompts == [ONE_PROMPT], "nothing asked after the pattern"
        assert r.errors == [UNUSED_UNAVAILABLE]
    assert faillock_count(tally, user) == 0
    assert not [m for m in logged if "pam_unix" in m], logged
    r = pam.authenticate(user, PASSWORD, stack=stack, repeat=True)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT]


STATUS_UNUSABLE = {
    "locked": (status_line("{user}", locked=1, failures=5), UNUSED_LOCKED),
    "locked-reply": (b"LOCKED retry_after=0\n", UNUSED_LOCKED),
    "busy": (b"BUSY\n", UNUSED_UNAVAILABLE),
    "error": (b"ERROR message=store_failed\n", UNUSED_UNAVAILABLE),
    "denied": (b"DENIED\n", UNUSED_UNAVAILABLE),
    "malformed": (b"STATUS user=x\n", UNUSED_UNAVAILABLE),
    "closed": (b"<close>", UNUSED_UNAVAILABLE),
    "no-answer": (None, UNUSED_UNAVAILABLE),
    "no-socket": ("<none>", UNUSED_UNAVAILABLE),
    "nothing-listens": ("<stale>", UNUSED_UNAVAILABLE),
}


@pytest.mark.parametrize("status, sentence", STATUS_UNUSABLE.values(), ids=STATUS_UNUSABLE.keys())
def test_while_the_pattern_cannot_be_used_a_one_answer_client_gets_in_with_the_password_only(
        pam, fake, user, tally, tmp_path, syslog, status, sentence):
    """Locked, or no usable answer to STATUS: the module still reads the one
    field, as "Password (not the pattern): ". The pattern typed there is not used and ends the
    attempt; the password goes on to pam_unix and unlocks."""
    set_password(user, PASSWORD)
    if status == "<none>":
        d = NoDaemon(tmp_path / "no-such-socket")
    else:
        answer = status.replace(b"{user}", user.encode()) if isinstance(status, bytes) else status
        d = fake(lambda line: answer if line.startswith("STATUS ") else b"ERROR message=unexpected\n")
        if status == "<stale>":
            d.stop_listening()
    stack = with_timeout(documented(d, tally))
    logged = []
    for _ in range(3):
        r = pam.authenticate(user, RIGHT, stack=stack, repeat=True, syslog=syslog)
        logged += syslog.messages()
        assert r.code == PAM_AUTH_ERR, r
        assert r.prompts == [PASSWORD_PROMPT]
        assert r.errors[-1] == sentence
    assert faillock_count(tally, user) == 0
    assert not [m for m in logged if "pam_unix" in m], logged
    if not isinstance(d, NoDaemon):
        assert "VERIFY" not in d.verbs(), "nothing is sent while the pattern cannot be used"
    r = pam.authenticate(user, PASSWORD, stack=stack, repeat=True)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [PASSWORD_PROMPT]


def test_a_pattern_locked_by_someone_else_cannot_get_the_account_locked_through_a_one_answer_client(
        pam, live, account, tally):
    """The chain the review found: another local user locks my pattern with
    five wrong tries (su me); I type my right pattern three times at a locker
    that answers every prompt with its field. None of it reaches faillock
    (deny=3), and my password still unlocks."""
    stack = documented(live, tally)
    for _ in range(5):
        pam.authenticate(account, WRONG, stack=stack)
    assert " locked=1 " in live.request(f"STATUS user={account}")
    for _ in range(3):
        r = pam.authenticate(account, RIGHT, stack=stack, repeat=True)
        assert r.code == PAM_AUTH_ERR, r
        assert r.errors == [LOCKED.format(user=account), UNUSED_LOCKED]
    assert faillock_count(tally, account) == 0
    r = pam.authenticate(account, PASSWORD, stack=stack, repeat=True)
    assert r.code == PAM_SUCCESS, r
    assert faillock_count(tally, account) == 0
