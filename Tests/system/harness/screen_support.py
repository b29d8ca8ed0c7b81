# SPDX-License-Identifier: Apache-2.0
"""Helpers for running the real lock screen, patternlock-screen, on
build/pl-test-compositor (Tests/wayland-server): the server driven over its
control channel, the locker as a throwaway user with the real module and a
private /etc/pam.d, and what the tests read from a screenshot (the 3x3 grid
of dots, which dots are lit, red, the text by OCR)."""
import collections
import ctypes
import ctypes.util
import os
import pathlib
import pwd
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse

import pytest

from harness.common import skip_or_fail
from harness.pam_support import documented_stack, without_logind

ROOT = pathlib.Path(__file__).resolve().parents[3]
COMPOSITOR = ROOT / "build" / "pl-test-compositor"
LOCKER = ROOT / "build" / "patternlock-screen"
SERVICE = "patternlock-screen"
# The locker's background: the plain colour the dots are found on.
BACKGROUND = "182030"


def build_compositor():
    """The test server, rebuilt by make when its sources changed."""
    r = subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "build/pl-test-compositor"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"make build/pl-test-compositor failed:\n{r.stdout}{r.stderr}", pytrace=False)
    return COMPOSITOR


TOOLS = pathlib.Path(__file__).resolve().parent / "tools"


def build_pam_module(name, directory):
    """A PAM module of the tests' own, Tests/system/harness/tools/NAME.c, built
    into `directory` (which the locker's user must be able to read) and
    returned: linked -z nodelete, so what it leaves in its process outlives
    pam_end's dlclose."""
    out = pathlib.Path(directory) / f"{name}.so"
    subprocess.run(["cc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    "-Wl,-z,nodelete", "-o", str(out), str(TOOLS / f"{name}.c"), "-lpam"], check=True)
    out.chmod(0o755)
    return out


# ---- the test server --------------------------------------------------------

def compositor_args(mode="800x600", scale=1, layout=None, variant=None, physical=None):
    """pl-test-compositor's options but --socket: the output's `mode` in
    pixels at `scale`; the keymap's xkb `layout` and `variant` names
    ("de", "fr", "us,de"; us when None); the output's `physical` size in
    millimetres, "WxH" or (W, H) (96 dots an inch at scale 1 when None)."""
    args = ["--mode", mode, "--scale", str(scale)]
    if layout is not None:
        args += ["--layout", layout]
    if variant is not None:
        args += ["--variant", variant]
    if physical is not None:
        args += ["--physical", physical if isinstance(physical, str) else "%dx%d" % tuple(physical)]
    return args


class Compositor:
    """A running pl-test-compositor with one output of `mode` pixels at
    `scale` (and `physical` millimetres), a keyboard with the xkb `layout`
    and `variant`'s keymap (compositor_args), its socket in a runtime
    directory owned by `owner` (the user the locker runs as). `ready` holds
    the fields of its ready line; `cmd(line)` sends one control line and
    returns its reply."""

    def __init__(self, owner, mode="800x600", scale=1, log=None, layout=None, variant=None, physical=None,
                 runtime_in="/tmp", client_fd=None):
        """`owner`: a user name of this machine, or (uid, gid) of a user of a
        container whose tree holds `runtime_in` (its clients then reach the
        socket at the same place inside it). `client_fd`: the compositor's
        end of a socketpair whose other end a client gets as WAYLAND_SOCKET."""
        if isinstance(owner, tuple):
            ids = owner
        else:
            pw = pwd.getpwnam(owner)
            ids = (pw.pw_uid, pw.pw_gid)
        self.runtime = pathlib.Path(tempfile.mkdtemp(prefix="pl-wl-", dir=runtime_in))
        os.chown(self.runtime, *ids)
        self.runtime.chmod(0o700)
        self.socket = "wayland-pltest"
        self.stderr = open(log, "wb") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [str(COMPOSITOR), "--socket", self.socket]
            + compositor_args(mode, scale, layout, variant, physical)
            + (["--client-fd", str(client_fd)] if client_fd is not None else []),
            pass_fds=(client_fd,) if client_fd is not None else (),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            env=dict(os.environ, XDG_RUNTIME_DIR=str(self.runtime)))
        self._buffer = b""
        try:
            ready = self._line(10)
        except (EOFError, TimeoutError) as e:
            # What it said (a layout xkbcommon cannot compile), not just its status.
            self.close()
            said = pathlib.Path(log).read_text(errors="replace") if log else ""
            raise AssertionError(f"pl-test-compositor did not start: {e}\n{said}") from None
        assert ready.startswith("ready "), f"pl-test-compositor did not start: {ready!r}"
        self.ready = dict(f.split("=", 1) for f in ready.split()[1:] if "=" in f)
        os.chown(self.runtime / self.socket, *ids)

    def _line(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"pl-test-compositor sent no reply within {timeout} s")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise EOFError(f"pl-test-compositor exited ({self.proc.wait()})")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def cmd(self, line, timeout=10):
        self.send(line)
        return self.reply(timeout)

    def send(self, line):
        """Sends one control line without reading its reply: for a command
        that waits on a client the test itself runs (`ping`), which must
        answer before reply() can return."""
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout=10):
        return self._line(timeout)

    def ok(self, line, timeout=10):
        """cmd, asserting the reply is ok; its key=value fields."""
        reply = self.cmd(line, timeout)
        assert reply.startswith("ok"), f"{line!r}: {reply}"
        return dict(f.split("=", 1) for f in reply.split()[1:] if "=" in f)

    def commits(self):
        return int(self.ok("state")["commits"])

    def state(self):
        return self.ok("state")

    def toplevel(self):
        """The topmost xdg_toplevel's fields in `state` (title, app_id,
        mapped, activated, geometry, configures, acks), the strings decoded;
        None when there is no toplevel."""
        state = self.state()
        if state["toplevels"] == "0":
            return None
        fields = ("title", "app_id", "mapped", "activated", "geometry", "configures", "acks")
        return {k: urllib.parse.unquote(state[k]) if k in ("title", "app_id") else state[k] for k in fields}

    def wait_frame(self, after, timeout_ms=5000):
        """The commit count once the lock surface has committed more than
        `after` frames; None when none came within the timeout."""
        reply = self.cmd(f"wait-frame {after} {timeout_ms}", timeout=timeout_ms / 1000 + 5)
        count = int(reply.split("commits=")[1])
        return count if reply.startswith("ok") else None

    def settle(self, after, first_ms=5000, quiet_ms=300):
        """Waits for a frame after `after`, then until no frame came for
        `quiet_ms`: the locker has drawn everything it was sent."""
        count = self.wait_frame(after, first_ms)
        assert count is not None, f"the locker drew no frame within {first_ms} ms"
        while True:
            more = self.wait_frame(count, quiet_ms)
            if more is None:
                return count
            count = more

    def screenshot(self, path):
        fields = self.ok(f"screenshot {path}")
        return Image(path), fields

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        if self.stderr is not subprocess.DEVNULL:
            self.stderr.close()
        shutil.rmtree(self.runtime, ignore_errors=True)


# ---- the locker ---------------------------------------------------------------

# The namespace the locker runs in: the private pam.d bound over /etc/pam.d
# (inside without_logind's private mount namespace, so the host never sees it).
_WITH_PAM_D = 'mount --bind "$0" /etc/pam.d && exec "$@"'


def write_pam_d(directory, module, daemon, module_options="", one_prompt=True, account="pam_permit.so"):
    """A pam.d holding only the locker's service: the documented common-auth
    (what pam-auth-update writes) with the built module on the test daemon's
    socket, and `module_options` (e.g. layout=numpad) on its line; without
    its one_prompt when `one_prompt` is False; `account` the account stage's
    module (pam_unix.so: expiry as a login checks it). allow_remote: this host
    has no logind to tell a person is here."""
    pam_d = pathlib.Path(directory) / "pam.d"
    pam_d.mkdir(exist_ok=True)
    pam_d.chmod(0o755)
    options = f"{module} socket={daemon.socket} allow_remote {module_options}".rstrip()
    lines = documented_stack()
    if not one_prompt:
        lines = [line.replace("{module} one_prompt", "{module}") for line in lines]
        assert not any("one_prompt" in line for line in lines), lines
    auth = "".join(line.replace("{module}", options) + "\n" for line in lines)
    (pam_d / SERVICE).write_text(auth + f"account required {account}\n"
                                 "session required pam_permit.so\n")
    return pam_d


class Locker:
    """patternlock-screen (`binary`, a copy of build/patternlock-screen) started
    as `user` on `compositor`, with --debug and `args`; its stderr lines are
    collected in `lines` as they come."""

    def __init__(self, user, compositor, pam_d, binary=LOCKER, *args):
        pw = pwd.getpwnam(user)
        self.uid = pw.pw_uid
        ready_r, ready_w = os.pipe()
        env = [f"PATH=/usr/sbin:/usr/bin:/sbin:/bin", f"HOME={pw.pw_dir}", f"USER={user}",
               f"LOGNAME={user}", "LANG=C.UTF-8", f"XDG_RUNTIME_DIR={compositor.runtime}",
               f"WAYLAND_DISPLAY={compositor.socket}"]
        cmd = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups",
               "env", "-i"] + env + [str(binary), "--debug", "--color", BACKGROUND,
                                     "--ready-fd", str(ready_w)] + list(args)
        self.proc = subprocess.Popen(without_logind(["sh", "-c", _WITH_PAM_D, str(pam_d)] + cmd),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, pass_fds=(ready_w,))
        os.close(ready_w)
        self.ready_fd = ready_r
        self.lines = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for raw in self.proc.stderr:
            with self._changed:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_ready(self, timeout=15):
        """True once the locker wrote to its --ready-fd (it holds the lock)."""
        if not select.select([self.ready_fd], [], [], timeout)[0]:
            return False
        return os.read(self.ready_fd, 64) != b""

    def debug(self, pattern, timeout=15, start=0):
        """The index of the first debug line from `start` on that matches
        `pattern` (after the `patternlock-screen: ` prefix), waiting up to
        `timeout`; AssertionError with what it said otherwise."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for i in range(start, len(self.lines)):
                    text = self.lines[i].removeprefix("patternlock-screen: ")
                    if rx.search(text):
                        return i
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"patternlock-screen never said /{pattern}/; it said:\n"
                                         + "\n".join(self.lines))
                self._changed.wait(min(left, 0.2))

    def said(self, pattern, start=0):
        rx = re.compile(pattern)
        return [line for line in self.lines[start:]
                if rx.search(line.removeprefix("patternlock-screen: "))]

    def wait(self, timeout=15):
        """The locker's exit status; AssertionError with what it said when it
        still runs after `timeout` (a test that expected an unlock)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"patternlock-screen still runs after {timeout} s; it said:\n"
                                 + "\n".join(self.lines)) from None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.ready_fd)
        kill_processes_of(self.uid)


def processes_of(uid):
    """The pids of the processes whose real uid is `uid`, read from
    /proc/PID/status (the owner of the files in /proc/PID is root for a process
    that is not dumpable: the locker and its PAM child)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = pathlib.Path(f"/proc/{entry}/status").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        real = re.search(r"^Uid:\s+(\d+)", status, re.M)
        if real and int(real.group(1)) == uid:
            found.append(int(entry))
    return found


def kill_processes_of(uid):
    """SIGKILL to every process left running as `uid` (the locker's PAM child):
    the test user is throwaway, so each one is the test's own."""
    for pid in processes_of(uid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def locker_available():
    if os.geteuid() != 0:
        skip_or_fail("the lock screen's touch tests need root (users, mount namespaces)")
    if not LOCKER.exists():
        skip_or_fail(f"{LOCKER.relative_to(ROOT)} is not built (make screen builds it)")
    for tool in ("unshare", "setpriv", "tesseract"):
        if shutil.which(tool) is None:
            skip_or_fail(f"{tool} is not installed (.ci/run installs it)")


# ---- reading a screenshot ---------------------------------------------------------

_cairo = None


def _libcairo():
    global _cairo
    if _cairo is None:
        _cairo = ctypes.CDLL(ctypes.util.find_library("cairo") or "libcairo.so.2")
        _cairo.cairo_image_surface_create_from_png.restype = ctypes.c_void_p
        _cairo.cairo_image_surface_create_from_png.argtypes = [ctypes.c_char_p]
        for name in ("width", "height", "stride", "format"):
            f = getattr(_cairo, f"cairo_image_surface_get_{name}")
            f.restype = ctypes.c_int
            f.argtypes = [ctypes.c_void_p]
        _cairo.cairo_image_surface_get_data.restype = ctypes.c_void_p
        _cairo.cairo_image_surface_get_data.argtypes = [ctypes.c_void_p]
        _cairo.cairo_surface_status.restype = ctypes.c_int
        _cairo.cairo_surface_status.argtypes = [ctypes.c_void_p]
        _cairo.cairo_surface_destroy.argtypes = [ctypes.c_void_p]
    return _cairo


class Image:
    """A PNG's pixels, read with cairo (which wrote it): `rgb(x, y)`."""

    def __init__(self, path):
        cairo = _libcairo()
        self.path = pathlib.Path(path)
        surface = cairo.cairo_image_surface_create_from_png(str(path).encode())
        try:
            assert cairo.cairo_surface_status(surface) == 0, f"cairo cannot read {path}"
            self.width = cairo.cairo_image_surface_get_width(surface)
            self.height = cairo.cairo_image_surface_get_height(surface)
            self.stride = cairo.cairo_image_surface_get_stride(surface)
            self.data = ctypes.string_at(cairo.cairo_image_surface_get_data(surface),
                                         self.stride * self.height)
        finally:
            cairo.cairo_surface_destroy(surface)

    def rgb(self, x, y):
        # cairo's ARGB32 and RGB24 are native-endian words: B, G, R, A in memory.
        i = y * self.stride + x * 4
        return self.data[i + 2], self.data[i + 1], self.data[i]

    def background(self):
        """The most common colour: the plain background."""
        counts = collections.Counter(self.rgb(x, y) for y in range(0, self.height, 4)
                                     for x in range(0, self.width, 4))
        return counts.most_common(1)[0][0]

    def region(self, cx, cy, half):
        for y in range(max(0, cy - half), min(self.height, cy + half + 1)):
            for x in range(max(0, cx - half), min(self.width, cx + half + 1)):
                yield x, y


def _components(image, threshold):
    """The 4-connected components of the pixels with a channel above
    `threshold`, as (centre x, centre y, width, height)."""
    w, h = image.width, image.height
    table = bytes(1 if v > threshold else 0 for v in range(256))
    rows = []
    for y in range(h):
        row = image.data[y * image.stride:y * image.stride + 4 * w]
        # One channel at a time, as whole rows: a loop over pixels in Python
        # would take seconds a screenshot.
        hot = 0
        for channel in range(3):
            hot |= int.from_bytes(row[channel::4].translate(table), "big")
        rows.append(hot.to_bytes(w, "big"))
    mask = bytearray(b"".join(rows))
    found = []
    start = mask.find(1)
    while start >= 0:
        mask[start] = 0
        stack = [start]
        x0 = x1 = start % w
        y0 = y1 = start // w
        while stack:
            p = stack.pop()
            x, y = p % w, p // w
            x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
            for q, inside in ((p - 1, x > 0), (p + 1, x < w - 1), (p - w, y > 0), (p + w, y < h - 1)):
                if inside and mask[q]:
                    mask[q] = 0
                    stack.append(q)
        found.append(((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0 + 1, y1 - y0 + 1))
        start = mask.find(1, start)
    return found


class Grid:
    """The nine dots found on a screenshot: centres in buffer pixels, dot
    1 top left to 9 bottom right (the phone layout), and their size."""

    def __init__(self, centres, size, scale):
        self.centres = centres
        self.size = size
        self.scale = scale
        self.spacing = centres[1][0] - centres[0][0]

    def at(self, dot):
        """Dot `dot`'s centre in surface coordinates (what touch events carry)."""
        x, y = self.centres[dot - 1]
        return x / self.scale, y / self.scale

    def between(self, a, b, t=0.5):
        (ax, ay), (bx, by) = self.at(a), self.at(b)
        return ax + (bx - ax) * t, ay + (by - ay) * t

    def _region(self, dot):
        x, y = self.centres[dot - 1]
        return round(x), round(y), max(2, round(self.size * 0.75))

    def lit(self, image, idle):
        """The dots whose disc looks different from the idle screenshot's."""
        out = set()
        for dot in range(1, 10):
            cx, cy, half = self._region(dot)
            pixels = list(image.region(cx, cy, half))
            changed = sum(1 for x, y in pixels
                          if sum(abs(a - b) for a, b in zip(image.rgb(x, y), idle.rgb(x, y))) > 60)
            if changed > 0.15 * len(pixels):
                out.add(dot)
        return out

    def red(self, image):
        """The dots with a red disc (a wrong pattern's colour)."""
        out = set()
        for dot in range(1, 10):
            cx, cy, half = self._region(dot)
            pixels = list(image.region(cx, cy, half))
            red = sum(1 for x, y in pixels if _is_red(image.rgb(x, y)))
            if red > 0.1 * len(pixels):
                out.add(dot)
        return out


def _is_red(c):
    r, g, b = c
    return r >= 140 and r - g >= 70 and r - b >= 70


def find_grid(image, scale):
    """The 3x3 grid of bright dots on the plain background, centred on the
    screen: found, not assumed, so the tests hold whatever the locker's
    sizes. AssertionError when there is none."""
    blobs = [c for c in _components(image, max(image.background()) + 80)
             if c[2] >= 4 and c[3] >= 4 and 0.75 <= c[2] / c[3] <= 1.33]
    best = None
    for a in blobs:
        for b in blobs:
            dx, dy = b[0] - a[0], b[1] - a[1]
            if dx < 4 * a[2] or dy < 4 * a[3] or abs(b[2] - a[2]) > 2 + 0.25 * a[2]:
                continue
            tolerance = 2 + 0.04 * dx
            centres = []
            for row in range(3):
                for col in range(3):
                    x, y = a[0] + col * dx / 2, a[1] + row * dy / 2
                    match = [c for c in blobs if abs(c[0] - x) <= tolerance and abs(c[1] - y) <= tolerance
                             and abs(c[2] - a[2]) <= 2 + 0.25 * a[2]]
                    if not match:
                        break
                    centres.append((match[0][0], match[0][1]))
                else:
                    continue
                break
            if len(centres) != 9:
                continue
            off = abs(centres[4][0] - image.width / 2) + abs(centres[4][1] - image.height / 2)
            if best is None or off < best[0]:
                best = (off, centres, max(a[2], a[3]))
    assert best is not None, f"no 3x3 grid of dots on {image.path} ({len(blobs)} round shapes)"
    return Grid(best[1], best[2], scale)


def ocr(image_path):
    """What tesseract reads on the screenshot, as a person would read it."""
    r = subprocess.run(["tesseract", str(image_path), "stdout", "--psm", "11"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return " ".join(r.stdout.split())
