# SPDX-License-Identifier: Apache-2.0
"""patternlock's own lock screen for KDE Plasma (the package patternlock-plasma,
plasma/), drawn on where Plasma really locks: Plasma 5.27 in the booted Debian 12
container (conftest's client_system, the module as pam-auth-update installs it)
and Plasma 6.3 in the booted Debian 13 one (trixie_system, every package of
`make deb` installed by apt-get). In each, a user logs in on a pty (a real local
logind session), turns the grid on with `patternlock-plasma enable` as the README
says, and starts Plasma's session manager the way a Plasma session started by
systemd does: the user unit plasma-ksmserver.service, on Xvfb. `loginctl
lock-session` locks it; ksmserver starts the greeter, which loads our lock screen
(Plasma 6: through the drop-in the command wrote; 5.27: through kscreenlockerrc).
The pattern is dragged with xdotool's pointer at the places the lock screen says
(its console.log lines, in the journal), the screen is read with tesseract, and
the lock's state is asked of ksmserver (org.freedesktop.ScreenSaver GetActive)."""
import re
import shutil
import time

import pytest

from harness import booted
from harness.clients import Clients
from harness.lockscreen_support import (PASSWORD, PATTERN, SHOTS, WRONG_PATTERN, Desktop, locked_after,
                                        password_checks_failed, status, verify_lines, verify_results)

SAID = "patternlock-plasma: "
# Where each Plasma version takes its lock screen from, in the package.
LOCK_SCREEN = {
    "5.27": "/usr/share/plasma/look-and-feel/org.patternlock.lookandfeel/contents/lockscreen/LockScreen.qml",
    "6.3": "/usr/share/plasma/shells/org.patternlock.plasma/contents/lockscreen/LockScreen.qml",
}


@pytest.fixture(scope="module", params=["5.27", "6.3"], ids=["plasma5.27-debian12", "plasma6.3-debian13"])
def clients(request, client_system, trixie_system, project_debs):
    yield from plasma_clients(request.param, client_system, trixie_system, project_debs)


# What is the same on every Plasma (the conversation in js/, the grid and the
# screen in plasma/common/, one source in both packages, held to the Swift lock
# screen by the scenario table in make check) runs on Plasma 6.3 alone; 5.27
# keeps what differs by version: the package and how Plasma loads it, drawing, a
# wrong pattern, five wrong then the password, digits-only passwords, the
# keyboard, the fallback and disable.
@pytest.fixture(scope="module")
def plasma6(client_system, trixie_system, project_debs):
    yield from plasma_clients("6.3", client_system, trixie_system, project_debs)


def plasma_clients(version, client_system, trixie_system, project_debs):
    SHOTS.mkdir(parents=True, exist_ok=True)
    system = client_system if version == "5.27" else trixie_system
    if version == "5.27":
        # Debian 12's container has the project from `make install`; the lock
        # screen comes as users get it, the package, installed by apt-get.
        system.ok(f"apt-get install -y -q --no-install-recommends {project_debs['patternlock-plasma']} 2>&1")
    assert system.run("command -v patternlock-plasma").returncode == 0
    plasma = re.sub(r"^\d+:", "", system.ok("dpkg-query -W -f='${Version}' plasma-workspace"))
    assert plasma.startswith(version), f"Plasma {plasma}, expected {version}"
    c = Clients(system)
    c.plasma = version
    c.deb = project_debs["patternlock-plasma"]
    yield c
    if version == "5.27":
        system.run("apt-get remove -y -q patternlock-plasma")


class PlasmaLock(Desktop):
    """A user's session with Xvfb and Plasma's session manager, which locks it
    on logind's word and shows patternlock's grid (once the user has run
    `patternlock-plasma enable`)."""

    def __init__(self, clients, user, enable=True, wayland=False, password=PASSWORD, mobile=False):
        """`mobile`: Plasma Mobile's session (startplasmamobile's environment,
        lockscreen_session.sh), KWin at a phone's 720x1440 pixels, scale 2."""
        kind = "plasma-mobile" if mobile else "plasma-wayland" if wayland else "plasma"
        super().__init__(clients, user, kind, password=password)
        self.uid = clients.uid(user)
        self.version = clients.plasma
        self.enable = enable
        self.mobile = mobile
        # The lock screen says where things are in logical pixels; the screen has scale times as many.
        self.scale = 2 if mobile else 1
        self.width = 720 if mobile else 800
        self.unit = "plasma-kwin_wayland.service" if wayland or mobile else "plasma-ksmserver.service"
        self.mark = 0

    def __enter__(self):
        # Before the login: the user's systemd reads the drop-ins when it starts.
        if self.enable:
            out = self.system.ok(f"runuser -u {self.user} -- patternlock-plasma enable")
            assert "The pattern grid is on" in out, out
        if self.unit == "plasma-kwin_wayland.service":
            # What this machine lacks, a display device, and only that: KWin
            # in a window on Xvfb (its X11 backend, QPainter), the greeter it
            # starts drawing in software. A drop-in of its own beside the one
            # patternlock-plasma wrote; WAYLAND_DISPLAY unset, or KWin would
            # take a nested Wayland backend.
            dropin = f"/home/{self.user}/.config/systemd/user/plasma-kwin_wayland.service.d/zz-headless-test.conf"
            size = "--width 360 --height 720 --scale 2" if self.mobile else "--width 800 --height 600"
            self.system.ok(f"install -D -o {self.user} -g {self.user} -m 0644 /dev/stdin {dropin}",
                           input="[Service]\nExecStart=\nExecStart=/usr/bin/kwin_wayland_wrapper --x11-display :5 "
                                 f"{size}\nEnvironment=KWIN_COMPOSE=Q QT_QUICK_BACKEND=software\n"
                                 "UnsetEnvironment=WAYLAND_DISPLAY\n")
        super().__enter__()
        self.wait(f"test -s {self.dir}/session && runuser -u {self.user} -- env {self.bus()} "
                  f"gdbus introspect --session --dest org.freedesktop.ScreenSaver --object-path /ScreenSaver "
                  f">/dev/null 2>&1", "ksmserver on the session bus")
        if self.mobile:
            # A phone's panel is at scale 2, which KScreen gives it; KWin's window
            # on Xvfb is an output of unknown size, so the test sets it as KScreen would.
            out = self.system.ok(f"runuser -u {self.user} -- env XDG_RUNTIME_DIR=/run/user/{self.uid} "
                                 f"WAYLAND_DISPLAY=wayland-0 {self.bus()} kscreen-doctor output.X11-0.scale.2 2>&1")
            assert "error" not in out.lower(), out
        return self

    def bus(self):
        return f"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/{self.uid}/bus"

    def diagnostics(self):
        return super().diagnostics() + self.log()[-3000:]

    def log(self):
        """ksmserver's (or KWin's) and the greeter's output: the unit's journal."""
        return self.system.run(f"journalctl --no-pager -o cat _UID={self.uid} "
                               f"_SYSTEMD_USER_UNIT={self.unit}").stdout

    def said(self, pattern):
        """What the lock screen said (its console.log lines) since the last lock."""
        lines = [line[line.index(SAID) + len(SAID):] for line in self.log().splitlines() if SAID in line]
        return [line for line in lines[self.mark:] if re.search(pattern, line)]

    def count(self, pattern):
        return len(self.said(pattern))

    def active(self):
        """ksmserver's answer: is the screen locked?"""
        out = self.as_user(f"env {self.bus()} gdbus call --session --dest org.freedesktop.ScreenSaver "
                           "--object-path /ScreenSaver --method org.freedesktop.ScreenSaver.GetActive")
        return out.strip() == "(true,)"

    def lock(self, grid=True):
        """Locks the session as logind's lock-session does (the idle timer, a
        lid, `loginctl lock-session`), and waits for the grid and the module's
        prompt (or, with grid=False, for the greeter alone)."""
        self.locks += 1
        self.mark = len([line for line in self.log().splitlines() if SAID in line])
        session = self.system.ok(f"cat {self.dir}/session").strip()
        self.system.ok(f"loginctl lock-session {session}")
        self.poll(self.active, "ksmserver to say the screen is locked")
        self.wait(f"pgrep -u {self.user} -f kscreenlocker_greet >/dev/null", "the greeter started")
        if grid:
            # Shown: the greeter has put up its first frame (before it, a press may go nowhere).
            self.poll(lambda: self.said(r"^prompt kind=pattern") and self.said(r"^phase=pattern grid=.* shown=1 "),
                      "the grid shown and the module's prompt")
            # Shown is not yet painted: the wallpaper and the dots come a moment later.
            self.poll(self.dots_painted, "the grid's dots on the screen")

    def dots_painted(self):
        """True once the first and the last dot are on the screen (light grey)."""
        centre = self.grid()
        return all(min(self.pixel(*centre(dot))) >= 170 for dot in (1, 9))

    def pixel(self, x, y, png=None):
        """(r, g, b) at x, y: of the screen now, or of a screenshot in the session's directory."""
        fmt = f"%[hex:p{{{round(x)},{round(y)}}}]"
        hexa = (self.as_user(f"/usr/bin/convert {png} -format '{fmt}' info:") if png else self.probe(fmt)).strip()
        return tuple(int(hexa[i:i + 2], 16) for i in (0, 2, 4))

    def greeter_env(self):
        """The environment of the user's greeter, as lines NAME=VALUE."""
        return self.system.ok(f"for p in $(pgrep -u {self.user} -f libexec/kscreenlocker_greet); do "
                              "tr '\\0' '\\n' < /proc/$p/environ; done").splitlines()

    def grid(self):
        """The dots' centres on the screen (the lock screen's logical pixels times the scale)."""
        x, y, side = (int(v) for v in re.search(r"grid=(\d+),(\d+),(\d+)", self.said(r"^phase=.* grid=")[-1]).groups())
        k = self.scale
        return lambda d: (k * (x + ((d - 1) % 3 + 0.5) * side / 3), k * (y + ((d - 1) // 3 + 0.5) * side / 3))

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
        x, y = (int(v) * self.scale for v in re.search(r"button=(\d+),(\d+)", self.said(r"^phase=pattern ")[-1]).groups())
        self.as_user(f"xdotool mousemove {x} {y} click 1 mousemove 5 5")

    def type(self, text):
        self.as_user("xdotool type --delay 30 --file - && xdotool key Return", input=text)

    def read(self, name, expect=(), timeout=15):
        """What tesseract reads in the band of the messages (under the name,
        above the grid, where the lock screen says they are), once it reads
        every string of `expect` (or after `timeout` seconds, what it read
        last): a screenshot (build/lockscreens/plasma-VERSION-NAME.png) taken
        after the screen says its messages are laid out, that band cropped,
        grey, dark on light (the wallpaper shows behind), read as one block at
        two and three times its size, the readings joined (each size alone
        misreads a word now and then, never the same one). A new screenshot
        each second until then: a message arrives a moment after the attempt's
        result, and shows red for a moment before white."""
        deadline = time.monotonic() + timeout
        self.poll(lambda: self.said(r" words=\d+,[1-9]"), "the messages on the screen")
        while True:
            top, height = (int(v) * self.scale for v in
                           re.search(r" words=(\d+),(\d+)", self.said(r" words=\d+,[1-9]")[-1]).groups())
            self.shot(name)
            band = f"{self.version}-{name}"
            readings = []
            for scale in (200 // self.scale, 300 // self.scale):
                readings.append(" ".join(self.as_user(
                    f"/usr/bin/convert {band}.png -crop {self.width}x{height + 8}+0+{max(0, top - 4)} "
                    f"-resize {scale}% -colorspace gray -negate {band}-band.png && "
                    f"tesseract {band}-band.png - --psm 6 2>/dev/null").split()))
            text = " | ".join(readings)
            if all(e in text for e in expect) or time.monotonic() > deadline:
                return text
            time.sleep(1)

    def red_between(self, a, b, name, timeout=5):
        """Waits until the screen shows the path red halfway between dots a
        and b (a wrong pattern's flash); the screenshot is NAME."""
        centre = self.grid()
        (ax, ay), (bx, by) = centre(a), centre(b)
        png = f"{self.version}-{name}.png"

        def red():
            self.shot(name)
            r, g, b_ = self.pixel((ax + bx) / 2, (ay + by) / 2, png=png)
            return r > 150 and g < 110
        self.poll(red, f"the path red between dots {a} and {b}", timeout)

    def shot(self, name):
        """build/lockscreens/plasma-VERSION-NAME.png, and VERSION-NAME.png in the session's directory."""
        return super().shot(f"{self.version}-{name}")

    def unlocks(self, timeout=30):
        """Waits until ksmserver says the screen is unlocked and the greeter has ended."""
        self.poll(lambda: not self.active(), "ksmserver to say the screen is unlocked", timeout)
        self.wait(f"! pgrep -u {self.user} -f kscreenlocker_greet >/dev/null", "the greeter to end")


def wrong_then_right(desk, name):
    """On the first lock's grid: WRONG_PATTERN dragged is refused, turns red
    (halfway between its first two dots, screenshot NAME-red) and the screen
    says the attempts left (screenshot NAME); the lock stays, the module asks
    again, and PATTERN dragged unlocks."""
    desk.drag(WRONG_PATTERN)
    desk.poll(lambda: desk.said(r"^attempt result=failure"), "the wrong pattern refused")
    desk.red_between(int(WRONG_PATTERN[0]), int(WRONG_PATTERN[1]), f"{name}-red")
    said = desk.read(name, expect=("Wrong pattern", "4 attempts left"))
    assert "Wrong pattern" in said and "4 attempts left" in said, said
    assert desk.active()
    desk.poll(lambda: desk.count(r"^prompt kind=pattern") >= 2, "the module's prompt again")
    desk.drag(PATTERN)
    desk.unlocks()


def test_a_wrong_pattern_turns_red_and_says_the_attempts_left_then_the_right_one_unlocks(clients):
    """A wrong pattern turns red and the screen says the attempts left; the
    right one dragged then unlocks, as service kde; locked again, the grid is
    there again and the pattern unlocks again."""
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with PlasmaLock(clients, user) as desk:
        desk.lock()
        desk.shot("grid-locked")
        wrong_then_right(desk, "grid-wrong")
        assert desk.said(r"^unlocked")
        desk.lock()
        desk.drag(PATTERN)
        desk.unlocks()
    assert verify_results(clients, user) == ["FAIL,remaining=4", "OK", "OK"]
    assert all(" service=kde " in line for line in verify_lines(clients, user)), verify_lines(clients, user)


# A password made only of the digits 1 to 9, and shaped like a pattern: given
# to the module's prompt it would be checked (and counted) as one, or, once the
# pattern is locked, not used.
DIGITS_PASSWORD = "3692581"


def test_after_five_wrong_patterns_the_lock_sentence_shows_and_a_password_of_digits_only_unlocks_unseen_by_the_daemon(
        clients):
    """The sixth attempt: the module says the lock and asks for the password in
    its own words, which the screen answers empty (Conversation.js); the
    password typed in the field answers pam_unix's prompt, even one of digits
    only (a password with letters takes the same way)."""
    password = DIGITS_PASSWORD
    s = clients.system
    user = clients.user("plgrid", password, pattern=PATTERN)
    with PlasmaLock(clients, user, password=password) as desk:
        desk.lock()
        for n in range(1, 6):
            desk.poll(lambda: desk.count(r"^prompt kind=pattern") >= n, "the module's prompt")
            desk.drag(WRONG_PATTERN)
            desk.poll(lambda: desk.count(r"^attempt result=failure") >= n, f"wrong pattern {n} refused")
        desk.poll(lambda: desk.said(r"^prompt kind=password"), "pam_unix's prompt, with the field")
        assert desk.said(r"^prompt kind=module-password"), "the module's own prompt for the password"
        said = desk.read("grid-locked-out", expect=("locked after 5 failed attempts", "patternlockd reset"))
        assert "locked after 5 failed attempts" in said and "patternlockd reset" in said, said
        assert locked_after(clients, user) == 5, status(clients, user)
        assert desk.active()
        before, counted = verify_lines(clients, user), status(clients, user)
        desk.type(password)
        desk.unlocks()
        assert verify_lines(clients, user) == before and status(clients, user) == counted, \
            "the password reached the daemon"
        assert password_checks_failed(s.ok("journalctl -o cat --no-pager"), user) == 0


def test_a_password_of_digits_only_at_use_password_unlocks_and_never_reaches_the_daemon(clients):
    """Before any failure, "Use password": the module's one prompt ("Pattern
    [...] or password") is answered empty, so the password, digits as it is,
    goes to pam_unix's prompt only (Conversation.js, the Swift lock screen's
    rule): no VERIFY, nothing counted, pam_unix has no failure."""
    user = clients.user("plgrid", DIGITS_PASSWORD, pattern=PATTERN)
    with PlasmaLock(clients, user, password=DIGITS_PASSWORD) as desk:
        desk.lock()
        desk.click()
        desk.poll(lambda: desk.said(r"^phase=password "), "the password field")
        desk.type(DIGITS_PASSWORD)
        desk.unlocks()
        assert desk.said(r"^answered kind=") == ["answered kind=empty", "answered kind=field"]
    assert "failures=0" in status(clients, user) or "0 failures" in status(clients, user), status(clients, user)
    assert verify_results(clients, user) == [], verify_results(clients, user)
    assert password_checks_failed(clients.system.ok("journalctl -o cat --no-pager"), user) == 0


def plasma_own_screen_takes_the_typed_pattern(desk, name, turned_off=True):
    """On Plasma's own lock screen (no line of ours in the journal): a key
    wakes its field (it may show only a clock first), the pattern typed as
    digits unlocks. turned_off: the grid is off for the user (disabled, or
    its package removed), so Plasma 6's greeter is not even given our package."""
    desk.lock(grid=False)
    time.sleep(3)
    if turned_off and desk.version == "6.3":
        assert "PLASMA_DEFAULT_SHELL=org.patternlock.plasma" not in desk.greeter_env(), \
            "the greeter was given our package"
    desk.as_user("xdotool key shift")
    time.sleep(1)
    desk.shot(name)
    desk.type(PATTERN)
    desk.unlocks()
    # Not ours at any moment of the lock (ours also takes the typed pattern).
    assert not desk.said(r"^phase=|^prompt kind="), "patternlock's lock screen ran"


def test_a_lock_screen_that_fails_to_load_falls_back_to_plasmas_own_which_takes_the_typed_pattern(clients):
    """No user is locked out by a broken theme: the greeter shows its built-in
    password screen, whose field takes the pattern typed as digits."""
    s = clients.system
    qml = s.merged / LOCK_SCREEN[clients.plasma].lstrip("/")
    kept = qml.read_text()
    qml.write_text("import QtQuick 2.15\nItem { this is not QML\n")
    try:
        user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
        with PlasmaLock(clients, user) as desk:
            plasma_own_screen_takes_the_typed_pattern(desk, "grid-fallback", turned_off=False)
            assert "LockScreen.qml" in desk.log(), "the greeter did not say the QML failed to load"
        assert verify_results(clients, user) == ["OK"]
    finally:
        qml.write_text(kept)


def test_disable_and_removing_the_package_each_bring_plasmas_own_lock_screen_back(clients):
    s = clients.system
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    out = s.ok(f"runuser -u {user} -- patternlock-plasma enable && runuser -u {user} -- patternlock-plasma disable && "
               f"runuser -u {user} -- patternlock-plasma status")
    assert "Plasma 6: off" in out and "Plasma 5.27: off" in out, out
    with PlasmaLock(clients, user, enable=False) as desk:
        plasma_own_screen_takes_the_typed_pattern(desk, "disabled")
    # Enabled, then the package removed: the user's drop-ins and kscreenlockerrc
    # key stay behind and name what is gone.
    s.ok(f"runuser -u {user} -- patternlock-plasma enable")
    s.ok("apt-get remove -y -q patternlock-plasma 2>&1")
    try:
        with PlasmaLock(clients, user, enable=False) as desk:
            plasma_own_screen_takes_the_typed_pattern(desk, "removed")
    finally:
        s.ok(f"apt-get install -y -q --no-install-recommends {clients.deb} 2>&1")
    assert verify_results(clients, user) == ["OK", "OK"]


def test_the_virtual_keyboard_button_opens_the_password_field_with_a_keyboard_whose_taps_unlock(clients):
    """Breeze's "Virtual Keyboard" button stays, so a finger alone reaches the
    password: where Qt's virtual keyboard is installed (Debian 13's Plasma 6.3,
    as a Plasma desktop has it), the button shows, a click opens the field with
    the keyboard under it, and the password tapped on its keys (the pointer
    clicks each letter where the keyboard's rows put it) unlocks; where it is
    not (Debian 12's container), neither is the button, and the screen loads."""
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with PlasmaLock(clients, user) as desk:
        # Logged in with PASSWORD; the one tapped is of letters only (one page of the keyboard).
        password = "touchtyped"
        clients.system.ok("chpasswd", input=f"{user}:{password}\n")
        desk.lock()
        line = desk.said(r"^phase=pattern ")[-1]
        installed = clients.system.run(
            "ls /usr/lib/*/qt*/plugins/platforminputcontexts/libqtvirtualkeyboardplugin.so").returncode == 0
        if not installed:
            assert "keyboard=none" in line, line
            return
        x, y = (int(v) for v in re.search(r"keyboard=(\d+),(\d+)", line).groups())
        desk.as_user(f"xdotool mousemove {x} {y} click 1 mousemove 5 5")
        desk.poll(lambda: desk.said(r"^phase=password .*keyboard-open="), "the field with the keyboard open")
        desk.shot("keyboard")
        kx, ky, kw, kh = (int(v) for v in
                          re.search(r"keyboard-open=(\d+),(\d+),(\d+),(\d+)", desk.said(r"keyboard-open=")[-1]).groups())
        # Qt's English layout: four rows of equal height; ten keys across the
        # first, the second set in by half a key, the third after Shift; Enter
        # at the right of the last.
        rows = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
        offset = [0.5, 1.0, 2.0]
        place = {ch: (kx + (offset[r] + i) * kw / 10, ky + (r + 0.5) * kh / 4)
                 for r, keys in enumerate(rows) for i, ch in enumerate(keys)}
        words = []
        for ch in password:
            px, py = place[ch]
            words += [f"mousemove {round(px)} {round(py)}", "click 1", "sleep 0.15"]
        words += [f"mousemove {round(kx + kw - kw / 20)} {round(ky + 3.5 * kh / 4)}", "click 1", "mousemove 5 5"]
        assert desk.active()
        desk.as_user("xdotool " + " ".join(words))
        desk.unlocks()
    assert verify_results(clients, user) in ([], ["NOT_A_PATTERN"]), verify_results(clients, user)


FINGERPRINT_STANDIN = """#!/bin/sh
# A fingerprint reader's stand-in for the test: the PAM service kde-fingerprint
# succeeds once the test puts a file for the user, fails after two minutes.
for i in $(seq 1200); do
    if [ -e "/var/tmp/pl-finger/$PAM_USER" ]; then exit 0; fi
    sleep 0.1
done
exit 1
"""


def test_a_fingerprint_reader_beside_the_grid_is_named_on_screen_and_unlocks_without_the_pattern(
        trixie_system, project_debs):
    """Plasma 6 runs the PAM services kde-fingerprint and kde-smartcard beside
    kde's conversation. Our screen names a waiting reader in Breeze's words and
    unlocks when it succeeds, and the daemon is never asked. There is no reader
    here: kde-fingerprint is a stand-in stack (pam_exec of a script that
    succeeds when the test says the finger is on)."""
    s = trixie_system
    clients = Clients(s)
    clients.plasma = "6.3"
    clients.deb = project_debs["patternlock-plasma"]
    s.ok("mkdir -p -m 1777 /var/tmp/pl-finger && install -m 0755 /dev/stdin /usr/local/libexec/pl-fingerprint",
         input=FINGERPRINT_STANDIN)
    s.ok("printf 'auth required pam_exec.so quiet /usr/local/libexec/pl-fingerprint\\n' > /etc/pam.d/kde-fingerprint")
    try:
        user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
        with PlasmaLock(clients, user) as desk:
            desk.lock()
            desk.poll(lambda: desk.said(r'other="\(or scan your fingerprint on the reader\)"'),
                      "the screen naming the fingerprint reader")
            said = desk.read("fingerprint", expect=("scan your fingerprint",))
            assert "scan your fingerprint" in said, said
            s.ok(f"runuser -u {user} -- touch /var/tmp/pl-finger/{user}")
            desk.unlocks()
        assert verify_results(clients, user) == [], verify_results(clients, user)
    finally:
        s.run("rm -f /etc/pam.d/kde-fingerprint /usr/local/libexec/pl-fingerprint; rm -rf /var/tmp/pl-finger")


def test_on_wayland_kwin_starts_the_grid_through_the_drop_in_and_the_dragged_pattern_unlocks(
        trixie_system, project_debs):
    """Plasma 6 on Wayland: KWin locks the session and starts the greeter, so
    the variable must reach plasma-kwin_wayland.service, as the drop-in of
    `patternlock-plasma enable` gives it. A user's systemd starts that unit (KWin
    in a window on Xvfb, the only change for this machine), `loginctl
    lock-session` locks, the greeter (a Wayland client of KWin) shows our grid,
    the pattern dragged on KWin's window unlocks, and KWin's ScreenSaver says so;
    a wrong one first is refused and counted."""
    clients = Clients(trixie_system)
    clients.plasma = "6.3"
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with PlasmaLock(clients, user, wayland=True) as desk:
        desk.lock()
        env = desk.greeter_env()
        assert "QT_QPA_PLATFORM=wayland" in env, "the greeter is not KWin's Wayland client"
        assert "PLASMA_DEFAULT_SHELL=org.patternlock.plasma" in env
        desk.shot("wayland-locked")
        desk.drag(WRONG_PATTERN)
        desk.poll(lambda: desk.said(r"^attempt result=failure"), "the wrong pattern refused")
        assert desk.active()
        desk.poll(lambda: desk.count(r"^prompt kind=pattern") >= 2, "the module's prompt again")
        desk.drag(PATTERN)
        desk.unlocks()
    assert verify_results(clients, user) == ["FAIL,remaining=4", "OK"]


def test_plasma_mobile_s_session_shows_the_grid_low_on_the_phone_and_after_five_wrong_the_password_unlocks(plasma6):
    """Plasma Mobile 6.3 as startplasmamobile starts it: that script's
    environment (PLASMA_DEFAULT_SHELL=org.kde.plasma.mobileshell, the phone's
    PLASMA_PLATFORM, its KWin settings from plasma-mobile-envmanager) given to
    the user's systemd, then kwin_wayland's unit, which starts the greeter, on a
    phone's 720x1440 pixels at scale 2. The drop-in of `patternlock-plasma
    enable` wins over the session's shell: the grid shows, across most of the
    width and low, its centre below the screen's middle, where a thumb reaches; a wrong pattern says
    the attempts left, the right one unlocks as service kde; locked again, five
    wrong patterns say the lock, and the password typed unlocks, never seen by
    the daemon. (The password is typed on a keyboard: maliit, the phone's
    on-screen keyboard, starts in this session but KWin never shows its panel
    here, VirtualKeyboard visible=false even when forced, so tapping it is
    untested; PLASMA.md says so.)"""
    clients = plasma6
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with PlasmaLock(clients, user, mobile=True) as desk:
        status_text = desk.as_user(f"env XDG_RUNTIME_DIR=/run/user/{desk.uid} {desk.bus()} patternlock-plasma status")
        assert "Plasma Mobile: on" in status_text and "This session is Plasma Mobile's: its lock screen is the grid" \
            in status_text, status_text
        desk.lock()
        env = desk.greeter_env()
        assert "PLASMA_PLATFORM=phone:handset" in env, "not Plasma Mobile's session"
        assert "QT_QPA_PLATFORM=wayland" in env, "the greeter is not KWin's Wayland client"
        assert "PLASMA_DEFAULT_SHELL=org.patternlock.plasma" in env
        x, y, side = (int(v) for v in re.search(r"grid=(\d+),(\d+),(\d+)", desk.said(r"^phase=.* grid=")[-1]).groups())
        assert side >= 0.8 * 360 and y + side / 2 > 720 / 2, f"the grid at {x},{y} ({side} across) on a 360x720 phone"
        desk.shot("mobile-grid")
        wrong_then_right(desk, "mobile-wrong")
        assert verify_results(clients, user) == ["FAIL,remaining=4", "OK"]
        assert all(" service=kde " in line for line in verify_lines(clients, user)), verify_lines(clients, user)
        desk.lock()
        for n in range(1, 6):
            desk.poll(lambda: desk.count(r"^prompt kind=pattern") >= n, "the module's prompt")
            desk.drag(WRONG_PATTERN)
            desk.poll(lambda: desk.count(r"^attempt result=failure") >= n, f"wrong pattern {n} refused")
        desk.poll(lambda: desk.said(r"^prompt kind=password"), "pam_unix's prompt, with the field")
        said = desk.read("mobile-locked-out", expect=("locked after 5 failed attempts",))
        assert "locked after 5 failed attempts" in said, said
        before, counted = verify_lines(clients, user), status(clients, user)
        desk.type(PASSWORD)
        desk.unlocks()
        assert verify_lines(clients, user) == before and status(clients, user) == counted, \
            "the password reached the daemon"


def test_plasma_mobile_disabled_locks_with_its_own_screen_which_takes_the_typed_pattern(plasma6):
    """`patternlock-plasma disable` gives a phone its own lock screen back:
    the greeter gets Plasma Mobile's shell package, nothing of ours runs, and
    `status` says which lock screen the session gets."""
    clients = plasma6
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    out = clients.system.ok(f"runuser -u {user} -- patternlock-plasma enable && "
                            f"runuser -u {user} -- patternlock-plasma disable")
    assert "Plasma's own lock screen is back" in out, out
    with PlasmaLock(clients, user, enable=False, mobile=True) as desk:
        status_text = desk.as_user(f"env XDG_RUNTIME_DIR=/run/user/{desk.uid} {desk.bus()} patternlock-plasma status")
        assert "Plasma Mobile: off" in status_text and "its lock screen is its own PIN keypad" in status_text, \
            status_text
        desk.lock(grid=False)
        desk.poll(lambda: "PLASMA_DEFAULT_SHELL=org.kde.plasma.mobileshell" in desk.greeter_env(),
                  "the greeter given Plasma Mobile's shell package")
        # Its PIN keypad's field takes keys too: a key wakes it, the pattern's digits unlock.
        time.sleep(3)
        desk.as_user("xdotool key shift")
        time.sleep(1)
        desk.shot("mobile-disabled")
        desk.type(PATTERN)
        desk.unlocks()
        assert not desk.said(r"^phase=|^prompt kind="), "patternlock's lock screen ran"
    assert verify_results(clients, user) == ["OK"]


def test_the_pattern_typed_on_keys_1_to_9_unlocks_and_any_other_key_starts_the_password(plasma6):
    """The keyboard does what the pointer does: the dots typed as digits and
    Enter unlock as a drawn pattern does; locked again, a letter opens the
    password field with that letter in it, and the rest of the password typed
    after it unlocks, not counted as an attempt."""
    clients = plasma6
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    with PlasmaLock(clients, user) as desk:
        desk.lock()
        desk.type(PATTERN)
        desk.unlocks()
        desk.lock()
        assert not PASSWORD[0].isdigit()
        desk.type(PASSWORD)
        desk.unlocks()
        assert desk.said(r"^phase=password ")
    assert verify_results(clients, user) == ["OK"], verify_results(clients, user)


def test_hide_path_set_in_kscreenlockerrc_draws_no_lit_dot_while_the_pattern_is_drawn(plasma6):
    """The lock screen's hidePath setting (its config.xml; kscreenlockerrc
    [Greeter][LnF][General]): with it off, the dots a press has passed are lit
    while the finger is still down; with it on, they stay as they were, and
    the pattern still unlocks."""
    clients = plasma6
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    kwrite = "kwriteconfig6" if clients.plasma == "6.3" else "kwriteconfig5"

    def dot_while_drawing(desk):
        """The colour of dot 2 with the pointer pressed on 1 and moved over 2 to 3."""
        centre = desk.grid()
        (x1, y1), (x2, y2), (x3, y3) = centre(1), centre(2), centre(3)
        desk.as_user(f"xdotool mousemove --sync {round(x1)} {round(y1)} sleep 0.25 mousedown 1 sleep 0.25 "
                     f"mousemove {round(x2)} {round(y2)} sleep 0.25 mousemove {round(x3)} {round(y3)} sleep 0.5")
        colour = desk.pixel(x2, y2)
        desk.as_user("xdotool mouseup 1 mousemove 5 5")  # three dots: not counted
        desk.poll(lambda: desk.said(r"Connect at least 4 dots"), "the short path refused, uncounted")
        return colour

    with PlasmaLock(clients, user) as desk:
        desk.lock()
        r, g, b = dot_while_drawing(desk)
        assert b > 200 and r < 150, f"dot 2 is not lit while drawn: {r},{g},{b}"
        desk.drag(PATTERN)
        desk.unlocks()
        desk.as_user(f"{kwrite} --file kscreenlockerrc --group Greeter --group LnF --group General "
                     "--key hidePath true")
        desk.lock()
        r, g, b = dot_while_drawing(desk)
        assert abs(r - b) < 40 and r > 150, f"dot 2 is lit with hidePath set: {r},{g},{b}"
        desk.drag(PATTERN)
        desk.unlocks()
    assert verify_results(clients, user) == ["OK", "OK"], verify_results(clients, user)


def test_after_an_idle_lock_and_its_grace_time_the_drawn_pattern_unlocks(plasma6):
    """Plasma locks an idle session itself (kscreenlockerrc [Daemon] Timeout,
    in minutes), with a grace time (LockGrace) in which any input unlocks
    without a question and no conversation may start. After it, the first
    drawing starts one and answers it: the screen never waits for a question
    that was refused during the grace time."""
    clients = plasma6
    user = clients.user("plgrid", PASSWORD, pattern=PATTERN)
    kwrite = "kwriteconfig6" if clients.plasma == "6.3" else "kwriteconfig5"
    for key, value in (("Autolock", "true"), ("Timeout", "1"), ("LockGrace", "3")):
        clients.system.ok(f"runuser -u {user} -- {kwrite} --file kscreenlockerrc --group Daemon --key {key} {value}")
    with PlasmaLock(clients, user) as desk:
        # No input from here on: a minute without any, and the session locks.
        desk.poll(desk.active, "the idle lock", timeout=120)
        desk.wait(f"pgrep -u {user} -f 'kscreenlocker_greet.*--graceTime 3000' >/dev/null",
                  "the greeter started with the grace time")
        desk.poll(lambda: desk.said(r"^phase=pattern grid=.* shown=1 "), "the grid shown")
        desk.poll(desk.dots_painted, "the grid's dots on the screen")
        time.sleep(4)  # the grace time over: input no longer unlocks by itself
        desk.drag(PATTERN)
        desk.unlocks()
        assert desk.said(r"^answered kind=pattern")
    assert verify_results(clients, user) == ["OK"], verify_results(clients, user)
