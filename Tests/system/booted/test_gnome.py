# SPDX-License-Identifier: Apache-2.0
"""GNOME Shell 48's own dialogs with the pattern drawn on them
(gnome-shell-extension-patternlock), in a booted Debian 13 container with GDM
48 and a headless GNOME Shell in a local logind session on seat0
(harness/gnome_desk.py): the unlock dialog, which asks through GDM's
reauthentication worker (PAM service gdm-password, root, outside the
session), and the polkit dialog (pkexec from the session). The packages come
from `make deb` and go in with apt-get; the module is enabled by
pam-auth-update; the extension is enabled as a user enables one
(`gnome-extensions enable`). The pointer and touch are mutter's own
remote-desktop input (harness/gnome_hand.py); what shows and where comes from
the extension's lines in the journal; what the screen says from a screenshot
read by tesseract; what was checked from the daemon's journal.

One container boot and one shell start serve the tests in file order; each
resets the user's pattern count and leaves the session unlocked. The last one
removes the package and starts the shell again."""
import re
import time

import pytest

from harness.common import module_sentence, unique
from harness.gnome_desk import EXTENSION_DEB, KEY_ESCAPE, KEY_RETURN, SHOTS, UUID, Gnome, gnome_system, poll

PASSWORD = "Gn0me-pass"
PATTERN = "46183"  # accepted by the enroll policy the packaged daemon runs
WRONG = "2589"  # a valid pattern, so each one counts
# A password made only of the dots 1-9, each once, at least 4: shaped like a
# pattern, and not the user's pattern.
DIGITS_PASSWORD = "3692581"


@pytest.fixture(scope="module")
def gnome(project_debs):
    debs = [project_debs["libpam-patternlock"], project_debs["patternlockd"],
            *sorted((project_debs["patternlockd"].parent / "gnome").glob(f"{EXTENSION_DEB}_*.deb"))]
    assert len(debs) == 3, f"make deb made no {EXTENSION_DEB} in build/gnome/"
    with gnome_system(debs) as system:
        user = unique("plgn")
        # An administrator: GNOME's polkit dialog then asks for the user's own
        # password (or pattern), not root's.
        system.ok(f"useradd --create-home --shell /bin/bash -G sudo {user}")
        system.ok("chpasswd", input=f"{user}:{PASSWORD}\n")
        system.ok(f"patternlockd enroll {user}", input=f"{PATTERN}\n{PATTERN}\n")
        uid = int(system.ok(f"id -u {user}"))
        g = Gnome(system, user, uid)
        g.start_shell()
        g.as_user(f"gnome-extensions enable {UUID}")
        poll(lambda: "State: ACTIVE" in g.as_user(f"gnome-extensions info {UUID}").stdout,
             "GNOME Shell to run the extension", timeout=20)
        yield g
        g.stop_shell()


@pytest.fixture
def fresh(gnome):
    """The user's pattern count back at zero, the password the usual one, the
    session unlocked."""
    gnome.system.ok(f"patternlockd reset {gnome.user}")
    gnome.system.ok("chpasswd", input=f"{gnome.user}:{PASSWORD}\n")
    yield gnome
    # Each test checks it unlocked; one that failed leaves the next a session
    # to lock (logind's unlock, as root: not what any test checks).
    if gnome.locked():
        gnome.system.ok(f"loginctl unlock-session {gnome.session()}")
        poll(lambda: not gnome.locked(), "logind's unlock", timeout=20)


def results(g, since):
    return [re.search(r" result=(\S+)", line).group(1) for line in g.daemon_verifies()[since:]]


def wrong_pattern(g, mark):
    """Draws WRONG and waits for the dialog's next prompt; returns the mark."""
    view = g.wait_view(mark, "the grid", view="grid", phase="pattern")
    after = g.mark()
    g.draw(view, WRONG)
    g.wait_line(after, r"^attempt result=failure", "the wrong pattern's failure")
    return after


def test_the_right_pattern_dragged_with_the_pointer_unlocks_gnome_through_gdm_password(fresh):
    g = fresh
    before = len(g.daemon_verifies())
    mark = g.lock()
    view = g.wait_view(mark, "the grid on the unlock dialog", where="unlock", view="grid", phase="pattern")
    g.draw(view, PATTERN)
    g.unlocked()
    line = g.daemon_verifies()[before:]
    assert len(line) == 1 and " service=gdm-password " in line[0] and line[0].endswith(" result=OK"), line
    # GDM's worker unlocked the user's seated session, which it runs outside of.
    assert f" session={g.session()} seat=seat0 " in line[0], line


def test_the_right_pattern_drawn_by_touch_unlocks(fresh):
    g = fresh
    before = len(g.daemon_verifies())
    mark = g.lock()
    view = g.wait_view(mark, "the grid", where="unlock", view="grid", phase="pattern")
    g.draw(view, PATTERN, touch=True)
    g.unlocked()
    assert results(g, before) == ["OK"]


def test_keys_1_to_9_on_the_grid_draw_and_enter_unlocks(fresh):
    g = fresh
    before = len(g.daemon_verifies())
    mark = g.lock()
    g.wait_view(mark, "the grid", where="unlock", view="grid", phase="pattern")
    g.type(PATTERN)
    g.key(KEY_RETURN)
    g.unlocked()
    assert results(g, before) == ["OK"]


def test_hide_path_draws_no_dot_while_the_path_is_made_and_the_pattern_still_unlocks(fresh):
    g = fresh
    g.as_user("gsettings set org.gnome.shell.extensions.patternlock hide-path true")
    try:
        before = len(g.daemon_verifies())
        mark = g.lock()  # a new dialog reads the setting
        view = g.wait_view(mark, "the grid", where="unlock", view="grid", phase="pattern")
        first, second = (g.centre(view, int(d)) for d in PATTERN[:2])
        g.do("move %d %d" % first)
        g.do("press")
        g.do("move %d %d" % second)
        # Halfway through, nothing of the path shows: every dot as when idle.
        lit = g.lit_in_grid(view)
        g.do("release")
        assert lit == 0, f"{lit} dots lit while hide-path is on"
        mark = g.mark()
        view = g.wait_view(mark, "the grid again", view="grid", phase="pattern")
        g.draw(view, PATTERN)
        g.unlocked()
        assert results(g, before)[-1] == "OK"
    finally:
        g.as_user("gsettings reset org.gnome.shell.extensions.patternlock hide-path")


def test_a_wrong_pattern_turns_red_and_the_screen_says_the_attempts_left(fresh):
    g = fresh
    before = len(g.daemon_verifies())
    mark = g.lock()
    view = g.wait_view(mark, "the grid", where="unlock", view="grid", phase="pattern")
    g.draw(view, WRONG)
    # Red while the module's message shows: the four dots of the path.
    assert poll(lambda: g.red_in_grid(view) == len(WRONG), "the wrong pattern in red", timeout=5, every=0.1)
    assert g.shows("4 attempts left", view)
    g.screenshot(SHOTS / "gnome-unlock-wrong.png")  # the README's picture
    assert results(g, before) == ["FAIL,remaining=4"]
    # The next attempt: the grid again, and the right pattern unlocks.
    after = g.mark()
    view = g.wait_view(after, "the grid again", view="grid", phase="pattern")
    g.draw(view, PATTERN)
    g.unlocked()
    assert results(g, before) == ["FAIL,remaining=4", "OK"]


def test_escape_after_a_wrong_pattern_begins_anew_and_the_right_pattern_unlocks(fresh):
    """Escape on an empty grid is GNOME's: it cancels the attempt and GNOME
    begins a new conversation without the verifier's reset. The grid begins
    anew with it, and the next pattern answers the new prompt, never an old
    one (GNOME would keep an answer with no question for the next question)."""
    g = fresh
    before = len(g.daemon_verifies())
    mark = g.lock()
    mark = wrong_pattern(g, mark)
    g.wait_view(mark, "the grid after the wrong pattern", view="grid", phase="pattern")
    time.sleep(1.5)  # the red path gone: Escape on an empty grid is GNOME's
    after = g.mark()
    g.key(KEY_ESCAPE)
    g.wait_line(after, r"^prompt kind=pattern", "GNOME's new conversation")
    view = g.wait_view(after, "the grid for the new prompt", view="grid", phase="pattern")
    g.draw(view, PATTERN)
    g.unlocked()
    assert results(g, before) == ["FAIL,remaining=4", "OK"]


def test_five_wrong_patterns_lock_it_and_the_password_typed_unlocks_unseen_by_the_daemon(fresh):
    g = fresh
    before = len(g.daemon_verifies())
    mark = g.lock()
    for _ in range(5):
        mark = wrong_pattern(g, mark)
    assert results(g, before) == ["FAIL,remaining=4", "FAIL,remaining=3", "FAIL,remaining=2", "FAIL,remaining=1",
                                  "FAIL,remaining=0"]
    # Locked: the module says so whole, and the next attempt shows the field.
    sentence = module_sentence("locked").split("{user}")[0].strip()
    assert g.shows(sentence, timeout=20)
    view = g.wait_view(mark, "the password field", view="field", phase="password")
    assert view["button"] is None, view  # the pattern cannot answer now
    g.type(PASSWORD)
    g.key(KEY_RETURN)
    g.unlocked()
    assert len(g.daemon_verifies()) == before + 5, "the password reached the daemon"


def test_use_password_before_any_failure_unlocks_and_counts_nothing(fresh):
    g = fresh
    before = len(g.daemon_verifies())
    mark = g.lock()
    view = g.wait_view(mark, "the grid", where="unlock", view="grid", phase="pattern")
    assert view["label"] == "Use password"
    g.click(view["button"])
    g.wait_view(mark, "the field", view="field", label="Use pattern")
    g.type(PASSWORD)
    g.key(KEY_RETURN)
    g.unlocked()
    assert len(g.daemon_verifies()) == before


def test_a_password_of_digits_only_typed_in_the_field_unlocks_and_is_never_counted(fresh):
    g = fresh
    g.system.ok("chpasswd", input=f"{g.user}:{DIGITS_PASSWORD}\n")
    before = len(g.daemon_verifies())
    mark = g.lock()
    view = g.wait_view(mark, "the grid", where="unlock", view="grid", phase="pattern")
    g.click(view["button"])
    g.wait_view(mark, "the field", view="field")
    g.type(DIGITS_PASSWORD)
    after = g.mark()
    g.key(KEY_RETURN)
    g.unlocked()
    # The module's prompt was answered empty, the password went to pam_unix's.
    said = g.since(after)
    assert "answered kind=empty" in said and "answered kind=field" in said, said
    assert len(g.daemon_verifies()) == before, "the digits reached the daemon as a pattern"


def test_pkexec_raises_gnome_s_polkit_dialog_with_the_grid_and_the_pattern_runs_it_as_root(fresh):
    g = fresh
    before = len(g.daemon_verifies())
    mark = g.mark()
    g.as_user("rm -f /tmp/plpkexec.out; systemd-run --user --collect --unit=plpkexec "
              "sh -c 'pkexec /usr/bin/id -u > /tmp/plpkexec.out 2>&1'")
    view = g.wait_view(mark, "the grid on the polkit dialog", where="polkit", view="grid", phase="pattern")
    g.screenshot(SHOTS / "gnome-polkit-grid.png")  # the README's picture
    after = g.mark()
    g.draw(view, WRONG, touch=True)
    g.wait_line(after, r"^attempt result=failure", "the wrong pattern's failure")
    assert g.shows("4 attempts left", view)
    view = g.wait_view(after, "the grid again", where="polkit", view="grid", phase="pattern")
    g.draw(view, PATTERN)
    poll(lambda: g.system.run("cat /tmp/plpkexec.out").stdout.strip() == "0", "pkexec to run id as root")
    assert results(g, before) == ["FAIL,remaining=4", "OK"]
    assert all(" service=polkit-1 " in line for line in g.daemon_verifies()[before:])


def own_dialog_takes_the_typed_pattern_then_the_password(g):
    """GNOME's own unlock dialog, the extension nowhere in it: the pattern
    typed as digits unlocks (one VERIFY, OK), and locked again the password
    typed unlocks, never seen by the daemon."""
    before = len(g.daemon_verifies())
    mark = g.lock(extension=False)
    g.type(PATTERN)
    g.key(KEY_RETURN)
    g.unlocked()
    assert results(g, before) == ["OK"]
    g.lock(extension=False)
    g.type(PASSWORD)
    g.key(KEY_RETURN)
    g.unlocked()
    assert results(g, before) == ["OK"]
    assert not [line for line in g.since(mark) if line.startswith("attached")], "the extension attached"


def test_with_the_extension_disabled_gnome_s_own_dialog_takes_the_typed_pattern_and_the_password(fresh):
    g = fresh
    g.as_user(f"gnome-extensions disable {UUID}")
    try:
        own_dialog_takes_the_typed_pattern_then_the_password(g)
    finally:
        g.as_user(f"gnome-extensions enable {UUID}")


DCONF_PROFILE = "user-db:user\nsystem-db:local\n"
DCONF_DEFAULTS = f"[org/gnome/shell]\nenabled-extensions=['{UUID}']\n"


def test_enabled_for_everyone_in_the_dconf_defaults_a_user_who_never_chose_gets_the_grid(fresh):
    """The administrator's way in patternlock-gnome(7): a dconf profile that
    reads the system's local database, the extension in its defaults, `dconf
    update`; a user whose own list is unset gets the grid at the next start of
    the shell, and the pattern drawn unlocks."""
    g = fresh
    # Debian ships no dconf profile for users: without the one below the
    # system's defaults are never read (what patternlock-gnome(7) says).
    assert g.system.run("test -e /etc/dconf/profile/user").returncode != 0
    g.as_user("dconf reset /org/gnome/shell/enabled-extensions && "
              "dconf reset /org/gnome/shell/disabled-extensions")
    g.system.ok("install -D -m 0644 /dev/stdin /etc/dconf/profile/user", input=DCONF_PROFILE)
    g.system.ok("install -D -m 0644 /dev/stdin /etc/dconf/db/local.d/00-patternlock", input=DCONF_DEFAULTS)
    g.system.ok("dconf update")
    try:
        g.stop_shell()
        g.start_shell()
        poll(lambda: "State: ACTIVE" in g.as_user(f"gnome-extensions info {UUID}").stdout,
             "GNOME Shell to run the extension from the defaults", timeout=20)
        assert UUID in g.as_user("gsettings get org.gnome.shell enabled-extensions").stdout
        before = len(g.daemon_verifies())
        mark = g.lock()
        view = g.wait_view(mark, "the grid", where="unlock", view="grid", phase="pattern")
        g.draw(view, PATTERN)
        g.unlocked()
        assert results(g, before) == ["OK"]
    finally:
        g.system.run("rm -f /etc/dconf/db/local.d/00-patternlock /etc/dconf/profile/user && dconf update")
        g.as_user(f"gnome-extensions enable {UUID}")


def test_an_extension_that_fails_to_load_leaves_gnome_s_own_dialog_which_takes_the_pattern_and_the_password(fresh):
    """A broken or outdated extension (here its extension.js cut short, as a
    bad upgrade might leave it) never leaves a screen that cannot be unlocked:
    GNOME marks it failed and its own dialog asks, and takes the typed pattern
    and the password."""
    g = fresh
    script = f"/usr/share/gnome-shell/extensions/{UUID}/extension.js"
    kept = g.system.ok(f"cat {script}")
    g.system.ok(f"head -c {len(kept) // 2} > {script}.part && mv {script}.part {script}", input=kept)
    try:
        g.stop_shell()
        g.start_shell()
        poll(lambda: "State: ERROR" in g.as_user(f"gnome-extensions info {UUID}").stdout,
             "GNOME Shell to mark the extension failed", timeout=20)
        own_dialog_takes_the_typed_pattern_then_the_password(g)
    finally:
        g.system.ok(f"cat > {script}", input=kept)
        g.stop_shell()
        g.start_shell()


def test_with_the_package_removed_gnome_s_own_dialog_comes_back(fresh):
    """Last: it removes the package and starts the shell again."""
    g = fresh
    g.system.ok(f"apt-get remove -y {EXTENSION_DEB} 2>&1")
    assert g.system.run(f"test -e /usr/share/gnome-shell/extensions/{UUID}").returncode != 0
    g.stop_shell()
    g.start_shell()
    before = len(g.daemon_verifies())
    mark = g.mark()
    g.lock(extension=False)
    assert not [line for line in g.since(mark) if line.startswith("attached")]
    g.type(PATTERN)
    g.key(KEY_RETURN)
    g.unlocked()
    assert results(g, before) == ["OK"]
