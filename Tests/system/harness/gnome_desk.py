# SPDX-License-Identifier: Apache-2.0
"""GNOME Shell 48 with GDM 48 in a booted Debian 13 container (trixie.py's
GNOME root), as ../shared/REAL-CLIENTS.md's recipe ran it headless: GDM up as
the D-Bus service GNOME's lock screen unlocks through (with no display it
could start, it gives seat0 up and stays), and `gnome-shell --headless` in a
local logind session of a user on seat0, started by systemd-run with a PAM
service of its own (`--unsafe-mode`: the screenshots and the remote-desktop
input a test uses). A hand (gnome_hand.py) runs as the user and drives mutter's
remote-desktop input; the extension's lines (`patternlock-gnome: ...`,
harness/debug_lines.py) say what shows and where."""
import contextlib
import pathlib
import re
import subprocess
import time

from harness import booted, trixie
from harness.debug_lines import centre, gnome_view
from harness.screen_image import Image, is_red

UUID = "patternlock@patternlock.org"
EXTENSION_DEB = "gnome-shell-extension-patternlock"
HAND = booted.ROOT / "Tests" / "system" / "harness" / "gnome_hand.py"
SIZE = (1024, 768)
# A session desktop file: without one GDM restarts forever ("no session desktop
# files installed"); with it GDM fails seat0's displays and stays on the bus.
SESSION_FILE = "[Desktop Entry]\nName=GNOME\nExec=/usr/bin/gnome-session\nType=Application\n"
SHELL_PAM = ("# written by patternlock's Tests/system/harness/gnome_desk.py\n"
             "auth required pam_permit.so\naccount required pam_permit.so\n"
             "session required pam_loginuid.so\nsession required pam_unix.so\nsession required pam_systemd.so\n")
MARK = "patternlock-gnome: "
# Screenshots a failed test leaves for the person reading it.
SHOTS = booted.ROOT / "build" / "gnome-shots"
KEY_RETURN, KEY_ESCAPE = 0xff0d, 0xff1b


def prepare(merged):
    for d in ("usr/share/wayland-sessions", "usr/share/xsessions"):
        (merged / d).mkdir(parents=True, exist_ok=True)
        (merged / d / "gnome.desktop").write_text(SESSION_FILE)


@contextlib.contextmanager
def gnome_system(debs):
    """The booted GNOME container with `debs` installed by apt-get and the
    patternlock profile enabled, once GDM is on the system bus."""
    with trixie.trixie_system(debs, packages=trixie.GNOME_PACKAGES, prepare=prepare) as system:
        poll(lambda: system.run("busctl --system status org.gnome.DisplayManager").returncode == 0,
             "GDM on the system bus", timeout=120)
        yield system


def poll(check, what, timeout=30, every=0.25):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(every)


class Gnome:
    """The user's GNOME Shell session: its shell, its hand, what it logs."""

    def __init__(self, system, user, uid):
        self.system, self.user, self.uid = system, user, uid
        self.unit = f"plgnome-shell-{user}"
        self.hand = None
        self.shell_started = 0

    # --- as the user ---
    def user_env(self):
        return (f"runuser -u {self.user} -- env XDG_RUNTIME_DIR=/run/user/{self.uid} "
                f"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/{self.uid}/bus")

    def as_user(self, command, check=True, input=None):
        r = self.system.run(f"{self.user_env()} sh -c {shell_quote(command)}", input=input)
        assert not check or r.returncode == 0, f"{command}\n{r.stdout}{r.stderr}"
        return r

    def gdbus(self, dest, path, method, *args):
        return self.as_user(f"gdbus call --session --dest {dest} --object-path {path} --method {method} "
                            + " ".join(shell_quote(a) for a in args)).stdout.strip()

    # --- the shell ---
    def start_shell(self):
        """gnome-shell headless in a new local logind session on seat0."""
        self.system.ok(f"cat > /etc/pam.d/{self.unit}", input=SHELL_PAM)
        self.shell_started += 1
        self.system.ok(f"systemd-run --unit={self.unit}-{self.shell_started} -p PAMName={self.unit} "
                       f"-p User={self.user} -E XDG_SESSION_TYPE=wayland -E XDG_SESSION_DESKTOP=GNOME "
                       "-E XDG_CURRENT_DESKTOP=GNOME -E XDG_SEAT=seat0 /usr/bin/gnome-shell --headless "
                       f"--virtual-monitor {SIZE[0]}x{SIZE[1]} --no-x11 --unsafe-mode")
        poll(lambda: "48." in self.as_user("gdbus call --session --dest org.gnome.Shell --object-path "
                                           "/org/gnome/Shell --method org.freedesktop.DBus.Properties.Get "
                                           "org.gnome.Shell ShellVersion", check=False).stdout,
             "GNOME Shell on the session bus", timeout=60)
        self.start_hand()

    def stop_shell(self):
        self.stop_hand()
        self.system.run(f"systemctl stop '{self.unit}-*'")

    def session(self):
        """The logind session of the shell: the user's one on seat0."""
        out = self.system.ok("loginctl list-sessions --no-legend")
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[2] == self.user and fields[3] == "seat0":
                return fields[0]
        raise AssertionError(f"no session of {self.user} on seat0:\n{out}")

    def start_hand(self):
        self.hand = subprocess.Popen(
            ["nsenter", "-t", str(self.system.leader), "-a", "bash", "-c",
             f"{self.user_env()} python3 -u {HAND}"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def stop_hand(self):
        if self.hand is not None:
            self.hand.stdin.close()
            self.hand.wait(10)
            self.hand = None

    def do(self, command):
        """One command to the hand (gnome_hand.py), secrets included: they
        travel on its standard input, never in an argv."""
        self.hand.stdin.write(command + "\n")
        self.hand.stdin.flush()
        answer = self.hand.stdout.readline().strip()
        assert answer == "ok", f"the hand: {command.split()[0]}: {answer}"

    # --- what it says ---
    def lines(self):
        out = self.system.ok(f"journalctl -o cat --no-pager _UID={self.uid} _COMM=gnome-shell")
        return [line[len(MARK):] for line in out.splitlines() if line.startswith(MARK)]

    def mark(self):
        return len(self.lines())

    def since(self, mark):
        return self.lines()[mark:]

    def wait_line(self, mark, pattern, what, timeout=30):
        try:
            return poll(lambda: next((line for line in self.since(mark) if re.search(pattern, line)), None),
                        what, timeout=timeout)
        except AssertionError as e:
            raise AssertionError(f"{e}; the extension said: {self.since(mark)[-8:]}; the module: {self.module_lines()}") from None

    def view(self, mark=0):
        """The last description of the dialog since `mark` (debug_lines.gnome_view)."""
        views = [gnome_view(line) for line in self.since(mark) if line.startswith("where=")]
        return views[-1] if views else None

    def wait_view(self, mark, what, timeout=30, **want):
        try:
            return poll(lambda: (v := self.view(mark)) is not None and all(v[k] == w for k, w in want.items()) and v,
                        what, timeout=timeout)
        except AssertionError as e:
            raise AssertionError(f"{e}; the extension said: {self.since(mark)[-8:]}; the module: {self.module_lines()}") from None

    def locked(self):
        return self.gdbus("org.gnome.ScreenSaver", "/org/gnome/ScreenSaver",
                          "org.gnome.ScreenSaver.GetActive") == "(true,)"

    def lock(self, extension=True):
        """Locks the session and raises the unlock dialog (Escape, as a person
        presses a key); returns the mark before the dialog's first prompt.
        Without the extension, waits for the module's prompt on the screen
        (GNOME's field shows it as its hint)."""
        mark = self.mark()
        self.system.ok(f"loginctl lock-session {self.session()}")
        poll(self.locked, "GNOME to lock", timeout=30)
        time.sleep(1)  # the shield's curtain, down
        self.do(f"key {KEY_ESCAPE}")
        if extension:
            self.wait_line(mark, r"^prompt kind=", "the unlock dialog's first prompt", timeout=30)
        else:
            poll(lambda: "or password" in self.read(), "the module's prompt on GNOME's own field", timeout=30)
        return mark

    def unlocked(self, timeout=20):
        try:
            poll(lambda: not self.locked(), "GNOME to unlock", timeout=timeout)
        except AssertionError as e:
            raise AssertionError(f"{e}; the extension said last: {self.lines()[-8:]}") from None

    @staticmethod
    def centre(view, dot):
        return centre(view["grid"], dot)

    def draw(self, view, dots, touch=False):
        points = " ".join("%.0f,%.0f" % self.centre(view, int(d)) for d in dots)
        self.do(("touch " if touch else "drag ") + points)

    def click(self, point):
        self.do("click %d %d" % point)

    def type(self, text):
        self.do(f"type {text}")

    def key(self, keysym):
        self.do(f"key {keysym}")

    def screenshot(self, host_path):
        """The screen, as PNG, to host_path (through the container's /tmp)."""
        name = f"/tmp/plshot-{time.monotonic_ns()}.png"
        self.do(f"screenshot {name}")
        data = self.inside(name).read_bytes()
        host_path.parent.mkdir(parents=True, exist_ok=True)
        host_path.write_bytes(data)
        self.system.run(f"rm -f {name}")
        return host_path

    def inside(self, path):
        """A path of the container as the host reaches it: through its init's
        root, which sees the container's own mounts (its /tmp is a tmpfs)."""
        return pathlib.Path(f"/proc/{self.system.leader}/root") / path.lstrip("/")

    def shows(self, text, view=None, timeout=10):
        """Whether `text` comes to be read on the screen within timeout (what
        was read last is in the failure); with `view`, under its grid, where
        the dialog shows its messages."""
        seen = []

        def check():
            seen[:] = [self.read() if view is None else self.read_under(view)]
            return text in seen[0]
        try:
            return poll(check, f"{text!r} on the screen", timeout=timeout, every=0.1)
        except AssertionError as e:
            shot = self.screenshot(SHOTS / f"not-shown-{time.monotonic_ns()}.png")
            raise AssertionError(f"{e}; read last: {seen[0]!r}; the screen: {shot}") from None

    def read_under(self, view):
        """What tesseract (this machine's) reads in the band under a view's
        grid, its button and the dialog's message, made black on white (GNOME's
        dialogs are light on dark) and scaled up."""
        x, y, side = view["grid"]
        left, top = max(0, x - 200), y + side
        area = (left, top, min(side + 400, SIZE[0] - left), min(160, SIZE[1] - top))
        name = f"/tmp/plshot-{time.monotonic_ns()}.png"
        self.do("area %d %d %d %d %s" % (*area, name))
        path = self.inside(name)
        try:
            image = Image.from_png(path.read_bytes()).light_text_as_black().scaled(3)
        finally:
            path.unlink(missing_ok=True)
        r = subprocess.run(["tesseract", "-", "stdout", "--psm", "6"], input=image.png(), capture_output=True,
                           timeout=60)
        return re.sub(r"\s+", " ", r.stdout.decode(errors="replace")).strip()

    def read(self):
        """What tesseract reads on the screen, runs of blanks made one."""
        name = f"/tmp/plshot-{time.monotonic_ns()}.png"
        self.do(f"screenshot {name}")
        r = self.system.run(f"tesseract {name} stdout 2>/dev/null; rm -f {name}")
        return re.sub(r"\s+", " ", r.stdout).strip()

    def grid_image(self, view):
        """A screenshot of the grid of a view, read here."""
        x, y, side = view["grid"]
        name = f"/tmp/plshot-{time.monotonic_ns()}.png"
        self.do(f"area {x} {y} {side} {side} {name}")
        path = self.inside(name)
        try:
            return Image.from_png(path.read_bytes())
        finally:
            path.unlink(missing_ok=True)

    def red_in_grid(self, view):
        """How many of the grid's dots are red (the wrong pattern's colour)."""
        image, side = self.grid_image(view), view["grid"][2]
        return sum(1 for dot in range(1, 10) if is_red(image.pixel(*centre((0, 0, side), dot))))

    def lit_in_grid(self, view):
        """How many of the grid's dots are lit: blue (the path's colour)."""
        image, side = self.grid_image(view), view["grid"][2]
        return sum(1 for dot in range(1, 10) if is_lit(image.pixel(*centre((0, 0, side), dot))))

    def module_lines(self):
        """The module's last lines in the journal (why it asked or not)."""
        out = self.system.run("journalctl -o cat --no-pager | grep 'pam_patternlock(' | tail -4").stdout
        sessions = self.system.run(f"loginctl list-sessions --no-legend; loginctl show-user {self.user} -p Display; "
                                   f"for s in $(loginctl list-sessions --no-legend | awk '{{print $1}}'); do "
                                   f"loginctl show-session $s -p Id -p Active -p State -p Remote -p Seat -p Type "
                                   f"-p Class | paste -sd' '; done").stdout
        return out.splitlines() + sessions.splitlines()

    def daemon_verifies(self):
        out = self.system.ok("journalctl -u patternlockd -o cat --no-pager")
        return [line for line in out.splitlines() if line.startswith(f"verify user={self.user} ")]


def is_lit(c):
    """The lit dots' blue (grid.js LIT, 0.31 0.76 0.97), not the idle grey."""
    r, g, b = c
    return b >= 180 and r <= 140


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"
