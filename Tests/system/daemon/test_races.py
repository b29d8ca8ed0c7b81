# SPDX-License-Identifier: Apache-2.0
"""Races on the real daemon: guesses, enrolls (by root and by
the user with its current pattern), resets and removes racing on one user and
across users, round after round. The lockout count stays exact — never more than
5 evaluations between two events that clear the count, each logged once — and no
reader ever sees a half-written record.

Short by default (`make check`); PATTERNLOCK_STRESS=1 (`make stress`) runs many
more rounds and users and prints the figures."""
import os
import pathlib
import pwd
import random
import re
import subprocess
import threading
import time

from harness.common import SYSTEM_PYTHON, parse_reply, read_line, random_pattern, figure

STRESS = os.environ.get("PATTERNLOCK_STRESS") == "1"
PATTERN = "1397"
WRONG = "9856"
MAX_FAILURES = 5


# ---------------------------------------------------------------- helpers


# Runs as another uid: each stdin line is a request (new connection, reply printed)
# or `SLEEP seconds`.
PEER = r"""
import socket, sys, time
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("SLEEP "):
        time.sleep(float(line[6:]))
        continue
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.settimeout(60)
    s.sendall(line.encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    s.close()
    print(buf.decode(errors="replace").rstrip("\n"), flush=True)
"""


def as_user(daemon, user, lines):
    pw = pwd.getpwnam(user)
    r = subprocess.run(["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups",
                        SYSTEM_PYTHON, "-c", PEER, daemon.socket],
                       input="".join(line + "\n" for line in lines), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def run_together(targets):
    """Runs (function, args) pairs in threads at once; re-raises the first failure."""
    errors = []

    def wrap(f, args):
        try:
            f(*args)
        except BaseException as e:          # noqa: BLE001 — reported below
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(f, args)) for f, args in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


RECORD = re.compile(
    r"patternlock-record-v1\n"
    r"user=(?P<user>[^\n]+)\n"
    r"(uid=\d+\n)?"
    # the owner tag (o=) a fleet store checks
    r"credential=\$pbkdf2-sha256\$i=\d+,o=[A-Za-z0-9+/]{43}\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}\n"
    r"failures=(?P<failures>\d+)\n"
    r"locked_since=\d+\n"
    # when,uid,service,tty,rhost,ruser, then
    # host,caller,session,seat (the caller on every attempt, a
    # change of one's own pattern included; host empty here)
    r"(failure=\d+,\d+,[^,\n]*,[^,\n]*,[^,\n]*,[^,\n]*,,\d+,[^,\n]*,[^,\n]*\n){0,10}\Z")


class RecordWatcher(threading.Thread):
    """Reads every record in the state directory over and over while the races run.
    A reader must only ever see whole records: the old one or the new one."""

    def __init__(self, state_dir):
        super().__init__(daemon=True)
        self.state_dir = state_dir
        self.stop = threading.Event()
        self.reads = 0
        self.temp_seen = 0
        self.bad = []

    def run(self):
        while not self.stop.is_set():
            for name in os.listdir(self.state_dir):
                if name.startswith("."):        # a temp file mid-write, or the daemon's .lock
                    self.temp_seen += ".tmp." in name
                    continue
                try:
                    data = pathlib.Path(self.state_dir, name).read_bytes()
                except FileNotFoundError:       # removed meanwhile
                    continue
                self.reads += 1
                m = RECORD.match(data.decode("utf-8", errors="replace"))
                if not m or m["user"] != name or int(m["failures"]) > MAX_FAILURES:
                    self.bad.append((name, data))
            time.sleep(0.002)                   # leave the CPU to the daemon

    def finish(self):
        self.stop.set()
        self.join()
        assert not self.bad, f"a reader saw a broken record: {self.bad[:2]}"


def verify_log_results(log, user):
    """The result words of the verify lines for `user` in a piece of the log."""
    marker = f"patternlockd: verify user={user} "
    return [re.search(r" result=(\S+)", line)[1] for line in log.splitlines() if marker in line]


def enroll_log_results(log, user):
    marker = f"patternlockd: enroll user={user} "
    return [re.search(r" result=(\S+)", line)[1] for line in log.splitlines() if marker in line]


# ---------------------------------------------------------------- tests

def test_racing_guesses_across_users_get_exactly_five_evaluations_each(daemon, make_users):
    """Every round, a burst of simultaneous wrong guesses for several users at once:
    each user gets exactly five FAIL (remaining 4..0), the rest LOCKED, and the log
    shows exactly five evaluations per user."""
    rounds, n_users, per_user = (40, 6, 20) if STRESS else (5, 3, 10)
    users = make_users(n_users)
    for u in users:
        daemon.enroll(u, PATTERN)
    watcher = RecordWatcher(daemon.state_dir)
    watcher.start()
    lock = threading.Lock()
    for _ in range(rounds):
        mark = len(daemon.read_log())
        jobs = [u for u in users for _ in range(per_user)]
        random.shuffle(jobs)
        barrier = threading.Barrier(len(jobs))
        replies = {u: [] for u in users}

        def guess(u):
            s = daemon.connect()
            barrier.wait()
            s.sendall(f"VERIFY user={u} pattern={WRONG} service=race\n".encode())
            r = read_line(s)
            s.close()
            with lock:
                replies[u].append(r)

        run_together([(guess, (u,)) for u in jobs])
        log = daemon.read_log()[mark:]
        for u in users:
            fails = sorted(r for r in replies[u] if r.startswith("FAIL"))
            assert fails == [f"FAIL remaining={n}" for n in range(MAX_FAILURES)], (u, replies[u])
            assert replies[u].count("LOCKED retry_after=0") == per_user - MAX_FAILURES, replies[u]
            results = [r.split(",")[0] for r in verify_log_results(log, u)]
            assert results.count("FAIL") == MAX_FAILURES and results.count("LOCKED") == per_user - MAX_FAILURES
            _, st = parse_reply(daemon.request(f"STATUS user={u}"))
            assert (st["failures"], st["locked"]) == ("5", "1"), st
        assert daemon.request("RESET all=1") == f"OK count={n_users} locked={n_users}"
    watcher.finish()
    figure("race-exact-five", f"{rounds} rounds x {n_users} users x {per_user} simultaneous wrong guesses: "
                              f"exactly 5 evaluations per user per round ({rounds * n_users * 5} in all, "
                              f"{rounds * n_users * (per_user - 5)} LOCKED without a hash); "
                              f"{watcher.reads} concurrent record reads, none broken")


def test_enroll_verify_reset_remove_race_and_the_count_stays_exact(daemon, make_users):
    """Per user and round, at once: wrong guesses, the owner's right guesses, root
    RESET and RESET all, root ENROLL of another pattern, root REMOVE and re-ENROLL,
    and the user changing its own pattern with current=. Counted from the replies,
    no `remaining` value repeats more often than the count was cleared, so at most 5
    evaluations happen between two clearing events; the log holds each evaluation
    once; afterwards the count is exact and the pattern is one of the two enrolled."""
    rounds, n_users = (30, 4) if STRESS else (4, 2)
    users = make_users(n_users)
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    totals = {"evaluations": 0, "clearing": 0, "requests": 0, "worst": 0.0}
    watcher = RecordWatcher(daemon.state_dir)
    watcher.start()
    status_polls = [0]

    for _ in range(rounds):
        a, b = random_pattern(rng, rng.randint(6, 9)), random_pattern(rng, rng.randint(6, 9))
        while b == a:
            b = random_pattern(rng, 7)
        for u in users:
            daemon.enroll(u, a)
        mark = len(daemon.read_log())
        events = {u: [] for u in users}          # (who, request verb, reply)
        reset_all = []
        lock = threading.Lock()
        stop_polling = threading.Event()

        def note(u, who, verb, reply):
            with lock:
                events[u].append((who, verb, reply))

        def pause(lo, hi):
            time.sleep(rng.uniform(lo, hi))

        def guesser(u):
            for _ in range(6):
                note(u, "guesser", "VERIFY", daemon.request(f"VERIFY user={u} pattern={WRONG} service=race"))
                pause(0, 0.03)

        def owner(u):
            for _ in range(3):
                pause(0.02, 0.1)
                note(u, "owner", "VERIFY", daemon.request(f"VERIFY user={u} pattern={rng.choice([a, b])} service=owner"))

        def admin(u):
            for _ in range(3):
                pause(0.05, 0.15)
                note(u, "admin", "RESET", daemon.request(f"RESET user={u}"))

        def enroller(u):
            for p in (b, a):
                pause(0.05, 0.2)
                note(u, "enroller", "ENROLL", daemon.request(f"ENROLL user={u} pattern={p}"))

        def remover(u):
            pause(0.05, 0.3)
            note(u, "remover", "REMOVE", daemon.request(f"REMOVE user={u}"))
            pause(0, 0.03)
            note(u, "remover", "ENROLL", daemon.request(f"ENROLL user={u} pattern={a}"))

        def self_change(u):
            lines = []
            for _ in range(3):
                lines.append(f"SLEEP {rng.uniform(0.02, 0.12):.3f}")
                x = rng.choice([a, b])
                lines.append(f"ENROLL user={u} pattern={x} current={x}")
            for reply in as_user(daemon, u, lines):
                note(u, "self", "ENROLL", reply)

        def reset_everyone():
            pause(0.1, 0.3)
            reset_all.append(daemon.request("RESET all=1"))

        def poll_status():
            while not stop_polling.is_set():
                for u in users:
                    _, st = parse_reply(daemon.request(f"STATUS user={u}"))
                    assert st["corrupt"] == "0", st
                    assert int(st["failures"]) <= MAX_FAILURES, st
                    status_polls[0] += 1
                time.sleep(0.005)

        def race():
            try:
                targets = [(reset_everyone, ())]
                for u in users:
                    targets += [(guesser, (u,))] * 3
                    targets += [(f, (u,)) for f in (owner, admin, enroller, remover, self_change)]
                run_together(targets)
            finally:
                stop_polling.set()

        run_together([(race, ()), (poll_status, ())])
        assert len(reset_all) == 1 and reset_all[0].startswith("OK count="), reset_all
        # A right guess is answered before the write that clears the count, still under
        # the user's lock, and logged after it. A request that takes the lock and is not
        # counted (an invalid entry) waits for that write; then wait for the log lines.
        for u in users:
            barrier = daemon.request(f"VERIFY user={u} pattern=12 service=barrier")
            assert barrier in ("INVALID reason=too_short", "LOCKED retry_after=0"), barrier
            events[u].append(("barrier", "VERIFY", barrier))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            log = daemon.read_log()[mark:]
            if all(len(verify_log_results(log, u)) >= sum(1 for _, verb, _ in events[u] if verb == "VERIFY")
                   for u in users):
                break
            time.sleep(0.02)

        for u in users:
            ev = events[u]
            totals["requests"] += len(ev)
            fails = [int(parse_reply(r)[1]["remaining"]) for _, _, r in ev if r.startswith("FAIL")]
            oks_verify = sum(1 for _, verb, r in ev if verb == "VERIFY" and r == "OK")
            oks_self = sum(1 for who, _, r in ev if who == "self" and r.startswith("OK"))
            clearing = (sum(1 for _, verb, r in ev if verb == "RESET" and r.startswith("OK count=1 "))
                        + sum(1 for _, verb, r in ev if verb == "ENROLL" and r.startswith("OK"))
                        + oks_verify + 1)                  # + RESET all, which may have cleared this user
            for remaining in range(MAX_FAILURES):
                assert fails.count(remaining) <= 1 + clearing, (u, remaining, fails, clearing, ev)
            evaluations = len(fails) + oks_verify + oks_self
            assert len(fails) <= MAX_FAILURES * (1 + clearing)
            totals["evaluations"] += evaluations
            totals["clearing"] += clearing
            totals["worst"] = max(totals["worst"], len(fails) / (1 + clearing))

            # Every evaluation is in the log once: verify FAIL/OK lines and the self-change's FAIL lines.
            logged = [r.split(",")[0] for r in verify_log_results(log, u)]
            verify_replies = [r.split(" ")[0] for _, verb, r in ev if verb == "VERIFY"]
            assert sorted(logged) == sorted(verify_replies), (u, logged, verify_replies)
            enroll_fails = [r for r in enroll_log_results(log, u) if r.startswith("FAIL")]
            assert len(enroll_fails) == sum(1 for who, _, r in ev if who == "self" and r.startswith("FAIL"))

            # Quiet now: the stored count is exact — exactly 5 - f more failures lock.
            _, st = parse_reply(daemon.request(f"STATUS user={u}"))
            assert (st["enrolled"], st["corrupt"]) == ("1", "0"), st
            f = int(st["failures"])
            assert st["locked"] == ("1" if f == MAX_FAILURES else "0"), st
            tail = [daemon.request(f"VERIFY user={u} pattern={WRONG}") for _ in range(MAX_FAILURES - f + 1)]
            assert tail == [f"FAIL remaining={n}" for n in reversed(range(MAX_FAILURES - f))] + ["LOCKED retry_after=0"]
            assert daemon.request(f"RESET user={u}") == "OK count=1 locked=1"
            first = daemon.request(f"VERIFY user={u} pattern={a}")
            assert first == "OK" or daemon.request(f"VERIFY user={u} pattern={b}") == "OK", \
                "the pattern is one of the two enrolled"
            assert daemon.request(f"VERIFY user={u} pattern=12") == "INVALID reason=too_short"  # the OK's write is done
        assert not [n for n in os.listdir(daemon.state_dir) if ".tmp." in n], "a temp file was left behind"

    watcher.finish()
    figure("race-mixed", f"{rounds} rounds x {n_users} users, {totals['requests']} racing requests: "
                         f"{totals['evaluations']} evaluations, {totals['clearing']} clearing events; FAIL replies at most "
                         f"{totals['worst']:.2f} x (clearing events + 1) for any user-round (limit 5); {status_polls[0]} STATUS "
                         f"polls and {watcher.reads} record reads during the races, none broken, "
                         f"temp files glimpsed in flight {watcher.temp_seen} times")
