# SPDX-License-Identifier: Apache-2.0
"""patternlock-setup, the window that sets the pattern by drawing it, on a real
compositor: an ordinary window (xdg_toplevel) of sway 1.10 in the booted Debian
13 container (conftest's trixie_system, the one test_screen_sway.py boots), with
this project's packages installed from `make deb` and the pam-auth-update
profile enabled, inside a real local logind session that `login` opened on a
pty (screen_desk.py).

A user whose pattern root enrolled changes it by drawing, as a person would:
the virtual pointer (build/tools/vpointer) drags the current pattern, then a new
one, clicks Continue, drags it again and clicks Done, at the places the
window's --debug lines give (logical pixels of the window; sway's tree says
where the window is). tesseract reads each stage's title on the screen as it
comes. The new pattern then unlocks patternlock-screen and the old one no
longer does, and sudo takes the new one at the module's prompt. A pattern
people choose most, drawn in the window, turns red and says why before the
button is released, and is not recorded.

One user and one sway session serve the whole module (a login and a sway
start saved per test); the tests run in file order, each on what the one
before left: the change is a module fixture, so a test run alone makes it too.

Screenshots land in build/screen-shots/setup-sway-*.png."""
import contextlib
import json
import re
import time

import pytest

from harness import debug_lines
from harness.clients import Clients
from harness.common import skip_or_fail
from harness.screen_desk import LOCKER, Desk, Lock, build_vpointer
from harness.screen_image import find_grid
from harness.screen_keyboard import KeyboardTyper

PASSWORD = "Set-up-Sw4y-pass"
OLD = "46183"  # root enrolled it; the default policy accepts it too
NEW = "2761834"  # accepted by the default policy: drawn 2-7-6-1-8-3-4, no dot passed over
COMMON = "1478"  # an L from a corner: among the patterns people choose most
SETUP = "patternlock-setup"
APP_ID = "org.patternlock.Setup"


def packaged(debs, name):
    if name not in debs:
        skip_or_fail(f"make deb made no {name} package, so {SETUP} cannot be tested on sway; "
                     f"it made only {', '.join(sorted(debs))}")


class Session:
    """The module's user, logged in on a pty with a headless sway (the desk)."""

    def __init__(self, system, desk, user):
        self.system, self.desk, self.user = system, desk, user
        self.clients = Clients(system)

    def daemon_lines(self, verb):
        return [line for line in self.clients.daemon_lines(self.user) if line.startswith(verb + " ")]

    def results(self, verb="verify"):
        return [re.search(r" result=(\S+)", line).group(1) for line in self.daemon_lines(verb)]

    def status(self):
        return self.system.run(f"patternlockd status {self.user}").stdout


@pytest.fixture(scope="module")
def session(trixie_system):
    s = trixie_system
    packaged(s.debs, "patternlock-screen")
    for command in (SETUP, LOCKER):
        assert s.run(f"command -v {command}").returncode == 0, f"the patternlock-screen package installed no {command}"
    assert "pam_patternlock.so" in s.ok("cat /etc/pam.d/common-auth")
    build_vpointer()
    user = Clients(s).user("plset", PASSWORD, pattern=OLD)
    with Desk(s, user, PASSWORD, shot_prefix="setup-sway") as desk:
        desk.pointer()  # the seat has a pointer before any window starts
        yield Session(s, desk, user)
    s.run(f"userdel --remove {user}")


class SetupWindow:
    """One `patternlock-setup --debug` run in the desk's session."""

    PREFIX = f"{SETUP}: "

    def __init__(self, desk):
        self.desk = desk
        self.n = desk.start(f"exec {SETUP} --debug")
        self.await_line(r"^stage=")  # configured, and the first stage drawn
        self.origin, width = self.place()
        # sway may tile the window after it first drew at its own size: its
        # place and size are sway's, and the window has drawn at that size.
        self.desk.poll(lambda: abs(self.width() - width) <= 1, f"the window drawn {width} wide, as sway tiles it")

    def log(self):
        return self.desk.out(self.n)

    def lines(self):
        """What it said so far, whole lines only, without the prefix."""
        log = self.log()
        return [line[len(self.PREFIX):] for line in log[:log.rfind("\n") + 1].splitlines()
                if line.startswith(self.PREFIX)]

    def mark(self):
        return len(self.lines())

    def rc(self):
        return self.desk.rc(self.n)

    def await_line(self, pattern, since=0, timeout=20):
        """The first line from `since` on matching the regex, waited for."""
        rx = re.compile(pattern)

        def said():
            return next((line for line in self.lines()[since:] if rx.search(line)), None)
        line = self.desk.poll(lambda: said() or self.rc() is not None, f"/{pattern}/ from {SETUP}", timeout)
        assert said(), f"{SETUP} ended with status {self.rc()} before saying /{pattern}/:\n{self.log()}"
        return line

    def stage(self):
        """The newest stage line."""
        return [line for line in self.lines() if line.startswith("stage=")][-1]

    def place(self):
        """Where sway shows the window's surface: its top left in the layout."""
        def views(node):
            yield node
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                yield from views(child)

        def view():
            tree = json.loads(self.desk.swaymsg("-t get_tree"))
            return next((v for v in views(tree) if v.get("app_id") == APP_ID), None)
        v = self.desk.poll(view, f"a window with app_id {APP_ID} in sway's tree")
        return (v["rect"]["x"] + v["window_rect"]["x"], v["rect"]["y"] + v["window_rect"]["y"]), \
            v["window_rect"]["width"]

    def grid(self):
        """The grid's place in the window (x, y, side), as the window last said."""
        return debug_lines.grid(self.stage())

    def width(self):
        x, _, side = self.grid()
        return 2 * x + side  # the grid is centred

    def centre(self, dot):
        """Dot `dot`'s centre in the layout (the virtual pointer's and grim's pixels)."""
        x, y = debug_lines.centre(self.grid(), dot)
        return round(self.origin[0] + x), round(self.origin[1] + y)

    def button(self, label):
        """Where the enabled button `label` is now, as the newest stage line says."""
        line = self.stage()
        found = debug_lines.button(line, label)
        assert found, f"no enabled {label} button now: {line}"
        return self.origin[0] + found[0], self.origin[1] + found[1]

    def click(self, label):
        pointer = self.desk.pointer()
        pointer.move(*self.button(label), steps=3)
        pointer.press()
        pointer.release()

    def drag(self, pattern, before_release=None):
        """The virtual pointer's drag through the pattern's dots; the button is
        released even when before_release() fails, so the tests after it start
        with the button up."""
        pointer = self.desk.pointer()
        try:
            pointer.drag([self.centre(int(d)) for d in pattern], before_release=before_release)
        except BaseException:
            with contextlib.suppress(Exception):
                pointer.release()
            raise

    def titles(self):
        """The window's top, where the title and the line under it are (a
        smaller picture, read sooner): as wide as the window (the grid is
        centred in it), down to the grid."""
        return self.origin[0], self.origin[1], self.width(), self.grid()[1] - 5

    def read(self, pattern, what, timeout=15):
        """What tesseract reads in the window's top once it matches the regex,
        and that screenshot."""
        found = {}

        def check():
            image = self.desk.screen(region=self.titles())
            found.update(text=self.desk.read(image), image=image)
            return re.search(pattern, found["text"])
        try:
            self.desk.poll(check, what, timeout, every=0.2)
        except AssertionError:
            raise AssertionError(f"OCR never read {pattern!r} in the window; last read: {found.get('text')!r}; "
                                 f"saved as {self.desk.save(found['image'], 'ocr-miss')}") from None
        return found["text"], found["image"]

    def along(self, image, dots):
        """How many pixels on the segments between `dots` (away from the dots)
        are red, and how many green, in a screenshot of the whole layout."""
        red = green = 0
        for a, b in zip(dots, dots[1:]):
            (ax, ay), (bx, by) = self.centre(a), self.centre(b)
            for i in range(3, 8):
                r, g, b_ = image.pixel(ax + (bx - ax) * i / 10, ay + (by - ay) * i / 10)
                red += r > 180 and g < 110
                green += g > 150 and r < 150 and b_ < 150
        return red, green

    def ended(self, timeout=30):
        return self.desk.ended(self.n, timeout)


def dots(pattern):
    return [int(d) for d in pattern]


@pytest.fixture(scope="module")
def changed(session):
    """The user's pattern changed from OLD to NEW by drawing in the window, as
    test 1 describes; what the screen said at each stage, for it to check."""
    desk = session.desk
    w = SetupWindow(desk)
    read = {}
    assert w.stage().startswith('stage=current title="Draw your current pattern"'), w.stage()
    idle = desk.screen()
    desk.save(idle, "current")
    # The window draws its grid where it says it does.
    grid = find_grid(idle)
    assert grid, f"no 3x3 grid on the screen; saved as {desk.save(idle, 'no-grid')}"
    for d in range(1, 10):
        assert max(abs(a - b) for a, b in zip(grid[d], w.centre(d))) <= 2, (d, grid[d], w.centre(d))
    read["current"], _ = w.read(r"Draw your current pattern", "the current pattern's stage")

    mark = w.mark()
    w.drag(OLD)
    w.await_line(r'^stage=first title="Draw an unlock pattern"', mark)
    read["first"], _ = w.read(r"Draw an unlock pattern", "the new pattern's stage")

    held = {}

    def look():
        """The button still down on the last dot: the daemon's CHECK accepted
        the path, the title asks to release and the line is green."""
        held["line"] = w.await_line(r'^stage=first title="Release finger when done" verdict=acceptable dots=7 ', mark)
        held["text"], held["image"] = w.read(r"Release finger when done", "the title while drawing")
        whole = desk.screen()
        held["colours"] = w.along(whole, dots(NEW))
        desk.save(whole, "acceptable-green")
    mark = w.mark()
    w.drag(NEW, before_release=look)
    read["drawing"] = held["text"]
    red, green = held["colours"]
    assert (red, green) == (0, 5 * (len(NEW) - 1)), \
        f"the accepted path is not green: {red} red, {green} green of its {5 * (len(NEW) - 1)} points"

    line = w.await_line(r'^stage=recorded title="Pattern recorded" verdict=acceptable', mark)
    assert " dots=7 " in line and '"Continue"@' in line and '(off)' not in line, line
    read["recorded"], _ = w.read(r"Pattern recorded", "the recorded stage")
    desk.save(desk.screen(), "recorded")
    mark = w.mark()
    w.click("Continue")
    w.await_line(r'^stage=confirm title="Draw the pattern again to confirm"', mark)
    read["confirm"], _ = w.read(r"Draw the pattern again to confirm", "the confirmation stage")

    mark = w.mark()
    w.drag(NEW)
    w.await_line(r'^stage=done title="Your new unlock pattern is set"', mark)
    read["done"], _ = w.read(r"Your new unlock pattern is set", "the done stage")
    desk.save(desk.screen(), "done")
    w.click("Done")
    rc = w.ended()
    return {"read": read, "rc": rc, "log": w.log()}


def test_the_pattern_is_changed_by_dragging_the_current_one_and_the_new_one_twice_and_each_stage_is_read(
        session, changed):
    assert changed["rc"] == 0, changed["log"]
    log = changed["log"]
    assert f"{SETUP}: close set=1" in log, log
    read = changed["read"]
    for stage, words in [("current", "Draw your current pattern"), ("first", "Draw an unlock pattern"),
                         ("drawing", "Release finger when done"), ("recorded", "Pattern recorded"),
                         ("confirm", "Draw the pattern again to confirm"), ("done", "Your new unlock pattern is set")]:
        assert words in read[stage], (stage, read[stage])
    assert "Acceptable" in read["recorded"], read["recorded"]
    # The daemon heard one ENROLL, from the user's own process (the current
    # pattern with it, so no password was asked), and set it.
    uid = session.clients.uid(session.user)
    enrolls = [line for line in session.daemon_lines("enroll") if f" uid={uid} " in line]
    assert len(enrolls) == 1 and " result=OK" in enrolls[0], enrolls
    said = log.replace(session.user, "")
    assert OLD not in said and NEW not in said, "a pattern reached the --debug output"
    assert f"{session.user}: enrolled, 0 failures" in session.status(), session.status()


def test_then_the_new_pattern_unlocks_patternlock_screen_and_the_old_one_no_longer_does(session, changed):
    desk = session.desk
    before = session.results()
    lock = Lock(desk)
    lock.await_prompt("pattern")
    grid, _ = lock.grid()
    mark = lock.mark()
    desk.pointer().drag([grid[d] for d in dots(OLD)])
    lock.await_line("attempt result=failure", mark)
    lock.await_prompt("pattern", mark)
    grid, _ = lock.grid()
    desk.pointer().drag([grid[d] for d in dots(NEW)])
    lock.unlocked()
    assert session.results()[len(before):] == ["FAIL,remaining=4", "OK"]
    assert all(f" service={LOCKER} " in line for line in session.daemon_lines("verify")[len(before):])
    # The success cleared the one wrong attempt.
    assert f"{session.user}: enrolled, 0 failures" in session.status(), session.status()


def test_sudo_takes_the_new_pattern_typed_as_digits(session, changed):
    s, user = session.system, session.user
    snippet = f"/etc/sudoers.d/plsetup-{user}"
    before = session.results()
    s.ok(f"echo '{user} ALL=(ALL) ALL' > {snippet} && chmod 440 {snippet}")
    try:
        out = session.clients.session(user, PASSWORD, [
            [["send", "sudo -k sh -c 'echo SUDO-OK $(id -un)'\n"], ["expect", "Pattern or password: "],
             ["secret", NEW + "\n"], ["expect", "SUDO-OK root"]],
        ])
        assert "password for" not in out and "Sorry" not in out, out
    finally:
        s.ok(f"rm -f {snippet}")
    assert session.results()[len(before):] == ["OK"]
    assert " service=sudo " in session.daemon_lines("verify")[-1]


def test_a_common_pattern_turns_red_and_says_why_before_the_button_is_released_and_is_not_recorded(
        session, changed):
    desk = session.desk
    enrolls = session.daemon_lines("enroll")
    w = SetupWindow(desk)
    w.await_line(r'^stage=current title="Draw your current pattern"')
    mark = w.mark()
    w.drag(NEW)
    w.await_line(r'^stage=first title="Draw an unlock pattern"', mark)
    held = {}

    def look():
        held["line"] = w.await_line(r"^stage=first .*verdict=refused reason=common", mark)
        held["text"], image = w.read(r"patterns people choose most", "the reason while the button is down")
        desk.save(image, "refused-reason")
        whole = desk.screen()
        held["colours"] = w.along(whole, dots(COMMON))
        held["shot"] = desk.save(whole, "refused-red")
        held["mark"] = w.mark()
    mark = w.mark()
    w.drag(COMMON, before_release=look)
    # Said and shown while the button was still down.
    assert 'title="Release finger when done"' in held["line"] and " dots=4 " in held["line"], held["line"]
    assert "patterns people choose most" in held["line"], held["line"]
    assert "Acceptable" not in held["text"] and "one of the" in held["text"], held["text"]
    red, green = held["colours"]
    assert (red, green) == (5 * (len(COMMON) - 1), 0), \
        f"the refused path is not red: {red} red, {green} green of its {5 * (len(COMMON) - 1)} points; {held['shot']}"
    # Released: not recorded; the stage asks for a pattern again.
    line = w.await_line(r'^stage=first title="Draw an unlock pattern" verdict=refused', held["mark"])
    assert '"Continue"@' in line and "(off)" in line.split('"Continue"')[1][:20], line
    time.sleep(0.5)
    assert w.stage().startswith('stage=first title="Draw an unlock pattern"'), w.stage()
    assert not [line for line in w.lines() if line.startswith("stage=recorded")], w.log()
    w.click("Cancel")
    assert w.ended() == 1, w.log()
    assert session.daemon_lines("enroll") == enrolls, "something was sent to be set"
    assert f"{session.user}: enrolled, 0 failures" in session.status(), session.status()


class WindowClickTyper(KeyboardTyper):
    """Clicks the keys of the setup window's on-screen keyboard with the
    virtual pointer, found in the window's --debug description of it (the lock
    screen's form, harness/screen_keyboard.py), at the window's place in sway's
    layout."""

    def __init__(self, window):
        super().__init__()
        self.w = window

    def mark(self):
        return self.w.mark()

    def said(self, pattern, start=0):
        rx = re.compile(pattern)
        return [line for line in self.w.lines()[start:] if rx.search(line)]

    def await_said(self, pattern, start=0):
        self.w.await_line(pattern, start)

    def tap_at(self, x, y):
        pointer = self.w.desk.pointer()
        pointer.move(self.w.origin[0] + x, self.w.origin[1] + y, steps=2)
        pointer.press()
        pointer.release()


@pytest.fixture
def first_user(trixie_system):
    """A user with no pattern yet, who may use sudo with the password."""
    s = trixie_system
    packaged(s.debs, "patternlock-screen")
    build_vpointer()
    user = Clients(s).user("plfirst", PASSWORD, sudo=True)
    yield user
    s.run(f"rm -f /etc/sudoers.d/{user}; patternlockd remove {user} >/dev/null 2>&1; "
          f"loginctl terminate-user {user} 2>/dev/null; userdel --remove {user}")


def test_a_first_pattern_is_drawn_twice_and_the_password_clicked_on_the_windows_keyboard_sets_it(
        trixie_system, first_user):
    """A desktop session on seat0 (as a display manager's; polkit asks the
    user's own password there) with no polkit agent of its own, as sway has
    none: the window runs polkit's text agent on a terminal it holds and asks
    the password itself. The password is clicked key by key on the window's
    on-screen keyboard (no keyboard event), then the drawn pattern unlocks
    patternlock-screen and sudo takes it typed."""
    s, user = trixie_system, first_user
    clients = Clients(s)
    assert s.run(f"test -e /var/lib/private/patternlock/{user}").returncode != 0
    with Desk(s, user, PASSWORD, shot_prefix="setup-first", seat=True) as desk:
        desk.pointer()
        w = SetupWindow(desk)
        assert w.stage().startswith('stage=first title="Draw an unlock pattern"'), w.stage()
        read = {"first": w.read(r"Draw an unlock pattern", "the first stage")[0]}
        mark = w.mark()
        w.drag(NEW)
        w.await_line(r'^stage=recorded title="Pattern recorded" verdict=acceptable', mark)
        read["recorded"] = w.read(r"Pattern recorded", "the recorded stage")[0]
        mark = w.mark()
        w.click("Continue")
        w.await_line(r'^stage=confirm title="Draw the pattern again to confirm"', mark)
        read["confirm"] = w.read(r"Draw the pattern again to confirm", "the confirmation stage")[0]
        mark = w.mark()
        w.drag(NEW)
        # polkit, through the window's own agent: its question with the field and keyboard.
        line = w.await_line(r'^stage=password title="Enter your password"', mark, timeout=40)
        assert 'question="Password: "' in line, line
        assert "Setting your first unlock pattern needs your password." in line, line
        assert f"Authenticating as: {user}" in line or f"({user})" in line, line
        text, image = w.read(r"Enter your password", "the password stage")
        read["password"] = text
        desk.save(desk.screen(), "password")
        assert "Setting your first unlock pattern" in text, text
        assert find_grid(image) is None
        typer = WindowClickTyper(w)
        typer.shown(mark)
        typer.type(PASSWORD)
        shot = desk.screen()
        desk.save(shot, "password-typed")
        mark = w.mark()
        w.click("Authenticate")
        w.await_line(r'^stage=done title="Your new unlock pattern is set"', mark, timeout=40)
        read["done"] = w.read(r"Your new unlock pattern is set", "the done stage")[0]
        w.click("Done")
        assert w.ended() == 0, w.log()
        log = w.log()
    for stage, words in [("first", "Draw an unlock pattern"), ("recorded", "Pattern recorded"),
                         ("confirm", "Draw the pattern again to confirm"), ("password", "Enter your password"),
                         ("done", "Your new unlock pattern is set")]:
        assert words in read[stage], (stage, read[stage])
    assert PASSWORD not in log and NEW not in log.replace(user, ""), "a secret reached the --debug output"
    enrolls = [line for line in clients.daemon_lines(user) if line.startswith("enroll ")]
    assert len(enrolls) == 1 and " result=OK" in enrolls[0] and "password_proof=proven" in enrolls[0], enrolls
    assert f"{user}: enrolled, 0 failures" in s.run(f"patternlockd status {user}").stdout
    # The drawn pattern unlocks the lock screen, and sudo takes it typed.
    with Desk(s, user, PASSWORD, shot_prefix="setup-first") as desk:
        lock = Lock(desk)
        lock.await_prompt("pattern")
        grid, _ = lock.grid()
        desk.pointer().drag([grid[d] for d in dots(NEW)])
        lock.unlocked()
    out = clients.session(user, PASSWORD, [
        [["send", "sudo -k sh -c 'echo SUDO-OK $(id -un)'\n"], ["expect", "Pattern or password: "],
         ["secret", NEW + "\n"], ["expect", "SUDO-OK root"]],
    ])
    assert "password for" not in out and "Sorry" not in out, out
    verifies = [line for line in clients.daemon_lines(user) if line.startswith("verify ")]
    assert [re.search(r" result=(\S+)", v).group(1) for v in verifies] == ["OK", "OK"], verifies

