# SPDX-License-Identifier: Apache-2.0
"""pam_patternlock.so under the microscope.

- valgrind memcheck around pamtester (the real daemon, a real /etc/pam.d service)
  and around pam_harness (scripted fake daemons): no memory error, nothing
  definitely or indirectly lost, no file descriptor left open by the module;
- an AddressSanitizer + UndefinedBehaviorSanitizer build of the module, loaded
  by an instrumented harness, through the same scenarios;
- fake daemons that answer slowly, in pieces, too much, too late or garbage:
  never PAM_SUCCESS unless the reply is a well-formed exact "OK", and never
  past the module's deadline.

test_module_through_libpam.py has the one-shot bad replies, the never-answering daemon and the
socket-ownership checks on the plain module; this file adds timing-shaped
replies and runs everything under the two checkers.
"""
import os
import pathlib
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from harness.pam_support import (HARNESS_SOURCE, PAM_AUTH_ERR, PAM_AUTHINFO_UNAVAIL, PAM_SUCCESS,
                         PAM_USER_UNKNOWN, RIGHT, WRONG, PamResult, status_line, unique, without_logind)


HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MODULE_SOURCES = sorted((ROOT / "Sources" / "CPamPatternLock").glob("*.c"))
MODULE_INCLUDE = ROOT / "Sources" / "CPamPatternLock" / "include"
# Only for libpam/libc internals, never for the module; unused while empty.
SUPPRESSIONS = HERE / "valgrind.supp"

pytestmark = pytest.mark.valgrind
PAM_D = pathlib.Path("/etc/pam.d")


# ---- the checkers ---------------------------------------------------------------

def valgrind_prefix(log):
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is not installed (apt-get install valgrind)")
    cmd = ["valgrind", "--tool=memcheck", "--leak-check=full",
           "--errors-for-leak-kinds=definite,indirect", "--error-exitcode=99",
           "--track-fds=yes", f"--log-file={log}"]
    if SUPPRESSIONS.exists():
        cmd.append(f"--suppressions={SUPPRESSIONS}")
    return cmd


class Memcheck:
    """What valgrind said about one run."""

    def __init__(self, log_path, returncode):
        self.text = pathlib.Path(log_path).read_text(errors="replace")
        self.returncode = returncode
        m = re.search(r"ERROR SUMMARY: ([\d,]+) errors", self.text)
        self.errors = int(m.group(1).replace(",", "")) if m else None
        self.lost = {}
        for kind in ("definitely", "indirectly"):
            m = re.search(kind + r" lost: ([\d,]+) bytes", self.text)
            self.lost[kind] = int(m.group(1).replace(",", "")) if m else 0
        self.all_freed = "All heap blocks were freed" in self.text
        # An fd open at exit that the process did not inherit was opened and
        # never closed (the module's socket, say).
        self.leaked_fds = re.findall(r"Open (?:file descriptor \d+: .*|AF_UNIX socket \d+: .*)\n"
                                     r"==\d+==    (?!<inherited from parent>).*", self.text)

    def summary(self):
        lines = [line.split("==", 2)[-1].strip() for line in self.text.splitlines()
                 if "ERROR SUMMARY" in line or " lost: " in line or "heap blocks were freed" in line]
        return "; ".join(lines)

    def assert_clean(self):
        assert self.errors == 0, self.text
        assert self.returncode != 99, self.text
        assert self.lost == {"definitely": 0, "indirectly": 0}, self.text
        assert self.leaked_fds == [], self.text


def find_clang():
    """The Swift toolchain's clang (it ships the sanitizer runtimes), or one on PATH."""
    candidates = [os.environ.get("CLANG", "")]
    swift = shutil.which("swift")
    if swift:
        candidates.append(str(pathlib.Path(os.path.realpath(swift)).parent / "clang"))
    candidates += [shutil.which("clang") or "", "/opt/swift/usr/bin/clang"]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    pytest.fail("no clang found for the AddressSanitizer build (set CLANG=...)")


def module_warnings():
    """The module's language and warning flags (PAM_WARNINGS in the Makefile),
    which every C build of the module shares."""
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT), "pam-warnings"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "-Werror" in r.stdout.split(), r.stdout + r.stderr
    return r.stdout.split()


SANITIZER_FLAGS = ["-g", "-O1", "-fno-omit-frame-pointer",
                   "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:exitcode=86:detect_stack_use_after_return=1:"
                    "strict_string_checks=1:check_initialization_order=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87",
}


@pytest.fixture(scope="session")
def sanitized(tmp_path_factory):
    """(harness, module): both built with clang -fsanitize=address,undefined. The
    harness carries the runtimes, so libpam can dlopen the instrumented module
    with no LD_PRELOAD."""
    clang = find_clang()
    flags = [*module_warnings(), *SANITIZER_FLAGS]
    d = tmp_path_factory.mktemp("sanitized")
    module = d / "pam_patternlock_asan.so"
    harness = d / "pam_harness_asan"
    for cmd in ([clang, *flags, "-fPIC", "-shared", "-fvisibility=hidden",
                 f"-I{MODULE_INCLUDE}", "-o", str(module), *map(str, MODULE_SOURCES), "-lpam", "-lsystemd"],
                [clang, *flags, "-o", str(harness), str(HARNESS_SOURCE), "-lpam"]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    return harness, module


def assert_sanitizers_quiet(proc):
    report = proc.stderr
    assert proc.returncode == 0, f"exit {proc.returncode}\n{report}"
    for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:",
                   "UndefinedBehaviorSanitizer"):
        assert marker not in report, report


# ---- the harness, plain or under a checker -----------------------------------------

class Runner:
    """Runs pam_authenticate through a harness with a private confdir, as the
    `plain`, `memcheck` or `asan` variant; checks the checker's verdict."""

    def __init__(self, variant, harness, module, directory):
        self.variant = variant
        self.harness = harness
        self.module = module
        self.dir = pathlib.Path(directory)
        self.confdir = self.dir / "pam.d"
        self.confdir.mkdir(exist_ok=True)
        self.memcheck = None

    def authenticate(self, user, *answers, args=(), tty=None, rhost=None, ruser=None):
        """As pam_support's Pam: where logind cannot be seen, with the service listed."""
        (self.confdir / "plmem").write_text(
            f"auth required {self.module} services=plmem {' '.join(args)}\naccount required pam_permit.so\n")
        cmd = [str(self.harness)]
        for name, value in (("tty", tty), ("rhost", rhost), ("ruser", ruser)):
            if value is not None:
                cmd.append(f"--{name}={value}")
        cmd += [str(self.confdir), "plmem", user, *answers]
        env = dict(os.environ)
        log = self.dir / f"valgrind-{unique('')}.log"
        if self.variant == "memcheck":
            cmd = valgrind_prefix(log) + cmd
        elif self.variant == "asan":
            env.update(SANITIZER_ENV)
        start = time.monotonic()
        proc = subprocess.run(without_logind(cmd), capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL, env=env)
        result = PamResult(proc.stdout, time.monotonic() - start)
        assert result.code is not None, f"harness failed: {proc.stdout}{proc.stderr}"
        if self.variant == "memcheck":
            self.memcheck = Memcheck(log, proc.returncode)
            self.memcheck.assert_clean()
        elif self.variant == "asan":
            assert_sanitizers_quiet(proc)
        else:
            assert proc.returncode == 0, proc.stdout + proc.stderr
        return result


VARIANTS = ["plain", "memcheck", "asan"]


@pytest.fixture(params=VARIANTS)
def runner(request, tmp_path, harness, pam_module):
    if request.param == "asan":
        asan_harness, asan_module = request.getfixturevalue("sanitized")
        return Runner("asan", asan_harness, asan_module, tmp_path)
    return Runner(request.param, harness, pam_module, tmp_path)


# ---- a daemon that follows a script --------------------------------------------------

class ScriptedDaemon:
    """A root-owned Unix socket that answers each request line with a script
    of steps, chosen by the request's verb:
        b"..."            send these bytes
        0.5               wait this many seconds
        ("trickle", b, s) send b every s seconds until the client goes away
        ("flood", n)      send n bytes without a line feed
        "close"           close the connection
    After its script a connection stays open until the client closes it."""

    def __init__(self, scripts):
        self.scripts = scripts
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="plmem-", dir="/tmp"))
        os.chmod(self.dir, 0o755)
        self.socket = str(self.dir / "socket")
        self.verbs = []
        self.connections = 0
        self._stop = threading.Event()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.socket)
        self._listener.listen(16)
        self._listener.settimeout(0.1)
        self._threads = [threading.Thread(target=self._serve, daemon=True)]
        self._threads[0].start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            t = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _handle(self, conn):
        with conn:
            conn.settimeout(0.1)
            try:
                line = self._read_line(conn)
                if line is None:
                    return
                self.verbs.append(line.split(b" ", 1)[0].decode(errors="replace"))
                for step in self.scripts.get(self.verbs[-1], ["close"]):
                    if not self._run(conn, step):
                        return
                while not self._stop.is_set():  # until the client hangs up
                    try:
                        if not conn.recv(4096):
                            return
                    except socket.timeout:
                        continue
            except OSError:
                return

    def _read_line(self, conn):
        buf = b""
        while b"\n" not in buf:
            if self._stop.is_set():
                return None
            try:
                chunk = conn.recv(4096)
            except socket.timeout:
                continue
            if not chunk:
                return None
            buf += chunk
        return buf.split(b"\n", 1)[0]

    def _run(self, conn, step):
        if isinstance(step, bytes):
            conn.sendall(step)
        elif isinstance(step, (int, float)):
            return not self._stop.wait(step)
        elif step == "close":
            return False
        elif step[0] == "trickle":
            while not self._stop.wait(step[2]):
                conn.sendall(step[1])
        elif step[0] == "flood":
            conn.settimeout(5)
            conn.sendall(b"A" * step[1])
            conn.settimeout(0.1)
        return True

    def close(self):
        self._stop.set()
        self._listener.close()
        for t in self._threads:
            t.join(5)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def scripted():
    made = []

    def make(scripts):
        d = ScriptedDaemon(scripts)
        made.append(d)
        return d
    yield make
    for d in made:
        d.close()


STATUS_OK = status_line("alice")


def padded_status(total):
    """A well-formed STATUS reply of exactly `total` bytes with its LF; an
    unknown field the module ignores makes up the length."""
    line = STATUS_OK.rstrip(b"\n") + b" padding="
    return line + b"x" * (total - len(line) - 1) + b"\n"


# Each: (STATUS script, VERIFY script, entry or harness answer, extra module
# options, the expected PAM code, the longest it may take in the plain variant).
SCENARIOS = {
    # Controls: well-formed replies, whole or in pieces.
    "exact-ok": ([STATUS_OK], [b"OK\n"], RIGHT, (), PAM_SUCCESS, 2),
    "ok-in-pieces": ([STATUS_OK[:7], 0.05, STATUS_OK[7:30], 0.05, STATUS_OK[30:]],
                     [b"O", 0.1, b"K", 0.1, b"\n"], RIGHT, (), PAM_SUCCESS, 2),
    "reply-at-the-4096-byte-limit": ([padded_status(4096)], [b"OK\n"], RIGHT, (),
                                     PAM_SUCCESS, 2),
    "wrong-pattern": ([STATUS_OK], [b"FAIL remaining=3\n"], WRONG, ("debug",), PAM_AUTH_ERR, 2),
    "locked-timed": ([status_line("alice", locked=1, failures=5, retry_after=90)], [], RIGHT,
                     (), PAM_AUTHINFO_UNAVAIL, 2),
    "invalid-entry": ([STATUS_OK], [b"INVALID reason=too_short\n"], "12", ("nogrid",),
                      PAM_AUTH_ERR, 2),
    # Slow, partial, oversized or garbage: never success, never past the deadline.
    "status-trickles-forever": ([("trickle", b"S", 0.05)], [], RIGHT, ("timeout=1", "debug"),
                                PAM_AUTHINFO_UNAVAIL, 2),
    "status-too-late": ([1.6, STATUS_OK], [], RIGHT, ("timeout=1",), PAM_AUTHINFO_UNAVAIL, 2),
    "status-floods": ([("flood", 1 << 20)], [], RIGHT, ("timeout=1",), PAM_AUTHINFO_UNAVAIL, 2),
    "status-half-then-close": ([b"STATUS user=alice enrolled=1", "close"], [], RIGHT, (),
                               PAM_AUTHINFO_UNAVAIL, 2),
    "status-one-byte-over": ([padded_status(4097)], [b"OK\n"], RIGHT, ("timeout=1",),
                             PAM_AUTHINFO_UNAVAIL, 2),
    "status-binary": ([bytes(range(256)).replace(b"\n", b"") + b"\n"], [b"OK\n"], RIGHT, (),
                      PAM_AUTHINFO_UNAVAIL, 2),
    # A pattern that got no verdict ends the attempt (never handed on).
    "verify-ok-then-junk-no-lf": ([STATUS_OK], [b"OK" + b"\x00" * 5000], RIGHT, ("timeout=1",),
                                  PAM_AUTH_ERR, 2),
    "verify-oversized": ([STATUS_OK], [b"OK " + b"x" * 8000 + b"\n"], RIGHT, (),
                         PAM_AUTH_ERR, 2),
    "verify-ok-without-lf-then-close": ([STATUS_OK], [b"OK", "close"], RIGHT, (),
                                        PAM_AUTH_ERR, 2),
    "verify-high-bytes": ([STATUS_OK], ["OK \u00e9\n".encode()], RIGHT, ("debug",),
                          PAM_AUTH_ERR, 2),
    # one_prompt while the pattern cannot be used: the module reads the field
    # itself; a pattern ends the attempt, a password goes on unsent.
    "locked-one-prompt-pattern": ([status_line("alice", locked=1, failures=5)], [], RIGHT, ("one_prompt",),
                                  PAM_AUTH_ERR, 2),
    "status-garbage-one-prompt-password": ([b"OK\n"], [], "hunter2", ("one_prompt",), PAM_AUTHINFO_UNAVAIL, 2),
    # The entry never reaches a daemon.
    "conversation-fails": ([STATUS_OK], [b"OK\n"], "@fail", (), PAM_AUTHINFO_UNAVAIL, 2),
    "null-answer": ([STATUS_OK], [b"OK\n"], "@null", (), PAM_AUTHINFO_UNAVAIL, 2),
    "overlong-entry": ([STATUS_OK], [b"OK\n"], "7" * 300, (), PAM_AUTH_ERR, 2),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_fake_daemon_scenarios(runner, scripted, scenario):
    status, verify, entry, options, code, within = SCENARIOS[scenario]
    d = scripted({"STATUS": status, "VERIFY": verify})
    # allow_remote: a long, non-local PAM_RHOST exercises the encoder instead of the
    # remote-login skip.
    r = runner.authenticate("alice", entry, args=[f"socket={d.socket}", "allow_remote", *options],
                            tty="/dev/pts/" + "9" * 100, rhost="h\u00e9" * 50, ruser="bob smith")
    assert r.code == code, r
    if code != PAM_SUCCESS:
        assert r.code != PAM_SUCCESS
    if runner.variant == "plain":
        assert r.elapsed < within, r
    if code == PAM_AUTHINFO_UNAVAIL and "debug" not in options and not scenario.startswith("locked"):
        # A daemon that could not be used is said only with debug; a lock is
        # always said (test_pam checks the sentence).
        assert r.errors == [], r


def test_socket_not_owned_by_root_is_never_connected(runner, scripted):
    d = scripted({"STATUS": [STATUS_OK], "VERIFY": [b"OK\n"]})
    nobody = pwd.getpwnam("nobody")
    os.chown(d.socket, nobody.pw_uid, nobody.pw_gid)
    r = runner.authenticate("alice", RIGHT, args=[f"socket={d.socket}", "debug"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.errors == [f"Pattern unlock unavailable: socket {d.socket} is owned by "
                        f"uid {nobody.pw_uid}, not root"]
    assert d.connections == 0


def test_no_daemon_at_all(runner, tmp_path):
    r = runner.authenticate("alice", RIGHT, args=[f"socket={tmp_path}/absent", "debug"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r


# ---- the real daemon -----------------------------------------------------------------

def lock(daemon, user):
    for _ in range(5):
        assert daemon.request(f"VERIFY user={user} pattern={WRONG}").startswith("FAIL")


# Each: (entry typed, module options, enrolled?, locked first?, expected code).
REAL = {
    "right": (RIGHT, (), True, False, PAM_SUCCESS),
    "wrong": (WRONG, (), True, False, PAM_AUTH_ERR),
    "too-short": ("12", ("nogrid",), True, False, PAM_AUTH_ERR),
    "empty": ("", (), True, False, PAM_AUTHINFO_UNAVAIL),
    "overlong": ("1" * 200, (), True, False, PAM_AUTH_ERR),
    "not-enrolled": (RIGHT, ("debug",), False, False, PAM_USER_UNKNOWN),
    # Locked before the prompt: said, nothing asked, and the stack goes on.
    "locked": (RIGHT, (), True, True, PAM_AUTHINFO_UNAVAIL),
    # one_prompt: a password handed on as PAM_AUTHTOK, a pattern,
    # a wrong one, a long password, and the compact grid.
    "one-prompt-password": ("pass w0rd!", ("one_prompt",), True, False, PAM_AUTHINFO_UNAVAIL),
    "one-prompt-long-password": ("p\u00e9" * 150, ("one_prompt",), True, False, PAM_AUTHINFO_UNAVAIL),
    "one-prompt-pattern": (RIGHT, ("one_prompt", "grid=compact", "layout=numpad"), True, False, PAM_AUTH_ERR),
    "one-prompt-wrong": (WRONG, ("one_prompt",), True, False, PAM_AUTH_ERR),
    "one-prompt-right": (RIGHT, ("one_prompt", "password_at_login"), True, False, PAM_SUCCESS),
}


def pamtester(service, user, entry, log, items=()):
    cmd = valgrind_prefix(log) + ["pamtester", "-v"]
    for item in items:
        cmd += ["-I", item]
    cmd += [service, user, "authenticate"]
    return subprocess.run(without_logind(cmd), input=entry + "\n", capture_output=True, text=True, timeout=120)


@pytest.fixture
def etc_pam_service():
    """/etc/pam.d/<unique> with the module alone; removed afterwards."""
    made = []

    def make(module, options):
        name = unique("plmem-")
        path = PAM_D / name
        made.append(path)
        path.write_text("# written by patternlock's Tests/system/pam/test_module_under_valgrind_and_sanitizers.py\n"
                        f"auth required {module} {' '.join(options)}\n"
                        "account required pam_permit.so\n")
        return name
    yield make
    for path in made:
        path.unlink(missing_ok=True)


@pytest.mark.parametrize("case", list(REAL))
def test_pamtester_under_memcheck(case, live, user, pam_module, etc_pam_service, tmp_path):
    entry, options, enroll, locked, code = REAL[case]
    if enroll:
        live.enroll(user, RIGHT)
    if locked:
        lock(live, user)
    service = etc_pam_service(pam_module, [f"socket={live.socket}", "allow_remote", *options])
    log = tmp_path / "valgrind.log"
    r = pamtester(service, user, entry, log,
                  items=["tty=/dev/pts/" + "7" * 90, "rhost=" + "r\u00e9" * 60, "ruser=a b"])
    check = Memcheck(log, r.returncode)
    check.assert_clean()
    print(f"{case}: {check.summary()}")
    assert (r.returncode == 0) == (code == PAM_SUCCESS), r.stdout + r.stderr
    if code == PAM_SUCCESS:
        assert "successfully authenticated" in r.stderr + r.stdout


@pytest.mark.parametrize("case", list(REAL))
def test_real_daemon_under_sanitizers(case, live, user, sanitized, tmp_path):
    entry, options, enroll, locked, code = REAL[case]
    if enroll:
        live.enroll(user, RIGHT)
    if locked:
        lock(live, user)
    asan_harness, asan_module = sanitized
    r = Runner("asan", asan_harness, asan_module, tmp_path).authenticate(
        user, entry, args=[f"socket={live.socket}", "allow_remote", *options], tty="pts/1", rhost="x" * 300)
    assert r.code == code, r
