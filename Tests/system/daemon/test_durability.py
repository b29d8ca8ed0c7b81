# SPDX-License-Identifier: Apache-2.0
"""The file store's writes are durable, seen from the kernel's side: the real
daemon runs under strace, and each write of a user's record, for an ENROLL and
for a counted (wrong-pattern) VERIFY, must be

    openat(".USER.tmp.*", O_CREAT|O_EXCL)  ->  write  ->  fsync of that fd
    ->  rename over the record  ->  openat(state dir, O_DIRECTORY)  ->  fsync of it

all done before the reply is sent. Without the file's fsync a crash after the
rename can leave an empty or partial record; without the directory's fsync the
rename itself can be lost, and with it a counted failure (a restart would then
hand the attacker the attempt back). For the VERIFY the hash comes after the
count is durable: the time between the directory's fsync and the reply holds
the whole hash the daemon logs (hash_ms)."""
import os
import re
import shutil
import signal
import subprocess

import pytest

from harness.common import Daemon, skip_or_fail

SYSCALLS = "openat,open,creat,write,sendto,fsync,fdatasync,rename,renameat,renameat2,close"
RIGHT = "14789"
WRONG = "1235"


class TracedDaemon(Daemon):
    """conftest's daemon started under `strace -f` (every thread), each call with
    its thread, wall-clock start, duration, and each descriptor with its path."""

    def __init__(self, base):
        super().__init__(base)
        self.trace = base / "strace.log"

    def args(self):
        return ["strace", "-f", "-qq", "-ttt", "-T", "-y", "-s", "256", "-e", f"trace={SYSCALLS}",
                "-o", str(self.trace), "--"] + super().args()

    def daemon_pid(self):
        """The traced daemon: strace's child process."""
        children = f"/proc/{self.proc.pid}/task/{self.proc.pid}/children"
        with open(children) as f:
            pids = f.read().split()
        assert len(pids) == 1, pids
        return int(pids[0])

    def stop(self):
        """SIGTERM to the daemon itself; strace ends when it does and has then
        written every line."""
        if self.proc and self.proc.poll() is None:
            try:
                os.kill(self.daemon_pid(), signal.SIGTERM)
            except (OSError, AssertionError):
                self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


class Call:
    def __init__(self, tid, start, text, duration):
        self.tid, self.start, self.text, self.duration = tid, start, text, duration

    @property
    def end(self):
        return self.start + self.duration

    def __repr__(self):
        return f"{self.tid} {self.start:.6f} {self.text}"


LINE = re.compile(r"^(\d+) +(\d+\.\d+) (.*)$")
DURATION = re.compile(r" <(\d+\.\d+)>$")


def parse_trace(path):
    """strace -f -ttt -T output as Calls in the order they started, an
    interrupted call (<unfinished ...> ... <... resumed>) joined into one."""
    calls, pending = [], {}
    for raw in path.read_text(errors="replace").splitlines():
        m = LINE.match(raw)
        if not m:
            continue
        tid, start, rest = int(m.group(1)), float(m.group(2)), m.group(3)
        if rest.startswith(("---", "+++")):
            continue
        if rest.endswith(" <unfinished ...>"):
            call = Call(tid, start, rest[: -len(" <unfinished ...>")], 0.0)
            pending[tid] = call
            calls.append(call)
            continue
        resumed = re.match(r"^<\.\.\. \w+ resumed>(.*)$", rest)
        if resumed:
            call = pending.pop(tid, None)
            if call is None:
                continue
            call.text += resumed.group(1)
            rest = call.text
        else:
            call = Call(tid, start, rest, 0.0)
            calls.append(call)
        d = DURATION.search(rest)
        if d:
            call.duration = float(d.group(1))
            call.text = rest[: d.start()]
    return calls


# The calls, as strace -y prints them (a descriptor is N<path>).
FD = r"(\d+)<([^>]*)>"
DIRFD = r"(?:AT_FDCWD|\d+)(?:<([^>]*)>)?"
OPEN = re.compile(r'^(?:openat\(' + DIRFD + r', |open\()"([^"]*)", ([A-Z0-9_|]+)(?:, \d+)?\) = (-?\d+)(?:<([^>]*)>)?')
WRITE = re.compile(r'^write\(' + FD + r', ".*?"(?:\.\.\.)?, (\d+)\) = (-?\d+)')
FSYNC = re.compile(r'^(?:fsync|fdatasync)\(' + FD + r'\) = (-?\d+)')
CLOSE = re.compile(r'^close\(' + FD + r'\) = ')
RENAME = re.compile(r'^(?:rename\(|renameat2?\(' + DIRFD + r', )"([^"]*)", (?:' + DIRFD + r', )?"([^"]*)"(?:, [A-Z_|0]+)?\) = (-?\d+)')
REPLY = re.compile(r'^(?:sendto|write)\(' + FD + r', "(.*?)"')


def absolute(directory, path):
    return path if path.startswith("/") or not directory else f"{directory}/{path}"


def reply_call(calls, start_of_reply):
    """The call that sent the reply line starting with `start_of_reply`."""
    for c in calls:
        m = REPLY.match(c.text)
        if m and m.group(2).startswith("socket:") and m.group(3).startswith(start_of_reply):
            return c
    raise AssertionError(f"no reply {start_of_reply!r} on a socket in the trace")


def record_writes(calls, state_dir, user):
    """Each write of `user`'s record: for every O_CREAT open of its temp file,
    the checked sequence up to the directory's fsync, as a dict of the Calls.
    An AssertionError names the step that is missing, with the thread's calls."""
    record = f"{state_dir}/{user}"
    temp_prefix = f"{state_dir}/.{user}.tmp."
    found = []
    for i, c in enumerate(calls):
        m = OPEN.match(c.text)
        if not m or not absolute(m.group(1), m.group(2)).startswith(temp_prefix):
            continue
        temp = absolute(m.group(1), m.group(2))
        flags = set(m.group(3).split("|"))
        thread = [x for x in calls[i:] if x.tid == c.tid]
        shown = "\n  ".join(map(repr, thread[:12]))
        where = f"the write of {record} through {temp}:\n  {shown}"
        assert {"O_CREAT", "O_EXCL"} <= flags, f"the temp file is not created with O_CREAT|O_EXCL in {where}"
        fd = int(m.group(4))
        assert fd >= 0 and m.group(5) == temp, f"the temp file did not open in {where}"
        steps = {"open": c}
        written = 0
        for x in thread[1:]:
            if (w := WRITE.match(x.text)) and int(w.group(1)) == fd and w.group(2) == temp:
                assert int(w.group(4)) >= 0, f"a write failed in {where}"
                written += int(w.group(4))
                steps.setdefault("write", x)
            elif (s := FSYNC.match(x.text)) and int(s.group(1)) == fd and s.group(2) == temp:
                assert int(s.group(3)) == 0, f"the temp file's fsync failed in {where}"
                steps["fsync"] = x
                break
            elif (cl := CLOSE.match(x.text)) and int(cl.group(1)) == fd:
                break
            elif RENAME.match(x.text):
                break
        assert "write" in steps and written > 0, f"nothing was written to the temp file in {where}"
        assert "fsync" in steps, f"no fsync of the temp file's descriptor {fd} before it was closed or renamed in {where}"
        after = thread[thread.index(steps["fsync"]) + 1:]
        for j, x in enumerate(after):
            w = WRITE.match(x.text)
            assert not (w and int(w.group(1)) == fd and w.group(2) == temp), \
                f"a write to the temp file after its fsync in {where}"
            if (r := RENAME.match(x.text)):
                source, target = absolute(r.group(1), r.group(2)), absolute(r.group(3), r.group(4))
                if source == temp:
                    assert target == record and int(r.group(5)) == 0, f"the temp file is not renamed over the record in {where}"
                    steps["rename"] = x
                    after = after[j + 1:]
                    break
        assert "rename" in steps, f"no rename of the temp file over the record after its fsync in {where}"
        dir_fd = None
        for x in after:
            o = OPEN.match(x.text)
            if o and absolute(o.group(1), o.group(2)).startswith(temp_prefix):
                break  # the next write of the record began
            if o and dir_fd is None and absolute(o.group(1), o.group(2)) == state_dir \
                    and "O_DIRECTORY" in o.group(3).split("|"):
                assert int(o.group(4)) >= 0, f"the state directory did not open in {where}"
                dir_fd = int(o.group(4))
                steps["open_dir"] = x
                continue
            if dir_fd is None:
                continue
            if (s := FSYNC.match(x.text)) and int(s.group(1)) == dir_fd:
                assert s.group(2) == state_dir and int(s.group(3)) == 0, f"the directory's fsync failed in {where}"
                steps["fsync_dir"] = x
                break
            if (cl := CLOSE.match(x.text)) and int(cl.group(1)) == dir_fd:
                break
        assert "open_dir" in steps, f"the state directory {state_dir} is not opened O_DIRECTORY after the rename in {where}"
        assert "fsync_dir" in steps, f"no fsync of the state directory's descriptor {dir_fd} after the rename in {where}"
        found.append(steps)
    return found


@pytest.fixture
def traced_daemon(shared_tmp):
    if shutil.which("strace") is None:
        skip_or_fail("strace is not installed (apt-get install strace)")
    d = TracedDaemon(shared_tmp)
    d.start(timeout=60)
    yield d
    d.stop()


def test_enroll_and_a_counted_verify_write_the_record_durably_before_they_answer(traced_daemon, make_users):
    d = traced_daemon
    user, = make_users(1)
    d.enroll(user, RIGHT)
    reply = d.request(f"VERIFY user={user} pattern={WRONG} service=sudo tty=pts%2F0 rhost= ruser=")
    assert reply == "FAIL remaining=4", reply
    d.stop()
    log = d.read_log()
    state_dir = os.path.realpath(d.state_dir)
    calls = parse_trace(d.trace)
    assert calls, "strace recorded nothing"

    enrolled = reply_call(calls, "OK")
    failed = reply_call(calls, "FAIL remaining=4")
    writes = record_writes(calls, state_dir, user)
    enroll_writes = [w for w in writes if w["fsync_dir"].start < enrolled.start]
    verify_writes = [w for w in writes if enrolled.start < w["open"].start < failed.start]
    assert len(enroll_writes) == 1, f"the ENROLL wrote the record {len(enroll_writes)} times"
    assert len(verify_writes) >= 1, "the wrong pattern was not counted in the record before the reply"
    assert len(enroll_writes) + len(verify_writes) == len(writes), "a write of the record after the VERIFY's reply"

    # What was written: the enrolled credential, then the same record with one failure.
    def data(steps):
        return re.search(r'"(.*?)"', steps["write"].text).group(1)
    assert f"user={user}" in data(enroll_writes[0]) and "failures=0" in data(enroll_writes[0])
    counted = verify_writes[-1]
    assert "failures=1" in data(counted), data(counted)

    # Durable before the reply: the directory's fsync had returned when the reply went out.
    assert enroll_writes[0]["fsync_dir"].end <= enrolled.start
    assert counted["fsync_dir"].end <= failed.start

    # Counted before the hash: the daemon's own hash time fits between the
    # count's directory fsync and the reply.
    m = re.search(rf"verify user={user} .*hash_ms=(\d+(?:\.\d+)?)", log)
    assert m, "the daemon's log does not say how long the VERIFY's hash took (hash_ms=): " + log
    hash_seconds = float(m.group(1)) / 1000
    gap = failed.start - counted["fsync_dir"].end
    assert gap >= 0.9 * hash_seconds, (
        f"only {gap * 1000:.1f} ms between the count's fsync and the reply, and the hash took "
        f"{hash_seconds * 1000:.1f} ms: the hash was not computed after the count was durable")

    # And the record on disk says so.
    text = open(f"{state_dir}/{user}").read()
    assert "failures=1" in text


def test_the_trace_parser_joins_interrupted_calls(tmp_path):
    """strace -f splits a call another thread interrupts in two lines."""
    trace = tmp_path / "t"
    trace.write_text(
        '10 1.000000 openat(AT_FDCWD</w>, "/s/.u.tmp.1", O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0600 <unfinished ...>\n'
        '11 1.000100 sendto(7<socket:[1]>, "PONG\\n", 5, MSG_NOSIGNAL, NULL, 0) = 5 <0.000010>\n'
        '10 1.000200 <... openat resumed>) = 8</s/.u.tmp.1> <0.000300>\n'
        '10 1.001000 +++ exited with 0 +++\n')
    calls = parse_trace(trace)
    assert [c.tid for c in calls] == [10, 11]
    assert OPEN.match(calls[0].text).group(5) == "/s/.u.tmp.1"
    assert abs(calls[0].end - 1.0003) < 1e-9
