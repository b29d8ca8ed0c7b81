# SPDX-License-Identifier: Apache-2.0
"""patternlock-screen on a real compositor: sway 1.10 (ext-session-lock-v1) in
the booted Debian 13 container (conftest's trixie_system), with this project's
packages installed from `make deb` and the pam-auth-update profile enabled,
inside a real local logind session that `login` opened on a pty (screen_desk.py).

The tests draw with a virtual pointer (build/tools/vpointer) on the dots they
find in a screenshot, type with wtype or click the keys of the locker's
on-screen keyboard with that pointer (found by what they type in its --debug
description, harness/screen_keyboard.py), look with grim and read the screen
with tesseract, as a person would; what the daemon heard comes from its journal.
On Debian 12's sway 1.7, which lacks the protocol, the locker must refuse.

Screenshots land in build/screen-shots/ (the telling ones are copied to
docs/screenshots/: screen-wrong-red.png, screen-killed.png, screen-second-output.png,
patternlock-screen-keyboard.png from screen-keyboard.png)."""
import json
import random
import re

import pytest

from harness.common import MIDDLE, skip_or_fail
from harness.screen_desk import COLOUR, DEBUG, LOCKER, Desk, Lock, build_vpointer
from harness.screen_image import distance, find_grid, is_red
from harness.screen_keyboard import KeyboardTyper
from harness.clients import Clients

PASSWORD = "Lock-Scr33n-pass"
PATTERN = "46183"  # accepted by the enroll policy the packaged daemon runs; 4 to 6 passes over 5
WRONG = "2589"  # a valid pattern, so each one counts
DESKTOP = (0x00, 0xAA, 0x00)  # screen_session.sh's desktop colour


def drawn(typed):
    """The dots a drag through the typed dots' centres lights, in order: a
    straight move over an unused dot takes it too (docs: the pattern rules)."""
    used = []
    for d in map(int, typed):
        middle = MIDDLE.get((used[-1], d)) if used else None
        if middle is not None and middle not in used:
            used.append(middle)
        used.append(d)
    return used


class Screen(Clients):
    """trixie_system with the locker's helpers."""

    def user(self, prefix, password, pattern=None, sudo=False):
        # Letters OCR cannot take for digits or for each other (no i, l, o),
        # since the lock sentence names the user.
        name = prefix + "".join(random.choice("abcdefghkmnprstuvwxyz") for _ in range(6))
        self.system.ok(f"useradd --create-home --shell /bin/bash {name}")
        self.system.ok("chpasswd", input=f"{name}:{password}\n")
        if pattern:
            self.system.ok(f"patternlockd enroll {name}", input=f"{pattern}\n{pattern}\n")
        return name

    def verify_lines(self, user):
        return [line for line in self.daemon_lines(user) if line.startswith("verify ")]

    def results(self, user):
        return [re.search(r" result=(\S+)", line).group(1) for line in self.verify_lines(user)]


def packaged_locker(debs):
    """The patternlock-screen .deb `make deb` made; without it the locker
    cannot be tested (under CI: a failure)."""
    if LOCKER not in debs:
        skip_or_fail("make deb made no patternlock-screen package (build/patternlock-screen_*.deb), so the lock "
                     f"screen cannot be tested; it made only {', '.join(sorted(debs))}")
    return debs[LOCKER]


@pytest.fixture(scope="module")
def debian13(trixie_system):
    return Screen(trixie_system)


@pytest.fixture(scope="module")
def screen(debian13):
    s = debian13.system
    packaged_locker(s.debs)
    assert s.run(f"command -v {LOCKER}").returncode == 0, "the patternlock-screen package installed no command"
    pam = s.ok(f"cat /etc/pam.d/{LOCKER}")
    assert "@include common-auth" in pam, pam
    assert "pam_patternlock.so" in s.ok("cat /etc/pam.d/common-auth")
    build_vpointer()
    return debian13


class ClickTyper(KeyboardTyper):
    """Clicks the keys of the locker's on-screen keyboard with the desk's
    virtual pointer (no keyboard event at all), keys found in the locker's
    --debug output (harness/screen_keyboard.py). The locker says where a key is
    in its lock surface's coordinates; a lock surface covers its output, so the
    pointer goes there plus the output's place in sway's layout (the virtual
    pointer moves over the whole layout)."""

    def __init__(self, lock, output="HEADLESS-1"):
        super().__init__()
        self.lock = lock
        self.KEYBOARD = rf"^keyboard output={re.escape(output)} "
        outputs = json.loads(lock.desk.swaymsg("-t get_outputs"))
        rect = next(o["rect"] for o in outputs if o["name"] == output)
        self.origin = (rect["x"], rect["y"])
        # The virtual pointer's extent is the desk's size: the layout must be no
        # bigger, or its motions would land elsewhere.
        right = max(o["rect"]["x"] + o["rect"]["width"] for o in outputs if o.get("active", True))
        bottom = max(o["rect"]["y"] + o["rect"]["height"] for o in outputs if o.get("active", True))
        assert (right, bottom) == tuple(lock.desk.size), f"the layout is {right}x{bottom}, not {lock.desk.size}"

    def lines(self):
        """The locker's whole lines so far (a line being written is left out)."""
        log = self.lock.log()
        return log[:log.rfind("\n") + 1].splitlines()

    def mark(self):
        """Counts whole lines (Lock.mark() counts characters)."""
        return len(self.lines())

    def said(self, pattern, start=0):
        rx = re.compile(pattern)
        return [line[len(DEBUG):] for line in self.lines()[start:]
                if line.startswith(DEBUG) and rx.search(line[len(DEBUG):])]

    def await_said(self, pattern, start=0):
        self.lock.desk.poll(lambda: self.said(pattern, start) or self.lock.rc() is not None,
                            f"/{pattern}/ from {LOCKER}")
        assert self.lock.rc() is None, f"{LOCKER} ended with status {self.lock.rc()}: {self.lock.log()}"

    def tap_at(self, x, y):
        pointer = self.lock.desk.pointer()
        pointer.move(self.origin[0] + x, self.origin[1] + y)
        pointer.press()
        pointer.release()


def lit_and_unlit(desk, idle, now, grid, dots):
    """Which of `dots` changed on the screen since the idle shot, and which of
    the others did."""
    spacing = distance(grid[1], grid[2])
    radius = max(3, int(spacing / 5))

    def changed(d):
        x, y = grid[d]
        return idle.around(x, y, radius) != now.around(x, y, radius)
    return [d for d in dots if changed(d)], [d for d in range(1, 10) if d not in dots and changed(d)]


def segment_midpoints(grid, dots):
    return [((grid[a][0] + grid[b][0]) / 2, (grid[a][1] + grid[b][1]) / 2) for a, b in zip(dots, dots[1:])]


def test_the_right_pattern_dragged_across_the_dots_unlocks_and_the_path_lights_as_it_is_drawn(screen):
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        desktop = desk.screen()
        assert desktop.background() == DESKTOP, "the desktop's colour is not what screen_session.sh set"
        lock = Lock(desk)
        lock.await_prompt("pattern")
        grid, idle = lock.grid()
        desk.save(idle, "locked")
        assert DESKTOP not in idle.colours(), "the desktop shows through the lock screen"
        path = drawn(PATTERN)
        assert path == [4, 5, 6, 1, 8, 3]
        shots = []

        def look():
            """The finger still down on the last dot: the screen, once the
            locker has drawn what it was sent (or after a while, as it is)."""
            def drawn_whole():
                shots.append(desk.screen())
                return lit_and_unlit(desk, idle, shots[-1], grid, path)[0] == path
            try:
                desk.poll(drawn_whole, "the whole path lit", timeout=5, every=0.1)
            except AssertionError:
                pass
        desk.pointer().drag([grid[int(d)] for d in PATTERN], before_release=look)
        mid = shots[-1]
        desk.save(mid, "drawing")
        lit, others = lit_and_unlit(desk, idle, mid, grid, path)
        assert lit == path and others == [], f"lit {lit} (of {path}), and {others} that are not on the path"
        bg = idle.background()
        for x, y in segment_midpoints(grid, path):
            assert idle.pixel(x, y) == bg, "the idle screen has something between the dots"
            assert mid.pixel(x, y) != bg, f"no line drawn through ({x}, {y}) between two lit dots"
        lock.unlocked()
        assert lock.lines("attempt result=success"), lock.log()
        assert screen.results(user) == ["OK"]
        line = screen.verify_lines(user)[-1]
        assert f" service={LOCKER} " in line, line
        # Unlocked: the desktop is back.
        assert desk.poll(lambda: desk.screen().background() == DESKTOP, "the desktop after the unlock")


def wrong_pattern(desk, lock, grid, n, shot=None):
    """Draws WRONG (the n-th wrong one); returns the first screenshot in which
    its dots and lines are red."""
    desk.pointer().drag([grid[int(d)] for d in WRONG])
    path = drawn(WRONG)
    points = [grid[d] for d in path] + segment_midpoints(grid, path)

    def red():
        image = desk.screen("HEADLESS-1")
        return image if all(any(is_red(c) for c in image.around(x, y, 2)) for x, y in points) else None
    image = desk.poll(red, f"wrong pattern {n} drawn in red", timeout=5, every=0.05)
    if shot:
        desk.save(image, shot)
    return image


def red_cleared(desk, grid):
    """Waits until the wrong path's red has gone (about a second); returns
    that screenshot."""
    def cleared():
        image = desk.screen("HEADLESS-1")
        return image if not any(is_red(c) for d in drawn(WRONG) for c in image.around(*grid[d], 2)) else None
    return desk.poll(cleared, "the red path to clear", timeout=10, every=0.2)


def read_until(desk, pattern, what, timeout=15, region=None):
    """The text tesseract reads on the screen (or a region of it) once it
    matches the regex. The pointer first goes to a corner, as a hand leaves the
    mouse to read: a cursor resting where the last drag ended may sit on the
    words."""
    desk.pointer().move(2, 2)
    found = {}

    def check():
        image = desk.screen(region=region) if region else desk.screen("HEADLESS-1")
        # A band of text lines: read as one block, at its size, twice and three
        # times as large; the text is each reading, and a match in any of them
        # is the screen's (a wrong screen reads wrong at every size).
        text = (" || ".join(desk.read(image.scaled(n), block=True) for n in (1, 2, 3)) if region
                else desk.read(image))
        found.update(text=text, image=image)
        return re.search(pattern, text)
    try:
        desk.poll(check, what, timeout, every=0.5)
    except AssertionError:
        raise AssertionError(f"OCR never read {pattern!r} on the screen; last read: {found.get('text')!r}; "
                             f"saved as {desk.save(found['image'], 'ocr-miss')}") from None
    return found["text"], found["image"]


def read_above_keyboard(desk, lock, pattern, what):
    """What tesseract reads in the band above the on-screen keyboard, as one
    block of text lines, once it matches the regex, and a screenshot of the
    whole screen. tesseract's page analysis (over the whole screen, and even
    over the band) may take a long line for two columns and cut it in two
    ("fai" / "led"), and a random user name reads wrong at one size or
    another ("c" for "e" at its own size, "b" for "bh" at twice it): each
    failing screenshot reads whole as one block at one of three sizes."""
    pages = ClickTyper(lock).shown()
    rows = sorted({y for _, (_, y) in pages["letters"]})
    band = (0, 0, desk.size[0], int(rows[0] - (rows[1] - rows[0]) / 2))
    text, _ = read_until(desk, pattern, what, region=band)
    return text, desk.screen("HEADLESS-1")


def read_keyboard(desk, lock, pattern, what):
    """What tesseract reads on the on-screen keyboard's band (from half a row
    above its first row to the screen's bottom), as one block at three sizes,
    once it matches the regex: over the whole screen its page analysis may
    take the keys for columns and lose the right-hand ones."""
    pages = ClickTyper(lock).shown()
    rows = sorted({y for _, (_, y) in pages["letters"]})
    top = int(rows[0] - (rows[1] - rows[0]) / 2)
    text, _ = read_until(desk, pattern, what, region=(0, top, desk.size[0], desk.size[1] - top))
    return text


def test_a_wrong_pattern_turns_red_and_the_screen_says_how_many_attempts_are_left(screen):
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        lock = Lock(desk)
        lock.await_prompt("pattern")
        grid, idle = lock.grid()
        mark = lock.mark()
        red = wrong_pattern(desk, lock, grid, 1, shot="wrong-red")
        # The dots not drawn stay as they were.
        assert not [d for d in range(1, 10) if d not in drawn(WRONG) and any(is_red(c) for c in red.around(*grid[d], 2))]
        # The red clears; what the module said stays on the screen.
        red_cleared(desk, grid)
        text, image = read_until(desk, r"4 attempts left", "the attempts left on the screen")
        desk.save(image, "wrong")
        assert "Wrong pattern" in text, text
        assert screen.results(user) == ["FAIL,remaining=4"]
        assert any("4 attempts left" in m for m in lock.lines("message ")), lock.log()
        # The wrong pattern ended the attempt: the next one asks the pattern
        # again, never pam_unix's password field; the password typed there
        # (its first key opens the field) unlocks.
        lock.await_line("attempt result=failure", since=mark)
        lock.await_prompt("pattern", since=mark)
        assert not [x for x in lock.lines("prompt kind=") if x != "prompt kind=pattern"], lock.log()
        desk.type_secret(PASSWORD)
        lock.unlocked()
    assert screen.results(user) == ["FAIL,remaining=4"], "the password reached the daemon"


def five_wrong_patterns(screen, desk, lock, user):
    """Drags WRONG five times on the grid; returns where the grid was."""
    for n in range(1, 6):
        grid, _ = lock.grid()
        mark = lock.mark()
        wrong_pattern(desk, lock, grid, n)
        # Each wrong pattern ends its attempt; the next asks the pattern
        # again until the fifth locked it: then the module says so and
        # pam_unix asks for the password.
        lock.await_line("attempt result=failure", since=mark)
        lock.await_prompt("pattern" if n < 5 else "password", since=mark)
    assert screen.results(user) == [f"FAIL,remaining={n}" for n in (4, 3, 2, 1, 0)]
    return grid


def keyboards(desk):
    """The keyboards sway's seat has (wtype adds one while it types)."""
    return [i["identifier"] for i in json.loads(desk.swaymsg("-t get_inputs")) if i["type"] == "keyboard"]


def test_five_wrong_patterns_put_the_whole_lock_sentence_on_the_screen_and_the_password_still_unlocks(screen):
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        lock = Lock(desk)
        lock.await_prompt("pattern")
        grid = five_wrong_patterns(screen, desk, lock, user)
        # Once the red path has gone, the screen shows no grid, and the lock
        # sentence whole.
        image = red_cleared(desk, grid)
        assert find_grid(image) is None, \
            f"the grid is still on the screen of a locked pattern; saved as {desk.save(image, 'locked-grid')}"
        text, image = read_above_keyboard(desk, lock, rf"patternlockd reset {user}",
                                          "the whole lock sentence on the screen")
        desk.save(image, "now-locked")
        # The fifth pattern's sentence ("is now locked"), or the next attempt's
        # ("is locked"), whichever the screen shows when it is read.
        assert re.search(rf"Pattern unlock for {user} is (now )?locked after 5 failed attempts", text), text
        assert find_grid(image) is None, "the grid came back"
        before = screen.verify_lines(user)
        status = screen.system.run(f"patternlockd status {user}").stdout
        assert f"{user}: LOCKED since " in status, status
        desk.type_secret(PASSWORD)
        lock.unlocked()
        assert screen.verify_lines(user) == before, "the password reached the daemon"
        assert screen.system.run(f"patternlockd status {user}").stdout == status
    screen.system.ok(f"patternlockd reset {user}")


def test_after_five_wrong_patterns_the_password_clicked_on_the_on_screen_keyboard_unlocks(screen):
    """No keyboard event at all: the patterns are dragged and every key of the
    password is clicked with the virtual pointer on the keyboard the locker
    draws under the lock sentence (the last input was a pointer's)."""
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        lock = Lock(desk)
        lock.await_prompt("pattern")
        grid = five_wrong_patterns(screen, desk, lock, user)
        typer = ClickTyper(lock)
        typer.shown()
        red_cleared(desk, grid)
        text, image = read_above_keyboard(desk, lock, rf"patternlockd reset {user}",
                                          "the lock sentence above the keyboard")
        assert re.search(rf"Pattern unlock for {user} is (now )?locked after 5 failed attempts", text), text
        desk.save(image, "keyboard")
        read_keyboard(desk, lock, r"Enter", "the keyboard's Enter key on the screen")
        assert find_grid(image) is None, "the grid shows with the keyboard"
        before = screen.verify_lines(user)
        status = screen.system.run(f"patternlockd status {user}").stdout
        typer.type(PASSWORD)
        typer.tap("Enter")
        assert keyboards(desk) == [], "the seat has a keyboard: a key may have come from it"
        lock.unlocked()
        assert screen.verify_lines(user) == before, "the password reached the daemon"
        assert screen.system.run(f"patternlockd status {user}").stdout == status
        assert PASSWORD not in lock.log()
        assert desk.poll(lambda: desk.screen().background() == DESKTOP, "the desktop after the unlock")
    screen.system.ok(f"patternlockd reset {user}")


def test_use_password_clicked_then_the_password_clicked_unlocks_and_counts_no_attempt(screen):
    """Before any pattern: "Use password" under the grid, clicked, opens the
    field with the keyboard; the password clicked key by key unlocks, and the
    daemon hears nothing, so no attempt is counted."""
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        lock = Lock(desk)
        lock.await_prompt("pattern")
        _, idle = lock.grid()
        text = desk.read(idle)
        assert "Use password" in text, text
        typer = ClickTyper(lock)
        mark = lock.mark()
        typer.shown(typer.button("Use password"))
        lock.await_line("use password", since=mark)
        typer.type(PASSWORD)
        typer.tap("Enter")
        assert keyboards(desk) == [], "the seat has a keyboard: a key may have come from it"
        lock.unlocked()
        assert not lock.lines("attempt result=failure"), lock.log()
        assert screen.verify_lines(user) == [], "the password reached the daemon"
        status = screen.system.run(f"patternlockd status {user}").stdout
        assert f"{user}: enrolled, 0 failures, 5 attempts left" in status, status


def test_the_password_typed_without_drawing_unlocks_and_never_reaches_the_daemon(screen):
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        lock = Lock(desk)
        lock.await_prompt("pattern")
        desk.type_secret(PASSWORD)
        lock.unlocked()
        assert screen.verify_lines(user) == [], "the password reached the daemon"


def test_the_pattern_s_digits_typed_on_the_keyboard_unlock(screen):
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        lock = Lock(desk)
        lock.await_prompt("pattern")
        desk.type_secret(PATTERN)
        lock.unlocked()
        assert screen.results(user) == ["OK"]


def test_a_killed_locker_leaves_the_session_locked_and_a_new_one_unlocks_it(screen):
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        assert desk.screen().background() == DESKTOP
        first = Lock(desk)
        first.await_prompt("pattern")
        first.kill9()
        # sway keeps the outputs locked: solid red, never the desktop.
        image = desk.screen()
        desk.save(image, "killed")
        assert DESKTOP not in image.colours(), "the desktop shows after the locker was killed"
        assert is_red(image.background()), f"sway's abandoned lock is not red: {image.background()}"
        again = Lock(desk)
        again.await_prompt("pattern")
        grid, _ = again.grid()
        desk.pointer().drag([grid[int(d)] for d in PATTERN])
        again.unlocked()
        assert desk.poll(lambda: desk.screen().background() == DESKTOP, "the desktop after the unlock")
        assert screen.results(user) == ["OK"]


def test_on_labwc_a_wrong_pattern_says_the_attempts_left_the_right_one_unlocks_and_a_killed_locker_leaves_it_locked(
        screen):
    """labwc 0.8, the other compositor of Debian 13 with ext-session-lock-v1
    that runs without a GPU, headless in the same kind of session as sway:
    what a person meets there, in one run. (wayfire 0.9 refuses to start
    without a DRM device: its GLES2 renderer needs one, and this machine has
    none.)"""
    compositor = "labwc"

    def desktop(c):
        # swaybg's #00aa00, which labwc shows shaded from the middle out (pure green, darker to the corners)
        return c[0] == 0 and c[2] == 0 and c[1] > 40

    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD, compositor=compositor, shot_prefix=f"screen-{compositor}") as desk:
        assert desk.poll(lambda: desktop(desk.screen().background()), f"{compositor}'s green desktop")
        lock = Lock(desk)
        lock.await_prompt("pattern")
        grid, idle = lock.grid()
        desk.save(idle, "locked")
        assert not [c for c in idle.colours() if desktop(c)], f"the desktop shows through the lock screen on {compositor}"
        mark = lock.mark()
        wrong_pattern(desk, lock, grid, 1, shot="wrong-red")
        red_cleared(desk, grid)
        text, image = read_until(desk, r"4 attempts left", "the attempts left on the screen")
        desk.save(image, "wrong")
        assert "Wrong pattern" in text, text
        lock.await_prompt("pattern", since=mark)
        desk.pointer().drag([grid[int(d)] for d in PATTERN])
        lock.unlocked()
        assert desk.poll(lambda: desktop(desk.screen().background()), f"{compositor}'s desktop after the unlock")
        # A locker killed: the compositor keeps the outputs locked, never the
        # desktop; a new locker takes the lock over and unlocks.
        first = Lock(desk)
        first.await_prompt("pattern")
        first.kill9()
        image = desk.screen()
        desk.save(image, "killed")
        assert not [c for c in image.colours() if desktop(c)], f"the desktop shows on {compositor} after the locker was killed"
        again = Lock(desk)
        again.await_prompt("pattern")
        grid, _ = again.grid()
        desk.pointer().drag([grid[int(d)] for d in PATTERN])
        again.unlocked()
        assert desk.poll(lambda: desktop(desk.screen().background()), f"{compositor}'s desktop after the unlock")
        assert screen.results(user) == ["FAIL,remaining=4", "OK", "OK"]
        lines = screen.verify_lines(user)
        assert all(f" service={LOCKER} " in line for line in lines), lines


def test_an_output_added_while_locked_gets_the_grid(screen):
    user = screen.user("plscr", PASSWORD, pattern=PATTERN)
    with Desk(screen.system, user, PASSWORD) as desk:
        lock = Lock(desk)
        lock.await_prompt("pattern")
        desk.swaymsg("create_output")
        desk.poll(lambda: lock.lines("output added name=HEADLESS-2"), "the locker to see HEADLESS-2")

        def second_grid():
            image = desk.screen("HEADLESS-2")
            return (image, find_grid(image)) if find_grid(image) else None
        image, grid = desk.poll(second_grid, "the grid on HEADLESS-2")
        desk.save(image, "second-output")
        assert DESKTOP not in image.colours()
        assert DESKTOP not in desk.screen().colours(), "the desktop shows on an output"
        desk.type_secret(PASSWORD)
        lock.unlocked()


def test_sudo_takes_the_pattern_on_debian_13(debian13):
    """The packages' own smoke test on the current stable: sudo in the user's
    local session takes the pattern; a wrong one says how many attempts are
    left and ends sudo's attempt, and the one prompt of its next takes the
    password."""
    screen = debian13
    user = screen.user("plsudo", PASSWORD, pattern=PATTERN)
    s = screen.system
    s.ok(f"echo '{user} ALL=(ALL) ALL' > /etc/sudoers.d/{user} && chmod 440 /etc/sudoers.d/{user}")
    try:
        sudo = "sudo -k sh -c 'echo SUDO-OK $(id -un)'\n"
        out = screen.session(user, PASSWORD, [
            [["send", sudo], ["expect", "Pattern or password: "], ["secret", PATTERN + "\n"],
             ["expect", "SUDO-OK root"]],
            [["send", sudo], ["expect", "Pattern or password: "], ["secret", WRONG + "\n"],
             ["expect", "4 attempts left"], ["expect", "Sorry, try again."], ["expect", "Pattern or password: "],
             ["secret", PASSWORD + "\n"], ["expect", "SUDO-OK root"]],
        ])
        assert "password for" not in out, "the pattern, then the password at the one prompt: sudo asked nothing else"
        assert screen.results(user) == ["OK", "FAIL,remaining=4"]
        assert all(" service=sudo " in line for line in screen.verify_lines(user))
    finally:
        s.ok(f"rm -f /etc/sudoers.d/{user}")


def test_on_debian_12_s_sway_1_7_the_locker_refuses_in_one_sentence_and_locks_nothing(client_system, project_debs):
    """Debian 12's sway 1.7 has no ext_session_lock_manager_v1: the locker says
    so and exits 2, and the screen stays the desktop. The packaged binary is
    unpacked, not installed: the container is shared with the other clients'
    tests, whose PAM stack comes from `make install`."""
    deb = packaged_locker(project_debs)
    s = client_system
    unpacked = "/var/tmp/pl-screen-deb"
    s.ok(f"rm -rf {unpacked} && dpkg-deb -x {deb} {unpacked}")
    assert s.ok("sway --version").split()[2].startswith("1.7"), s.ok("sway --version")
    user = s.add_user("plscr", PASSWORD)
    with Desk(s, user, PASSWORD, shot_prefix="screen-debian12") as desk:
        before = desk.screen()
        n = desk.start(f"exec {unpacked}/usr/bin/{LOCKER} --color {COLOUR}")
        assert desk.ended(n) == 2
        out = desk.out(n).strip()
        assert len(out.splitlines()) == 1 and out.endswith("."), f"not one sentence: {out!r}"
        assert "ext-session-lock" in out or "ext_session_lock" in out, out
        after = desk.screen()
        desk.save(after, "refused")
        assert after.rgb == before.rgb, "the screen changed: something was locked or drawn"
