#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench-screen: patternlock-screen beside swaylock and gtklock, in the
same headless sway 1.10 at 1920x1080, in the booted Debian 13 container the
screen tests use (Tests/system/harness/trixie.py), inside a real local login
session, in one run. swaylock is the smallest locker (a solid colour, no
text); gtklock (Debian 13's 4.0, GTK 3 through gtk-session-lock on
ext-session-lock-v1) is the one a user picks who wants a UI drawn:

- exec to locked: how long `LOCKER -f` (gtklock: `gtklock -d`) takes to
  return. swaylock and patternlock-screen fork once the compositor said
  `locked`; gtklock -d forks twice, and its first process exits 0 when the
  last one signals (SIGUSR1) from gtk-session-lock's `locked`, 1 when no
  signal came within 1 s;
- memory: resident size and private memory (Private_Clean + Private_Dirty of
  /proc/PID/smaps_rollup) of the locker and of its PAM child, and where the
  resident pages are (shared libraries, the program's own file, buffers,
  heap). swaylock and patternlock-screen start their PAM child before any
  input and keep it waiting; gtklock forks one only when a password is
  submitted, so it has none while idle. Beside them: swaylock with its
  indicator shown while idle (as patternlock-screen always shows its grid),
  and the floors of the two languages: a C program and a Swift program
  (static runtime, as the locker is built) that do nothing but wait, so the
  part of the figure any Swift program pays is measured in the same run. The
  issue's targets are printed beside patternlock-screen's (locker private
  memory under 4 MB, PAM child under 2 MB); nothing checks them. Each figure
  is the median of MEMORY_RUNS lockers started one after the other, each read
  once 1.5 s after its screen was drawn, with the lowest and highest: the
  pages of a shared-memory (wl_shm) buffer count as the locker's private
  memory until the compositor has read them, and a frame replaced before sway
  drew it leaves its buffer unread, so the figure says how much of it is
  buffers. For patternlock-screen, its private memory by kind too (of the
  median locker, from /proc/PID/smaps): the buffers, the code and the
  relocated data of its program and of the libraries, the font files, heap,
  anonymous mappings and stack. The container's files written by apt-get live
  on a tmpfs, so the program's pages count as dirty there;
- idle: wake-ups (voluntary + involuntary context switches of every thread,
  /proc/PID/task/*/status) of the locker and its PAM child over IDLE seconds
  with nothing happening (the first of those lockers, after its reading);
- keyboard shown (patternlock-screen only): memory and idle wake-ups as
  above, with the on-screen keyboard shown: the button "Use password" is
  clicked with the virtual pointer. The lockers measured run as a user runs
  them, without --debug (whose description of every key is formatting a user
  never pays for): where the button is was learned first from one locker run
  with --debug, and OCR reads the keyboard's keys on the screen before each
  reading;
- memory over ATTEMPTS attempts (patternlock-screen only): one locker, a wrong
  pattern dragged ATTEMPTS times with the virtual pointer, each one a real
  attempt (the PAM child answers it, the module sends VERIFY, the daemon
  counts a failure, the screen flashes red and starts the next PAM child).
  The daemon locks a user after 5 wrong patterns, so `patternlockd reset`
  (root, outside the locker) clears the count after every 4; the count is
  read first with `patternlockd status`, so every attempt is known to have
  reached the daemon. Private memory of the locker, and of the PAM child
  waiting for the next attempt (a new process each attempt), after attempt 1,
  CHECKPOINT and ATTEMPTS, and the growth from 1 to ATTEMPTS (the issue's
  target: none) and from CHECKPOINT on (what a leak per attempt would show,
  without the first attempts' one-off allocations). One run, not a median;
- drawing (patternlock-screen only: swaylock draws nothing for a pointer):
  from a wl_pointer.motion the locker received to its next wl_surface.commit,
  from the timestamps WAYLAND_DEBUG=client prints, over a long drag (p50, p99).
  WAYLAND_DEBUG's own printing is inside the figure: it is an upper bound;
- key tap to commit (patternlock-screen only): the same, from the
  wl_pointer.button (pressed) the locker received to its next commit, over
  TAPS clicks on character keys of the on-screen keyboard, each to a frame
  with one more mask dot (p50, p99): after every FIELD_RUN characters as many
  Backspaces, not counted, empty the field, so it stays short;
- finger lifted to the daemon's request (patternlock-screen only): the right
  pattern dragged UNLOCKS times, the locker and its waiting PAM child traced
  from this machine by `strace -f -ttt -T` (the product is not changed), from
  the return of the locker's recvmsg on the Wayland socket that brought the
  button release (the last one before the answer, after the release was sent:
  the release is dispatched, and answered, right after it) to (a) its send of
  the answer to the PAM child (the locker's share) and (b) the PAM child's
  send of the VERIFY line to the daemon's socket (the module's request). strace
  stops every traced call twice: the figures are upper bounds. `-s 1` prints
  one byte of each buffer, so no dot of the pattern reaches the trace.

A locker that cannot run there (gtklock failing to lock) gets a figure saying
why, with what it printed, instead of a number. Figures are medians: exec to
locked over ROUNDS runs, memory over MEMORY_RUNS lockers, drawing, key taps
and the request (p50) over their events; wake-ups and the attempts are one
locker each. Nothing here passes or fails."""
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "system"))

from harness import trixie  # noqa: E402
from harness.screen_desk import Desk, build_vpointer  # noqa: E402
from harness.screen_image import find_grid  # noqa: E402
from harness.screen_keyboard import described_button, described_keys  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
IDLE = float(os.environ.get("BENCH_IDLE_SECONDS", "10"))
SIZE = (1920, 1080)
MOTIONS = int(os.environ.get("BENCH_MOTIONS", "400"))
DAEMON_SOCKET = "/run/patternlock/socket"
UNLOCKS = int(os.environ.get("BENCH_UNLOCKS", "8"))
PASSWORD = "Bench-Scr33n-pass"
PATTERN = "46183"
# Each locker's command, and the flag that makes it return once locked.
LOCKERS = {
    "swaylock": ("swaylock -c 336699", "-f"),
    "patternlock-screen": ("patternlock-screen -c 336699", "-f"),
    # as a user starts it: its own look (GTK's default theme, a clock), no
    # config file; -f would be --follow-focus, -d daemonizes once locked
    "gtklock": ("gtklock", "-d"),
}
# Lockers that may fail to lock here: a figure says why instead of a number.
MAY_FAIL = {"gtklock"}
# The targets, printed beside patternlock-screen's figures (not checked).
TARGETS = "target: locker private under 4 MB, PAM child under 2 MB"
ATTEMPTS = int(os.environ.get("BENCH_ATTEMPTS", "100"))
WRONG_PATTERN = "12369"
# Wrong patterns the daemon takes before it locks the user (LockoutPolicy's default, 5): reset after this many.
BEFORE_RESET = 4
# Memory is read after attempt 1, this one and the last: a leak grows from here on, a warm-up does not.
CHECKPOINT = 10
# Lockers each memory figure is the median of (one reading each).
MEMORY_RUNS = int(os.environ.get("BENCH_MEMORY_RUNS", "5"))
# Taps on character keys of the on-screen keyboard; after every FIELD_RUN as many
# Backspaces empty the field, so each tap adds one mask dot to a short field.
TAPS = int(os.environ.get("BENCH_TAPS", "200"))
FIELD_RUN = 8
# What the locker receives, as WAYLAND_DEBUG=client prints it.
MOTION = r"wl_pointer#\d+\.motion\("
PRESS = r"wl_pointer#\d+\.button\(\d+, \d+, 272, 1\)"  # BTN_LEFT pressed
DESKTOP = (0x00, 0xAA, 0x00)  # the colour screen_session.sh gives sway's desktop
BACKGROUND = (0x33, 0x66, 0x99)  # the lockers' colour (-c 336699)
# Memory only: swaylock drawing at idle too (its ring, as the grid is always drawn).
MEMORY_PEERS = {"swaylock --indicator-idle-visible": ("swaylock -c 336699 --indicator-idle-visible", "-f")}
# A program that only waits, in each language: the floor of its resident size.
FLOORS = {
    "C": ("floor.c", "#include <unistd.h>\nint main(void) { pause(); return 0; }\n"),
    "Swift": ("floor.swift", "import Glibc\npause()\n"),
}


def figure(name, text):
    line = f"FIGURE {name}: {text}"
    print(line, flush=True)
    path = os.environ.get("PATTERNLOCK_FIGURES")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def percentiles(values):
    """(p50, max) of values."""
    values = sorted(values)
    return values[len(values) // 2], values[-1]


def p50_p99(values):
    """(p50, p99) of values."""
    values = sorted(values)
    return values[len(values) // 2], values[min(len(values) - 1, int(len(values) * 0.99))]


def to_commit(log, event, counted=lambda i: True):
    """Milliseconds from events the locker received (lines of its
    WAYLAND_DEBUG=client log matching the regex `event`) to its next
    wl_surface.commit, by the timestamps WAYLAND_DEBUG prints: one figure a
    commit, from the first event since the last one (events drawn in one frame
    count once). counted(i) says whether the i-th event matched (from 0) may
    start a figure. Returns the figures and how many events matched."""
    latencies, pending, seen = [], None, 0
    for line in log.splitlines():
        m = re.match(r"\[\s*(\d+\.\d+)\]", line)
        if not m:
            continue
        if " -> " not in line and re.search(event, line):
            if pending is None and counted(seen):
                pending = float(m.group(1))
            seen += 1
        elif pending is not None and re.search(r"-> wl_surface#\d+\.commit\(", line):
            latencies.append(float(m.group(1)) - pending)
            pending = None
    return latencies, seen


# One line of `strace -f -ttt -T -o FILE`: pid, time, then a call, an
# unfinished call or the rest of one.
STRACE_LINE = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$")


def syscalls(trace):
    """The calls of an strace -f -ttt -T log as (pid, name, entered, returned,
    text, result), unfinished calls joined with their rest. A call returned
    when its entry and its duration (-T) say, which can be later than the line
    strace printed next: strace stops the process at the entry and the exit,
    and the call runs in between."""
    calls, open_calls = [], {}
    for line in trace.splitlines():
        m = STRACE_LINE.match(line)
        if not m:
            continue
        pid, at = int(m.group(1)), float(m.group(2))
        if m.group(3):  # <... name resumed>
            entered, text = open_calls.pop(pid, (at, ""))
            name, text = m.group(3), text + m.group(5)
        else:
            name, entered, text = m.group(4), at, m.group(5)
            if text.endswith("<unfinished ...>"):
                open_calls[pid] = (at, text.removesuffix("<unfinished ...>"))
                continue
        result = re.search(r"\)\s+=\s+(-?\d+)", text)
        duration = re.search(r"<(\d+\.\d+)>\s*$", text)
        returned = entered + float(duration.group(1)) if duration else at
        calls.append((pid, name, entered, returned, text, int(result.group(1)) if result else None))
    return calls


def host_pid(leader, pid):
    """The pid on this machine of the process `pid` of the container whose
    init is `leader` (strace runs here, outside the container)."""
    namespace = os.readlink(f"/proc/{leader}/ns/pid")
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "ns" / "pid") != namespace:
                continue
            m = re.search(r"^NSpid:\s+(.+)$", (entry / "status").read_text(), re.M)
        except OSError:
            continue
        if m and int(m.group(1).split()[-1]) == pid:
            return int(entry.name)
    raise AssertionError(f"no process of the container has the pid {pid}")


def is_buffer(path):
    """Whether a mapping is a shared-memory buffer (a wl_shm pool's file)."""
    return path.startswith("/memfd:") or path.startswith("/dev/shm")


def resident_parts(maps, program):
    """Resident KiB of the mappings `maps` by kind: shared libraries, the
    program's own file, shared-memory buffers (memfd), heap and anonymous."""
    parts = {"libraries": 0, "program": 0, "buffers": 0, "heap and anonymous": 0, "other": 0}
    for where, _, kb in maps:
        if is_buffer(where):
            kind = "buffers"
        elif where.endswith("/" + program):
            kind = "program"
        elif ".so" in where:
            kind = "libraries"
        elif where in ("", "[heap]", "[stack]"):
            kind = "heap and anonymous"
        else:
            kind = "other"
        parts[kind] += kb.get("Rss", 0)
    return parts


def private_parts(maps, program):
    """Private KiB (Private_Clean + Private_Dirty) of the mappings `maps` by
    kind, finer than resident_parts: the program's code and its data (what the
    loader relocated, its variables), the libraries' likewise, the font files
    and fontconfig's caches, heap, anonymous mappings, stack."""
    parts = dict.fromkeys(["shm buffers", "program code", "program data", "libraries code", "libraries data",
                           "fonts", "heap", "anonymous", "stack", "other"], 0)
    for where, permissions, kb in maps:
        code = "x" in permissions
        if is_buffer(where):
            kind = "shm buffers"
        elif where.endswith("/" + program):
            kind = "program code" if code else "program data"
        elif ".so" in where:
            kind = "libraries code" if code else "libraries data"
        elif "/fonts/" in where or "/fontconfig/" in where:
            kind = "fonts"
        elif where in ("[heap]", "[stack]"):
            kind = where.strip("[]")
        elif where == "":
            kind = "anonymous"
        else:
            kind = "other"
        parts[kind] += kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0)
    return parts


class Reading:
    """One locker's memory, read once: its (resident, private) KiB, each PAM
    child's, and its mappings."""

    def __init__(self, own, children, maps):
        self.own, self.children, self.maps = own, children, maps

    @property
    def buffers(self):
        """Private KiB of its shared-memory buffers."""
        return sum(kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0) for where, _, kb in self.maps
                   if is_buffer(where))


def median_reading(readings):
    """The reading whose locker private memory is the median (the lower middle one)."""
    return sorted(readings, key=lambda r: r.own[1])[(len(readings) - 1) // 2]


class LockerFailed(Exception):
    """The locker did not lock (or did not unlock): why, with what it printed."""


def kib(status, field):
    m = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
    return int(m.group(1)) if m else 0


class Bench:
    def __init__(self, system, desk):
        self.system, self.desk = system, desk

    def sh(self, script):
        return self.system.ok(script)

    def children(self, pid):
        out = self.system.run(f"cat /proc/{pid}/task/*/children 2>/dev/null").stdout
        return [int(p) for p in out.split()]

    def memory(self, pid):
        status = self.sh(f"cat /proc/{pid}/status")
        rollup = self.sh(f"cat /proc/{pid}/smaps_rollup")
        return kib(status, "VmRSS"), kib(rollup, "Private_Clean") + kib(rollup, "Private_Dirty")

    def mappings(self, pid):
        """The mappings of `pid` (/proc/PID/smaps): [(path, permissions, {field: KiB})]."""
        maps = []
        for line in self.sh(f"cat /proc/{pid}/smaps").splitlines():
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                fields = line.split()
                maps.append((fields[5] if len(fields) > 5 else "", fields[1], {}))
            elif m := re.match(r"^(\w+):\s+(\d+) kB", line):
                maps[-1][2][m.group(1)] = int(m.group(2))
        return maps

    def floor(self, language):
        """(Resident, private) KiB of a program in `language` that only waits, and its resident parts."""
        binary = BUILD / f"floor-{language.lower()}"
        shutil.copy(binary, pathlib.Path(self.system.merged) / "usr/local/bin" / binary.name)
        self.sh(f"setsid /usr/local/bin/{binary.name} </dev/null >/dev/null 2>&1 & sleep 0.5")
        pid = self.sh(f"pgrep -x {binary.name}").strip()
        memory = self.memory(pid)
        parts = resident_parts(self.mappings(pid), binary.name)
        self.sh(f"kill {pid}")
        return memory, parts

    def parked_pointer(self):
        """The desk's virtual pointer, moved to a corner before a locker starts:
        sway draws its arrow into the frame (patternlock-screen keeps the
        compositor's cursor), and an arrow left on a dot by the last drag makes
        it a blob find_grid does not take for a dot: the second unlock of
        release_to_request found no grid."""
        pointer = self.desk.pointer()
        pointer.move(SIZE[0] - 20, SIZE[1] - 20)
        return pointer

    def switches(self, pids):
        out = self.system.run(" ; ".join(f"cat /proc/{p}/task/*/status" for p in pids)).stdout
        return sum(int(n) for n in re.findall(r"^(?:non)?voluntary_ctxt_switches:\s+(\d+)", out, re.M))

    def unlock(self, n):
        # swaylock takes the password from the keyboard; so does patternlock-screen
        self.desk.type_secret(PASSWORD)
        if n is not None:
            assert self.desk.ended(n) == 0, self.desk.out(n)

    def exec_to_locked(self, locker):
        """Milliseconds from exec to `locker -f` (gtklock: -d) returning (it forks once locked)."""
        command, daemonize = LOCKERS[locker]
        n = self.desk.start(f"t0=$(date +%s%N); {command} {daemonize}; rc=$?; t1=$(date +%s%N); "
                            "echo elapsed_ns=$((t1 - t0)) rc=$rc; exit $rc")
        rc = self.desk.ended(n)
        name = locker[:15]
        if rc != 0:
            self.sh(f"pkill -u {self.desk.user} -x {name}; true")
            raise LockerFailed(f"`{command} {daemonize}` exited {rc} without saying it locked: "
                               + printed(self.desk.out(n)))
        ms = int(re.search(r"elapsed_ns=(\d+)", self.desk.out(n)).group(1)) / 1e6
        self.desk.wait(f"pgrep -u {self.desk.user} -x {name} >/dev/null", f"{locker} running")
        self.unlock(None)
        try:
            self.desk.wait(f"! pgrep -u {self.desk.user} -x {name} >/dev/null", f"{locker} gone after the unlock")
        except AssertionError:
            self.sh(f"pkill -u {self.desk.user} -x {name}; true")
            raise LockerFailed(f"{locker} locked but the password typed with wtype did not unlock it")
        return ms

    def desktop_showing(self):
        """Whether sway's desktop shows (no lock surface yet): one corner, grabbed small."""
        return self.desk.screen("HEADLESS-1", region=(0, 0, 8, 8)).pixel(4, 4) == DESKTOP

    def show_keyboard(self, n, pointer):
        """Clicks "Use password" with the virtual pointer on the locker of command
        n (run with --debug, which says where its button and keys are) and waits
        for its on-screen keyboard: the keys of its letters page, [(labels, (x, y))]."""
        def said(kind):
            return re.findall(rf"^patternlock-screen: ({kind} .*)$", self.desk.out(n), re.M)

        label, centre = described_button(self.desk.poll(lambda: said("button"), "the locker's button")[-1])
        assert label == "Use password", f"the locker's button says {label!r}, not Use password"
        described = len(said("keyboard"))
        pointer.move(*centre)
        pointer.press()
        pointer.release()
        lines = self.desk.poll(lambda: len(said("keyboard")) >= described + 2 and said("keyboard"),
                               "the on-screen keyboard after a click on Use password")
        return dict(described_keys(line) for line in lines[-2:])["letters"]

    def lock(self, command, keyboard=False):
        """Starts `command` in the session; returns its number once it shows a
        lock screen and has settled (with `keyboard`, its on-screen keyboard
        shown after a click on "Use password")."""
        button = self.use_password_button(command) if keyboard else None
        pointer = self.parked_pointer() if keyboard else None  # before the locker: see desk.pointer
        n = self.desk.start("exec " + command)
        time.sleep(1.5)  # locked, drawn, the PAM child waiting for an answer
        if self.desktop_showing():
            # Not drawn yet (a slow start): wait for it, then as long again to settle.
            try:
                self.desk.poll(lambda: self.desk.rc(n) is not None or not self.desktop_showing(),
                               f"{command} to lock the screen")
            except AssertionError:
                raise LockerFailed(f"`{command}` showed no lock screen within 30 s: " + printed(self.desk.out(n)))
            if self.desk.rc(n) is not None:
                raise LockerFailed(f"`{command}` exited {self.desk.rc(n)} before locking: "
                                   + printed(self.desk.out(n)))
            time.sleep(1.5)
        if keyboard:
            pointer.move(*button)
            pointer.press()
            pointer.release()
            time.sleep(1.5)
            # The keyboard's space bar covers the middle of the bottom edge;
            # the grid's screen is the background colour there.
            corner = self.desk.screen(region=(SIZE[0] // 2 - 4, SIZE[1] - 44, 8, 8))
            if corner.pixel(4, 4) == BACKGROUND:
                self.desk.save(self.desk.screen("HEADLESS-1"), "keyboard-not-shown")
                raise LockerFailed(f"`{command}` showed no on-screen keyboard after a click on Use password "
                                   "(build/screen-shots/bench-keyboard-not-shown.png)")
        return n

    def use_password_button(self, command):
        """Where the locker's "Use password" button is (its centre), learned
        once from a locker run with --debug, which says so, and unlocked
        again; the lockers measured then run without --debug."""
        if getattr(self, "_button", None) is None:
            n = self.desk.start("exec " + command + " --debug")
            line = self.desk.poll(
                lambda: re.findall(r"^patternlock-screen: (button .*)$", self.desk.out(n), re.M),
                "the locker's button")[-1]
            label, self._button = described_button(line)
            assert label == "Use password", f"the locker's button says {label!r}, not Use password"
            time.sleep(1.5)
            self.unlock(n)
        return self._button

    def idle_and_memory(self, command, keyboard=False):
        """MEMORY_RUNS lockers started one after the other, each read once
        when settled (a Reading each), and the wake-ups of the first over IDLE
        seconds after that."""
        wakeups, readings = None, []
        for run in range(MEMORY_RUNS):
            n = self.lock(command, keyboard)
            pid = self.desk.pid(n)
            pam = self.children(pid)
            readings.append(Reading(self.memory(pid), [self.memory(p) for p in pam], self.mappings(pid)))
            if run == 0:
                before = self.switches([pid, *pam])
                time.sleep(IDLE)
                wakeups = self.switches([pid, *pam]) - before
            try:
                self.unlock(n)
            except AssertionError:
                self.sh(f"kill {pid}; true")
                raise LockerFailed(f"`{command}` locked but the password typed with wtype did not unlock it: "
                                   + printed(self.desk.out(n)))
        return wakeups, readings

    def attempts(self):
        """Memory of patternlock-screen (locker, and the PAM child waiting for
        the next attempt) after wrong pattern 1, CHECKPOINT and ATTEMPTS:
        {attempt: ((rss, private), (rss, private), the locker's private KiB by
        kind)}, and the seconds the attempts took."""
        user = self.desk.user
        self.sh(f"patternlockd reset {user} >/dev/null")  # whatever the earlier steps left counted
        pointer = self.parked_pointer()
        n = self.desk.start("exec patternlock-screen -c 336699")
        pid = self.desk.pid(n)
        grid = self.desk.poll(lambda: find_grid(self.desk.screen("HEADLESS-1")), "the grid on the screen")
        child = self.desk.poll(lambda: self.children(pid), "the PAM child")[0]
        points = [grid[int(d)] for d in WRONG_PATTERN]
        measured, paused = {}, 0.0
        started = time.monotonic()
        for i in range(1, ATTEMPTS + 1):
            pointer.drag(points)
            # Attempt i is over when its child has been reaped and the next one
            # started (after the daemon's answer and the result).
            previous = child
            child = self.desk.poll(
                lambda: (c := self.children(pid)) and len(c) == 1 and c[0] != previous and c[0],
                f"the PAM child after wrong pattern {i}: {self.desk.out(n)[-1000:]}", every=0.02)
            if i % BEFORE_RESET == 0 or i == ATTEMPTS:
                status = self.sh(f"patternlockd status {user}")
                counted = re.search(r"(\d+) failures?", status)
                expected = (i - 1) % BEFORE_RESET + 1
                assert counted and int(counted.group(1)) == expected, (
                    f"after wrong pattern {i} the daemon should count {expected} failures: {status}")
                self.sh(f"patternlockd reset {user} >/dev/null")
            if i in (1, CHECKPOINT, ATTEMPTS):
                pause = time.monotonic()
                time.sleep(1)  # the red flash over, the new child waiting for its prompt's answer
                measured[i] = (self.memory(pid), self.memory(child),
                               private_parts(self.mappings(pid), "patternlock-screen"))
                paused += time.monotonic() - pause
        took = time.monotonic() - started - paused
        self.desk.type_secret(PASSWORD)
        assert self.desk.ended(n) == 0, self.desk.out(n)[-2000:]
        return measured, took

    def release_to_request(self):
        """One unlock with the right pattern, traced: seconds from the recvmsg
        that brought the button release to the locker's answer to the PAM child
        and to the PAM child's VERIFY to the daemon."""
        pointer = self.parked_pointer()
        n = self.desk.start("exec patternlock-screen -c 336699")
        pid = self.desk.pid(n)
        # Locked and drawn, the PAM child started and waiting for the answer.
        grid = self.desk.poll(lambda: find_grid(self.desk.screen("HEADLESS-1")), "the grid on the screen")
        self.desk.poll(lambda: self.children(pid), "the PAM child")
        time.sleep(1)
        locker = host_pid(self.system.leader, pid)
        pam = host_pid(self.system.leader, self.children(pid)[0])
        with tempfile.TemporaryDirectory() as tmp:
            log = pathlib.Path(tmp) / "strace.log"
            strace = subprocess.Popen(
                ["strace", "-f", "-ttt", "-T", "-s", "1", "-e", "trace=recvmsg,sendto,connect", "-o", str(log),
                 "-p", str(locker), "-p", str(pam)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                attached = []
                while len(attached) < 2:
                    line = strace.stderr.readline()
                    assert line, f"strace could not attach to {locker} and {pam}: {''.join(attached)}"
                    if "attached" in line:
                        attached.append(line)
                points = [grid[int(d)] for d in PATTERN]
                pointer.move(*points[0])
                pointer.press()
                for p in points[1:]:
                    pointer.move(*p, steps=4)
                released = time.time()
                pointer.release()
                assert self.desk.ended(n) == 0, f"the right pattern did not unlock: {self.desk.out(n)}"
                strace.wait(timeout=30)  # both traced processes ended
            finally:
                if strace.poll() is None:
                    strace.kill()
                    strace.wait()
            calls = syscalls(log.read_text())
        answer = next((c for c in calls if c[0] == locker and c[1] == "sendto" and c[4].split(", ")[1] == '"A"...'),
                      None)
        assert answer is not None, "the trace shows no answer sent to the PAM child"
        reads = [c for c in calls if c[0] == locker and c[1] == "recvmsg" and (c[5] or 0) > 0 and c[3] <= answer[2]]
        assert reads and reads[-1][3] >= released, (
            "the trace shows no read of the release before the answer; the locker's calls (ms after the release "
            "was sent, result): " + ", ".join(f"{c[1]} {(c[3] - released) * 1000:.3f} {c[5]}"
                                              for c in calls if c[0] == locker and c[2] <= answer[2] + 0.01))
        lifted = reads[-1][3]
        verify = next((c for c in calls if c[0] != locker and c[1] == "sendto" and c[2] > answer[2]
                       and c[4].split(", ")[1] == '"V"...'), None)
        assert verify is not None, "the trace shows no VERIFY sent to the daemon"
        assert any(c[0] == verify[0] and c[1] == "connect" and c[2] > answer[2] and DAEMON_SOCKET in c[4]
                   for c in calls), f"the VERIFY went elsewhere than {DAEMON_SOCKET}"
        return answer[2] - lifted, verify[2] - lifted

    def drawing(self):
        """Motion to commit latencies (ms) over a long drag, from WAYLAND_DEBUG."""
        pointer = self.parked_pointer()  # before the locker: it asks for a wl_pointer when the seat has one
        n = self.desk.start("WAYLAND_DEBUG=client exec patternlock-screen -c 336699")
        self.desk.poll(lambda: "ext_session_lock_v1" in self.desk.out(n) and "locked()" in self.desk.out(n),
                       "patternlock-screen locked")
        time.sleep(1)
        image = self.desk.screen("HEADLESS-1")
        grid = find_grid(image)
        assert grid is not None, "no grid on the screen"
        # Back and forth over the grid without reaching a dot twice: the first
        # dot, then many small steps around it and towards the next.
        pointer.move(*grid[1])
        pointer.press()
        (x1, y1), (x2, y2) = grid[1], grid[5]
        # One motion every 25 ms, more than a frame of the headless output's
        # 60 Hz apart: each motion's frame is its own, not one of a burst the
        # locker rightly draws once.
        for i in range(MOTIONS):
            t = (i % 40) / 40 * 0.45
            pointer.send(f"move {round(x1 + (x2 - x1) * t)} {round(y1 + (y2 - y1) * t + (i % 2))}")
            pointer.sync()
            time.sleep(0.025)
        time.sleep(0.5)
        pointer.release()
        self.desk.type_secret(PASSWORD)  # nothing counted: the drag never made a pattern
        assert self.desk.ended(n) == 0, self.desk.out(n)[-2000:]
        log = self.desk.out(n)
        (ROOT / "build" / "bench-screen-wayland-debug.log").write_text(log)
        return to_commit(log, MOTION)[0]

    def typing(self):
        """Key tap to commit latencies (ms): TAPS clicks on character keys of
        the on-screen keyboard, each to the frame with one more mask dot, from
        WAYLAND_DEBUG (the Backspaces between them are not counted)."""
        pointer = self.parked_pointer()
        n = self.desk.start("WAYLAND_DEBUG=client exec patternlock-screen --debug -c 336699")
        self.desk.poll(lambda: "ext_session_lock_v1" in self.desk.out(n) and "locked()" in self.desk.out(n),
                       "patternlock-screen locked")
        time.sleep(1)
        keys = self.show_keyboard(n, pointer)
        characters = [centre for labels, centre in keys if len(labels) > 1 and labels[0] != " "]
        backspace = next(centre for labels, centre in keys if labels == ["⌫"])
        counted = [False]  # the click on Use password

        def tap(centre, character):
            # Press and release 25 ms apart, and 25 ms before the next key:
            # each tap's frame is its own, as in drawing.
            pointer.move(*centre)
            pointer.press()
            time.sleep(0.025)
            pointer.release()
            time.sleep(0.025)
            counted.append(character)

        for i in range(TAPS):
            tap(characters[i % len(characters)], True)
            if (i + 1) % FIELD_RUN == 0 or i + 1 == TAPS:
                for _ in range(i % FIELD_RUN + 1):
                    tap(backspace, False)
        time.sleep(0.5)
        self.desk.type_secret(PASSWORD)  # the field is empty again: the password alone unlocks
        assert self.desk.ended(n) == 0, self.desk.out(n)[-2000:]
        log = self.desk.out(n)
        (ROOT / "build" / "bench-screen-keyboard-wayland-debug.log").write_text(log)
        latencies, presses = to_commit(log, PRESS, lambda i: i < len(counted) and counted[i])
        assert presses == len(counted), f"the locker received {presses} button presses, {len(counted)} were sent"
        return latencies


BUILD = ROOT / "build" / "bench"


def build_floors():
    """The floor programs of FLOORS, built as the products are: the Swift one
    with the static runtime (as patternlock-screen), the C one with cc -O2."""
    BUILD.mkdir(parents=True, exist_ok=True)
    swiftc = shutil.which("swiftc") or "/opt/swift/usr/bin/swiftc"
    for language, (name, text) in FLOORS.items():
        source = BUILD / name
        source.write_text(text)
        out = BUILD / f"floor-{language.lower()}"
        command = ([swiftc, "-O", "-static-stdlib", str(source), "-o", str(out)] if language == "Swift"
                   else ["cc", "-O2", str(source), "-o", str(out)])
        subprocess.run(command, check=True, stdin=subprocess.DEVNULL)


def printed(output, lines=6):
    """The last lines a locker printed, on one line."""
    tail = [line.strip() for line in output.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(tail) or "(it printed nothing)"


def mb(kb):
    return f"{kb / 1024:.1f} MB"


def built_debs():
    """The packages `make deb` left in build/ ({package name: path}); `make
    bench-screen` makes them first."""
    debs = {p.name.split("_")[0]: p for p in sorted((ROOT / "build").glob("*.deb"))}
    if "patternlock-screen" not in debs:
        sys.exit("build/ holds no patternlock-screen package, so there is nothing to compare with swaylock; "
                 "run make bench-screen, which makes the packages first (make deb).")
    return debs


def memory_figures(locker, name, command, wakeups, readings):
    """The memory figures of `locker` (`name`: it, and how it was shown) from
    its MEMORY_RUNS readings, and its idle wake-ups."""
    reading = median_reading(readings)
    (rss, private), child = reading.own, reading.children
    privates = [r.own[1] for r in readings]
    spread = (f" (median of {len(readings)} lockers, {mb(min(privates))} to {mb(max(privates))}; "
              f"shm buffers {mb(reading.buffers)} of it)" if len(readings) > 1 else "")
    children = [c for r in readings for c in r.children]
    if children:
        rss_child, private_child = sorted(children, key=lambda c: c[1])[(len(children) - 1) // 2]
        pam = f"resident {mb(rss_child)}, private {mb(private_child)}" + (
            f" (median of {len(children)})" if len(children) > 1 else "")
    else:
        pam = "none while idle (it forks one per submitted password)"
    target = f" ({TARGETS})" if locker == "patternlock-screen" else ""
    figure(f"{name} memory at {SIZE[0]}x{SIZE[1]}",
           f"locker resident {mb(rss)}, private {mb(private)}{spread}; PAM child {pam}{target}")
    program = command.split()[0]
    figure(f"{name} resident pages",
           ", ".join(f"{k} {mb(v)}" for k, v in resident_parts(reading.maps, program).items()))
    if locker == "patternlock-screen":
        figure(f"{name} private memory by kind", ", ".join(
            f"{k} {mb(v)}" for k, v in private_parts(reading.maps, program).items() if v))
    if locker in LOCKERS:
        figure(f"{name} idle wake-ups over {IDLE:.0f} s",
               f"{wakeups} ({'locker and PAM child' if child else 'locker'}, all threads)")


def main():
    # "drawing", "request" or "attempts": that figure alone; "gtklock": gtklock's figures alone;
    # "keyboard": patternlock-screen's with its on-screen keyboard shown
    only = os.environ.get("BENCH_SCREEN_ONLY", "")
    if only not in ("", "drawing", "request", "attempts", "gtklock", "keyboard"):
        sys.exit(f"BENCH_SCREEN_ONLY={only} names no figure; give drawing, request, attempts, gtklock, keyboard, "
                 "or nothing for all of them.")
    if os.geteuid() != 0:
        sys.exit("make bench-screen needs root: it boots a Debian 13 container (systemd-nspawn) and traces the "
                 "locker with strace; run it as root.")
    for tool, package in (("mmdebstrap", "mmdebstrap"), ("systemd-nspawn", "systemd-container"), ("strace", "strace")):
        if shutil.which(tool) is None:
            sys.exit(f"make bench-screen needs {tool}, which is not installed; install it with: "
                     f"apt-get install {package}")
    debs = built_debs()
    build_vpointer()
    build_floors()
    with trixie.trixie_system(debs.values()) as system:
        user = system.add_user("plbench", PASSWORD)
        system.ok(f"patternlockd enroll {user}", input=f"{PATTERN}\n{PATTERN}\n")
        with Desk(system, user, PASSWORD, size=SIZE, shot_prefix="bench") as desk:
            bench = Bench(system, desk)
            lockers = {"": LOCKERS, "gtklock": {"gtklock": LOCKERS["gtklock"]}}.get(only, {})
            for locker, (_, daemonize) in lockers.items():
                what = f"{locker} exec to locked ({daemonize} returns), {SIZE[0]}x{SIZE[1]}"
                try:
                    times = [bench.exec_to_locked(locker) for _ in range(ROUNDS)]
                except LockerFailed as e:
                    if locker not in MAY_FAIL:
                        raise
                    figure(what, f"not measured: {e}")
                    continue
                figure(what, f"median {statistics.median(times):.1f} ms (min {min(times):.1f}, "
                             f"max {max(times):.1f}, {ROUNDS} runs)")
            memory = [(locker, command, False) for locker, (command, _) in
                      [*lockers.items(), *(MEMORY_PEERS.items() if not only else [])]]
            if only in ("", "keyboard"):
                memory.append(("patternlock-screen", LOCKERS["patternlock-screen"][0], True))
            for locker, command, keyboard in memory:
                name = locker + (" with the keyboard shown" if keyboard else "")
                try:
                    wakeups, readings = bench.idle_and_memory(command, keyboard)
                except LockerFailed as e:
                    if locker not in MAY_FAIL:
                        raise
                    figure(f"{name} memory and idle wake-ups", f"not measured: {e}")
                    continue
                memory_figures(locker, name, command, wakeups, readings)
            if only in ("", "attempts"):
                measured, took = bench.attempts()
                for who, which, target in (("locker", 0, "under 4 MB"), ("PAM child", 1, "under 2 MB")):
                    first, last = measured[1][which], measured[ATTEMPTS][which]
                    since = (f", {last[1] - measured[CHECKPOINT][which][1]:+d} kB since attempt {CHECKPOINT}"
                             if CHECKPOINT in measured and CHECKPOINT < ATTEMPTS else "")
                    figure(f"patternlock-screen {who} private memory over {ATTEMPTS} wrong patterns",
                           "after attempt " + ", ".join(f"{i} {measured[i][which][1]} kB" for i in sorted(measured))
                           + f" (resident {first[0]} kB, then {last[0]} kB); growth over {ATTEMPTS} attempts: "
                           f"{last[1] - first[1]:+d} kB{since} (target: {target}, no growth)")
                # What a leak would grow (heap, anonymous) apart from what moves with
                # the pages each new PAM child happens to share (program code).
                figure(f"patternlock-screen locker private memory by kind over {ATTEMPTS} wrong patterns",
                       "; ".join(f"{kind} " + ", ".join(f"{measured[i][2][kind]}" for i in sorted(measured)) + " kB"
                                 for kind in ("heap", "anonymous", "program code", "program data", "libraries data"))
                       + f" (after attempt {', '.join(str(i) for i in sorted(measured))})")
                figure(f"patternlock-screen {ATTEMPTS} wrong patterns dragged",
                       f"{took:.1f} s, {took / ATTEMPTS * 1000:.0f} ms an attempt (the drag, the daemon's "
                       f"answer, the next PAM child; a reset after every {BEFORE_RESET})")
            if only in ("attempts", "gtklock"):
                return
            for language in ([] if only else FLOORS):
                (rss, private), parts = bench.floor(language)
                figure(f"{language} program that only waits (the language's floor)",
                       f"resident {mb(rss)}, private {mb(private)}: "
                       + ", ".join(f"{k} {mb(v)}" for k, v in parts.items()))
            if only in ("", "request"):
                shares, requests = [], []
                for _ in range(UNLOCKS):
                    share, request = bench.release_to_request()
                    shares.append(share * 1000)
                    requests.append(request * 1000)
                for what, ms in (("the locker's answer to the PAM child", shares),
                                 ("the module's VERIFY request", requests)):
                    figure(f"patternlock-screen finger lifted to {what} (strace: an upper bound)",
                           "p50 {:.2f} ms, max {:.2f} ms over {} unlocks".format(*percentiles(ms), UNLOCKS))
            if only in ("", "drawing"):
                latencies = bench.drawing()
                if latencies:
                    figure(f"patternlock-screen motion to commit at {SIZE[0]}x{SIZE[1]} (WAYLAND_DEBUG timestamps)",
                           "p50 {:.2f} ms, p99 {:.2f} ms over {} motion events".format(*p50_p99(latencies),
                                                                                        len(latencies)))
                else:
                    figure("patternlock-screen motion to commit", "no commit followed a motion event")
            if only in ("", "keyboard"):
                latencies = bench.typing()
                if latencies:
                    figure(f"patternlock-screen key tap to commit at {SIZE[0]}x{SIZE[1]} (WAYLAND_DEBUG timestamps)",
                           "p50 {:.2f} ms, p99 {:.2f} ms over {} taps on character keys (target: p99 under 4 ms)"
                           .format(*p50_p99(latencies), len(latencies)))
                else:
                    figure("patternlock-screen key tap to commit", "no commit followed a tap on a key")


if __name__ == "__main__":
    main()
