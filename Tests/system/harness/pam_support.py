# SPDX-License-Identifier: Apache-2.0
"""Helpers for the PAM module's system tests: the pam_harness program, private
PAM configurations, fake daemons on a Unix socket, and throwaway users."""
import os
import pathlib
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from harness.common import MODULE_PASSWORD_PROMPT, add_user, remove_user, skip_or_fail, unique

ROOT = pathlib.Path(__file__).resolve().parents[3]
PAM_MODULE = ROOT / "build" / "pam_patternlock.so"
DAEMON = ROOT / "build" / "patternlockd"
# The pattern the tests enroll, and one that is not it.
RIGHT = "1235"
WRONG = "9876"

HARNESS_SOURCE = pathlib.Path(__file__).resolve().parent / "pam_harness.c"

# Linux-PAM return codes (security/_pam_types.h).
PAM_SUCCESS = 0
PAM_AUTH_ERR = 7
PAM_AUTHINFO_UNAVAIL = 9
PAM_USER_UNKNOWN = 10

GRID = ("Pattern unlock for {user}: type the dots in order.\n"
        "  1 2 3\n  4 5 6\n  7 8 9")
# The prompt says that Enter skips to the next module.
PROMPT = "Pattern (Enter to skip): "
# one_prompt: one field for the pattern or the password.
ONE_PROMPT = "Pattern or password: "
# The compact grid (grid=compact, or grid=auto off a terminal): the keys in
# the prompt, no message.
COMPACT_PROMPT = "Pattern [123 456 789]: "
ONE_COMPACT_PROMPT = "Pattern [123 456 789] or password: "
# The same words as the CLI's (one wording for a lock).
LOCKED = ("Pattern unlock for {user} is locked after 5 failed attempts. "
          "Ask an administrator to run: patternlockd reset {user}")
NOW_LOCKED = ("Wrong pattern. Pattern unlock for {user} is now locked after 5 failed attempts. "
              "Ask an administrator to run: patternlockd reset {user}")

# An entry shaped like a pattern that the pattern could not take ends the
# attempt (Tests/Contract/sentences.txt: unused.locked, unused.unavailable).
_TO_PASSWORD = ("Type your password. If your password is only the digits 1 to 9, press Enter first, "
                "then type it at the next prompt.")
UNUSED_LOCKED = "Pattern unlock is locked, so that pattern was not used. " + _TO_PASSWORD
UNUSED_UNAVAILABLE = "Pattern unlock could not check that pattern, so it was not used. " + _TO_PASSWORD
# What the module asks while the pattern cannot be used (with one_prompt): its
# own words, which a screen that draws tells from pam_unix's "Password: ".
PASSWORD_PROMPT = MODULE_PASSWORD_PROMPT


def wrong(remaining):
    noun = "attempt" if remaining == 1 else "attempts"
    return f"Wrong pattern \u2014 {remaining} {noun} left."


def build_module():
    """The shipped module, rebuilt by make when its sources changed."""
    subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "build/pam_patternlock.so"],
                   check=True, capture_output=True)
    return PAM_MODULE


def build_harness(directory):
    exe = pathlib.Path(directory) / "pam_harness"
    subprocess.run(["cc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(HARNESS_SOURCE), "-lpam"], check=True)
    return exe


_ESCAPE = re.compile(r"\\(\\|n|x[0-9a-f]{2})")


def _unescape(text):
    def one(m):
        g = m.group(1)
        if g == "\\":
            return "\\"
        if g == "n":
            return "\n"
        return chr(int(g[1:], 16))
    return _ESCAPE.sub(one, text)


class PamResult:
    """What the application saw: every conversation line and the return code."""

    def __init__(self, stdout, elapsed):
        self.stdout = stdout
        self.elapsed = elapsed
        self.events = []
        self.code = None
        self.codes = []  # one a round with --times
        for line in stdout.splitlines():
            style, _, text = line.partition(" ")
            if style == "RESULT":
                self.code = int(text.split(" ", 1)[0])
                self.codes.append(self.code)
            else:
                self.events.append((style, _unescape(text)))

    def texts(self, style):
        return [t for s, t in self.events if s == style]

    @property
    def prompts(self):
        return self.texts("PROMPT_ECHO_OFF") + self.texts("PROMPT_ECHO_ON")

    @property
    def errors(self):
        return self.texts("ERROR_MSG")

    @property
    def infos(self):
        return self.texts("TEXT_INFO")

    def __repr__(self):
        return f"PamResult(code={self.code}, elapsed={self.elapsed:.2f}, events={self.events})"


# Whether the module asks depends on logind: it asks a process in a
# local logind session, and where logind does not run, only the services its
# services= option lists. Some hosts that run these tests run logind (a CI
# machine booted with systemd), some do not (this project's build machine has a
# stale, empty /run/systemd/seats and no systemd). So every PAM application the
# host tests start runs where logind cannot be seen: in a private mount namespace
# with an empty tmpfs over /run/systemd. The module then takes its documented
# fallback on every host alike, and a test lists the service it means to be
# asked. The logind path itself is tested with real sessions in a booted
# container (test_presence.py).
_NO_LOGIND = r"""
set -e
if [ -d /run/systemd ]; then mount -t tmpfs -o size=64k,mode=0755 tmpfs /run/systemd; fi
if [ -n "$PL_SYSLOG" ]; then
    # /dev/log, where syslog(3) writes, made the test's own socket: a tmpfs of
    # links to the real /dev entries, plus log, moved over /dev.
    dev=$(mktemp -d /tmp/pl-dev.XXXXXX)
    mount -t tmpfs -o size=64k,mode=0755 tmpfs "$dev"
    mkdir "$dev/.real"
    mount --rbind /dev "$dev/.real"
    for entry in /dev/* /dev/.[!.]*; do
        [ -e "$entry" ] || [ -L "$entry" ] || continue
        name=${entry#/dev/}
        [ "$name" = log ] || ln -s "/dev/.real/$name" "$dev/$name"
    done
    ln -s "$PL_SYSLOG" "$dev/log"
    mount --move "$dev" /dev
    rmdir "$dev"
fi
exec "$@"
"""


def without_logind(cmd, syslog=None):
    """cmd run where logind cannot be seen (see above); with `syslog` (a
    SyslogCatcher), what it logs through syslog(3) goes to that catcher."""
    env = ["env", f"PL_SYSLOG={syslog.path}"] if syslog is not None else []
    return env + ["unshare", "--mount", "--propagation", "private", "sh", "-c", _NO_LOGIND, "sh"] + list(cmd)


class SyslogCatcher:
    """A datagram socket standing in for /dev/log: every message the module logs
    with pam_syslog, as syslog(3) sends it ("<PRI>TIMESTAMP TAG: text")."""

    def __init__(self):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="plsyslog-", dir="/tmp"))
        os.chmod(self.dir, 0o755)
        self.path = str(self.dir / "log")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o666)
        self.sock.settimeout(0.2)

    def messages(self):
        """Every message received so far (the module has returned: all are queued)."""
        out = []
        while True:
            try:
                out.append(self.sock.recv(65536).decode(errors="replace"))
            except (socket.timeout, BlockingIOError):
                return out

    def close(self):
        self.sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Pam:
    """Runs pam_authenticate through the harness with a private confdir holding
    one service whose auth stack is the module alone."""

    service = "pltest"

    def __init__(self, harness, module, directory):
        self.harness = harness
        self.module = module
        self.confdir = pathlib.Path(directory) / "pam.d"
        self.confdir.mkdir(exist_ok=True)

    def authenticate(self, user, *answers, args=(), silent=False, tty=None, rhost=None,
                     ruser=None, timeout=60, stack=None, repeat=False, listed=True, syslog=None,
                     times=1, grid="full"):
        """pam_authenticate for `user`. `stack`: the auth lines of the service instead
        of the module alone, with {module} standing for the built module's path.
        `repeat`: every prompt gets the first answer, as sshd answers them.
        `listed`: the module's options list this service (services=pltest), as an
        administrator lists sudo and login on a host without logind; without it the
        module has no evidence of a person and asks nobody. `syslog`: a
        SyslogCatcher for what the module logs. `times`: rounds in one process.
        `grid`: the module's grid= option, "full" unless given: the harness has
        no terminal, so grid=auto would choose the compact form where most of
        these tests read the 4-line grid; None leaves the module's default."""
        here = f" services={self.service}" if listed else ""
        if grid is not None:
            here += f" grid={grid}"
        if stack is None:
            auth = f"auth required {self.module}{here} {' '.join(args)}\n"
        else:
            auth = "".join(line.replace("{module}", f"{self.module}{here}") + "\n" for line in stack)
        (self.confdir / self.service).write_text(auth + "account required pam_permit.so\n")
        cmd = [str(self.harness)]
        if silent:
            cmd.append("--silent")
        if repeat:
            cmd.append("--repeat")
        if times != 1:
            cmd.append(f"--times={times}")
        for name, value in (("tty", tty), ("rhost", rhost), ("ruser", ruser)):
            if value is not None:
                cmd.append(f"--{name}={value}")
        cmd += [str(self.confdir), self.service, user] + list(answers)
        start = time.monotonic()
        proc = subprocess.run(without_logind(cmd, syslog), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        result = PamResult(proc.stdout, time.monotonic() - start)
        assert result.code is not None, f"harness failed: {proc.stdout}{proc.stderr}"
        return result


def status_line(user, enrolled=1, locked=0, failures=0, retry_after=0):
    remaining = 0 if locked else 5 - failures
    return (f"STATUS user={user} enrolled={enrolled} failures={failures} "
            f"remaining={remaining} locked={locked} locked_since=0 "
            f"retry_after={retry_after} iterations=600000 corrupt=0 recent=\n").encode()


class FakeDaemon:
    """A stand-in for patternlockd, root's like the real one, on a Unix socket
    in a short temporary directory (sun_path holds 108 bytes). `answer(line)` gives the bytes to send
    back for one request line, or None to never answer it. Every request line
    is kept in `lines`, and every byte each connection sent in `received` (one
    bytes object a connection, a line without its LF included)."""

    def __init__(self, answer):
        self.answer = answer
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="plpam-", dir="/tmp"))
        os.chmod(self.dir, 0o755)
        self.socket = str(self.dir / "socket")
        self.lines = []
        self.received = []
        self.connections = 0
        self._conns = []
        self._stop = threading.Event()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.socket)
        self._listener.listen(16)
        self._listener.settimeout(0.1)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            self._conns.append(conn)
            self.received.append(b"")
            threading.Thread(target=self._handle, args=(conn, len(self.received) - 1), daemon=True).start()

    def _handle(self, conn, index):
        buf = b""
        conn.settimeout(0.1)
        while not self._stop.is_set():
            try:
                chunk = conn.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            if not chunk:
                return
            self.received[index] += chunk
            buf += chunk
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode(errors="replace")
                self.lines.append(line)
                reply = self.answer(line)
                if reply is None:
                    continue
                try:
                    if reply == b"<close>":
                        conn.shutdown(socket.SHUT_RDWR)
                        return
                    conn.sendall(reply)
                except OSError:
                    return

    def stop_listening(self):
        """Leaves the socket file behind with nobody listening: a stale socket."""
        self._listener.close()

    def verbs(self):
        return [line.split(" ", 1)[0] for line in self.lines]

    def close(self):
        self._stop.set()
        self._listener.close()
        for c in self._conns:
            try:
                c.close()
            except OSError:
                pass
        self._thread.join(2)
        shutil.rmtree(self.dir, ignore_errors=True)


def by_verb(status=None, verify=b"OK\n", user="alice"):
    """An answer function: a valid STATUS for `user` unless `status` is given,
    and `verify` for VERIFY."""
    status = status if status is not None else status_line(user)

    def answer(line):
        if line.startswith("STATUS "):
            return status
        if line.startswith("VERIFY "):
            return verify
        return b"ERROR message=unexpected\n"
    return answer


def create_user(name):
    return add_user(name, "/bin/sh")


def set_password(name, password):
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True,
                   capture_output=True)


def documented_stack(path=ROOT / "pam" / "pam.d-example"):
    """The auth lines of a documented common-auth (what pam-auth-update writes),
    with the module's path as {module} so the built module is the one loaded."""
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("auth"):
            lines.append(line.replace("pam_patternlock.so", "{module}"))
    assert lines, f"no auth line in {path}"
    return lines


def on(daemon):
    """The module option for a daemon, real or fake."""
    return f"socket={daemon.socket}"


def failures(daemon, user):
    reply = daemon.request(f"STATUS user={user}")
    fields = dict(p.partition("=")[::2] for p in reply.split(" ")[1:])
    return int(fields["failures"])


# ---- fixtures (imported by the test modules) ----------------------------------

@pytest.fixture(scope="session")
def pam_module():
    return build_module()


@pytest.fixture(scope="session")
def harness(tmp_path_factory):
    return build_harness(tmp_path_factory.mktemp("harness"))


@pytest.fixture
def pam(harness, pam_module, tmp_path):
    return Pam(harness, pam_module, tmp_path)


@pytest.fixture
def syslog():
    catcher = SyslogCatcher()
    yield catcher
    catcher.close()


@pytest.fixture
def fake():
    made = []

    def make(answer):
        d = FakeDaemon(answer)
        made.append(d)
        return d
    yield make
    for d in made:
        d.close()


@pytest.fixture
def live(request):
    """The real daemon (conftest's `daemon`), once build/patternlockd exists."""
    if not DAEMON.exists():
        skip_or_fail("build/patternlockd is not built (make builds it)")
    return request.getfixturevalue("daemon")


@pytest.fixture
def user():
    name = unique("plpam")
    create_user(name)
    try:
        yield name
    finally:
        remove_user(name)


@pytest.fixture
def enrolled(live, user):
    live.enroll(user, RIGHT)
    return user


def module_line(control, module, daemon_socket, *options):
    return " ".join(["auth", control, str(module), f"socket={daemon_socket}", *options])

def pamtester(service, user, stdin):
    return subprocess.run(without_logind(["pamtester", "-v", service, user, "authenticate"]), input=stdin,
                          capture_output=True, text=True, timeout=60)
