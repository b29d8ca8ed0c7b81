# SPDX-License-Identifier: Apache-2.0
"""layout=numpad and `--layout numpad`: on a keyboard's numeric keypad 7 8 9 is
the top row, and the same drawn shape is the same pattern as on a phone. Through
the real libpam (the harness and pamtester with a real /etc/pam.d service), the
real daemon and the real CLI."""



from harness.pam_support import (module_line, pamtester, GRID, PAM_AUTH_ERR, PAM_SUCCESS, RIGHT, failures, on, wrong)


# RIGHT is 1235 on the phone layout: the top row and the centre. On a numeric
# keypad the top row is 7 8 9, so the same shape is typed 7895.
NUMPAD_RIGHT = RIGHT.translate(str.maketrans("123789", "789123"))
NUMPAD_GRID = ("Pattern unlock for {user}: type the dots in order.\n"
               "  7 8 9\n  4 5 6\n  1 2 3")


def test_the_same_shape_on_the_numeric_keypad_unlocks_the_phone_pattern(pam, live, enrolled):
    assert NUMPAD_RIGHT == "7895"
    r = pam.authenticate(enrolled, NUMPAD_RIGHT, args=[on(live), "layout=numpad"])
    assert r.code == PAM_SUCCESS, r
    # The prompt names the layout too: a client that draws the grid instead
    # of showing the picture (a lock screen) answers in the numpad's keys.
    assert r.events == [("TEXT_INFO", NUMPAD_GRID.format(user=enrolled)),
                        ("PROMPT_ECHO_OFF", "Pattern on the numeric keypad (Enter to skip): ")]


def test_with_layout_numpad_the_phone_digits_are_another_shape(pam, live, enrolled):
    # 1235 on a numpad is the bottom row and the centre: a wrong pattern, counted.
    r = pam.authenticate(enrolled, RIGHT, args=[on(live), "layout=numpad"])
    assert r.code == PAM_AUTH_ERR, r
    assert r.errors == [wrong(4)]
    assert failures(live, enrolled) == 1


def test_layout_phone_and_an_unknown_layout_keep_the_phone_keys(pam, live, enrolled):
    for option in ("layout=phone", "layout=qwerty"):
        r = pam.authenticate(enrolled, RIGHT, args=[on(live), option])
        assert r.code == PAM_SUCCESS, (option, r)
        assert r.infos == [GRID.format(user=enrolled)]


def test_pamtester_unlocks_with_the_numpad_shape(pam_service, pam_module, live, enrolled):
    service = pam_service([module_line("required", pam_module, live.socket, "layout=numpad")])
    ok = pamtester(service, enrolled, NUMPAD_RIGHT + "\n")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "successfully authenticated" in ok.stdout + ok.stderr
    # pamtester sets no PAM_TTY: grid=auto shows the compact form, the keys
    # in the prompt, the numpad's way up.
    assert "Pattern [789 456 123]: " in ok.stdout + ok.stderr
    assert NUMPAD_GRID.format(user=enrolled) not in ok.stdout + ok.stderr
    bad = pamtester(service, enrolled, RIGHT + "\n")
    assert bad.returncode != 0 and wrong(4) in bad.stderr, bad.stdout + bad.stderr


# ---- the CLI ---------------------------------------------------------------------

def test_enroll_on_the_numpad_stores_the_same_pattern_as_the_phone(daemon, make_users):
    user, = make_users()
    # An L down the left column and along the bottom: 14789 on a phone, 74123 on a numpad.
    r = daemon.cli("enroll", "--layout", "numpad", user, input="74123\n74123\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert daemon.request(f"VERIFY user={user} pattern=14789") == "OK"
    r = daemon.cli("verify", "--layout", "numpad", user, input="74123\n")
    assert r.returncode == 0 and "Pattern accepted." in r.stdout, r.stdout + r.stderr
    r = daemon.cli("verify", user, input="74123\n")
    assert r.returncode == 1, r.stdout + r.stderr


def test_an_unknown_layout_is_refused_and_changes_nothing(daemon, make_users):
    user, = make_users()
    r = daemon.cli("enroll", "--layout", "qwerty", user, input="74123\n74123\n")
    assert r.returncode == 64, r.stdout + r.stderr
    assert "qwerty" in r.stderr and "phone" in r.stderr and "numpad" in r.stderr
    assert "enrolled=0" in daemon.request(f"STATUS user={user}")


def test_a_user_removes_the_pattern_with_the_numpad_shape(daemon, make_users):
    user, = make_users()
    # Root sets the first pattern (a user's own first one needs its password).
    r = daemon.cli("enroll", "--layout", "numpad", user, input="74123\n74123\n")
    assert r.returncode == 0, r.stdout + r.stderr
    # The current pattern typed on the keypad is the keypad's: not counted as wrong.
    r = daemon.cli("remove", "--layout", "numpad", input="74123\n", user=user)
    assert r.returncode == 0 and "is removed" in r.stdout, r.stdout + r.stderr
    assert "enrolled=0" in daemon.request(f"STATUS user={user}")


def test_numpad_mistakes_are_named_by_the_keys_pressed(daemon, make_users):
    user, = make_users()
    r = daemon.cli("enroll", "--layout", "numpad", user, input="7984\n")
    assert r.returncode == 4, r.stdout + r.stderr
    assert "Dot 8 is used twice: the move from 7 to 9 passed over it" in r.stderr, r.stderr
    r = daemon.cli("enroll", "--layout", "numpad", user, input="7410\n")
    assert r.returncode == 4 and "7 is top left" in r.stderr, r.stderr
