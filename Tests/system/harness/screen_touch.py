# SPDX-License-Identifier: Apache-2.0
"""The lock screen on the test compositor, driven by touch: one Screen (a
compositor and the locker on it, the grid found on its first screenshot),
drags, and what the daemon and the compositor saw. Shared by the screen
layer's tests; the fixtures that start them are in Tests/system/screen/conftest.py."""
import contextlib
import re
import shutil
import time

from harness.pam_support import RIGHT
from harness.screen_support import LOCKER, ROOT, Compositor, Locker, find_grid

SHOTS = ROOT / "build" / "screen-touch"
# A wrong pattern whose every move is to a neighbouring dot, so no move
# passes near a dot it does not take, whatever the locker's hit radius.
WRONG_DRAG = [1, 4, 7, 8]
RIGHT_DRAG = [int(d) for d in RIGHT]  # 1-2-3-5: neighbours too
# Motion events a move from one dot to the next: a finger, not a jump.
STEPS = 8


class Screen:
    """One test server and the locker on it, locked, with the pattern prompt
    up and the grid found on the idle screenshot."""

    def __init__(self, user, pam_d, log_dir, name, binary, mode="800x600", scale=1, **compositor_options):
        self.user = user
        self.pam_d = pam_d
        self.binary = binary
        self.name = name
        self.compositor = Compositor(user, mode, scale, log=log_dir / f"{name}-compositor.log", **compositor_options)
        self.lockers = []
        self.locker = self.start_locker()
        self.idle, self.fields = self.shot("idle")
        self.grid = find_grid(self.idle, scale)

    def start_locker(self):
        locker = Locker(self.user, self.compositor, self.pam_d, self.binary)
        self.lockers.append(locker)
        assert locker.wait_ready(), "patternlock-screen never said it was locked:\n" + "\n".join(locker.lines)
        assert self.compositor.state()["state"] == "locked"
        assert self.compositor.wait_frame(0) is not None, "the locker drew no frame"
        locker.debug(r"^prompt kind=pattern$")
        self.quiet()
        return locker

    def quiet(self, quiet_ms=300):
        """Waits until the locker has drawn for a while nothing more."""
        count = self.compositor.commits()
        while (more := self.compositor.wait_frame(count, quiet_ms)) is not None:
            count = more
        return count

    def shot(self, label):
        path = SHOTS / f"{self.name}-{label}.png"
        return self.compositor.screenshot(path)

    def touch(self, line):
        return int(self.compositor.ok(f"touch {line}")["commits"])

    def glide(self, finger, start, end):
        """Motion events from `start` to `end` (surface coordinates)."""
        (ax, ay), (bx, by) = start, end
        for i in range(1, STEPS + 1):
            x, y = ax + (bx - ax) * i / STEPS, ay + (by - ay) * i / STEPS
            commits = self.touch(f"motion {finger} {x:.2f} {y:.2f}")
        return commits

    def drag(self, dots, finger=0, lift=True):
        """A finger put on the first dot and moved through the others' centres."""
        x, y = self.grid.at(dots[0])
        commits = self.touch(f"down {finger} {x:.2f} {y:.2f}")
        for a, b in zip(dots, dots[1:]):
            commits = self.glide(finger, self.grid.at(a), self.grid.at(b))
        if lift:
            commits = self.touch(f"up {finger}")
        return commits

    def settled_shot(self, after, label):
        """The screenshot once the locker drew after commit `after` and then
        nothing more for a while."""
        self.compositor.settle(after)
        return self.shot(label)[0]

    def close(self):
        for locker in self.lockers:
            locker.close()
        self.compositor.close()


def verify_results(daemon, user, expected=0, timeout=10):
    """The result= of each verify the daemon logged for `user`, in order, with
    the PAM service it came through; waiting up to `timeout` for `expected`
    of them (the daemon logs a request after it answered it)."""
    deadline = time.monotonic() + timeout
    while True:
        out = []
        for line in daemon.read_log().splitlines():
            if "patternlockd: verify " in line and f" user={user} " in line:
                service = re.search(r" service=(\S+)", line)
                out.append((service.group(1) if service else None, re.search(r" result=(\S+)", line).group(1)))
        if len(out) >= expected or time.monotonic() > deadline:
            return out
        time.sleep(0.05)


def unlocked(screen, locker):
    """The locker exited 0 after telling PAM approved, and the server saw
    unlock_and_destroy."""
    assert locker.wait(30) == 0, "\n".join(locker.lines)
    locker.debug(r"^attempt result=success$")
    locker.debug(r"^unlocked$")
    state = screen.compositor.state()
    assert state["state"] == "unlocked" and state["unlocks"] == "1", state


def drag_on(compositor, grid, dots):
    """A finger through `dots` on a locker started without Screen."""
    x, y = grid.at(dots[0])
    compositor.ok(f"touch down 0 {x:.2f} {y:.2f}")
    for a, b in zip(dots, dots[1:]):
        (ax, ay), (bx, by) = grid.at(a), grid.at(b)
        for i in range(1, STEPS + 1):
            compositor.ok(f"touch motion 0 {ax + (bx - ax) * i / STEPS:.2f} {ay + (by - ay) * i / STEPS:.2f}")
    compositor.ok("touch up 0")


def private_binaries(shared_tmp, pam_module, enrolled):
    """The locker and the module copied where the test user can run them, and a
    folder of its own for the marks a test's PAM stack leaves."""
    binaries = shared_tmp / "bin"
    binaries.mkdir(mode=0o755)
    binary = shutil.copy2(LOCKER, binaries / LOCKER.name)
    module = shutil.copy2(pam_module, binaries / pam_module.name)
    marks = shared_tmp / "marks"
    marks.mkdir()
    shutil.chown(marks, enrolled)
    return binaries, binary, module, marks


@contextlib.contextmanager
def locked_by(user, pam_d, binary, log):
    """A test compositor and the locker `binary` on it as `user` with the
    pam.d `pam_d`, once it holds the lock: (compositor, locker); both closed
    after. For a test whose stack is its own (Screen waits for the pattern's
    prompt, which such a stack may never ask)."""
    compositor = Compositor(user, log=log)
    locker = Locker(user, compositor, pam_d, binary)
    try:
        assert locker.wait_ready(), "\n".join(locker.lines)
        yield compositor, locker
    finally:
        locker.close()
        compositor.close()
