# SPDX-License-Identifier: Apache-2.0
"""Hostile clients against the real daemon: idle and
flooding connections, malformed and oversized lines, half-closed sockets, peers
that never read, one or many local uids hoarding connections, a legitimate STATUS
while both cores hash, and what the log shows an administrator (never a pattern).

Short by default (`make check`); PATTERNLOCK_STRESS=1 (`make stress`) runs more
connections for longer and prints the figures (also appended to the file named
by PATTERNLOCK_FIGURES)."""
import hashlib
import os
import pathlib
import pwd
import random
import re
import resource
import selectors
import shlex
import socket
import subprocess
import threading
import time

from harness.common import SYSTEM_PYTHON, parse_reply, read_line, records, random_pattern, figure

STRESS = os.environ.get("PATTERNLOCK_STRESS") == "1"
PATTERN = "1397"
WRONG = "9856"
MAX_TOTAL, MAX_PER_UID = 256, 32       # docs/PROTOCOL.md
IDLE_SECONDS = 5.0

# Hundreds of sockets in this process and in the daemon it starts (which inherits it).
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if _soft != resource.RLIM_INFINITY and _soft < 8192:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(8192, _hard), _hard))


# ---------------------------------------------------------------- helpers


def proc_status(pid):
    """VmRSS and VmHWM in kB and the thread count of a process."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "Threads"):
                out[key] = int(value.split()[0])
    return out


def wait_for_threads(pid, at_most, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc_status(pid)["Threads"] <= at_most:
            return True
        time.sleep(0.05)
    return False


def percentiles(samples):
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]
    return {"n": len(s), "p50": pick(0.50), "p99": pick(0.99), "max": s[-1]}


def ms(seconds):
    return f"{seconds * 1000:.1f} ms"


def setpriv(user):
    pw = pwd.getpwnam(user)
    return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]


# Runs as another uid: one request per line of stdin, each on a new connection
# (like the PAM module), prints each reply line.
PEER = r"""
import socket, sys
for line in sys.stdin:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.settimeout(60)
    try:
        s.sendall(line.rstrip("\n").encode() + b"\n")
    except OSError:          # answered BUSY and closed before we wrote
        pass
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    s.close()
    print(buf.decode(errors="replace").rstrip("\n"), flush=True)
"""


def as_user(daemon, user, *lines):
    r = subprocess.run(setpriv(user) + [SYSTEM_PYTHON, "-c", PEER, daemon.socket],
                       input="".join(line + "\n" for line in lines),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


# Runs as another uid: opens N connections, keeps the admitted ones alive with a
# PING every 1.5 s (under the 5 s idle deadline), prints how many were admitted,
# and holds them until its stdin closes.
HOLDER = r"""
import socket, sys, threading, time
alive, busy = [], 0
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.settimeout(10)
    try:
        s.sendall(b"PING\n")
        reply = s.recv(100)
    except OSError:
        reply = b""
    if reply.startswith(b"PONG"):
        alive.append(s)
    else:
        busy += 1
        s.close()
print(f"admitted={len(alive)} busy={busy}", flush=True)
def keep_alive():
    while True:
        time.sleep(1.5)
        for s in alive:
            try:
                s.sendall(b"PING\n")
                s.recv(100)
            except OSError:
                pass
threading.Thread(target=keep_alive, daemon=True).start()
sys.stdin.readline()
"""


class Holder:
    """N connections held open by `user` until `release()`."""

    def __init__(self, daemon, user, n):
        cmd = ([] if user == "root" else setpriv(user)) + [SYSTEM_PYTHON, "-c", HOLDER, daemon.socket, str(n)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        _, fields = parse_reply("HELD " + self.proc.stdout.readline().strip())
        self.admitted, self.busy = int(fields["admitted"]), int(fields["busy"])

    def release(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)


def log_lines(daemon, verb):
    """The daemon's log lines for one verb, each parsed into (fields, raw line)."""
    out = []
    for line in daemon.read_log().splitlines():
        _, sep, rest = line.partition("patternlockd: ")
        if sep and rest.startswith(verb + " "):
            fields = {}
            for token in shlex.split(rest[len(verb) + 1:]):
                k, _, v = token.partition("=")
                fields.setdefault(k, v)
            out.append((fields, line))
    return out


# ---------------------------------------------------------------- idle, flood, memory

def test_hundreds_of_idle_connections_are_dropped_and_memory_stays_bounded(daemon):
    """Silent, half-line and byte-a-second clients are all dropped at the 5 s line
    deadline; past 256 connections the rest get BUSY; the daemon's memory and
    thread count come back to where they were."""
    waves, per_wave = (4, 1000) if STRESS else (1, 300)
    pid = daemon.proc.pid
    assert daemon.request("PING") == "PONG version=1"
    before = proc_status(pid)
    base_threads = before["Threads"]
    peak_rss, after_rss, drops, busy_total = before["VmRSS"], [], [], 0

    for _ in range(waves):
        conns = []                                   # [socket, connected at, kind, received, closed at]
        t0 = time.monotonic()
        for i in range(per_wave):
            s = daemon.connect()
            kind = ("drip", "half")[i % 2] if i % 8 < 2 else "silent"
            if kind == "half":
                s.sendall(b"STATUS user=ro")       # half a line, then silence
            conns.append([s, time.monotonic(), kind, b"", None])
        connect_seconds = time.monotonic() - t0
        peak_rss = max(peak_rss, proc_status(pid)["VmRSS"])

        sel = selectors.DefaultSelector()
        for c in conns:
            c[0].setblocking(False)
            sel.register(c[0], selectors.EVENT_READ, c)
        drip = b"STATUS user=root\n"                 # a whole line if it were let to finish (8.5 s)
        next_drip, sent, open_count = time.monotonic(), 0, len(conns)
        deadline = time.monotonic() + 20
        while open_count and time.monotonic() < deadline:
            if time.monotonic() >= next_drip and sent < len(drip):
                for c in conns:
                    if c[2] == "drip" and c[4] is None:
                        try:
                            c[0].send(drip[sent:sent + 1])
                        except OSError:
                            pass
                sent += 1
                next_drip += 0.5
                peak_rss = max(peak_rss, proc_status(pid)["VmRSS"])
            for key, _ in sel.select(timeout=0.1):
                c = key.data
                try:
                    chunk = c[0].recv(4096)
                except BlockingIOError:
                    continue
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    c[3] += chunk
                    continue
                c[4] = time.monotonic()
                sel.unregister(c[0])
                c[0].close()
                open_count -= 1
        assert open_count == 0, f"{open_count} connections still open 20 s later"

        busy = [c for c in conns if c[3] == b"BUSY\n"]
        held = [c for c in conns if c[3] != b"BUSY\n"]
        busy_total += len(busy)
        assert all(c[3] == b"" for c in held), "an idle or drip-fed client got a reply"
        assert len(held) <= MAX_TOTAL
        if connect_seconds < 3:
            assert len(held) == MAX_TOTAL, (len(held), connect_seconds)
        wave_drops = [c[4] - c[1] for c in held]
        assert min(wave_drops) >= IDLE_SECONDS - 0.3, min(wave_drops)
        assert max(wave_drops) < IDLE_SECONDS + 3, max(wave_drops)
        assert all(c[4] - c[1] < 2 for c in busy), "BUSY is answered at once"
        drops += wave_drops
        assert wait_for_threads(pid, base_threads), proc_status(pid)
        after_rss.append(proc_status(pid)["VmRSS"])
        assert daemon.request("PING") == "PONG version=1"

    d = percentiles(drops)
    figure("idle-drop", f"{waves} wave(s) of {per_wave} connections (1/8 drip-fed a byte every 0.5 s, 1/8 half a line): "
                        f"{len(drops)} held, {busy_total} answered BUSY; dropped after min {min(drops):.2f} s, "
                        f"p50 {d['p50']:.2f} s, max {d['max']:.2f} s")
    figure("idle-rss", f"VmRSS before {before['VmRSS']} kB, peak {peak_rss} kB, after each wave "
                       f"{', '.join(map(str, after_rss))} kB; threads {base_threads} -> back to {proc_status(pid)['Threads']}")
    assert after_rss[-1] - before["VmRSS"] < 16 * 1024, "memory not given back after idle connections"
    assert after_rss[-1] - after_rss[0] < 4 * 1024, "memory grows wave after wave"


def test_a_flood_of_new_connections_leaves_the_daemon_up_and_small(daemon):
    """Tens of thousands of short connections (closed at once, half a line, a PING,
    a PING and gone) from several threads; root's STATUS still answers meanwhile."""
    seconds, workers = (30.0, 16) if STRESS else (3.0, 8)
    pid = daemon.proc.pid
    daemon.request("PING")
    before = proc_status(pid)
    counts = {"connections": 0, "asked": 0, "PONG": 0, "BUSY": 0, "none": 0, "error": 0}
    lock = threading.Lock()
    stop = threading.Event()
    status_latency = []
    peak = [before["VmRSS"], before["Threads"]]

    def flood(worker):
        local = dict.fromkeys(counts, 0)
        k = 0
        while time.monotonic() < t0 + seconds:
            k += 1
            local["connections"] += 1
            try:
                s = daemon.connect()
                mode = (k + worker) % 4
                if mode == 1:
                    s.sendall(b"STATUS us")
                if mode in (2, 3):
                    s.sendall(b"PING\n")
                if mode == 2:
                    local["asked"] += 1
                    reply = read_line(s)
                    local["BUSY" if reply == "BUSY" else "PONG" if reply == "PONG version=1" else "none"] += 1
                s.close()
            except OSError:
                local["error"] += 1
        with lock:
            for key in counts:
                counts[key] += local[key]

    def sample():
        while not stop.is_set():
            t = time.monotonic()
            reply = daemon.request("STATUS user=root")
            status_latency.append(time.monotonic() - t)
            assert reply.startswith("STATUS user=root"), reply
            st = proc_status(pid)
            peak[0], peak[1] = max(peak[0], st["VmRSS"]), max(peak[1], st["Threads"])
            time.sleep(0.02)

    t0 = time.monotonic()
    sampler = threading.Thread(target=sample)
    sampler.start()
    threads = [threading.Thread(target=flood, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    stop.set()
    sampler.join()

    assert daemon.proc.poll() is None, "the daemon died under the flood"
    assert counts["error"] == 0, counts
    assert counts["PONG"] + counts["BUSY"] == counts["asked"] and counts["none"] == 0, counts
    assert wait_for_threads(pid, before["Threads"])
    after = proc_status(pid)
    assert daemon.request("PING") == "PONG version=1"
    lat = percentiles(status_latency)
    total = counts["connections"]
    figure("flood", f"{total} connections from {workers} threads in {elapsed:.1f} s ({total / elapsed:.0f}/s; a quarter "
                    f"each closed at once, left with half a line, PING answered, PING unread): "
                    f"{counts['PONG']} PONG, {counts['BUSY']} BUSY; root STATUS meanwhile p50 {ms(lat['p50'])}, "
                    f"p99 {ms(lat['p99'])}, max {ms(lat['max'])} over {lat['n']}; VmRSS {before['VmRSS']} -> peak "
                    f"{peak[0]} -> {after['VmRSS']} kB, threads peak {peak[1]} -> {after['Threads']}")
    assert lat["max"] < 2.0
    assert after["VmRSS"] - before["VmRSS"] < 16 * 1024


def test_status_answers_promptly_while_both_cores_hash(daemon, make_users):
    """Root hammers VERIFY (right patterns, so nothing locks and every request
    hashes) for several users at once; a root STATUS and a root VERIFY for another
    user still answer promptly."""
    n_users, n_clients, seconds = (8, 48, 30.0) if STRESS else (4, 16, 6.0)
    users = make_users(n_users + 1)
    busy_users, quiet = users[:n_users], users[n_users]
    for u in users:
        daemon.enroll(u, PATTERN)
    pid = daemon.proc.pid
    stop = threading.Event()
    verifies, bad, status_lat, verify_lat = [0], [], [], []
    lock = threading.Lock()

    def hammer(i):
        user = busy_users[i % n_users]
        n = 0
        while not stop.is_set():
            reply = daemon.request(f"VERIFY user={user} pattern={PATTERN} service=stress")
            if reply != "OK":
                bad.append(reply)
            n += 1
        with lock:
            verifies[0] += n

    def cpu_seconds():
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    hammers = [threading.Thread(target=hammer, args=(i,)) for i in range(n_clients)]
    for t in hammers:
        t.start()
    time.sleep(0.5)                                  # let the hashing get going
    cpu0, t0 = cpu_seconds(), time.monotonic()
    next_verify = t0
    while time.monotonic() - t0 < seconds:
        t = time.monotonic()
        reply = daemon.request(f"STATUS user={quiet}")
        status_lat.append(time.monotonic() - t)
        assert reply.startswith(f"STATUS user={quiet} enrolled=1"), reply
        if t >= next_verify:
            t = time.monotonic()
            assert daemon.request(f"VERIFY user={quiet} pattern={PATTERN} service=sudo") == "OK"
            verify_lat.append(time.monotonic() - t)
            next_verify = time.monotonic() + 0.5
        time.sleep(0.02)
    wall = time.monotonic() - t0
    cores = (cpu_seconds() - cpu0) / wall
    stop.set()
    for t in hammers:
        t.join()

    assert not bad, bad[:5]
    s, v = percentiles(status_lat), percentiles(verify_lat)
    figure("status-under-load", f"{n_clients} root clients hammering VERIFY for {n_users} users for {wall:.0f} s "
                                f"({verifies[0]} verifies, {verifies[0] / (wall + 0.5):.1f}/s, daemon using {cores:.2f} of "
                                f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}): "
                                f"root STATUS p50 {ms(s['p50'])}, p99 {ms(s['p99'])}, max {ms(s['max'])} (n={s['n']}); "
                                f"root VERIFY of another user p50 {ms(v['p50'])}, max {ms(v['max'])} (n={v['n']})")
    assert s["p50"] < 0.1 and s["p99"] < 0.5 and s["max"] < 2.0, s


# ---------------------------------------------------------------- hostile lines

# (what, bytes sent, expected reply): framing errors close the connection.
FRAMING = [
    ("a 1 MB line", b"STATUS user=" + b"a" * (1 << 20) + b"\n", "ERROR message=line_too_long"),
    ("1025 bytes with its LF", b"VERIFY user=nobody pattern=1 service=".ljust(1024, b"s") + b"\n", "ERROR message=line_too_long"),
    ("a NUL byte", b"STATUS user=ro\x00ot\n", "ERROR message=nul_byte"),
    ("a lone NUL", b"\x00\n", "ERROR message=nul_byte"),
    ("invalid UTF-8", b"STATUS user=\xff\xfe\n", "ERROR message=not_utf8"),
    ("overlong UTF-8 for ../", b"STATUS user=\xc0\xae\xc0\xae\xc0\xaf\n", "ERROR message=not_utf8"),
    ("a UTF-16 surrogate", b"PING \xed\xa0\x80\n", "ERROR message=not_utf8"),
    ("truncated UTF-8", b"STATUS user=\xe2\x82\n", "ERROR message=not_utf8"),
]

# (bytes sent, expected reply or None for any `ERROR message=`): the connection stays open.
MALFORMED = [
    (b"FLY user=root\n", "ERROR message=unknown_verb"),
    (b"DELETE user=root\n", "ERROR message=unknown_verb"),
    (b"SHUTDOWN\n", "ERROR message=unknown_verb"),
    (b"ping\n", None),
    (b"\n", None),
    (b"PING \n", None),
    (b" PING\n", None),
    (b"PING\r\n", None),
    (b"STATUS user=root extra=1\n", None),
    (b"STATUS user=root user=root\n", None),
    (b"STATUS USER=root\n", None),
    (b"STATUS =root\n", None),
    (b"STATUS\n", None),
    (b"VERIFY user=root\n", None),
    (b"RESET all=2\n", None),
    (b"ENROLL user=root pattern=1397 iterations=1e6\n", None),
    (b"STATUS user=%zz\n", None),
    (b"STATUS user=%4\n", None),
    (b"STATUS user=%\n", None),
    (b"STATUS user=%FF\n", None),                    # decodes to invalid UTF-8
    (b"STATUS user=%C0%AE%C0%AE\n", None),           # overlong "..", percent-encoded
    (b"VERIFY user=root pattern=%G1%%\n", None),
    (b"STATUS user=../../etc/passwd\n", "ERROR message=bad_user"),
    (b"STATUS user=..%2F..%2Fetc%2Fshadow\n", "ERROR message=bad_user"),
    (b"ENROLL user=..%2Fescaped pattern=1397\n", "ERROR message=bad_user"),
    (b"ENROLL user=%2Ftmp%2Fescaped pattern=1397\n", "ERROR message=bad_user"),
    (b"REMOVE user=..\n", "ERROR message=bad_user"),
    (b"RESET user=.\n", "ERROR message=bad_user"),
    (b"STATUS user=.hidden\n", "ERROR message=bad_user"),
    (b"STATUS user=-rf\n", "ERROR message=bad_user"),
    (b"STATUS user=a%2Fb\n", "ERROR message=bad_user"),
    (b"STATUS user=a%00b\n", "ERROR message=bad_user"),
    (b"STATUS user=a%0Ab\n", "ERROR message=bad_user"),
    (b"STATUS user=%C3%A9\n", "ERROR message=bad_user"),
    (b"STATUS user=\n", "ERROR message=bad_user"),
    (b"STATUS user=ro$ot\n", "ERROR message=bad_user"),
    (b"STATUS user=" + b"a" * 65 + b"\n", "ERROR message=bad_user"),
    (b"STATUS user=" + b"a" * 1000 + b"\n", "ERROR message=bad_user"),
    (b"VERIFY user=" + b"%2E%2E%2F" * 100 + b" pattern=1397\n", "ERROR message=bad_user"),
]


def tree(path):
    return sorted(str(p.relative_to(path)) for p in pathlib.Path(path).rglob("*"))


def read_after_close(s):
    try:
        return s.recv(100)
    except ConnectionResetError:       # closed with our unread bytes still queued
        return b""


def test_hostile_lines_get_errors_and_the_daemon_goes_on(daemon):
    base = daemon.base
    files_before = [p for p in tree(base) if p != "daemon.log"]
    passwd_before = hashlib.sha256(pathlib.Path("/etc/passwd").read_bytes()).hexdigest()

    for what, data, expected in FRAMING:
        with daemon.connect(15) as s:
            sender = threading.Thread(target=lambda: _send_quietly(s, data))
            sender.start()
            assert read_line(s) == expected, what
            sender.join(15)
            assert read_after_close(s) == b"", f"{what}: the connection is closed"

    with daemon.connect(15) as s:
        for data, expected in MALFORMED:
            s.sendall(data)
            reply = read_line(s)
            if expected is None:
                assert reply.startswith("ERROR message="), (data[:60], reply)
            else:
                assert reply == expected, (data[:60], reply)
        s.sendall(b"PING\n")
        assert read_line(s) == "PONG version=1", "malformed lines do not end the connection"

    # Names at the edges of the rule are fine; a 1025-byte line is not, a 1024-byte one is.
    edge = "a" * 64
    assert daemon.request(f"STATUS user={edge}").startswith(f"STATUS user={edge} enrolled=0")
    assert daemon.request("STATUS user=machine$").startswith("STATUS user=machine%24 enrolled=0")
    assert daemon.request("VERIFY user=nobody pattern=1 service=".ljust(1023, "s")) == "NOT_ENROLLED"

    # Many requests in one write, each answered in order.
    with daemon.connect(15) as s:
        s.sendall(b"PING\n" * 200)
        replies = b""
        while replies.count(b"\n") < 200:
            replies += s.recv(65536)
        assert replies == b"PONG version=1\n" * 200

    assert daemon.request("PING") == "PONG version=1"
    assert records(daemon) == [], "no record was written for a hostile name"
    assert [p for p in tree(base) if p != "daemon.log"] == files_before
    assert not list(pathlib.Path("/tmp").glob("escaped*"))
    assert hashlib.sha256(pathlib.Path("/etc/passwd").read_bytes()).hexdigest() == passwd_before
    assert "request rejected" in daemon.read_log()


def _send_quietly(s, data):
    try:
        s.sendall(data)
    except OSError:                    # the daemon stopped reading after 1024 bytes
        pass


def test_half_closed_and_vanishing_clients(daemon, make_users):
    (user,) = make_users(1)
    daemon.enroll(user, PATTERN)

    # A request then SHUT_WR: the reply still comes, then the daemon closes at once.
    with daemon.connect(15) as s:
        s.sendall(b"PING\n")
        s.shutdown(socket.SHUT_WR)
        t = time.monotonic()
        assert read_line(s) == "PONG version=1"
        assert s.recv(10) == b"" and time.monotonic() - t < 1.0

    # Half a line then SHUT_WR: no reply, closed at once (not after the idle deadline).
    with daemon.connect(15) as s:
        s.sendall(b"STATUS user=ro")
        s.shutdown(socket.SHUT_WR)
        t = time.monotonic()
        assert s.recv(10) == b"" and time.monotonic() - t < 1.0

    # SHUT_RD on our side: the daemon's reply has nowhere to go; it goes on.
    with daemon.connect(15) as s:
        s.shutdown(socket.SHUT_RD)
        s.sendall(b"PING\n")
    assert daemon.request("PING") == "PONG version=1"

    # Guesses whose sender hangs up before the reply are still counted: dropping the
    # connection is no way around the lockout.
    for _ in range(5):
        s = daemon.connect(15)
        s.sendall(f"VERIFY user={user} pattern={WRONG} service=hangup\n".encode())
        s.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        _, st = parse_reply(daemon.request(f"STATUS user={user}"))
        if st["failures"] == "5":
            break
        time.sleep(0.1)
    assert st["failures"] == "5" and st["locked"] == "1", st
    assert daemon.request(f"VERIFY user={user} pattern={PATTERN}") == "LOCKED retry_after=0"


def settled_threads(pid, window=1.0):
    """The daemon's thread count once the last connection's thread has exited (a
    reply reaches the client a moment before its thread is gone)."""
    lowest, end = proc_status(pid)["Threads"], time.monotonic() + window
    while time.monotonic() < end:
        lowest = min(lowest, proc_status(pid)["Threads"])
        time.sleep(0.02)
    return lowest


def test_a_client_that_never_reads_its_replies_is_dropped(daemon):
    """Pipelined requests whose replies are never read fill the socket; the daemon's
    send deadline ends the connection instead of a thread blocking for ever."""
    pid = daemon.proc.pid
    daemon.request("PING")
    base_threads = settled_threads(pid)
    s = daemon.connect(15)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.setblocking(False)
    line, sent = b"STATUS user=root\n", 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 3:                 # write until the daemon stops reading
        try:
            sent += s.send(line * 64)
        except BlockingIOError:
            time.sleep(0.05)
        except OSError:
            break
    assert proc_status(pid)["Threads"] > base_threads, "the daemon is serving the pipelining client"
    assert daemon.request("PING") == "PONG version=1", "others are served meanwhile"
    t1 = time.monotonic()
    assert wait_for_threads(pid, base_threads, timeout=15), "the never-reading client was not dropped"
    gone_after = time.monotonic() - t1
    s.setblocking(True)
    s.settimeout(15)
    received = b""
    while True:
        try:
            chunk = s.recv(1 << 16)
        except ConnectionResetError:
            break
        if not chunk:
            break
        received += chunk
    s.close()
    answered = received.count(b"\n")
    figure("never-reading-client", f"{sent // len(line)} requests pipelined, {answered} answered before the daemon "
                                   f"gave up {gone_after:.1f} s after the client stopped writing")
    assert answered < sent // len(line)


# ---------------------------------------------------------------- connection caps

def test_one_uid_gets_at_most_32_connections_and_root_is_still_served(daemon, make_users):
    (other,) = make_users(1)
    hog = Holder(daemon, "nobody", 100)
    try:
        assert (hog.admitted, hog.busy) == (MAX_PER_UID, 100 - MAX_PER_UID)
        assert daemon.request("PING") == "PONG version=1"
        assert as_user(daemon, other, f"STATUS user={other}")[0].startswith(f"STATUS user={other} enrolled=0")
        assert as_user(daemon, "nobody", "PING") == ["BUSY"], "the hog's 33rd connection"
    finally:
        hog.release()
    assert as_user(daemon, "nobody", "PING") == ["PONG version=1"]


def test_many_uids_together_cannot_take_the_slots_root_needs(daemon, make_users):
    """Eight local users, each within its 32-connection cap, can fill all 256 slots.
    Root (sudo, login) must still be served, or pattern unlock silently falls back
    to the password for every administrator for as long as the hogs keep pinging."""
    users = make_users(MAX_TOTAL // MAX_PER_UID)
    holders = []
    try:
        for u in users:
            holders.append(Holder(daemon, u, MAX_PER_UID))
        held = sum(h.admitted for h in holders)
        assert held >= MAX_TOTAL - MAX_PER_UID, "the hogs got what the caps allow"
        reply = daemon.request("PING")
        figure("uid-starvation", f"{len(users)} uids asking for {MAX_PER_UID} connections each hold {held}; "
                                 f"root PING -> {reply}")
        assert reply == "PONG version=1", (
            "root got BUSY: non-root peers together took every slot; the connection limiter must keep slots "
            "for uid 0")
    finally:
        for h in holders:
            h.release()


def send_at_once(daemon, lines):
    """Opens one root connection per line and sends each line, without reading: as
    many setuid programs running PAM (su, polkit-agent-helper-1) each asking at once.
    Returns the sockets, whose replies are read later."""
    conns = []
    for line in lines:
        s = daemon.connect(60)
        try:
            s.sendall(line.encode() + b"\n")
        except OSError:      # answered BUSY and closed before we wrote
            pass
        conns.append(s)
    return conns


def replies_of(conns):
    """Every connection's reply, waiting for each; the sockets are closed."""
    out = []
    for s in conns:
        try:
            out.append(read_line(s))
        except OSError:
            out.append("")
        s.close()
    return out


def ask(daemon, line):
    """One request on a new connection, as the PAM module asks; the reply line ("" when
    none came). A BUSY may come and the connection close before the line is written."""
    with daemon.connect(10) as s:
        try:
            s.sendall(line.encode() + b"\n")
        except OSError:
            pass
        try:
            return read_line(s)
        except OSError:
            return ""


def assert_answered(user, status, verify):
    """Every STATUS and VERIFY of `user` answered as it should be, none left
    waiting behind another user's queue (5 s: answered, not a timing)."""
    assert all(r.startswith(f"STATUS user={user} enrolled=1") for r, _ in status), status
    assert all(r == "OK" for r, _ in verify), verify
    assert max(dt for _, dt in status + verify) < 5.0, "answered, not left waiting behind the other user's queue"


def another_user_meanwhile(daemon, user, seconds):
    """Root-peer STATUS of `user` every 50 ms and a root-peer VERIFY of its right
    pattern every 0.5 s for `seconds`, as the user's own sudo asks: (STATUS samples, VERIFY samples), each
    a list of (reply, seconds it took)."""
    status, verify = [], []
    caller = pwd.getpwnam(user).pw_uid
    start = time.monotonic()
    next_verify = start
    while time.monotonic() - start < seconds:
        t = time.monotonic()
        status.append((ask(daemon, f"STATUS user={user} caller={caller}"), time.monotonic() - t))
        if t >= next_verify:
            t = time.monotonic()
            verify.append((ask(daemon, f"VERIFY user={user} pattern={PATTERN} service=sudo caller={caller}"),
                           time.monotonic() - t))
            next_verify = time.monotonic() + 0.5
        time.sleep(0.05)
    return status, verify


def latency_figure(samples, answered):
    """'p50 …, p99 …, max … (n=…)' of the answered samples, and how many were not."""
    ok = [dt for reply, dt in samples if answered(reply)]
    others = sorted({reply for reply, _ in samples if not answered(reply)})
    text = "answered in none" if not ok else ", ".join(
        f"{k} {ms(v)}" for k, v in percentiles(ok).items() if k != "n") + f" (n={len(ok)})"
    return text + (f"; {len(samples) - len(ok)} of {len(samples)} got {', '.join(others)}" if others else "")


def test_one_users_queued_verifies_never_keep_another_user_from_being_answered(daemon, make_users):
    """`su SELF` and `polkit-agent-helper-1 SELF` are root peers, and with the user's
    own right pattern every VERIFY hashes, one at a time under that user's lock. 256
    of them sent at once must not take every connection: another user's STATUS and
    VERIFY, asked as sudo and login ask, are answered (not BUSY) while they wait.
    Whatever the first user is told, it is OK or BUSY: BUSY is never success and
    never a wrong pattern, and nothing is counted against it."""
    a, b = make_users(2)
    for u in (a, b):
        daemon.enroll(u, PATTERN)
    uid_a = pwd.getpwnam(a).pw_uid
    conns = send_at_once(daemon, [f"VERIFY user={a} pattern={PATTERN} service=su caller={uid_a}"] * MAX_TOTAL)
    try:
        time.sleep(0.5)                         # every line has reached the daemon
        status, verify = another_user_meanwhile(daemon, b, 3.0)
    finally:
        a_replies = replies_of(conns)
    figure("one-users-queue", f"{MAX_TOTAL} root-peer VERIFYs of {a}'s right pattern sent at once "
                              f"({a_replies.count('OK')} OK, {a_replies.count('BUSY')} BUSY); meanwhile another "
                              f"user's root STATUS {latency_figure(status, lambda r: r.startswith('STATUS'))}; "
                              f"root VERIFY {latency_figure(verify, lambda r: r == 'OK')}")
    assert_answered(b, status, verify)
    assert set(a_replies) <= {"OK", "BUSY"}, sorted(set(a_replies))
    assert "OK" in a_replies, "the user's own requests are still served, in turn"
    _, st = parse_reply(daemon.request(f"STATUS user={a}"))
    assert (st["failures"], st["locked"]) == ("0", "0"), st


def test_one_callers_guesses_at_many_users_never_keep_another_user_from_being_answered(daemon, make_users):
    """The same through many targets: one user runs `su VICTIM` at eight users at once,
    32 wrong guesses at each, every one a root peer naming that user as its caller.
    Each victim's five guesses hash in turn and the rest wait for their LOCKED; a
    ninth user's STATUS and VERIFY are answered meanwhile, because one caller's
    requests in hand are capped, whichever user they are about."""
    users = make_users(10)
    mallory, victims, b = users[0], users[1:9], users[9]
    for u in victims + [b]:
        daemon.enroll(u, PATTERN)
    uid_m = pwd.getpwnam(mallory).pw_uid
    lines = [f"VERIFY user={v} pattern={WRONG} service=su caller={uid_m}" for v in victims
             for _ in range(MAX_TOTAL // len(victims))]
    conns = send_at_once(daemon, lines)
    try:
        time.sleep(0.5)
        status, verify = another_user_meanwhile(daemon, b, 2.0)
    finally:
        replies = replies_of(conns)
    figure("one-callers-guesses", f"{len(lines)} root-peer wrong guesses by one caller at {len(victims)} users "
                                  f"sent at once; meanwhile another user's root STATUS "
                                  f"{latency_figure(status, lambda r: r.startswith('STATUS'))}; root VERIFY "
                                  f"{latency_figure(verify, lambda r: r == 'OK')}")
    assert_answered(b, status, verify)
    assert {r.split()[0] for r in replies} <= {"FAIL", "LOCKED", "BUSY"}, sorted(set(replies))
    log = daemon.read_log().splitlines()
    for v in victims:
        assert len([l for l in log if f"verify user={v} " in l and "result=FAIL" in l]) <= 5, "at most five evaluated"


# ---------------------------------------------------------------- what the log shows

def test_every_verify_is_logged_with_who_where_and_outcome(daemon, make_users):
    user, ghost = make_users(2)
    uid = str(pwd.getpwnam(user).pw_uid)
    daemon.enroll(user, PATTERN)
    ctx = "service=sshd tty=ssh rhost=203.0.113.7 ruser=mallory"
    sent = [
        (f"VERIFY user={user} pattern={WRONG} {ctx}", "FAIL"),
        (f"VERIFY user={user} pattern=12 {ctx}", "INVALID"),
        (f"VERIFY user={user} pattern={PATTERN} {ctx}", "OK"),
        (f"VERIFY user={ghost} pattern={PATTERN} {ctx}", "NOT_ENROLLED"),
    ]
    for n, (line, outcome) in enumerate(sent, 1):
        assert daemon.request(line).startswith(outcome)
        # A right pattern is answered before its bookkeeping write, and logged after it.
        deadline = time.monotonic() + 5
        while len(log_lines(daemon, "verify")) < n and time.monotonic() < deadline:
            time.sleep(0.01)
    for _ in range(5):
        daemon.request(f"VERIFY user={user} pattern={WRONG} {ctx}")
    assert daemon.request(f"VERIFY user={user} pattern={PATTERN} {ctx}").startswith("LOCKED")
    assert as_user(daemon, user, f"VERIFY user={user} pattern={WRONG} service=xscreensaver tty=%3A0 rhost= ruser=") \
        == ["LOCKED retry_after=0"]
    assert as_user(daemon, "nobody", f"VERIFY user={user} pattern={WRONG} {ctx}") == ["DENIED"]

    lines = log_lines(daemon, "verify")
    assert len(lines) == 4 + 5 + 1 + 1 + 1, "every verify is logged exactly once"
    for fields, raw in lines:
        for key in ("user", "service", "tty", "rhost", "ruser", "uid", "result"):
            assert key in fields, (key, raw)
    results = [(f["user"], f["uid"], f["result"].split(",")[0]) for f, _ in lines]
    assert results[:4] == [(user, "0", "FAIL"), (user, "0", "INVALID"), (user, "0", "OK"), (ghost, "0", "NOT_ENROLLED")]
    assert [r[2] for r in results[4:9]] == ["FAIL"] * 5
    assert lines[8][0]["result"] == "FAIL,remaining=0", "the failure that locks is visible"
    assert results[9:] == [(user, "0", "LOCKED"), (user, uid, "LOCKED"), (user, "65534", "DENIED")]
    first = lines[0][0]
    assert (first["service"], first["tty"], first["rhost"], first["ruser"]) == ("sshd", "ssh", "203.0.113.7", "mallory")
    assert lines[10][0]["service"] == "xscreensaver" and lines[10][0]["tty"] == ":0"


def test_client_supplied_fields_cannot_forge_log_fields(daemon, make_users):
    """A user may send any service/tty/rhost with its own VERIFY. Those values must
    not be able to add fields (a fake `user=root result=OK`), break the line, or
    reorder what the admin's terminal shows."""
    (user,) = make_users(1)
    daemon.enroll(user, PATTERN)
    forged = "x%22%20user%3Droot%20result%3DOK%20%22"        # x" user=root result=OK "
    reply = as_user(daemon, user, f"VERIFY user={user} pattern={WRONG} service={forged} "
                                  f"tty=pts%2F1%0Afake%20line rhost=%E2%80%AEevil ruser=a%5C%22b")
    assert reply == ["FAIL remaining=4"]
    (raw,) = [line for line in daemon.read_log().splitlines() if " verify " in line or ": verify " in line]
    print(raw)
    assert len(re.findall(r"\sresult=", raw)) == 1, f"a client value forged a result field: {raw}"
    assert len(re.findall(r"\suser=", raw)) == 1, f"a client value forged a user field: {raw}"
    assert "\u202e" not in raw, "a bidirectional override reached the log"
    assert not any(line.startswith("fake") for line in daemon.read_log().splitlines()), "a value broke the line"


def test_no_pattern_reaches_the_log_a_record_or_the_command_line(daemon, make_users):
    """Dozens of distinct patterns go through every path that carries one: root and
    self enroll, CLI enroll and verify, current= for change and remove, right and
    wrong guesses, denied and not-enrolled guesses, invalid entries, malformed,
    oversized and non-UTF-8 lines. None appears in the daemon's output, in any file
    under its state, key or socket directories, or in its command line/environment."""
    alice, bob, carol = make_users(3)
    seed = int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    secrets = []
    while len(secrets) < 50:                        # 8 and 9 dots: never a date, a uid or a count by chance
        p = random_pattern(rng, rng.choice([8, 9]))
        if p not in secrets:
            secrets.append(p)
    invalid = ["98765432100", "9876543219", "s3cret-Pattern-XyZ", "74159632%E2%9C%93"]
    P = iter(secrets)
    a_pat, b_pat, b_new = next(P), next(P), next(P)

    daemon.enroll(alice, a_pat)
    r = daemon.cli("enroll", bob, input=f"{b_pat}\n{b_pat}\n")
    assert r.returncode == 0, r.stderr
    assert as_user(daemon, bob, f"ENROLL user={bob} pattern={next(P)} current={next(P)}") == ["FAIL remaining=4"]
    assert as_user(daemon, bob, f"ENROLL user={bob} pattern={b_new} current={b_pat}") == ["OK iterations=600000"]
    for _ in range(4):
        assert daemon.request(f"VERIFY user={alice} pattern={next(P)} service=sudo").startswith("FAIL")
    assert daemon.cli("verify", alice, input=f"{a_pat}\n").returncode == 0
    for i in range(12):                              # more wrong guesses, each a new pattern
        assert daemon.request(f"VERIFY user={alice} pattern={next(P)} service=guess").startswith("FAIL")
        if i % 4 == 3:
            daemon.request(f"RESET user={alice}")
    assert as_user(daemon, bob, f"VERIFY user={bob} pattern={next(P)}") == ["FAIL remaining=4"]
    assert as_user(daemon, bob, f"VERIFY user={bob} pattern={b_new}") == ["OK"]
    assert as_user(daemon, bob, f"VERIFY user={alice} pattern={next(P)}") == ["DENIED"]
    assert as_user(daemon, "nobody", f"ENROLL user={alice} pattern={next(P)}") == ["DENIED"]
    assert daemon.request(f"VERIFY user={carol} pattern={next(P)}") == "NOT_ENROLLED"
    for bad in invalid:
        assert daemon.request(f"VERIFY user={alice} pattern={bad}").startswith("INVALID")
        assert daemon.request(f"ENROLL user={alice} pattern={bad}").startswith("INVALID")
        assert as_user(daemon, bob, f"ENROLL user={bob} pattern={b_new} current={bad}")[0].startswith("INVALID")
    # Patterns inside lines the daemon rejects.
    with daemon.connect() as s:
        s.sendall(f"VERIFY user={alice} pattern={next(P)} bogus=1\n".encode())
        assert read_line(s).startswith("ERROR")
        s.sendall(f"VERIFY user={alice} pattern={next(P)} pattern={next(P)}\n".encode())
        assert read_line(s).startswith("ERROR")
        s.sendall(f"VERIFY user=../{alice} pattern={next(P)}\n".encode())
        assert read_line(s) == "ERROR message=bad_user"
        s.sendall(f"ENROLL user={alice} pattern={next(P)} iterations=5\n".encode())
        assert read_line(s) == "ERROR message=iterations_too_low"
    for tail in (b"\xff\n", b"\x00\n", b"s" * 1100 + b"\n"):
        with daemon.connect() as s:
            s.sendall(f"VERIFY user={alice} pattern={next(P)} service=".encode() + tail)
            assert read_line(s).startswith("ERROR")
    # Remove with a wrong, then the right, current pattern; root re-enrolls.
    assert as_user(daemon, bob, f"REMOVE user={bob} current={next(P)}") == ["FAIL remaining=4"]
    assert as_user(daemon, bob, f"REMOVE user={bob} current={b_new}") == ["OK"]
    a_new = next(P)
    daemon.enroll(alice, a_new)
    r = daemon.cli("verify", alice, input=f"{a_new}\n")
    assert r.returncode == 0, r.stderr
    daemon.request("RESET all=1")

    used = secrets[:secrets.index(a_new) + 1]
    decoded = ["74159632\u2713"]
    everything = used + invalid + decoded
    pid = daemon.proc.pid
    places = {"the daemon's output": daemon.read_log().encode(),
              "/proc/PID/cmdline": pathlib.Path(f"/proc/{pid}/cmdline").read_bytes(),
              "/proc/PID/environ": pathlib.Path(f"/proc/{pid}/environ").read_bytes()}
    for f in pathlib.Path(daemon.base).rglob("*"):
        if f.is_file() and f.name != "daemon.log":
            places[str(f.relative_to(daemon.base))] = f.read_bytes()
    assert any(name.startswith("state/") for name in places), "the records were checked"
    for where, data in places.items():
        for secret in everything:
            assert secret.encode() not in data, f"pattern {secret} found in {where} (seed {seed})"
    for line in daemon.read_log().splitlines():
        assert "pattern=" not in line and "current=" not in line, line
    figure("pattern-secrecy", f"{len(used)} distinct valid patterns and {len(invalid)} invalid entries through "
                              f"enroll/verify/change/remove/malformed paths; found in none of {len(places)} places")
