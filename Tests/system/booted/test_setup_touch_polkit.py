# SPDX-License-Identifier: Apache-2.0
"""The whole first setup by touch alone, the password tapped on the setup
window's on-screen keyboard, against the real polkit: no compositor that runs
here has touch (sway's seat takes a virtual pointer, not a finger), so the
window is shown on the project's test compositor (a real Wayland server whose
`touch` commands are a finger's wl_touch events), run on this machine with its
socket inside the booted Debian 13 container's tree; the window itself runs in
the container, in the user's logind session on seat0 (as a display manager's:
polkit asks the user's own password there), with the project's packages
installed and the daemon, polkitd and pkttyagent as Debian ships them. Not one
key event reaches the window."""
import contextlib
import re

import pytest

from harness.clients import Clients
from harness.common import skip_or_fail
from harness.screen_desk import Desk
from harness.screen_keyboard import KeyboardTyper
from harness.screen_support import Compositor, build_compositor
from harness.screen_touch import SHOTS

PASSWORD = "Touch-0nly-pass"
NEW = "2761834"  # accepted by the default policy
SETUP = "patternlock-setup"


class TouchWindow(KeyboardTyper):
    """patternlock-setup --debug in the desk's session, on `compositor`; taps
    its keys and buttons and drags its grid with a finger."""

    PREFIX = f"{SETUP}: "

    def __init__(self, desk, compositor, socket):
        super().__init__()
        self.desk, self.compositor = desk, compositor
        self.n = desk.start(f"export WAYLAND_DISPLAY={socket}\nexec {SETUP} --debug")

    def lines(self):
        log = self.desk.out(self.n)
        return [line[len(self.PREFIX):] for line in log[:log.rfind("\n") + 1].splitlines()
                if line.startswith(self.PREFIX)]

    def mark(self):
        return len(self.lines())

    def said(self, pattern, start=0):
        rx = re.compile(pattern)
        return [line for line in self.lines()[start:] if rx.search(line)]

    def await_said(self, pattern, start=0, timeout=30):
        self.desk.poll(lambda: self.said(pattern, start) or self.desk.rc(self.n) is not None,
                       f"/{pattern}/ from {SETUP}", timeout)
        found = self.said(pattern, start)
        assert found, f"{SETUP} ended with status {self.desk.rc(self.n)}:\n{self.desk.out(self.n)}"
        return found[0]

    def tap_at(self, x, y):
        self.compositor.ok(f"touch down 1 {x} {y}")
        reply = self.compositor.cmd("touch up 1")
        assert reply.startswith("ok") or "no surface" in reply, reply

    def button(self, label, start=0):
        line = self.await_said(rf'"{label}"@\d+,\d+(?![\d(])', start)
        x, y = re.search(rf'"{label}"@(\d+),(\d+)', line).groups()
        self.tap_at(int(x), int(y))

    def draw(self, pattern):
        line = self.await_said(r"^stage=.* grid=")
        x, y, side = (int(v) for v in re.search(r"grid=(\d+),(\d+),(\d+)", line).groups())

        def centre(d):
            return x + ((d - 1) % 3 + 0.5) * side / 3, y + ((d - 1) // 3 + 0.5) * side / 3
        dots = [int(d) for d in pattern]
        cx, cy = centre(dots[0])
        self.compositor.ok(f"touch down 0 {round(cx)} {round(cy)}")
        for d in dots[1:]:
            nx, ny = centre(d)
            for i in range(1, 7):
                self.compositor.ok(f"touch motion 0 {round(cx + (nx - cx) * i / 6)} {round(cy + (ny - cy) * i / 6)}")
            cx, cy = nx, ny
        self.compositor.ok("touch up 0")


@pytest.fixture
def first_user(trixie_system):
    s = trixie_system
    if "patternlock-screen" not in s.debs:
        skip_or_fail(f"make deb made no patternlock-screen package: {', '.join(sorted(s.debs))}")
    user = Clients(s).user("pltouch", PASSWORD, sudo=True)
    yield user
    s.run(f"rm -f /etc/sudoers.d/{user}; patternlockd remove {user} >/dev/null 2>&1; "
          f"loginctl terminate-user {user} 2>/dev/null; userdel --remove {user}")


@contextlib.contextmanager
def window_on_touch(s, user):
    """The user's seat0 session with the setup window on the test compositor;
    yields the window."""
    build_compositor()
    uid, gid = (int(s.ok(f"id -{flag} {user}")) for flag in ("u", "g"))
    with Desk(s, user, PASSWORD, shot_prefix="setup-touch", seat=True) as desk:
        compositor = Compositor((uid, gid), "480x800", runtime_in=f"{s.merged}/var/tmp")
        try:
            inside = "/" + str(compositor.runtime.relative_to(s.merged)) + "/" + compositor.socket
            yield TouchWindow(desk, compositor, inside)
        finally:
            compositor.close()


def to_the_password(w):
    """The new pattern drawn twice by touch; returns the mark before the password stage."""
    w.await_said(r'^stage=first title="Draw an unlock pattern"')
    mark = w.mark()
    w.draw(NEW)
    w.await_said(r'^stage=recorded title="Pattern recorded" verdict=acceptable', mark)
    w.button("Continue", mark)
    w.await_said(r'^stage=confirm ', mark)
    mark = w.mark()
    w.draw(NEW)
    line = w.await_said(r'^stage=password title="Enter your password"', mark, timeout=40)
    assert 'question="Password: "' in line, line
    return mark


def test_a_first_pattern_is_set_by_touch_alone_with_the_password_tapped_through_polkit(trixie_system, first_user):
    s, user = trixie_system, first_user
    clients = Clients(s)
    with window_on_touch(s, user) as w:
        desk, compositor = w.desk, w.compositor
        mark = to_the_password(w)
        w.shown(mark)
        w.type(PASSWORD)
        SHOTS.mkdir(parents=True, exist_ok=True)
        compositor.screenshot(SHOTS / "setup-touch-password.png")
        mark = w.mark()
        w.tap("Enter")  # the keyboard's own Enter answers, as Authenticate does
        w.await_said(r'^stage=done title="Your new unlock pattern is set"', mark, timeout=40)
        compositor.screenshot(SHOTS / "setup-touch-done.png")
        w.button("Done")
        assert desk.ended(w.n) == 0, desk.out(w.n)
        log = desk.out(w.n)
    assert PASSWORD not in log and NEW not in log.replace(user, ""), "a secret reached the --debug output"
    enrolls = [line for line in clients.daemon_lines(user) if line.startswith("enroll ")]
    assert len(enrolls) == 1 and " result=OK" in enrolls[0] and "password_proof=proven" in enrolls[0], enrolls
    out = clients.session(user, PASSWORD, [
        [["send", "sudo -k sh -c 'echo SUDO-OK $(id -un)'\n"], ["expect", "Pattern or password: "],
         ["secret", NEW + "\n"], ["expect", "SUDO-OK root"]],
    ])
    assert "password for" not in out and "Sorry" not in out, out


def test_a_wrong_password_tapped_sets_nothing_and_asks_to_confirm_again(trixie_system, first_user):
    s, user = trixie_system, first_user
    clients = Clients(s)
    with window_on_touch(s, user) as w:
        mark = to_the_password(w)
        w.shown(mark)
        w.type("Wrong-pass-1")
        mark = w.mark()
        w.button("Authenticate", mark - 1)
        line = w.await_said(r'^stage=confirm title="Draw the pattern again to confirm"', mark, timeout=40)
        assert "Your password was not confirmed, so nothing was changed" in line, line
        mark = w.mark()
        w.button("Cancel", mark - 1)
        assert w.desk.ended(w.n) == 1, w.desk.out(w.n)
        log = w.desk.out(w.n)
    assert "Wrong-pass-1" not in log
    assert s.run(f"test -e /var/lib/private/patternlock/{user}").returncode != 0, "a record was written"
    enrolls = [line for line in clients.daemon_lines(user) if line.startswith("enroll ")]
    assert len(enrolls) == 1 and "password_proof_required" in enrolls[0], enrolls
