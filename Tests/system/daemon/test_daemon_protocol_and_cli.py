# SPDX-License-Identifier: Apache-2.0
"""The real patternlockd binary on a private socket, driven through the real CLI
and the raw protocol."""
import os
import pathlib
import signal
import socket
import stat
import subprocess
import threading
import time

import pytest

from harness.common import DAEMON, SYSTEM_PYTHON, Daemon, parse_reply, read_line

PATTERN = "1397"          # normalizes to 1-2-3-6-9-8-7
WRONG = "9856"


@pytest.fixture
def test_user(make_users):
    """A real local user (enroll checks the password database), removed afterwards."""
    (name,) = make_users(1)
    return name


def verify(daemon, user, pattern, as_user=None):
    return daemon.cli("verify", user, input=pattern + "\n", user=as_user)


def test_enroll_verify_and_wrong_pattern_messages(daemon, test_user):
    r = daemon.cli("enroll", test_user, input=f"{PATTERN}\n{PATTERN}\n")
    assert r.returncode == 0, r.stderr
    assert f"Pattern enrolled for {test_user}" in r.stdout
    r = verify(daemon, test_user, PATTERN)
    assert (r.returncode, r.stdout.strip()) == (0, "Pattern accepted.")
    r = verify(daemon, test_user, "1236987")   # the same pattern, every dot typed
    assert r.returncode == 0
    r = verify(daemon, test_user, WRONG)
    assert r.returncode == 1
    assert r.stderr.strip() == "Wrong pattern — 4 attempts left."


def test_five_wrong_patterns_lock_until_reset(daemon, test_user):
    daemon.enroll(test_user, PATTERN)
    for left in [4, 3, 2, 1]:
        r = verify(daemon, test_user, WRONG)
        assert r.returncode == 1 and f"{left} attempt" in r.stderr
    r = verify(daemon, test_user, WRONG)
    assert r.returncode == 1 and "now locked" in r.stderr
    r = verify(daemon, test_user, PATTERN)
    assert r.returncode == 2
    assert f"Ask an administrator to run: patternlockd reset {test_user}" in r.stderr
    r = daemon.cli("status", test_user)
    assert "LOCKED since" in r.stdout and "patternlockd-verify" in r.stdout
    r = daemon.cli("reset", test_user)
    assert r.returncode == 0 and "unlocked" in r.stdout
    assert verify(daemon, test_user, PATTERN).returncode == 0


def test_lock_survives_restart_and_kill9(daemon, test_user):
    daemon.enroll(test_user, PATTERN)
    for _ in range(3):
        verify(daemon, test_user, WRONG)
    daemon.kill9()
    daemon.start()
    _, st = parse_reply(daemon.request(f"STATUS user={test_user}"))
    assert st["failures"] == "3", "a crash never lowers the count"
    for _ in range(2):
        verify(daemon, test_user, WRONG)
    daemon.restart()
    assert verify(daemon, test_user, PATTERN).returncode == 2
    daemon.kill9()
    daemon.start()
    assert verify(daemon, test_user, PATTERN).returncode == 2
    assert daemon.cli("reset", test_user).returncode == 0
    assert verify(daemon, test_user, PATTERN).returncode == 0


def test_invalid_entries_are_not_counted(daemon, test_user):
    daemon.enroll(test_user, PATTERN)
    for typed, reason in [("12", "too_short"), ("1230", "not_a_dot"), ("12341", "repeated_dot"), ("", "empty")]:
        reply = daemon.request(f"VERIFY user={test_user} pattern={typed}")
        assert reply == f"INVALID reason={reason}"
    r = verify(daemon, test_user, "12")
    assert r.returncode == 4 and "Connect at least 4 dots" in r.stderr and "not counted" in r.stderr
    _, st = parse_reply(daemon.request(f"STATUS user={test_user}"))
    assert st["failures"] == "0"


def test_unprivileged_peer_is_denied_other_users_and_reset(daemon, test_user):
    daemon.enroll(test_user, PATTERN)
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    def raw_as_nobody(line):
        code = ("import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]);"
                "s.sendall(sys.argv[2].encode()+b'\\n'); print(s.recv(4096).decode().strip())")
        return subprocess.run(nobody + [SYSTEM_PYTHON, "-c", code, daemon.socket, line],
                              capture_output=True, text=True, check=True).stdout.strip()

    assert raw_as_nobody(f"VERIFY user={test_user} pattern={PATTERN}") == "DENIED"
    assert raw_as_nobody(f"STATUS user={test_user}") == "DENIED"
    assert raw_as_nobody(f"RESET user={test_user}") == "DENIED"
    assert raw_as_nobody("RESET all=1") == "DENIED"
    assert raw_as_nobody(f"ENROLL user={test_user} pattern=5678") == "DENIED"
    assert raw_as_nobody(f"REMOVE user={test_user}") == "DENIED"
    assert raw_as_nobody("LIST") == "DENIED"
    assert raw_as_nobody("STATUS user=nobody").startswith("STATUS user=nobody enrolled=0")
    r = daemon.cli("reset", test_user, user="nobody")
    assert r.returncode == 5 and "Only an administrator (root) can reset" in r.stderr, r.stderr
    assert f"Ask an administrator to run: patternlockd reset {test_user}" in r.stderr
    r = daemon.cli("verify", test_user, input=PATTERN + "\n", user="nobody")
    assert r.returncode == 5
    _, st = parse_reply(daemon.request(f"STATUS user={test_user}"))
    assert st["failures"] == "0", "a denied request is not an attempt"


def test_a_user_enrolls_and_changes_its_own_pattern(daemon, test_user):
    pw = subprocess.run(["id", "-u", test_user], capture_output=True, text=True).stdout.strip()
    as_user = ["setpriv", f"--reuid={pw}", "--regid=65534", "--clear-groups"]
    env = dict(os.environ, PATTERNLOCK_SOCKET=daemon.socket)

    def run(*args, stdin):
        return subprocess.run(as_user + [str(DAEMON), *args], input=stdin, capture_output=True, text=True, env=env)

    # A first pattern needs the user's password, which this daemon cannot have
    # polkit check: refused, nothing written; root sets it.
    r = run("enroll", stdin="1234\n1234\n")
    assert r.returncode == 5 and "first pattern" in r.stderr, r.stderr
    assert daemon.request(f"STATUS user={test_user}").split()[2] == "enrolled=0"
    r = daemon.cli("enroll", test_user, input="1234\n1234\n")
    assert r.returncode == 0, r.stderr
    r = run("enroll", stdin="9874\n5678\n5678\n")         # wrong current pattern
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == "Wrong current pattern \u2014 4 attempts left. Nothing was changed."
    r = run("enroll", stdin="1234\n5678\n5679\n")         # confirmation differs
    assert r.returncode == 4 and "differ" in r.stderr
    r = run("enroll", stdin="1234\n5678\n5678\n")
    assert r.returncode == 0, r.stderr
    r = run("verify", stdin="5678\n")
    assert r.returncode == 0
    r = run("status", stdin="")
    assert r.returncode == 0 and test_user in r.stdout
    r = run("remove", stdin="5678\n")
    assert r.returncode == 0, r.stderr
    assert daemon.request(f"VERIFY user={test_user} pattern=5678") == "NOT_ENROLLED"
    # With no pattern left, the next one is a first one again.
    r = run("enroll", stdin="2468\n2468\n")
    assert r.returncode == 5 and "first pattern" in r.stderr, r.stderr


def test_forty_concurrent_wrong_guesses_get_exactly_five_evaluations(daemon, test_user):
    daemon.enroll(test_user, PATTERN)
    replies = []
    lock = threading.Lock()
    barrier = threading.Barrier(40)

    def guess():
        s = daemon.connect(60)
        barrier.wait()
        s.sendall(f"VERIFY user={test_user} pattern={WRONG} service=test\n".encode())
        r = read_line(s)
        s.close()
        with lock:
            replies.append(r)

    threads = [threading.Thread(target=guess) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    fails = sorted(r for r in replies if r.startswith("FAIL"))
    assert fails == [f"FAIL remaining={n}" for n in [0, 1, 2, 3, 4]]
    assert replies.count("LOCKED retry_after=0") == 35
    assert daemon.read_log().count("result=FAIL") == 5


def test_malformed_and_oversized_lines(daemon):
    with daemon.connect() as s:
        s.sendall(b"FLY user=alice\n")
        assert read_line(s) == "ERROR message=unknown_verb"
        s.sendall(b"PING\n")
        assert read_line(s) == "PONG version=1", "a malformed line does not end the connection"
    with daemon.connect() as s:
        s.sendall(b"STATUS user=" + b"a" * 2000 + b"\n")
        assert read_line(s) == "ERROR message=line_too_long"
        try:
            rest = s.recv(10)
        except ConnectionResetError:     # closed with our unread bytes still queued
            rest = b""
        assert rest == b"", "the connection is closed after an oversized line"
    with daemon.connect() as s:
        s.sendall(b"PING\x00\n")
        assert read_line(s) == "ERROR message=nul_byte"
    assert daemon.request("PING") == "PONG version=1"


def test_idle_connections_are_dropped(daemon):
    s = daemon.connect(15)
    start = time.monotonic()
    s.sendall(b"PIN")                   # half a line, then silence
    assert s.recv(10) == b""
    elapsed = time.monotonic() - start
    assert 4 <= elapsed < 8, elapsed
    assert daemon.request("PING") == "PONG version=1"


def test_corrupt_record_is_reported_and_never_success(daemon, test_user):
    daemon.enroll(test_user, PATTERN)
    record = pathlib.Path(daemon.state_dir) / test_user
    record.write_text(record.read_text().replace("credential=$pbkdf2", "credential=$garbage"))
    assert daemon.request(f"VERIFY user={test_user} pattern={PATTERN}") == "ERROR message=record_unreadable"
    r = daemon.cli("status", test_user)
    assert r.returncode == 7 and f"The pattern record of {test_user} cannot be read" in r.stderr, r.stdout + r.stderr
    r = verify(daemon, test_user, PATTERN)
    assert r.returncode == 7


def test_timed_unlock(make_daemon, test_user):
    d = make_daemon("--unlock-after", "2")
    d.enroll(test_user, PATTERN)
    for _ in range(5):
        d.request(f"VERIFY user={test_user} pattern={WRONG}")
    code, fields = parse_reply(d.request(f"VERIFY user={test_user} pattern={PATTERN}"))
    assert code == "LOCKED" and 1 <= int(fields["retry_after"]) <= 2
    time.sleep(2.2)
    assert d.request(f"VERIFY user={test_user} pattern={PATTERN}") == "OK"


def test_records_and_logs_never_hold_the_pattern(daemon, test_user):
    secret = "741852963"
    daemon.enroll(test_user, secret)
    verify(daemon, test_user, secret)
    verify(daemon, test_user, "963852741")
    for f in pathlib.Path(daemon.state_dir).iterdir():
        assert secret not in f.read_text()
    log = daemon.read_log()
    assert secret not in log and "963852741" not in log
    assert f"user={test_user}" in log and "result=OK" in log


def test_serve_refuses_unsafe_key_and_state_dir(tmp_path):
    base = tmp_path / "k"
    base.mkdir()
    d = Daemon(base)
    d.start()
    d.stop()
    key = pathlib.Path(d.key_file)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    key.chmod(0o644)
    r = subprocess.run(d.args(), capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "readable or writable by group or others" in r.stderr
    key.chmod(0o600)
    key.write_bytes(b"x" * 31)
    r = subprocess.run(d.args(), capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "exactly 32 bytes" in r.stderr
    os.chmod(d.state_dir, 0o777)
    r = subprocess.run(d.args(), capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "writable by group or others" in r.stderr
    os.chmod(d.state_dir, 0o700)
    inside = [str(DAEMON), "serve", "--socket", d.socket, "--state-dir", d.state_dir,
              "--key-file", d.state_dir + "/key", "--iterations", "600000"]
    r = subprocess.run(inside, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "inside the state directory" in r.stderr


def test_sigterm_stops_cleanly(daemon):
    daemon.proc.terminate()
    assert daemon.proc.wait(10) == 0
    assert not os.path.exists(daemon.socket)
    assert "stopped" in daemon.read_log()


def test_client_refuses_a_socket_owned_by_another_user(daemon, tmp_path):
    fake = tmp_path / "fake.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(fake))
    srv.listen(1)
    os.chown(fake, 65534, 65534)
    r = daemon.cli("verify", "root", input=PATTERN + "\n", env={"PATTERNLOCK_SOCKET": str(fake)})
    assert r.returncode == 6 and "not by root" in r.stderr
    srv.close()


def test_help_teaches(daemon):
    r = subprocess.run([str(DAEMON), "--help"], capture_output=True, text=True)
    assert "1 2 3" in r.stdout and "reset" in r.stdout
    r = subprocess.run([str(DAEMON), "reset"], capture_output=True, text=True)
    assert r.returncode != 0 and "Say which user to unlock" in r.stderr


def test_a_second_daemon_on_the_same_state_dir_refuses_to_start(daemon, shared_tmp):
    other = [str(DAEMON), "serve", "--socket", str(shared_tmp / "other.sock"), "--state-dir", daemon.state_dir,
             "--key-file", daemon.key_file, "--iterations", "600000"]
    r = subprocess.run(other, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "Another patternlockd is already using the state directory" in r.stderr
    assert daemon.request("PING") == "PONG version=1"


def test_only_root_chooses_the_iteration_count(daemon, test_user):
    pw = subprocess.run(["id", "-u", test_user], capture_output=True, text=True).stdout.strip()
    env = dict(os.environ, PATTERNLOCK_SOCKET=daemon.socket)
    r = subprocess.run(["setpriv", f"--reuid={pw}", "--regid=65534", "--clear-groups", str(DAEMON), "enroll",
                        "--iterations", "900000000"], input="1234\n1234\n", capture_output=True, text=True, env=env)
    # Refused as a usage error before anything is read or sent.
    assert r.returncode == 64 and "Only root can choose the iteration count" in r.stderr
    assert daemon.request(f"VERIFY user={test_user} pattern=1234") == "NOT_ENROLLED"
    r = daemon.cli("enroll", test_user, "--iterations", "700000", input="1234\n1234\n")
    assert r.returncode == 0 and "700000" in r.stdout


def test_status_right_after_a_success_shows_the_cleared_count(daemon, test_user):
    """A verify answers OK before it clears the count on disk; a STATUS sent the
    moment OK arrives must still see the cleared count, never a stale lock."""
    daemon.enroll(test_user, PATTERN)
    for _ in range(20):
        for _ in range(4):
            daemon.request(f"VERIFY user={test_user} pattern={WRONG}")
        with daemon.connect() as a, daemon.connect() as b:
            a.sendall(f"VERIFY user={test_user} pattern={PATTERN}\n".encode())
            assert read_line(a) == "OK"
            b.sendall(f"STATUS user={test_user}\n".encode())    # another connection, at once
            _, st = parse_reply(read_line(b))
        assert (st["failures"], st["locked"]) == ("0", "0")


def test_the_socket_path_appears_only_once_it_accepts(shared_tmp):
    """A client that sees the socket path (a PAM module during a
    restart, a script waiting for the path) must be able to connect at once: the
    path may not exist before the daemon listens on it. strace holds every listen()
    and chmod() the daemon makes for 0.3 s, so any moment in which the path exists
    but does not accept yet lasts long enough to be seen; the client connects the
    moment the path appears."""
    refused = []
    for i in range(3):
        base = shared_tmp / f"s{i}"
        base.mkdir()
        d = Daemon(base)
        tracer = subprocess.Popen(
            ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=listen,chmod,fchmodat",
             "-e", "inject=listen,chmod,fchmodat:delay_enter=300000"] + d.args(),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(d.log_path, "ab"))
        try:
            deadline = time.monotonic() + 60
            while not os.path.lexists(d.socket):
                assert tracer.poll() is None, d.read_log()
                assert time.monotonic() < deadline, "the socket never appeared: " + d.read_log()
                time.sleep(0.0005)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(d.socket)
            except ConnectionRefusedError:
                refused.append(i)
            else:
                s.settimeout(30)
                s.sendall(b"PING\n")
                assert read_line(s) == "PONG version=1"
            finally:
                s.close()
        finally:
            # SIGTERM the daemon itself (strace's child), then let strace finish.
            children = pathlib.Path(f"/proc/{tracer.pid}/task/{tracer.pid}/children").read_text().split()
            for pid in children:
                os.kill(int(pid), signal.SIGTERM)
            tracer.wait(30)
    assert refused == [], f"connection refused right after the socket appeared in starts {refused} of 3"
