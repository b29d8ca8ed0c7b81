# SPDX-License-Identifier: Apache-2.0
"""Pattern unlock next to pam_faillock: the documented faillock-aware stack
(pam/pam.d-example-faillock) loaded through the real libpam with the real
pam_faillock.so, its tally in a private directory."""
import subprocess

import pytest


from harness.pam_support import (ONE_PROMPT, GRID, LOCKED, PAM_AUTH_ERR, PAM_SUCCESS, RIGHT, ROOT, WRONG,
                         documented_stack, on, set_password)


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
    assert r.prompts == ["Password: "]
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
