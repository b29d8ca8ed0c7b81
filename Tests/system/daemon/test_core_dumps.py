# SPDX-License-Identifier: Apache-2.0
"""No core of a process that holds a pattern: every client command that reads a
pattern from the terminal, and the daemon, make themselves non-dumpable
(PR_SET_DUMPABLE 0) first, so that the kernel writes no core of them, to a file
or to a core_pattern pipe (systemd-coredump, apport).

Linux shows no process's dumpable flag in /proc; what it does show is its
consequence: a process of the same uid, without capabilities, may read a
dumpable process's /proc/PID/environ and not a non-dumpable one's (ptrace's
read check). So each command runs as a user on a real pseudo-terminal, and
while it waits at its prompt that user tries to read it. A dumpable process of
the same user is read first, so the probe is known to tell the two apart."""
import json
import os
import pwd
import shutil
import subprocess
import time

import pytest

from harness.common import DAEMON, ROOT, SYSTEM_PYTHON, Daemon

PATTERN = "1397"
PTY = ROOT / "Tests" / "system" / "harness" / "pty_session.py"


def as_user(user):
    pw = pwd.getpwnam(user)
    return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]


def reads_memory_of(user, pid):
    """The probe: `user`, without capabilities, reads /proc/PID/environ. Whether the
    kernel lets it is whether the process may be dumped (or traced) by its user."""
    return as_user(user) + ["cat", f"/proc/{pid}/environ"]


def the_probe_reads_a_dumpable_process(user):
    """The control: the probe reads a process of `user` that did nothing about it."""
    sleeper = subprocess.Popen(as_user(user) + ["sleep", "30"])
    try:
        time.sleep(0.2)
        return subprocess.run(reads_memory_of(user, sleeper.pid), capture_output=True).returncode == 0
    finally:
        sleeper.kill()
        sleeper.wait()


# (command, its arguments, the prompt it reads the pattern at, whether the user is enrolled first)
COMMANDS = {
    "enroll, a first pattern": (["enroll"], "New pattern: ", False),
    "enroll, a change": (["enroll"], "Current pattern: ", True),
    "verify": (["verify"], "Pattern: ", True),
    "remove": (["remove"], "Current pattern: ", True),
    "policy --check": (["policy", "--check"], "Pattern: ", False),
}


@pytest.mark.parametrize("case", list(COMMANDS))
def test_a_command_waiting_for_a_pattern_cannot_be_dumped(daemon, make_users, case):
    args, prompt, enrolled = COMMANDS[case]
    (user,) = make_users(1)
    if enrolled:
        daemon.enroll(user, PATTERN)
    assert the_probe_reads_a_dumpable_process(user)
    spec = {"argv": as_user(user) + [str(DAEMON)] + args, "timeout": 60,
            "env": {"PATTERNLOCK_SOCKET": daemon.socket},
            # At the prompt: probe, then Ctrl-C, which the command answers by exiting.
            "steps": [["expect", prompt], ["probe", reads_memory_of(user, "{pid}")], ["send", "\x03"], ["eof"]]}
    r = subprocess.run([SYSTEM_PYTHON, str(PTY)], input=json.dumps(spec), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    probes = [line for line in r.stdout.splitlines() if line.startswith("[pty_session] probe ")]
    assert len(probes) == 1, r.stdout
    assert probes[0] != "[pty_session] probe 0", f"{case}: its own user could read it at the prompt (dumpable)\n{r.stdout}"


def test_the_daemon_cannot_be_dumped(shared_tmp, make_users):
    """However it is started: nothing in systemd's unit makes it non-dumpable, and a
    daemon run by hand is whatever its shell made it. Run here as a user, so that
    user can probe it."""
    (user,) = make_users(1)
    pw = pwd.getpwnam(user)
    base = shared_tmp / "as-user"
    base.mkdir()

    class DaemonAsUser(Daemon):
        def args(self):
            return as_user(user) + super().args()

    d = DaemonAsUser(base)
    for path in (base, base / "run", base / "etc"):
        os.chown(path, pw.pw_uid, pw.pw_gid)
    d.start()
    try:
        assert the_probe_reads_a_dumpable_process(user)
        r = subprocess.run(reads_memory_of(user, d.proc.pid), capture_output=True, text=True)
        assert r.returncode != 0, "the daemon's own user could read it: it is dumpable"
    finally:
        d.stop()
        shutil.rmtree(base, ignore_errors=True)
