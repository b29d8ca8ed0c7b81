# SPDX-License-Identifier: Apache-2.0
"""No pattern stays in the daemon's memory. Valid and malformed
requests carry known patterns; afterwards every readable anonymous mapping of the
daemon (its heap, the malloc arenas of its threads, the threads' stacks) is read
through /proc/PID/mem and searched for the patterns as typed, as normalized, and
as the `pattern=` text of the line, encoded and decoded.

Only the daemon's memory is read, so what this test process holds cannot be
found. As a control, the scan must find the pepper, which the daemon keeps in
memory for as long as it runs."""
import re
import time

from harness.common import Daemon, figure, read_line

# A 9-dot pattern typed dot by dot (its normalized form is the same) and one whose
# typed form skips dots (3→1 over 2, 1→7 over 4, 7→9 over 8, 9→5, 5→6).
NINE = "159847263"
SKIPPING, SKIPPING_NORMALIZED = "317956", "321478956"
WRONG = "7415963"


def encoded(digits):
    """Every digit percent-encoded: the line's text differs from the decoded value."""
    return "".join(f"%{ord(c):02X}" for c in digits)


def readable_anonymous_regions(pid):
    """(start, end, name) of the rw mappings backed by no file: [heap], [stack],
    thread stacks and arenas."""
    regions = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            perms, name = parts[1], (parts[5].strip() if len(parts) > 5 else "")
            if not perms.startswith("rw") or (name and name not in ("[heap]", "[stack]")):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            regions.append((start, end, name or "anonymous"))
    return regions


def scan(pid, needles):
    """{needle: [(region name, address)]} for every needle found in the daemon."""
    found = {n: [] for n in needles}
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for start, end, name in readable_anonymous_regions(pid):
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            for n in needles:
                for m in re.finditer(re.escape(n), data):
                    found[n].append((name, hex(start + m.start())))
    return found


def threads(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^Threads:\s+(\d+)", f.read(), re.M).group(1))


def test_no_pattern_stays_in_the_daemons_memory(shared_tmp, make_users):
    (user,) = make_users(1)
    daemon = Daemon(shared_tmp)
    daemon.start()
    try:
        pid = daemon.proc.pid
        settled = threads(pid)
        assert daemon.request(f"ENROLL user={user} pattern={NINE}").startswith("OK")
        exchanges = [
            # Valid requests: right, wrong, percent-encoded, with pass-over.
            (f"VERIFY user={user} pattern={NINE} service=sudo", "OK"),
            (f"VERIFY user={user} pattern={encoded(SKIPPING)} service=sudo", "FAIL remaining=4"),
            (f"VERIFY user={user} pattern={WRONG}", "FAIL remaining=3"),
            (f"VERIFY user={user} pattern={encoded(NINE)}", "OK"),
            (f"ENROLL user={user} pattern={encoded(SKIPPING)} current={NINE}", "OK iterations=600000"),
            (f"ENROLL user={user} pattern={NINE}", "OK iterations=600000"),
            # Malformed: an unknown key, a key in the wrong verb, a bad escape after
            # the digits, a bad user, a duplicate key, a missing field.
            (f"VERIFY user={user} pattern={NINE} colour=blue", "ERROR message=unknown_key"),
            (f"VERIFY user={user} pattern={encoded(SKIPPING)} colour=blue", "ERROR message=unknown_key"),
            (f"STATUS user={user} current={NINE}", "ERROR message=unknown_key"),
            (f"VERIFY user={user} pattern={encoded(SKIPPING)}%G0", "ERROR message=bad_encoding"),
            (f"VERIFY user=-{user} pattern={NINE}", "ERROR message=bad_user"),
            (f"VERIFY user={user} pattern={NINE} pattern={SKIPPING}", "ERROR message=duplicate_key"),
            (f"REMOVE current={encoded(NINE)}", "ERROR message=missing_user"),
            (f"VERIFY user={user} pattern={SKIPPING}9", "INVALID reason=repeated_dot"),
        ]
        got = []
        # One connection for all (the line reader keeps what follows a line), and
        # one connection per request.
        with daemon.connect() as s:
            for line, _ in exchanges:
                s.sendall(line.encode() + b"\n")
                got.append(read_line(s))
        assert daemon.request(f"RESET user={user}").startswith("OK count=")
        for line, _ in exchanges:
            got.append(daemon.request(line))
        # Framing errors, which close the connection: too long, not UTF-8, a NUL.
        for raw in [f"VERIFY user={user} pattern={NINE} service=".encode() + b"x" * 1100,
                    f"VERIFY user={user} pattern={NINE} service=\xff".encode("latin-1"),
                    f"VERIFY user={user} pattern={NINE} service=\x00".encode()]:
            with daemon.connect() as s:
                s.sendall(raw + b"\n")
                assert read_line(s).startswith("ERROR"), raw
        expected = [r for _, r in exchanges]
        assert got[:len(exchanges)] == expected
        # Every connection thread has ended (its buffers are freed) before the scan.
        deadline = time.monotonic() + 30
        while threads(pid) > settled and time.monotonic() < deadline:
            time.sleep(0.05)

        pepper = open(daemon.key_file, "rb").read()
        needles = [NINE, SKIPPING, SKIPPING_NORMALIZED, WRONG,
                   f"pattern={NINE}", f"pattern={SKIPPING}", f"pattern={encoded(SKIPPING)}",
                   f"pattern={encoded(NINE)}", f"current={NINE}", f"current={encoded(NINE)}"]
        found = scan(pid, [n.encode() for n in needles] + [pepper])
        assert found.pop(pepper), "the scan reads the daemon's memory: it finds the pepper"
        hits = {n.decode(): places for n, places in found.items() if places}
        figure("memory", f"{sum(map(len, hits.values()))} copies of patterns in the daemon's memory: {hits}")
        assert not hits, f"patterns found in the daemon's memory: {hits}"
    finally:
        daemon.stop()


# The 8 symmetries of the grid, as the policy's ranking turns a pattern (GridSymmetry).
def _turn(dot, s):
    r, c = (dot - 1) // 3, (dot - 1) % 3
    r, c = [(r, c), (c, 2 - r), (2 - r, 2 - c), (2 - c, r), (r, 2 - c), (2 - r, c), (c, r), (2 - c, 2 - r)][s]
    return r * 3 + c + 1


def as_integers(dots):
    """A pattern's dots as the daemon could hold them: text, and 1-, 4- and
    8-byte little-endian integers (a [UInt8], an Int32 table, a Swift [Int])."""
    return [("text", "".join(map(str, dots)).encode())] + [
        (f"{w}-byte", b"".join(d.to_bytes(w, "little") for d in dots)) for w in (1, 4, 8)]


def orientations(digits):
    dots = [int(d) for d in digits]
    return {tuple(_turn(d, s) for d in dots) for s in range(8)}


# Drawn in the setup window: a CHECK for each of its beginnings of 4 dots or more,
# then ENROLL and VERIFY. Both are accepted by the default policy.
DRAWN, CANCELLED = "2761834", "4381672"


def test_the_policy_leaves_no_pattern_in_memory_after_checks_enroll_and_verify(shared_tmp, make_users):
    """The enroll policy on (its defaults), a pattern drawn as the setup window
    draws it (CHECK for every beginning of 4 dots or more), then set (ENROLL) and
    used (VERIFY, right and wrong); a second one drawn and abandoned (CHECKs
    only). Neither is in the daemon's memory afterwards, in any orientation, as
    text or as integers of 1, 4 or 8 bytes; before they were sent none was
    there either (no table of the daemon's holds them by chance)."""
    (user,) = make_users(1)
    daemon = Daemon(shared_tmp, policy_args=())
    daemon.start()
    try:
        pid = daemon.proc.pid
        settled = threads(pid)
        assert daemon.request("CHECK pattern=14789").startswith("INVALID reason=common"), "the policy is on"
        needles = {(kind, bytes(n)): (digits, o) for digits in (DRAWN, CANCELLED)
                   for o in orientations(digits) for kind, n in as_integers(o)}
        before = scan(pid, [n for _, n in needles])
        assert not any(before.values()), "found before they were ever sent: choose other patterns"

        pepper = open(daemon.key_file, "rb").read()

        def settle_and_scan(label):
            deadline = time.monotonic() + 30
            while threads(pid) > settled and time.monotonic() < deadline:
                time.sleep(0.05)
            found = scan(pid, [n for _, n in needles] + [pepper])
            assert found.pop(pepper), "the scan reads the daemon's memory: it finds the pepper"
            hits = {f"{digits} as {'-'.join(map(str, o))} ({k})": found[n]
                    for (k, n), (digits, o) in needles.items() if found.get(n)}
            figure("memory-policy", f"{label}: {sum(map(len, hits.values()))} copies of drawn patterns "
                   f"in the daemon's memory: {hits}")
            assert not hits, f"{label}: patterns found in the daemon's memory: {hits}"

        def draw(digits):
            for n in range(4, len(digits) + 1):
                reply = daemon.request(f"CHECK pattern={digits[:n]}")
                assert reply == "OK" or reply.startswith("INVALID reason=common"), reply

        # Drawn, then the window closed: CHECKs only.
        draw(CANCELLED)
        settle_and_scan("drawn and cancelled")
        # Drawn and set, then used.
        draw(DRAWN)
        assert daemon.request("CHECK pattern=" + DRAWN) == "OK"
        assert daemon.request(f"ENROLL user={user} pattern={DRAWN}").startswith("OK")
        assert daemon.request(f"VERIFY user={user} pattern={DRAWN} service=sudo") == "OK"
        assert daemon.request(f"VERIFY user={user} pattern={CANCELLED} service=sudo") == "FAIL remaining=4"
        settle_and_scan("drawn, set and used")
    finally:
        daemon.stop()
