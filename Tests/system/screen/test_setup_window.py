# SPDX-License-Identifier: Apache-2.0
"""patternlock-setup, the window that sets the pattern by drawing it, on the
project's test compositor (an xdg_toplevel, maximized as on a phone), driven by
touch, the pointer or keys, against the real daemon with its enroll policy on.
Where the window shows what: its --debug lines (the stage, the title, the
verdict, the grid's place and the buttons'; never the dots), and screenshots
for the path's colour."""
import os
import pwd
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from harness import debug_lines
from harness.common import POLICY_OFF, desktop_groups
from harness.pam_support import RIGHT
from harness.screen_support import ROOT, Compositor, Image
from harness.screen_touch import SHOTS

SETUP = ROOT / "build" / "patternlock-setup"
STRONG = "2761834"  # accepted by the default policy
COMMON = "1478"  # an L from a corner: among the patterns people choose most


@pytest.fixture
def policy_daemon(make_daemon):
    """The real daemon with its default enroll policy (the shared one turns it off)."""
    return make_daemon(policy_args=())


@pytest.fixture
def setup_binary(compositor_built, shared_tmp):
    if not SETUP.exists():
        pytest.fail("build/patternlock-setup is not built (make setup builds it)")
    binaries = shared_tmp / "setup-bin"
    binaries.mkdir(mode=0o755, exist_ok=True)
    return shutil.copy2(SETUP, binaries / SETUP.name)


class SetupWindow:
    """The test compositor (480x800, a phone's shape) and patternlock-setup on it
    as `user`, with --debug; `lines` collects what it says. `small_socket`:
    the window connects by WAYLAND_SOCKET, one end of a socketpair whose send
    buffer is the smallest the kernel gives (about 4.5 KiB), so that a few
    requests the compositor does not read fill it."""

    def __init__(self, user, daemon, binary, name, *args, mode="480x800", scale=1, small_socket=False):
        self.name = name
        ends = socket.socketpair() if small_socket else None
        try:
            if ends:
                ends[1].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1)
            self.compositor = Compositor(user, mode, scale, client_fd=ends[0].fileno() if ends else None)
        except BaseException:
            for end in ends or ():
                end.close()
            raise
        pw = pwd.getpwnam(user)
        env = [f"PATH=/usr/sbin:/usr/bin:/sbin:/bin", f"HOME={pw.pw_dir}", f"USER={user}", f"LOGNAME={user}",
               "LANG=C.UTF-8", f"XDG_RUNTIME_DIR={self.compositor.runtime}", f"PATTERNLOCK_SOCKET={daemon.socket}"]
        env.append(f"WAYLAND_SOCKET={ends[1].fileno()}" if ends else f"WAYLAND_DISPLAY={self.compositor.socket}")
        self.proc = subprocess.Popen(
            ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups", "env", "-i"] + env
            + [str(binary), "--debug", *args], pass_fds=(ends[1].fileno(),) if ends else (),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for end in ends or ():
            end.close()
        self.lines = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stderr:
            with self._changed:
                self.lines.append(raw.decode(errors="replace").rstrip("\n").removeprefix("patternlock-setup: "))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def said(self, pattern, start=0, timeout=15):
        """The first line from `start` on that matches `pattern` (a regex), waited
        for, and then for the compositor to have what the window drew before it."""
        line = self._said(pattern, start, timeout)
        self.caught_up()
        return line

    def caught_up(self):
        """What the window says comes on stderr, a channel of its own, ahead of
        what the compositor has read: its pong comes after its commits on the
        Wayland connection, so once the compositor has the pong, input and
        screenshots meet the frame the window last described."""
        if self.proc.poll() is None:
            self.compositor.cmd("ping 5000")  # no toplevel (closing): nothing to wait for

    def _said(self, pattern, start, timeout):
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines[start:]:
                    if re.search(pattern, line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._changed.wait(0.2)):
                    raise AssertionError(f"patternlock-setup never said /{pattern}/; it said:\n" + "\n".join(self.lines))
                self._changed.wait(min(left, 0.2))

    def shown(self, start=0):
        """The fields of the newest stage line from `start` on."""
        line = [l for l in self.lines[start:] if l.startswith("stage=")][-1]
        return line

    def grid(self):
        return debug_lines.grid(self.said(r"^stage=.* grid="))

    def centre(self, dot):
        x, y = debug_lines.centre(self.grid(), dot)
        return round(x), round(y)

    def button(self, label, start=0):
        return debug_lines.button(self.said(rf'"{re.escape(label)}"@\d+,\d+(?![\d(])', start), label)

    def touch_path(self, dots, lift=True, steps=6):
        """A finger from dot to dot, as test_screen_touch drags."""
        cx, cy = self.centre(dots[0])
        self.compositor.ok(f"touch down 0 {cx} {cy}")
        for d in dots[1:]:
            nx, ny = self.centre(d)
            for i in range(1, steps + 1):
                self.compositor.ok(f"touch motion 0 {cx + (nx - cx) * i // steps} {cy + (ny - cy) * i // steps}")
            cx, cy = nx, ny
        if lift:
            self.compositor.ok("touch up 0")

    def tap(self, label, start=0):
        x, y = self.button(label, start)
        self.compositor.ok(f"touch down 1 {x} {y}")
        # Cancel and Done close the window at the lift: it may be gone before the reply.
        reply = self.compositor.cmd("touch up 1")
        assert reply.startswith("ok") or "no surface" in reply, reply

    def shot(self, label):
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"setup-{self.name}-{label}.png"
        self.compositor.screenshot(path)
        return Image(path)

    def wait(self, timeout=30):
        return self.proc.wait(timeout)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.compositor.close()


@pytest.fixture
def windows(setup_binary):
    made = []

    def start(user, daemon, name, *args, **kwargs):
        w = SetupWindow(user, daemon, setup_binary, name, *args, **kwargs)
        made.append(w)
        return w
    yield start
    for w in made:
        w.close()


def enroll_anyway(daemon, user, pattern):
    """Root's enroll of `pattern` (a common one: override=1, as the tests' others are)."""
    reply = daemon.request(f"ENROLL user={user} pattern={pattern} override=1")
    assert reply.startswith("OK"), reply


def verify(daemon, user, pattern):
    return daemon.request(f"VERIFY user={user} pattern={pattern}")


def red_and_green_along(image, window, dots):
    """How many pixels on the segments between `dots` are red, and how many green."""
    red = green = 0
    for a, b in zip(dots, dots[1:]):
        (ax, ay), (bx, by) = window.centre(a), window.centre(b)
        for i in range(3, 8):
            r, g, b_ = image.rgb(ax + (bx - ax) * i // 10, ay + (by - ay) * i // 10)
            red += r > 180 and g < 110
            green += g > 150 and r < 150 and b_ < 150
    return red, green


def test_a_pattern_is_changed_by_drawing_the_current_one_then_the_new_one_twice_by_touch(
        windows, policy_daemon, user):
    enroll_anyway(policy_daemon, user, RIGHT)
    w = windows(user, policy_daemon, "change")
    w.said(r'^stage=current title="Draw your current pattern"')
    w.touch_path([int(d) for d in RIGHT])
    mark = len(w.lines)
    w.said(r'^stage=first title="Draw an unlock pattern"')
    w.touch_path([int(d) for d in STRONG], lift=False)
    # The verdict before the finger lifts, from the daemon's CHECK.
    w.said(r'^stage=first title="Release finger when done" verdict=acceptable', mark)
    w.compositor.ok("touch up 0")
    mark = len(w.lines)
    w.said(r'^stage=recorded title="Pattern recorded" verdict=acceptable', mark - 1)
    w.tap("Continue", mark - 1)
    w.said(r'^stage=confirm title="Draw the pattern again to confirm"', mark)
    w.touch_path([int(d) for d in STRONG])
    w.said(r'^stage=done title="Your new unlock pattern is set" verdict=none dots=0 ')
    w.tap("Done")
    assert w.wait() == 0
    assert w.said(r"^close set=1$")
    assert verify(policy_daemon, user, STRONG) == "OK"
    assert verify(policy_daemon, user, RIGHT).startswith("FAIL")
    assert not any(STRONG in line or RIGHT in line for line in w.lines), "a pattern reached the log"


def test_a_common_pattern_turns_red_while_drawn_says_why_and_is_not_recorded(windows, policy_daemon, user):
    enroll_anyway(policy_daemon, user, RIGHT)
    w = windows(user, policy_daemon, "common")
    w.touch_path([int(d) for d in RIGHT])
    mark = len(w.lines)
    path = [int(d) for d in COMMON]
    w.touch_path(path, lift=False)
    line = w.said(r"^stage=first .*verdict=refused reason=common", mark)
    assert "patterns people choose most" in line, line
    red, green = red_and_green_along(w.shot("refused"), w, path)
    assert red > 5 and green == 0, (red, green)
    mark = len(w.lines)
    w.compositor.ok("touch up 0")
    # Released: still the first stage, its reason still shown, Continue off.
    line = w.said(r'^stage=first title="Draw an unlock pattern" verdict=refused', mark)
    assert '"Continue"@' in line and "(off)" in line.split('"Continue"')[1][:20], line
    # An acceptable one drawn next is green.
    mark = len(w.lines)
    w.touch_path([int(d) for d in STRONG], lift=False)
    w.said(r"^stage=first .*verdict=acceptable", mark)
    red, green = red_and_green_along(w.shot("acceptable"), w, [int(d) for d in STRONG])
    assert green > 5 and red == 0, (red, green)
    w.compositor.ok("touch up 0")
    w.said(r"^stage=recorded ")
    # The window closed (its title bar's close button) with a pattern recorded: nothing is set.
    w.compositor.ok("close")
    assert w.wait() == 1
    assert verify(policy_daemon, user, RIGHT).startswith("OK"), "a closed setup changed nothing"


def test_by_keys_alone_digits_draw_enter_continues_and_a_differing_confirmation_starts_over(
        windows, policy_daemon, user):
    enroll_anyway(policy_daemon, user, RIGHT)
    w = windows(user, policy_daemon, "keys")
    w.said(r'^stage=current title="Draw your current pattern"')
    w.compositor.ok("key " + " ".join(RIGHT) + " Return")
    w.said(r'^stage=first title="Draw an unlock pattern"')
    mark = len(w.lines)
    w.compositor.ok("key " + " ".join(STRONG))
    w.said(r"^stage=first .*verdict=acceptable", mark)
    w.compositor.ok("key Return")
    w.said(r"^stage=recorded ")
    w.compositor.ok("key Return")  # Continue
    w.said(r"^stage=confirm ")
    mark = len(w.lines)
    w.compositor.ok("key 1 2 3 6 9 Return")
    w.said(r'^stage=first .*detail="That was not the same pattern', mark)
    w.compositor.ok("key Escape")
    assert w.wait() == 1
    # Nothing was sent: no attempt counted, the pattern unchanged.
    assert "failures=0" in policy_daemon.request(f"STATUS user={user}")
    assert verify(policy_daemon, user, RIGHT).startswith("OK")


def test_the_seat_losing_its_pointer_and_keyboard_mid_path_ends_the_path_and_both_work_once_back(
        windows, policy_daemon, user):
    """A device unplugged while it draws (the seat stops offering it: the test
    compositor's `seat` command): the window releases it, the path it was
    drawing ends as a touch cancel ends it, and the window goes on, by touch.
    Plugged back in, the new pointer draws and the new keyboard's keys work."""
    w = windows(user, policy_daemon, "seat")
    w.said(r'^stage=first title="Draw an unlock pattern"')
    x, y = w.centre(1)
    w.compositor.ok(f"pointer move {x} {y}")
    w.compositor.ok("pointer press")
    for d in (2, 3):
        x, y = w.centre(d)
        w.compositor.ok(f"pointer move {x} {y}")
    w.said(r"^stage=first .* dots=3 ")
    mark = len(w.lines)
    assert w.compositor.ok("seat touch") == {"caps": "t"}
    w.said(r"^stage=first .* dots=0 ", mark)
    assert w.compositor.cmd("pointer move 10 10").startswith("error"), "the window kept its pointer"
    # Touch alone goes on: a path drawn and lifted is recorded.
    w.touch_path([int(d) for d in STRONG])
    w.said(r"^stage=recorded ")
    w.tap("Redraw")
    w.said(r'^stage=first title="Draw an unlock pattern"')
    assert w.compositor.ok("seat pointer keyboard touch") == {"caps": "pkt"}
    x, y = w.centre(int(STRONG[0]))
    w.compositor.ok(f"pointer move {x} {y}")
    w.compositor.ok("pointer press")
    for d in STRONG[1:]:
        x, y = w.centre(int(d))
        w.compositor.ok(f"pointer move {x} {y}")
    w.compositor.ok("pointer release")
    w.said(r"^stage=recorded .*verdict=acceptable")
    w.compositor.ok("key Return")  # Continue, on the keyboard plugged back in
    w.said(r"^stage=confirm ")
    assert w.proc.poll() is None


def keys_to_the_confirmation(w):
    """By keys, as a user whose pattern is RIGHT: the current pattern, STRONG
    (its verdict acceptable), Continue; the window then waits for the confirmation."""
    w.said(r'^stage=current title="Draw your current pattern"')
    w.compositor.ok("key " + " ".join(RIGHT) + " Return")
    w.said(r'^stage=first title="Draw an unlock pattern"')
    w.compositor.ok("key " + " ".join(STRONG) + " Return")
    w.said(r"^stage=recorded .*verdict=acceptable")
    w.compositor.ok("key Return")
    w.said(r"^stage=confirm ")


def test_a_frame_drawn_while_the_compositor_reads_nothing_reaches_it_once_it_reads_again(
        windows, policy_daemon, user):
    """The socket to the compositor full (EAGAIN): what did not fit waits for
    the socket to take it (POLLOUT), not for the next event. The compositor
    stops reading (`hold`) while it pings the window: each pong is a write of
    its own into a send buffer of about 4.5 KiB, until one does not fit. Then
    a dot is drawn: that frame can only sit in libwayland's buffer. Once the
    compositor reads again it sends nothing more (a pong has no answer), so
    the frame arrives only from a loop that waits to write."""
    w = windows(user, policy_daemon, "full", small_socket=True)
    w.said(r'^stage=first title="Draw an unlock pattern"')
    x, y = w.centre(1)
    w.compositor.ok(f"pointer move {x} {y}")
    w.compositor.ok("pointer press")
    w.said(r"^stage=first .* dots=1 ")
    before = int(w.compositor.ok("hold")["commits"])
    mark = len(w.lines)
    for _ in range(40):
        w.compositor.ok("ping")
        time.sleep(0.02)
        if any(l.startswith("socket full") for l in w.lines[mark:]):
            break
    w._said(r"^socket full", mark, 5)
    x, y = w.centre(2)
    w.compositor.ok(f"pointer move {x} {y}")
    w._said(r"^stage=first .* dots=2 ", mark, 5)
    w.compositor.ok("release")
    # No input from here on: only the window's own wait for the socket.
    done = w.compositor.cmd(f"wait-frame {before} 3000")
    assert done.startswith("ok"), f"the frame with the second dot never reached the compositor: {done}"
    # The frame shown is the one with the line from dot 1 to dot 2.
    image = w.shot("after-full")
    (ax, ay), (bx, by) = w.centre(1), w.centre(2)
    along = [image.rgb(ax + (bx - ax) * i // 10, ay + (by - ay) * i // 10) for i in range(3, 8)]
    assert all(max(rgb) > 90 for rgb in along), f"no line from dot 1 to dot 2 on the screen: {along}"


def test_closing_the_window_once_the_pattern_is_set_exits_0_and_keeps_it(windows, policy_daemon, user):
    enroll_anyway(policy_daemon, user, RIGHT)
    w = windows(user, policy_daemon, "close-done")
    keys_to_the_confirmation(w)
    w.compositor.ok("key Return")  # Enter with nothing typed: never Cancel
    w.compositor.ok("key " + " ".join(STRONG) + " Return")
    w.said(r'^stage=done title="Your new unlock pattern is set"')
    w.compositor.ok("close")
    assert w.wait() == 0
    assert verify(policy_daemon, user, STRONG) == "OK"


def test_the_window_answers_the_compositor_while_the_daemon_works_on_the_new_pattern(
        windows, make_daemon, user):
    """ENROLL goes from its own thread: a daemon that takes seconds to hash
    (a high iteration count) leaves the window drawing "Setting your pattern…"
    and answering the compositor's pings, which a frozen window would not (and a
    desktop would offer to kill it)."""
    slow = make_daemon("--iterations", "40000000", policy_args=())
    enroll_anyway(slow, user, RIGHT)
    w = windows(user, slow, "slow")
    keys_to_the_confirmation(w)
    w.compositor.ok("key " + " ".join(STRONG) + " Return")
    w.said(r'^stage=saving title="Setting your pattern…"')
    started = time.monotonic()
    reply = w.compositor.cmd("ping 1000")
    assert reply.startswith("ok"), f"the window did not answer a ping while the daemon worked: {reply}"
    assert not any(l.startswith("stage=done") for l in w.lines), "the daemon was not slow enough to show anything"
    # Closed meanwhile: it waits for the answer, and says by its status that it was set.
    w.compositor.ok("close")
    w.said(r'^stage=done title="Your new unlock pattern is set"', timeout=60)
    assert w.wait(60) == 0
    assert verify(slow, user, STRONG) == "OK"
    assert time.monotonic() - started > 0.5


def test_a_wrong_current_pattern_says_the_attempts_left_and_asks_for_it_again(windows, policy_daemon, user):
    enroll_anyway(policy_daemon, user, RIGHT)
    w = windows(user, policy_daemon, "wrong-current")
    w.said(r'^stage=current title="Draw your current pattern"')
    for left in (4, 3):
        mark = len(w.lines)
        w.touch_path([1, 4, 7, 8])
        w.said(r'^stage=first title="Draw an unlock pattern"', mark)
        w.touch_path([int(d) for d in STRONG])
        w.said(r"^stage=recorded .*verdict=acceptable", mark)
        w.tap("Continue", mark)
        w.said(r"^stage=confirm ", mark)
        w.touch_path([int(d) for d in STRONG])
        line = w.said(r'^stage=current title="Draw your current pattern".* detail="Wrong current pattern', mark)
        assert f"{left} attempts left" in line, line
    status = policy_daemon.request(f"STATUS user={user}")
    assert "failures=2" in status, status
    w.tap("Cancel")
    assert w.wait() == 1
    assert verify(policy_daemon, user, RIGHT).startswith("OK")


def test_at_scale_2_the_window_draws_sharp_buffers_and_takes_touch_in_logical_pixels(windows, policy_daemon, user):
    w = windows(user, policy_daemon, "scale2", mode="960x1600", scale=2)
    w.said(r'^stage=first title="Draw an unlock pattern"')
    SHOTS.mkdir(parents=True, exist_ok=True)
    _, fields = w.compositor.screenshot(SHOTS / "setup-scale2-idle.png")
    assert (fields["width"], fields["height"], fields["scale"]) == ("960", "1600", "2"), fields
    # The grid is where --debug says, in logical pixels: a drag through its dots takes them.
    mark = len(w.lines)
    w.touch_path([int(d) for d in STRONG], lift=False)
    w.said(rf"^stage=first .*verdict=acceptable dots={len(STRONG)} ", mark)
    w.compositor.ok("touch up 0")
    w.said(r"^stage=recorded ")


def test_a_user_whose_pattern_is_locked_sees_why_and_who_can_reset_it_and_closes_the_window(
        windows, policy_daemon, user):
    enroll_anyway(policy_daemon, user, RIGHT)
    for _ in range(5):
        verify(policy_daemon, user, "1478")
    w = windows(user, policy_daemon, "locked")
    line = w.said(r'^stage=ended title="The pattern cannot be set now"')
    assert f"patternlockd reset {user}" in line, line
    assert '"Close"@' in line and "dots=0" in line, line
    w.tap("Close")
    assert w.wait() == 2


def test_without_a_wayland_desktop_it_says_so_and_names_the_terminal_command(setup_binary, policy_daemon, user):
    pw = pwd.getpwnam(user)
    r = subprocess.run(
        ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups", "env", "-i",
         f"PATTERNLOCK_SOCKET={policy_daemon.socket}", str(setup_binary)],
        capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, r
    assert "patternlockd enroll" in r.stderr and "Wayland" in r.stderr, r.stderr


class Terminal:
    """A program on a pseudo-terminal (the demo asks questions only on one):
    what it printed so far, read as it comes, and keys typed into it."""

    def __init__(self, cmd, env):
        import pty
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        self.out = ""
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                chunk = b""
            with self._changed:
                if not chunk:
                    self._changed.notify_all()
                    return
                self.out += chunk.decode(errors="replace")
                self._changed.notify_all()

    def expect(self, text, timeout=300, start=0):
        """Waits for `text` printed after offset `start`; returns the offset after it."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while text not in self.out[start:]:
                left = deadline - time.monotonic()
                assert left > 0 and self.proc.poll() is None, f"never printed {text!r}:\n{self.out[-3000:]}"
                self._changed.wait(min(left, 0.5))
            return self.out.index(text, start) + len(text)

    def type(self, line):
        os.write(self.master, (line + "\n").encode())

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        os.close(self.master)


def test_make_demo_on_a_wayland_desktop_has_the_pattern_drawn_in_the_window_and_pam_then_takes_it(
        compositor_built, user):
    from harness.screen_support import find_grid
    compositor = Compositor("root", "480x800", 1)
    env = dict(os.environ, WAYLAND_DISPLAY=compositor.socket, XDG_RUNTIME_DIR=str(compositor.runtime),
               DEMO_USER=user)
    env.pop("DEMO_PATTERN", None)
    term = Terminal(["make", "--no-print-directory", "-C", str(ROOT), "demo"], env)
    try:
        term.expect("$ patternlock-setup --user " + user)
        deadline = time.monotonic() + 30
        while "mapped=yes" not in compositor.cmd("state") and time.monotonic() < deadline:
            time.sleep(0.1)
        SHOTS.mkdir(parents=True, exist_ok=True)
        time.sleep(0.5)
        idle, _ = compositor.screenshot(SHOTS / "setup-demo-idle.png")
        grid = find_grid(idle, 1)

        def drag(dots):
            x, y = grid.at(dots[0])
            compositor.ok(f"touch down 0 {x:.0f} {y:.0f}")
            for a, b in zip(dots, dots[1:]):
                for i in range(1, 7):
                    x, y = grid.between(a, b, i / 6)
                    compositor.ok(f"touch motion 0 {x:.0f} {y:.0f}")
            compositor.ok("touch up 0")
            time.sleep(0.5)

        path = [int(d) for d in STRONG]
        drag(path)  # recorded; its verdict came from the demo's daemon while drawing
        compositor.ok("key Return")  # Continue
        time.sleep(0.3)
        drag(path)  # confirmed: set
        compositor.ok("key Return")  # Done
        term.expect("The pattern is set.")
        # Step 2: the PAM conversation through the built module takes the drawn pattern.
        # (A line typed before the prompt turns echo off would be flushed.)
        term.expect("Pattern (Enter to skip): ", timeout=60)
        term.type(STRONG)
        term.expect("=> PAM_SUCCESS: unlocked.", timeout=60)
        at = term.expect("Now type any pattern that is NOT yours.", timeout=60)
        term.expect("Pattern (Enter to skip): ", timeout=60, start=at)
        term.type("1478")
        # Once locked the right pattern is not even asked for; after the
        # administrator's reset it is asked and unlocks.
        at = term.expect("After the reset the pattern works again:", timeout=120)
        term.expect("Pattern (Enter to skip): ", timeout=60, start=at)
        term.type(STRONG)
        term.expect("nothing else on this system changed", timeout=120)
        assert term.out.count("=> PAM_SUCCESS: unlocked.") == 2, term.out[-3000:]
        assert term.proc.wait(30) == 0, term.out[-3000:]
        assert "The window closed without setting a pattern" not in term.out
        assert STRONG not in term.out.replace("$ ", ""), "the drawn pattern was echoed on the terminal"
    finally:
        term.close()
        compositor.close()


def test_the_window_s_app_id_names_its_desktop_entry_and_icon(windows, policy_daemon, user):
    """A desktop ties a window to its menu entry, and so to its name and icon,
    by the window's app_id: it is the name of desktop/org.patternlock.Setup.desktop
    ("Unlock Pattern"), whose Icon= is the icon shipped beside it."""
    w = windows(user, policy_daemon, "app-id")
    w.said(r'^stage=first title="Draw an unlock pattern"')
    app_id = w.compositor.toplevel()["app_id"]
    entry = ROOT / "desktop" / f"{app_id}.desktop"
    assert entry.is_file(), f"no desktop entry is named after the window's app_id {app_id!r}"
    groups = desktop_groups(entry.read_text())
    fields = groups["Desktop Entry"]
    assert fields["Name"] == "Unlock Pattern" and fields["Exec"] == SETUP.name, fields
    # Its action removes the pattern, drawn (the menu's "Remove My Unlock Pattern").
    assert fields["Actions"] == "Remove;", fields
    assert groups["Desktop Action Remove"]["Exec"] == f"{SETUP.name} --remove", groups
    assert (ROOT / "desktop" / f"{fields['Icon']}.svg").is_file(), fields["Icon"]
    w.compositor.ok("close")
    assert w.wait() == 1


def test_the_pattern_is_removed_by_drawing_the_current_one_by_touch(windows, policy_daemon, user):
    enroll_anyway(policy_daemon, user, RIGHT)
    w = windows(user, policy_daemon, "remove", "--remove")
    w.said(r'^stage=current title="Draw your current pattern to remove it"')
    mark = len(w.lines)
    w.touch_path([1, 4, 7, 8])  # not the current one: counted, and asked again
    line = w.said(r'^stage=current title="Draw your current pattern to remove it".* detail="Wrong current pattern',
                  mark)
    assert "4 attempts left" in line, line
    assert "failures=1" in policy_daemon.request(f"STATUS user={user}")
    mark = len(w.lines)
    w.touch_path([int(d) for d in RIGHT])
    line = w.said(r'^stage=done title="Your unlock pattern is removed"', mark)
    assert "your password is asked where the pattern was" in line, line
    w.tap("Done")
    assert w.wait() == 0
    assert "enrolled=0" in policy_daemon.request(f"STATUS user={user}")
    assert not any(RIGHT in line for line in w.lines), "the pattern reached the log"


def test_with_no_pattern_to_remove_the_window_says_so_and_how_to_set_one(windows, policy_daemon, user):
    w = windows(user, policy_daemon, "remove-none", "--remove")
    line = w.said(r'^stage=ended title="The pattern cannot be removed now"')
    assert "You have no unlock pattern, so there is nothing to remove" in line, line
    w.tap("Close")
    assert w.wait() == 2


def test_a_first_pattern_where_polkit_cannot_ask_says_who_can_set_it_and_sets_nothing(windows, policy_daemon, user):
    """This machine runs no polkitd: the window's own agent (pkttyagent) cannot
    register and the daemon cannot have the password checked. The window says
    so, in the CLI's words, and nothing is set."""
    w = windows(user, policy_daemon, "no-polkit")
    w.said(r'^stage=first title="Draw an unlock pattern"')
    w.touch_path([int(d) for d in STRONG])
    w.said(r"^stage=recorded .*verdict=acceptable")
    w.tap("Continue")
    w.said(r"^stage=confirm ")
    mark = len(w.lines)
    w.touch_path([int(d) for d in STRONG])
    line = w.said(r'^stage=(ended|confirm) .* detail=', mark, timeout=60)
    assert "polkit" in line and f"patternlockd enroll {user}" in line, line
    assert "enrolled=0" in policy_daemon.request(f"STATUS user={user}")
    assert not any("stage=password" in l for l in w.lines), "a password was asked with no polkit to check it"
