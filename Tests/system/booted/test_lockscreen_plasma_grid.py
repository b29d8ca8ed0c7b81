# SPDX-License-Identifier: Apache-2.0
"""patternlock's own lock screen for Plasma 5.27 (the Look-and-Feel package
`make plasma` builds, plasma/), drawn on: the greeter of libkscreenlocker5 in
its testing mode on Xvfb, in the booted Debian 12 container (conftest's
client_system), inside a real local logind session, with the module as
pam-auth-update installs it. The package is selected as a user selects it,
kscreenlockerrc [Greeter] Theme. The pattern is dragged with xdotool's pointer
at the places the lock screen says on stderr (its console.log lines), the
screen is read with tesseract."""
import re
import shutil
import subprocess
import time

import pytest

from harness import booted
from harness.clients import Clients
from harness.lockscreen_support import (PASSWORD, PATTERN, SHOTS, WRONG_PATTERN, Desktop, locked_after,
                                        password_checks_failed, status, verify_lines, verify_results)

GREETER = "/usr/lib/x86_64-linux-gnu/libexec/kscreenlocker_greet"
THEME = "org.patternlock.lookandfeel"
PACKAGES = "/usr/share/plasma/look-and-feel"
SAID = "patternlock-plasma: "


@pytest.fixture(scope="module")
def clients(client_system):
    SHOTS.mkdir(parents=True, exist_ok=True)
    if client_system.run(f"test -x {GREETER}").returncode != 0:
        pytest.fail(f"{GREETER} is missing in the container: booted.py's CLIENT_PACKAGES installs libkscreenlocker5")
    r = subprocess.run(["make", "-C", str(booted.ROOT), "--no-print-directory", "plasma"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    target = client_system.merged / PACKAGES.lstrip("/") / THEME
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(booted.ROOT / "build" / "plasma" / THEME, target)
    yield Clients(client_system)
    shutil.rmtree(target, ignore_errors=True)


class GridScreen(Desktop):
    """A user's session with Xvfb and KDE's greeter showing patternlock's grid."""

    def __init__(self, clients, user, theme=THEME):
        super().__init__(clients, user, "kde")
        self.theme = theme

    def __enter__(self):
        super().__enter__()
        self.as_user(f"mkdir -p ~/.config && printf '[Greeter]\\nTheme={self.theme}\\n' > ~/.config/kscreenlockerrc")
        return self

    def log(self):
        r = self.system.run(f"cat {self.dir}/locker.{self.locks}.log")
        return r.stdout if r.returncode == 0 else ""

    def said(self, pattern):
        return [line[line.index(SAID) + len(SAID):] for line in self.log().splitlines()
                if SAID in line and re.search(pattern, line[line.index(SAID) + len(SAID):])]

    def count(self, pattern):
        return len(self.said(pattern))

    def lock(self):
        self.locks += 1
        self.as_user("touch lock")
        self.wait(f"pgrep -u {self.user} -f {GREETER} >/dev/null", "the greeter started")
        # Shown: the greeter has put up its first frame (before it, a press may go nowhere).
        self.poll(lambda: self.said(r"^prompt kind=pattern") and self.said(r"^phase=pattern grid=.* shown=1 "),
                  "the grid shown and the module's prompt")

    def grid(self):
        x, y, side = (int(v) for v in re.search(r"grid=(\d+),(\d+),(\d+)", self.said(r"^phase=.* grid=")[-1]).groups())
        return lambda d: (x + ((d - 1) % 3 + 0.5) * side / 3, y + ((d - 1) // 3 + 0.5) * side / 3)

    def drag(self, pattern):
        """The pointer pressed on the first dot, moved in small steps through
        the others, released, at a hand's pace: moves sent all at once reach
        the greeter merged into one, from the first dot to the last, and a
        busy one (make check's load) merges the stretches of a turn."""
        centre = self.grid()
        dots = [int(d) for d in pattern]
        x, y = centre(dots[0])
        words = [f"mousemove --sync {round(x)} {round(y)}", "sleep 0.25", "mousedown 1", "sleep 0.25"]
        for d in dots[1:]:
            nx, ny = centre(d)
            for i in range(1, 7):
                words.append(f"mousemove {round(x + (nx - x) * i / 6)} {round(y + (ny - y) * i / 6)} sleep 0.02")
            # A hand turns at a dot: the pause lets the move there arrive on its
            # own, not merged with the next stretch by a busy greeter.
            words.append("sleep 0.25")
            x, y = nx, ny
        words += ["mouseup 1", "mousemove 5 5"]
        self.as_user("xdotool " + " ".join(words))

    def click(self):
        """Clicks the screen's button ("Use password")."""
        x, y = (int(v) for v in re.search(r"button=(\d+),(\d+)", self.said(r"^phase=pattern ")[-1]).groups())
        self.as_user(f"xdotool mousemove {x} {y} click 1 mousemove 5 5")

    def type(self, text):
        self.as_user("xdotool type --delay 30 --file - && xdotool key Return", input=text)

    def read(self, name):
        """A screenshot (build/lockscreens/kde-NAME.png) and what tesseract reads
        above the grid (the name and the messages), on one line: that band
        cropped, three times larger, grey, dark on light (the wallpaper shows behind)."""
        self.shot(name)
        top = int(re.search(r"grid=\d+,(\d+),", self.said(r"^phase=.* grid=")[-1]).group(1))
        return " ".join(self.as_user(f"/usr/bin/convert {name}.png -crop 800x{top}+0+0 -resize 300% "
                                     f"-colorspace gray -negate {name}-band.png && "
                                     f"tesseract {name}-band.png - 2>/dev/null").split())

    def unlocked_with(self, rc="0", timeout=30):
        self.poll(lambda: self.unlocked() is not None, "the greeter to end", timeout)
        assert self.unlocked() == rc, f"the greeter ended with status {self.unlocked()}\n{self.diagnostics()}"


def test_the_right_pattern_dragged_on_the_grid_unlocks_as_service_kde(clients):
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with GridScreen(clients, user) as desk:
        desk.lock()
        desk.shot("grid-locked")
        desk.drag(PATTERN)
        desk.unlocked_with("0")
        assert "unlocked" in " ".join(desk.said(r"^unlocked"))
    assert verify_results(clients, user) == ["OK"]
    assert " service=kde " in verify_lines(clients, user)[-1]


def test_a_wrong_pattern_turns_red_and_says_the_attempts_left_then_the_right_one_unlocks(clients):
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with GridScreen(clients, user) as desk:
        desk.lock()
        desk.drag(WRONG_PATTERN)
        desk.poll(lambda: desk.said(r"^attempt result=failure"), "the wrong pattern refused")
        said = desk.read("grid-wrong")
        assert "Wrong pattern" in said and "4 attempts left" in said, said
        # Red on that same screenshot, halfway between the first two dots of the path.
        centre = desk.grid()
        (ax, ay), (bx, by) = centre(int(WRONG_PATTERN[0])), centre(int(WRONG_PATTERN[1]))
        pixel = desk.as_user(f"/usr/bin/convert grid-wrong.png -format '%[hex:p{{{round((ax + bx) / 2)},"
                             f"{round((ay + by) / 2)}}}]' info:").strip()
        r, g = int(pixel[0:2], 16), int(pixel[2:4], 16)
        assert r > 150 and g < 110, f"the wrong path is not red: #{pixel}"
        desk.poll(lambda: desk.count(r"^prompt kind=pattern") >= 2, "the module's prompt again")
        desk.drag(PATTERN)
        desk.unlocked_with("0")
    assert verify_results(clients, user) == ["FAIL,remaining=4", "OK"]


def test_after_five_wrong_patterns_the_lock_sentence_shows_and_the_typed_password_unlocks_unseen_by_the_daemon(
        clients):
    s = clients.system
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with GridScreen(clients, user) as desk:
        desk.lock()
        for n in range(1, 6):
            desk.poll(lambda: desk.count(r"^prompt kind=pattern") >= n, "the module's prompt")
            desk.drag(WRONG_PATTERN)
            desk.poll(lambda: desk.count(r"^attempt result=failure") >= n, f"wrong pattern {n} refused")
        desk.poll(lambda: desk.said(r"^prompt kind=password"), "pam_unix's prompt, with the field")
        said = desk.read("grid-locked-out")
        assert "locked after 5 failed attempts" in said and "patternlockd reset" in said, said
        assert locked_after(clients, user) == 5, status(clients, user)
        before, counted = verify_lines(clients, user), status(clients, user)
        desk.type(PASSWORD)
        desk.unlocked_with("0")
        assert verify_lines(clients, user) == before and status(clients, user) == counted, \
            "the password reached the daemon"
        assert password_checks_failed(s.ok("journalctl -o cat --no-pager"), user) == 0


def test_the_password_at_use_password_unlocks_before_any_failure_and_counts_nothing(clients):
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with GridScreen(clients, user) as desk:
        desk.lock()
        desk.click()
        desk.poll(lambda: desk.said(r"^phase=password "), "the password field")
        desk.type(PASSWORD)
        desk.unlocked_with("0")
    assert "failures=0" in status(clients, user) or "0 failures" in status(clients, user), status(clients, user)
    assert verify_results(clients, user) in ([], ["NOT_A_PATTERN"]), verify_results(clients, user)


def test_a_lock_screen_that_fails_to_load_falls_back_to_plasmas_own_which_takes_the_typed_pattern(clients):
    """No user is locked out by a broken theme: the greeter shows its built-in
    password screen, whose field takes the pattern typed as digits."""
    s = clients.system
    broken = "org.patternlock.broken"
    target = s.merged / PACKAGES.lstrip("/") / broken
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(booted.ROOT / "build" / "plasma" / THEME, target)
    (target / "contents" / "lockscreen" / "LockScreen.qml").write_text("import QtQuick 2.15\nItem { this is not QML\n")
    meta = (target / "metadata.json").read_text().replace(THEME, broken)
    (target / "metadata.json").write_text(meta)
    try:
        user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
        with GridScreen(clients, user, theme=broken) as desk:
            desk.locks += 1
            desk.as_user("touch lock")
            desk.wait(f"pgrep -u {user} -f {GREETER} >/dev/null", "the greeter started")
            desk.poll(lambda: "LockScreen.qml" in desk.log(), "the greeter saying the QML did not load")
            assert not desk.said(r"^phase="), "the broken lock screen ran"
            time.sleep(3)  # the fallback screen shows a clock first; a key wakes its field
            desk.as_user("xdotool key shift")
            time.sleep(1)
            desk.shot("grid-fallback")
            desk.type(PATTERN)
            desk.unlocked_with("0")
        assert verify_results(clients, user) == ["OK"]
    finally:
        shutil.rmtree(target, ignore_errors=True)
