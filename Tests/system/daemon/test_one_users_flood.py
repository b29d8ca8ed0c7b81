# SPDX-License-Identifier: Apache-2.0
"""One local user floods the daemon through its 32 connections, and the others
are not harmed: its lines do not fill the log (journald would then drop the
daemon's warnings, which name who locked whose pattern), and another user's
request is answered before that user's queue drains. Each test sends a fixed
number of requests and measures no time: what it checks is the count of log
lines, and the order in which the requests were answered."""
import re
import subprocess
import time

from harness.common import SYSTEM_PYTHON, TEST_ITERATIONS, figure
from test_hostile import setpriv

CONNECTIONS = 32  # one uid's whole share (ConnectionLimiter.maxPerUser)

# Runs as the flooding uid: opens N connections, sends each its whole batch of
# lines at once, prints SENT, then reads the replies. A line on stdin asks how
# many replies have come in so far (everything already readable is read first);
# it prints DONE with the count once all are in.
FLOODER = r"""
import selectors, socket, sys
path, n, per, kinds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
lines = {"check": b"CHECK pattern=2761834\n", "malformed": b"VERIFY colour=blue\n",
         "ping": b"PING\n"}
batch = b"".join(lines[kinds[i % len(kinds)]] for i in range(per))
sel = selectors.DefaultSelector()
conns = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    conns.append(s)
for s in conns:
    s.sendall(batch)
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
sel.register(sys.stdin, selectors.EVENT_READ)
print("SENT", flush=True)
got, busy, want = 0, 0, n * per
def drain(s):
    global got, busy
    while True:
        try:
            data = s.recv(1 << 16)
        except BlockingIOError:
            return
        if not data:
            sel.unregister(s)
            return
        got += data.count(b"\n")
        busy += data.count(b"BUSY")
while got < want and len(sel.get_map()) > 1:
    for key, _ in sel.select(60):
        if key.fileobj is sys.stdin:
            sys.stdin.readline()
            for s in conns:
                if s.fileno() in sel.get_map():
                    drain(s)
            print(f"SO FAR {got}", flush=True)
        else:
            drain(key.fileobj)
print(f"DONE {got} busy={busy}", flush=True)
sys.stdin.readline()
"""


class Flood:
    """`CONNECTIONS` connections of `user`, each sent `per` lines of `kinds` at once."""

    def __init__(self, daemon, user, per, kinds):
        self.total = CONNECTIONS * per
        self.proc = subprocess.Popen(
            setpriv(user) + [SYSTEM_PYTHON, "-c", FLOODER, daemon.socket, str(CONNECTIONS), str(per), kinds],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "SENT"

    def so_far(self):
        self.proc.stdin.write("?\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().strip()
        if line.startswith("DONE"):  # all were in already
            self.done = line
            return self.total
        return int(re.fullmatch(r"SO FAR (\d+)", line).group(1))

    def finish(self):
        line = getattr(self, "done", None) or self.proc.stdout.readline().strip()
        self.proc.stdin.close()
        self.proc.wait(60)
        m = re.fullmatch(r"DONE (\d+) busy=(\d+)", line)
        assert m, line
        return int(m.group(1)), int(m.group(2))


def uid_of(user):
    import pwd
    return pwd.getpwnam(user).pw_uid


def test_one_users_flood_leaves_a_few_counted_lines_and_every_warning(daemon, make_users):
    """32 connections of one user send 16,000 CHECKs and 16,000 malformed lines.
    The log gets no CHECK line, a few of that uid's rejected lines and, for the
    rest, counts that add up to what was sent; another user locked meanwhile by
    five wrong patterns has its warning in the log."""
    flooder, victim = make_users(2)
    uid = uid_of(flooder)
    daemon.enroll(victim, "1397")
    per = 1000
    started = time.monotonic()
    flood = Flood(daemon, flooder, per, "check,malformed")
    for n in range(5):
        daemon.request(f"VERIFY user={victim} pattern=2589 service=sudo tty=pts/{n}")
    got, busy = flood.finish()
    # What the budget lets through: its burst, what it refilled meanwhile, and the
    # count said when the daemon stops (no time is checked: the allowance grows with it).
    allowance = 30 + int((time.monotonic() - started) * 30 / 60) + 2
    assert (got, busy) == (flood.total, 0), "every request of the flood was answered"
    daemon.stop()  # says what the budgets dropped and nobody said yet
    log = daemon.read_log().splitlines()
    mine = [line for line in log if re.search(rf"\buid={uid}\b", line)]
    rejected_written = [line for line in mine if "request rejected" in line]
    suppressed = sum(int(m.group(1)) for line in mine for m in [re.search(r"suppressed=(\d+)", line)] if m)
    figure("flood-log", f"{flood.total} requests of one uid left {len(mine)} log lines "
           f"({len(rejected_written)} rejected lines, {suppressed} counted as suppressed)")
    assert not [line for line in log if re.search(r"patternlockd: check\b", line)], "CHECK is not logged"
    assert len(mine) <= allowance, f"{len(mine)} lines of one uid's flood in the log:\n" + "\n".join(mine[:50])
    # Every rejected line is in the log or in a count.
    assert len(rejected_written) + suppressed == flood.total // 2, (len(rejected_written), suppressed)
    locks = [line for line in log if f"verify user={victim} " in line and "result=FAIL,remaining=0" in line]
    assert locks, "the warning that names who locked the victim's pattern is in the log"


def test_another_users_verify_is_answered_before_one_users_flood_drains(daemon, make_users):
    """One user's 32 connections each hold a batch of CHECKs, together about
    four times the work of another user's VERIFY; root then sends that VERIFY,
    as sudo's module would. It is answered while much of the flood still waits:
    the uids take turns, so the flooding user's 32 connections are one in line,
    not 32 threads against the VERIFY's one (which, sharing the processors
    equally with them, would finish after the whole flood). The batch is sized
    from the cost of a CHECK and of that VERIFY on this machine, measured
    unloaded first; no time is checked."""
    flooder, other = make_users(2)
    # A hash ten times the tests' usual, so the VERIFY is a sizeable piece of work.
    assert daemon.request(f"ENROLL user={other} pattern=1397 iterations={10 * TEST_ITERATIONS}").startswith("OK")
    hash_seconds = min(timed(lambda: daemon.request(f"VERIFY user={other} pattern=1397")) for _ in range(3))
    with daemon.connect() as s:
        batch = b"CHECK pattern=2761834\n" * 4000
        check_seconds = timed(lambda: (s.sendall(batch), read_lines(s, 4000))) / 4000
    per = max(100, round(4 * hash_seconds / (CONNECTIONS * check_seconds)))
    flood = Flood(daemon, flooder, per, "check")
    reply = daemon.request(f"VERIFY user={other} pattern=1397 service=sudo")
    answered_before = flood.so_far()
    got, busy = flood.finish()
    assert reply == "OK"
    assert (got, busy) == (flood.total, 0)
    figure("flood-order", f"another user's VERIFY ({hash_seconds * 1000:.0f} ms unloaded) answered after "
           f"{answered_before} of {flood.total} CHECKs ({check_seconds * 1e6:.1f} us each unloaded) "
           f"of one user's 32 connections")
    assert answered_before < flood.total * 2 // 3, (
        f"{answered_before} of the flooding user's {flood.total} requests were answered before another user's VERIFY")


def timed(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def read_lines(s, n):
    buf = b""
    while buf.count(b"\n") < n:
        chunk = s.recv(1 << 16)
        assert chunk, "the daemon closed the connection"
        buf += chunk
    return buf
