# SPDX-License-Identifier: Apache-2.0
"""Through the real libpam with the shipped module: one
prompt for the pattern or the password (one_prompt, with the real pam_unix and
try_first_pass as pam/pam.d-example writes it), the grid chosen for the client
(grid=auto), and password_at_login where logind does not run. The logind side
of password_at_login is tested in the booted container (test_presence.py)."""
import pytest


from harness.pam_support import (COMPACT_PROMPT, GRID, LOCKED, NOW_LOCKED, ONE_COMPACT_PROMPT, ONE_PROMPT, PAM_AUTH_ERR,
                         PAM_AUTHINFO_UNAVAIL, PAM_SUCCESS, PASSWORD_PROMPT, PROMPT, RIGHT, UNUSED_LOCKED, WRONG,
                         by_verb, documented_stack, failures, on, set_password, wrong)


PASSWORD = "tr0ub4dor&3"
# A password that looks like a pattern: digits 1-9, none twice, 4 or more.
DIGIT_PASSWORD = "14789"
UNIX_PROMPT = "Password: "


def example(daemon):
    """The documented common-auth (one_prompt password_at_login, then pam_unix
    nullok try_first_pass), on this daemon's socket."""
    return [line.replace("{module}", "{module} " + on(daemon)) for line in documented_stack()]


@pytest.fixture
def account(live, user):
    set_password(user, PASSWORD)
    live.enroll(user, RIGHT)
    return user


def test_the_documented_stack_uses_one_prompt_and_try_first_pass():
    lines = documented_stack()
    module = next(line for line in lines if "{module}" in line)
    unix = next(line for line in lines if "pam_unix.so" in line)
    assert "one_prompt" in module.split() and "password_at_login" in module.split()
    assert "try_first_pass" in unix.split()
    # A refused pattern ends the attempt; anything else goes on to the password.
    assert module.split()[1] == "[success=2" and module.split()[2:4] == ["auth_err=die", "default=ignore]"], module


# ---- one prompt ------------------------------------------------------------------

def test_the_pattern_unlocks_at_the_one_prompt(pam, live, account):
    r = pam.authenticate(account, RIGHT, stack=example(live))
    assert r.code == PAM_SUCCESS, r
    assert r.events == [("TEXT_INFO", GRID.format(user=account)), ("PROMPT_ECHO_OFF", ONE_PROMPT)]
    assert failures(live, account) == 0


@pytest.mark.parametrize("repeat", [True, False], ids=["same-text-client", "prompt-by-prompt-client"])
def test_the_password_unlocks_with_one_answer(pam, live, account, repeat):
    """swaylock answers every prompt with the same text (repeat); a terminal
    answers each on its own, and here has one answer only: pam_unix takes the
    entry (try_first_pass) and asks nothing."""
    r = pam.authenticate(account, PASSWORD, stack=example(live), repeat=repeat)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT]
    assert r.errors == []
    assert failures(live, account) == 0


def test_a_wrong_password_fails_without_a_second_prompt_and_is_not_counted(pam, live, account):
    r = pam.authenticate(account, "not the password", stack=example(live))
    assert r.code != PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT]
    assert r.errors == []
    assert failures(live, account) == 0


@pytest.mark.parametrize("password", [PASSWORD, "12350", "1123", "123", "12a5", "1235 ", "\u0661\u0662\u0663\u0665",
                                      "1" * 70])
def test_what_is_not_a_pattern_never_reaches_the_daemon(pam, fake, user, password):
    """Every byte the daemon received: the STATUS, never the entry."""
    set_password(user, password)
    d = fake(by_verb(user=user))
    r = pam.authenticate(user, password, stack=example(d))
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT]
    assert d.verbs() == ["STATUS"]
    sent = b"".join(d.received)
    assert password.encode() not in sent
    assert sent.startswith(b"STATUS ") and sent.count(b"\n") == 1


def test_a_digit_password_shaped_like_a_pattern_unlocks_after_enter_on_the_empty_prompt(pam, live, account):
    """The documented caveat: typed at the one prompt it is sent as a pattern,
    counted as a wrong one, and ends the attempt. The way out: Enter on the
    empty prompt, then the password at pam_unix's "Password:"."""
    set_password(account, DIGIT_PASSWORD)
    r = pam.authenticate(account, DIGIT_PASSWORD, stack=example(live), repeat=True)
    assert r.code == PAM_AUTH_ERR, r
    assert r.prompts == [ONE_PROMPT]
    assert r.errors == [wrong(4)]
    assert failures(live, account) == 1
    r = pam.authenticate(account, "", DIGIT_PASSWORD, stack=example(live))
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT, UNIX_PROMPT]
    assert failures(live, account) == 1


def lock_with(pam, live, account, entry, stack):
    for n in range(4, -1, -1):
        r = pam.authenticate(account, entry, stack=stack, repeat=True)
        assert r.code == PAM_AUTH_ERR and r.prompts == [ONE_PROMPT], r
    assert r.errors == [NOW_LOCKED.format(user=account)]


def test_a_digit_password_shaped_like_a_pattern_never_reaches_pam_unix_from_a_one_answer_client(
        pam, live, account, syslog):
    """A client that answers every prompt with the same text (swaylock, phosh)
    cannot send an empty entry and then the password. Once the pattern is
    locked the module still reads that one answer ("Password (not the pattern): "), and an entry
    shaped like a pattern is not used: it may be the pattern, and pam_unix and
    pam_faillock are not to see patterns. The sentence says the way in."""
    set_password(account, DIGIT_PASSWORD)
    lock_with(pam, live, account, DIGIT_PASSWORD, example(live))
    r = pam.authenticate(account, DIGIT_PASSWORD, stack=example(live), repeat=True, syslog=syslog)
    assert r.code == PAM_AUTH_ERR, r
    assert r.prompts == [PASSWORD_PROMPT]
    assert r.errors == [LOCKED.format(user=account), UNUSED_LOCKED]
    assert not [m for m in syslog.messages() if "pam_unix" in m], syslog.messages()
    # A client that answers prompt by prompt: Enter, then the password.
    r = pam.authenticate(account, "", DIGIT_PASSWORD, stack=example(live))
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [PASSWORD_PROMPT, UNIX_PROMPT]


def test_digit_passwords_lets_a_one_answer_client_use_a_digit_password_once_the_pattern_is_locked(
        pam, live, account):
    """digit_passwords=SERVICE, for a one-field client such as phosh: there an
    entry of dots that the pattern cannot take (locked) goes on as the password."""
    set_password(account, DIGIT_PASSWORD)
    stack = [line.replace("one_prompt", "one_prompt digit_passwords=pltest") for line in example(live)]
    lock_with(pam, live, account, DIGIT_PASSWORD, stack)
    r = pam.authenticate(account, DIGIT_PASSWORD, stack=stack, repeat=True)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [PASSWORD_PROMPT]
    assert r.errors == [LOCKED.format(user=account)]
    # Another service than the one listed keeps the rule.
    other = [line.replace("one_prompt", "one_prompt digit_passwords=phosh") for line in example(live)]
    r = pam.authenticate(account, DIGIT_PASSWORD, stack=other, repeat=True)
    assert r.code == PAM_AUTH_ERR and r.errors[-1] == UNUSED_LOCKED, r


@pytest.mark.parametrize("repeat", [True, False], ids=["same-text-client", "prompt-by-prompt-client"])
def test_a_wrong_pattern_ends_the_attempt_and_pam_unix_is_never_asked(pam, live, account, syslog, repeat):
    """A pattern that does not unlock is counted, said, and ends the whole
    pam_authenticate (auth_err=die): no "Password:" that a client would answer
    with the pattern still in its field, and nothing for pam_unix to check
    (it logs every failed check; here it logs nothing)."""
    r = pam.authenticate(account, WRONG, PASSWORD, stack=example(live), repeat=repeat, syslog=syslog)
    assert r.code == PAM_AUTH_ERR, r
    assert r.prompts == [ONE_PROMPT]
    assert r.errors == [wrong(4)]
    assert failures(live, account) == 1
    assert not [m for m in syslog.messages() if "pam_unix" in m], syslog.messages()
    # The next attempt starts again at the one prompt, and the password unlocks.
    r = pam.authenticate(account, PASSWORD, stack=example(live), repeat=repeat)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT]
    assert failures(live, account) == 1


def test_the_fifth_wrong_pattern_ends_the_attempt_and_the_next_one_asks_the_password(pam, live, account):
    for n in range(4, 0, -1):
        r = pam.authenticate(account, WRONG, stack=example(live))
        assert r.code == PAM_AUTH_ERR and r.errors == [wrong(n)], r
    r = pam.authenticate(account, WRONG, PASSWORD, stack=example(live))
    assert r.code == PAM_AUTH_ERR, r
    assert r.prompts == [ONE_PROMPT]
    assert r.errors == [NOW_LOCKED.format(user=account)]
    r = pam.authenticate(account, PASSWORD, stack=example(live))
    assert r.code == PAM_SUCCESS, r
    # Locked: the module asks for the password in its own words and hands it on.
    assert r.prompts == [PASSWORD_PROMPT]


def test_an_empty_entry_leaves_the_password_to_pam_unix(pam, live, account):
    r = pam.authenticate(account, "", PASSWORD, stack=example(live))
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [ONE_PROMPT, UNIX_PROMPT]
    assert failures(live, account) == 0


@pytest.mark.parametrize("repeat", [True, False], ids=["same-text-client", "prompt-by-prompt-client"])
def test_a_locked_user_still_unlocks_with_the_password(pam, live, account, repeat):
    for _ in range(5):
        pam.authenticate(account, WRONG, args=[on(live)])
    assert failures(live, account) == 5
    r = pam.authenticate(account, PASSWORD, stack=example(live), repeat=repeat)
    assert r.code == PAM_SUCCESS, r
    # Not asked for a pattern at all: the lock is said, the module asks for the
    # password in its own words (not pam_unix's) and hands it on.
    assert r.prompts == [PASSWORD_PROMPT]
    assert r.errors == [LOCKED.format(user=account)]


def test_a_user_without_a_pattern_is_asked_the_password_only(pam, live, user):
    set_password(user, PASSWORD)
    r = pam.authenticate(user, PASSWORD, stack=example(live))
    assert r.code == PAM_SUCCESS, r
    assert r.events == [("PROMPT_ECHO_OFF", UNIX_PROMPT)]


def test_a_token_set_before_the_module_is_left_alone_and_the_misorder_is_logged(pam, fake, user, syslog):
    """PAM_AUTHTOK already set (pam_unix asked above the module): nothing asked,
    nothing sent, the token goes on. That module had the one field first (with
    pam_krb5 there, a pattern typed into it would go to Kerberos), so the
    administrator is told in the log to move the pattern line up."""
    set_password(user, PASSWORD)
    d = fake(by_verb(user=user))
    stack = ["auth optional pam_unix.so nullok",
             f"auth [success=done default=ignore] {{module}} {on(d)} one_prompt",
             "auth required pam_unix.so nullok use_first_pass"]
    r = pam.authenticate(user, PASSWORD, stack=stack, syslog=syslog)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [UNIX_PROMPT]
    assert d.connections == 0
    assert [m for m in syslog.messages() if "PAM_AUTHTOK was already set by a module above pam_patternlock" in m]


def test_without_one_prompt_nothing_is_handed_on(pam, live, account):
    """The classic mode, with pam_unix try_first_pass: a password typed at the
    pattern prompt is refused as no pattern (not counted, not handed on) and
    ends the attempt; Enter at the pattern prompt, then the password, unlocks."""
    stack = [line.replace(" one_prompt", "") for line in example(live)]
    r = pam.authenticate(account, PASSWORD, PASSWORD, stack=stack)
    assert r.code == PAM_AUTH_ERR, r
    assert r.prompts == [PROMPT]
    assert failures(live, account) == 0
    r = pam.authenticate(account, "", PASSWORD, stack=stack)
    assert r.code == PAM_SUCCESS, r
    assert r.prompts == [PROMPT, UNIX_PROMPT]


# ---- the grid for the client ------------------------------------------------------

@pytest.mark.parametrize("tty,full", [("/dev/pts/3", True), ("/dev/tty1", True), ("pts/0", True), (":0", False),
                                      (":5", False), (None, False)])
def test_grid_auto_full_on_a_terminal_compact_elsewhere(pam, fake, tty, full):
    d = fake(by_verb())
    for one, classic_prompt, compact_prompt in ((True, ONE_PROMPT, ONE_COMPACT_PROMPT), (False, PROMPT, COMPACT_PROMPT)):
        args = [on(d)] + (["one_prompt"] if one else [])
        r = pam.authenticate("alice", RIGHT, args=args, tty=tty, grid=None)
        assert r.code == PAM_SUCCESS, r
        if full:
            assert r.events == [("TEXT_INFO", GRID.format(user="alice")), ("PROMPT_ECHO_OFF", classic_prompt)]
        else:
            assert r.events == [("PROMPT_ECHO_OFF", compact_prompt)]


@pytest.mark.parametrize("grid,tty,events", [
    ("full", ":5", [("TEXT_INFO", GRID.format(user="alice")), ("PROMPT_ECHO_OFF", ONE_PROMPT)]),
    ("compact", "/dev/pts/1", [("PROMPT_ECHO_OFF", ONE_COMPACT_PROMPT)]),
    ("none", "/dev/pts/1", [("PROMPT_ECHO_OFF", ONE_PROMPT)]),
    ("auto", "/dev/pts/1", [("TEXT_INFO", GRID.format(user="alice")), ("PROMPT_ECHO_OFF", ONE_PROMPT)]),
])
def test_grid_option_overrides(pam, fake, grid, tty, events):
    d = fake(by_verb())
    r = pam.authenticate("alice", RIGHT, args=[on(d), "one_prompt"], tty=tty, grid=grid)
    assert r.code == PAM_SUCCESS, r
    assert r.events == events


def test_nogrid_is_grid_none(pam, fake):
    d = fake(by_verb())
    r = pam.authenticate("alice", RIGHT, args=[on(d), "nogrid", "one_prompt"], tty="/dev/pts/1", grid=None)
    assert r.events == [("PROMPT_ECHO_OFF", ONE_PROMPT)]


def test_compact_numpad_and_silent(pam, fake):
    d = fake(by_verb())
    r = pam.authenticate("alice", "74123", args=[on(d), "one_prompt", "layout=numpad"], grid="compact")
    assert r.events == [("PROMPT_ECHO_OFF", "Pattern [789 456 123] or password: ")]
    assert d.lines[-1].startswith("VERIFY user=alice pattern=14789 ")
    # PAM_SILENT (sudo) on a terminal: the full grid goes into the prompt.
    r = pam.authenticate("alice", RIGHT, args=[on(d), "one_prompt"], tty="/dev/pts/2", silent=True, grid=None)
    assert r.events == [("PROMPT_ECHO_OFF", GRID.format(user="alice") + "\n" + ONE_PROMPT)]


# ---- password_at_login without logind ---------------------------------------------

@pytest.mark.parametrize("service,asked", [("login", False), ("lightdm", False), ("sudo", True), ("su", True),
                                           ("swaylock", True)])
def test_password_at_login_without_logind(pam, fake, service, asked):
    """Without logind a listed service that is also a login service is a new
    login: the password, for the keyring; the others get the pattern."""
    pam.service = service
    d = fake(by_verb())
    r = pam.authenticate("alice", RIGHT, args=[on(d), "one_prompt", "password_at_login"], tty="/dev/tty1")
    if asked:
        assert r.code == PAM_SUCCESS, r
        assert r.prompts == [ONE_PROMPT]
    else:
        assert r.code == PAM_AUTHINFO_UNAVAIL, r
        assert r.events == []
        assert d.connections == 0
    # Without the option a login is asked as before.
    r = pam.authenticate("alice", RIGHT, args=[on(d), "one_prompt"], tty="/dev/tty1")
    assert r.code == PAM_SUCCESS, r
