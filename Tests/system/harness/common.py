# SPDX-License-Identifier: Apache-2.0
"""What every layer of the system tests shares: the real patternlockd binary on a
private socket, state dir and key (Daemon), the reply parser, unique names, and
skip_or_fail. The fixtures built on them are in Tests/system/conftest.py."""
import os
import pathlib
import pwd
import signal
import socket
import subprocess
import time
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
DAEMON = ROOT / "build" / "patternlockd"
PAM_MODULE = ROOT / "build" / "pam_patternlock.so"
# The floor the daemon enforces; tests pin it so a verify costs tens of milliseconds.
TEST_ITERATIONS = 600000


def module_sentence(key):
    """A sentence of the module as Tests/Contract/sentences.txt holds it (the
    one place of its words), unescaped: \\n, \\\\ and \\xHH (placeholders stay)."""
    for line in (ROOT / "Tests" / "Contract" / "sentences.txt").read_text().splitlines():
        if line.startswith(key + "\t"):
            raw = line.split("\t", 1)[1]
            out, i = bytearray(), 0
            while i < len(raw):
                if raw[i] == "\\":
                    nxt = raw[i + 1]
                    if nxt == "n":
                        out += b"\n"
                        i += 2
                    elif nxt == "\\":
                        out += b"\\"
                        i += 2
                    elif nxt == "x":
                        out.append(int(raw[i + 2:i + 4], 16))
                        i += 4
                    else:
                        raise ValueError(f"sentences.txt {key}: unknown escape")
                else:
                    out += raw[i].encode()
                    i += 1
            return out.decode()
    raise KeyError(f"sentences.txt has no {key}")


# The module's own prompt while the pattern cannot be used (one_prompt: locked,
# or no answer from the daemon): not pam_unix's "Password: ".
MODULE_PASSWORD_PROMPT = module_sentence("prompt.password")


def in_ci():
    """True under CI: .ci/run exports PATTERNLOCK_CI=1."""
    return os.environ.get("PATTERNLOCK_CI", "") not in ("", "0")


def skip_or_fail(reason):
    """Skip a test whose environment is missing (no root, no systemd-nspawn, a
    container that does not boot, a tool not installed), except under CI, where
    the same is a failure: .ci/run installs and allows all of it, so a skip there
    would be a test that silently never ran. Use it for what a test needs, not for
    what is legitimately optional on the machine CI runs on."""
    __tracebackhide__ = True  # report the test's line, not this one
    if in_ci():
        pytest.fail(f"{reason}. Under CI (PATTERNLOCK_CI=1) this test must run, not be skipped: "
                    "the machine lacks what .ci/run is meant to provide.", pytrace=False)
    pytest.skip(reason)


def mark_layer(items, folder, marker):
    """Marks the collected tests under `folder` (a layer's conftest passes its
    own) with the layer's marker; Tests/system/conftest.py declares them."""
    for item in items:
        if folder in item.path.parents:
            item.add_marker(marker)


def unique(prefix):
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def add_user(name, shell="/usr/sbin/nologin", *options):
    """A real local user without a home (root's ENROLL checks the password
    database, so no fake one will do); remove_user removes it."""
    subprocess.run(["useradd", "-M", "-s", shell, *options, name], check=True, capture_output=True)
    return pwd.getpwnam(name)


def remove_user(name):
    subprocess.run(["userdel", "-f", name], capture_output=True)


# The enroll policy (docs/GUESSING.md) refuses common patterns, and most tests
# enroll short, simple ones chosen for what they test: their daemons run with the
# guessing check off. test_policy.py runs the defaults.
POLICY_OFF = ("--policy-threshold", "0")


class Daemon:
    """A running `patternlockd serve` with its own socket, state dir and key."""

    def __init__(self, base: pathlib.Path, extra_args=(), policy_args=POLICY_OFF):
        self.base = base
        self.socket = str(base / "run" / "socket")
        self.state_dir = str(base / "state")
        self.key_file = str(base / "etc" / "key")
        self.extra_args = list(policy_args) + list(extra_args)
        self.proc = None
        self.log_path = base / "daemon.log"
        (base / "run").mkdir(exist_ok=True)
        (base / "run").chmod(0o755)
        (base / "etc").mkdir(mode=0o700, exist_ok=True)
        base.chmod(0o755)

    def args(self):
        return [str(DAEMON), "serve", "--socket", self.socket,
                "--state-dir", self.state_dir, "--key-file", self.key_file,
                "--iterations", str(TEST_ITERATIONS)] + self.extra_args

    def start(self, timeout=20.0):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.args(), stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited {self.proc.returncode}: {self.read_log()}")
            try:
                if self.request("PING") .startswith("PONG"):
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("daemon did not answer PING: " + self.read_log())

    def read_log(self):
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self):
        self.stop()
        return self.start()

    def connect(self, timeout=60.0):
        """A client connection. Connect blocking, then set the timeout: a Unix socket
        with a timeout is non-blocking underneath, and its connect fails with EAGAIN
        whenever the listen backlog is momentarily full."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.socket)
        s.settimeout(timeout)
        return s

    def request(self, line, timeout=60.0):
        """Send one request line, return the reply line without its LF."""
        with self.connect(timeout) as s:
            s.sendall(line.encode() + b"\n")
            return read_line(s)

    def enroll(self, user, pattern):
        reply = self.request(f"ENROLL user={user} pattern={pattern}")
        assert reply.startswith("OK"), reply
        return reply

    def cli(self, *args, input=None, user=None, env=None):
        """Run the real client command against this daemon; as `user` via setpriv."""
        cmd = [str(DAEMON)] + list(args)
        if user is not None:
            import pwd
            pw = pwd.getpwnam(user)
            cmd = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups"] + cmd
        e = dict(os.environ)
        e["PATTERNLOCK_SOCKET"] = self.socket
        if env:
            e.update(env)
        return subprocess.run(cmd, input=input, capture_output=True, text=True,
                              env=e, timeout=120)


def read_line(s):
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace").rstrip("\n")


def figure(name, text):
    """Print a measured figure; with $PATTERNLOCK_FIGURES, also append it there (make stress)."""
    line = f"FIGURE {name}: {text}"
    print("\n" + line)
    path = os.environ.get("PATTERNLOCK_FIGURES")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def records(daemon):
    """The user records in a daemon's state dir: every file but its `.lock`."""
    return sorted(n for n in os.listdir(daemon.state_dir) if n != ".lock")


def parse_reply(line):
    """'FAIL remaining=3' -> ('FAIL', {'remaining': '3'})"""
    from urllib.parse import unquote
    parts = line.split(" ")
    fields = {}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        fields[k] = v if k == "recent" else unquote(v)
    return parts[0], fields


# A python3 that unprivileged test users can run (pyenv's lives under /root).
SYSTEM_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"


MIDDLE = {(1, 3): 2, (4, 6): 5, (7, 9): 8, (1, 7): 4, (2, 8): 5, (3, 9): 6, (1, 9): 5, (3, 7): 5}
MIDDLE.update({(b, a): m for (a, b), m in list(MIDDLE.items())})


def random_pattern(rng, length, avoid=()):
    """A valid pattern of `length` dots typed dot by dot, none of `avoid`."""
    while True:
        path = [rng.randint(1, 9)]
        while len(path) < length:
            options = [d for d in range(1, 10) if d not in path and MIDDLE.get((path[-1], d), path[0]) in path]
            if not options:
                break
            path.append(rng.choice(options))
        typed = "".join(map(str, path))
        if len(path) == length and typed not in avoid:
            return typed



def desktop_groups(text):
    """A desktop entry file's groups ("Desktop Entry", "Desktop Action Remove"),
    each a dict of its keys."""
    groups, group = {}, None
    for line in text.splitlines():
        if line.startswith("["):
            group = groups.setdefault(line.strip().strip("[]"), {})
        elif "=" in line and group is not None and not line.startswith("#"):
            key, value = line.split("=", 1)
            group[key] = value
    return groups
