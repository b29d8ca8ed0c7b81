# SPDX-License-Identifier: Apache-2.0
"""A user's desktop in a booted container: a local logind session opened by
`login` on a pty, whose shell (screen_session.sh) runs a headless sway (or phoc
with phosh, the phone shell) and then the commands handed to it, so that the
lockers started there, and their PAM conversations, belong to that session.
From outside, as a hand and an eye would, the test moves a virtual pointer
(build/tools/vpointer), types with wtype, takes screenshots with grim and
reads them with tesseract."""
import json
import pathlib
import re
import shlex
import subprocess
import time

from harness import booted
from harness.screen_image import Image, find_grid

SESSION_SCRIPT = booted.ROOT / "Tests" / "system" / "harness" / "screen_session.sh"
VPOINTER = booted.ROOT / "build" / "tools" / "vpointer"
SHOTS = booted.ROOT / "build" / "screen-shots"
LOCKER = "patternlock-screen"
DEBUG = f"{LOCKER}: "
# The lock screen's background in these tests (a colour no grid dot has).
COLOUR = "203040"


def build_vpointer():
    """Builds build/tools/vpointer on this machine (it runs unchanged in the
    containers: it needs only libwayland-client)."""
    r = subprocess.run(["make", "--no-print-directory", "-C", str(booted.ROOT), "build/tools/vpointer"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "cannot build the virtual pointer driver:\n" + r.stdout + r.stderr


class VirtualPointer:
    """build/tools/vpointer running as the user on the desktop's sway."""

    def __init__(self, desk, width, height):
        self.proc = subprocess.Popen(
            ["nsenter", "-t", str(desk.system.leader), "-a", "runuser", "-u", desk.user, "--", "env", *desk.env,
             str(VPOINTER), str(width), str(height)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        line = self.proc.stdout.readline()
        assert line == "ready\n", f"vpointer did not start: {line}{self.proc.stderr.read()}"
        self.position = None

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def sync(self):
        """Returns once sway has handled everything sent so far."""
        self.send("sync")
        line = self.proc.stdout.readline()
        assert line == "ok\n", f"vpointer: {line}{self.proc.stderr.read() if self.proc.poll() is not None else ''}"

    def move(self, x, y, steps=1):
        """Moves to (x, y) in `steps` equal motion events from where it is."""
        x0, y0 = self.position or (x, y)
        for i in range(1, steps + 1):
            self.send(f"move {round(x0 + (x - x0) * i / steps)} {round(y0 + (y - y0) * i / steps)}")
        self.position = (x, y)
        self.sync()

    def press(self):
        self.send("press")
        self.sync()

    def release(self):
        self.send("release")
        self.sync()

    def drag(self, points, steps=4, before_release=None):
        """A finger's drag: press on the first point, move through the others
        (each segment in `steps` motion events), call before_release(), release."""
        self.move(*points[0])
        self.press()
        for p in points[1:]:
            self.move(*p, steps=steps)
        if before_release is not None:
            before_release()
        self.release()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Desk:
    """A user's local login session running a headless `compositor` of `size`
    (sway, or phosh on phoc: screen_session.sh), with commands run inside the
    session (`start`) and a hand and an eye outside."""

    # The Wayland socket each compositor takes (sway skips wayland-0).
    DISPLAY = {"sway": "wayland-1", "labwc": "wayland-0", "phosh": "wayland-0"}

    def __init__(self, system, user, password, size=(800, 600), shot_prefix="screen", compositor="sway", seat=False):
        """`seat`: the session is on seat0, as a display manager's is (`login -p`
        with XDG_SEAT=seat0, which pam_systemd gives logind), so polkit calls it
        local and active and asks the user's own password (auth_self); without
        it, a pty login's session has no seat, as an SSH one."""
        self.seat = seat
        self.system, self.user, self.password = system, user, password
        self.size, self.shot_prefix, self.compositor = size, shot_prefix, compositor
        self.dir = f"/var/tmp/pl-screen-{user}"  # not the container's /tmp tmpfs: the host reads it in the overlay
        self.commands = 0
        uid = int(system.ok(f"id -u {user}"))
        self.env = [f"XDG_RUNTIME_DIR=/run/user/{uid}", f"WAYLAND_DISPLAY={self.DISPLAY[compositor]}"]
        if compositor == "phosh":
            # phosh's D-Bus services (org.gnome.ScreenSaver) are on the
            # session's bus, the user's (dbus-user-session).
            self.env.append(f"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/{uid}/bus")
        self.pointers = []

    def __enter__(self):
        s, d = self.system, self.dir
        steps = s.login_steps(self.user, self.password) + [
            ["send", f"exec /bin/sh {SESSION_SCRIPT} {d} {self.size[0]}x{self.size[1]} {self.compositor}\n"],
            ["eof"]]
        argv, env = ["login", self.user], {}
        if self.seat:
            argv = ["login", "-p", self.user]
            env = {"XDG_SEAT": "seat0", "XDG_VTNR": "0", "HOME": f"/home/{self.user}"}
        spec = json.dumps({"argv": argv, "timeout": 900, "steps": steps, "env": env})
        s.ok(f"rm -rf {d} && mkdir -m 700 {d} && chown {self.user}: {d} && cat > {d}.json && "
             f"(setsid /usr/bin/python3 {booted.PTY_DRIVER} < {d}.json > {d}.out 2>&1 &)", input=spec)
        self.wait(f"test -e {d}/ready", f"{self.compositor} started in the session", timeout=60)
        return self

    def __exit__(self, *exc):
        for p in self.pointers:
            p.close()
        # The session's programs end; logind keeps the user's manager for
        # UserStopDelaySec (10 s) after, which no later test needs to wait for.
        self.system.run(f"touch {self.dir}/quit; sleep 0.3; loginctl terminate-user {self.user}; "
                        f"for i in $(seq 100); do "
                        f"pgrep -u {self.user} -x 'sway|labwc|swaybg|swaylock|gtklock|patternlock-scr|phoc|phosh|login' "
                        ">/dev/null || break; sleep 0.1; done")

    def path(self, name):
        """Where a file of the desk's directory is, seen from this machine."""
        return pathlib.Path(self.system.merged) / self.dir.lstrip("/") / name

    def diagnostics(self):
        return self.system.run(f"cd {self.dir} && tail -n 30 ../pl-screen-{self.user}.out sway.log labwc.log phoc.log out.* "
                               "rc.*; "
                               "ls; tail -n 20 /var/log/journal 2>/dev/null; "
                               "journalctl -n 20 --no-pager -o cat -u patternlockd.service").stdout

    def wait(self, condition, what, timeout=30):
        """Polls a shell condition in the container (as root) until it holds."""
        r = self.system.run(f"for i in $(seq {timeout * 10}); do {condition} && exit 0; sleep 0.1; done; exit 1",
                            timeout=timeout + 30)
        assert r.returncode == 0, f"waited {timeout} s for: {what}\n{self.diagnostics()}"

    def poll(self, check, what, timeout=30, every=0.1):
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if value:
                return value
            assert time.monotonic() < deadline, f"waited {timeout} s for: {what}\n{self.diagnostics()}"
            time.sleep(every)

    def as_user(self, script, input=None, check=True):
        """Runs script as the user on the desktop's sway, outside the session (a
        hand on the keyboard, a camera)."""
        env = " ".join(self.env)
        r = self.system.run(f"cd {self.dir} && runuser -u {self.user} -- env {env} sh -c {shlex.quote(script)}",
                            input=input, timeout=120)
        if check:
            assert r.returncode == 0, f"{script}\n{r.stdout}{r.stderr}"
        return r

    def start(self, script):
        """Runs script in the session, in the background; returns its number
        (its output is out(n), its exit status rc(n) once it ended)."""
        self.commands += 1
        n = self.commands
        body = f"export {' '.join(self.env)}\necho $$ > {self.dir}/pid.{n}\n{script}\n"
        self.system.ok(f"cat > {self.dir}/cmd.{n}.part && chmod 644 {self.dir}/cmd.{n}.part && "
                       f"mv {self.dir}/cmd.{n}.part {self.dir}/cmd.{n}", input=body)
        self.wait(f"test -s {self.dir}/pid.{n}", f"command {n} started in the session")
        return n

    def out(self, n):
        try:
            return self.path(f"out.{n}").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def rc(self, n):
        try:
            return int(self.path(f"rc.{n}").read_text())
        except (FileNotFoundError, ValueError):
            return None

    def pid(self, n):
        """The pid of command n (the locker, when the script execs it)."""
        return int(self.path(f"pid.{n}").read_text())

    def ended(self, n, timeout=30):
        """Waits for command n to end; returns its exit status."""
        return self.poll(lambda: self.rc(n) is not None and [self.rc(n)], f"command {n} to end: {self.out(n)}",
                         timeout)[0]

    def swaymsg(self, command):
        """A sway command through its IPC socket (sway sets SWAYSOCK only for
        the programs it starts)."""
        return self.as_user(f"SWAYSOCK=$(ls $XDG_RUNTIME_DIR/sway-ipc.*.sock | head -n 1) swaymsg {command}").stdout

    def pointer(self):
        """The desk's virtual pointer, made on first use. Make it before the
        locker starts: a client asks for a wl_pointer only once the seat says it
        has one, and a press sent before that reaches nobody."""
        if not self.pointers:
            self.pointers.append(VirtualPointer(self, *self.size))
        return self.pointers[0]

    def type(self, *words):
        """wtype with these arguments (its keys go to whatever has the keyboard).
        The first key of each wtype run is often lost: a throwaway Escape goes first."""
        self.as_user("wtype -d 20 -k Escape " + " ".join(shlex.quote(w) for w in words))

    def type_secret(self, text):
        """Types text and Enter; the text goes on stdin, never in argv."""
        self.as_user("wtype -d 20 -k Escape - -k Return", input=text)

    def screen(self, output=None, region=None):
        """A screenshot (grim) of the whole layout, of one output, or of a
        region (x, y, width, height in the layout's logical pixels: a smaller
        picture, read sooner by OCR)."""
        name = f"shot-{time.monotonic_ns()}.ppm"
        where = f"-o {shlex.quote(output)}" if output else ""
        if region:
            where += " -g '{},{} {}x{}'".format(*region)
        self.as_user(f"grim -t ppm {where} {name}")
        path = self.path(name)
        image = Image.from_ppm(path.read_bytes())
        self.system.run(f"rm -f {self.dir}/{name}")
        return image

    def save(self, image, name):
        """Keeps a screenshot as build/screen-shots/PREFIX-NAME.png."""
        SHOTS.mkdir(parents=True, exist_ok=True)
        target = SHOTS / f"{self.shot_prefix}-{name}.png"
        target.write_bytes(image.png())
        return target

    def read(self, image, block=False):
        """What tesseract reads on the screenshot, with runs of blanks made one.
        `block`: the picture is one block of text lines (tesseract --psm 6), so
        its page analysis cannot take a long line for two columns."""
        name = f"ocr-{time.monotonic_ns()}.png"
        self.path(name).write_bytes(image.png())
        psm = " --psm 6" if block else ""
        r = self.as_user(f"tesseract {name} stdout{psm} 2>/dev/null; rm -f {name}")
        return re.sub(r"\s+", " ", r.stdout).strip()


class Lock:
    """One patternlock-screen run in the desk's session, with --debug (the
    lock screen's lines: harness/debug_lines.py). Shared by the sway tests of
    the lock screen and of the setup window."""

    def __init__(self, desk, *args):
        self.desk = desk
        desk.pointer()  # the seat has a pointer before the locker starts
        self.n = desk.start(f"exec {LOCKER} --debug --color {COLOUR} {' '.join(args)}")
        desk.poll(lambda: f"{DEBUG}locked outputs=" in self.log() or self.rc() is not None,
                  "the compositor's locked event")
        assert self.rc() is None, f"{LOCKER} ended with status {self.rc()}: {self.log()}"

    def log(self):
        return self.desk.out(self.n)

    def lines(self, prefix):
        return [line[len(DEBUG):] for line in self.log().splitlines()
                if line.startswith(DEBUG) and line[len(DEBUG):].startswith(prefix)]

    def rc(self):
        return self.desk.rc(self.n)

    def mark(self):
        """Where the log is now: await() looks only at what comes after."""
        return len(self.log())

    def await_line(self, prefix, since=0, timeout=30):
        """Waits for a --debug line starting with prefix after the mark `since`."""
        def seen():
            return any(line.startswith(DEBUG + prefix) for line in self.log()[since:].splitlines())
        self.desk.poll(lambda: seen() or self.rc() is not None, f"'{prefix}' from {LOCKER}", timeout)
        assert self.rc() is None, f"{LOCKER} ended with status {self.rc()}: {self.log()}"

    def await_prompt(self, kind, since=0):
        """Waits until the locker shows its `kind` prompt (pattern: the grid;
        password: the password field)."""
        self.await_line(f"prompt kind={kind}", since)

    def grid(self, timeout=10):
        """The dots' centres on the screen, once the grid shows, and the screenshot.
        The pointer first goes to a corner, as a hand leaves the mouse: a cursor
        resting on a dot (where the last drag ended) hides its round shape."""
        self.desk.pointer().move(2, 2)
        shots = []

        def found():
            shots.append(self.desk.screen("HEADLESS-1"))
            return find_grid(shots[-1])
        try:
            grid = self.desk.poll(found, "the grid on the screen", timeout, every=0.2)
        except AssertionError:
            raise AssertionError(f"no 3x3 grid on the screen; saved as {self.desk.save(shots[-1], 'no-grid')}") \
                from None
        return grid, shots[-1]

    def unlocked(self, timeout=30):
        rc = self.desk.ended(self.n, timeout)
        assert rc == 0, f"{LOCKER} ended with status {rc}: {self.log()}"
        assert self.lines("unlocked"), self.log()

    def kill9(self):
        self.desk.system.ok(f"kill -9 {self.desk.pid(self.n)}")
        assert self.desk.ended(self.n) == 128 + 9
