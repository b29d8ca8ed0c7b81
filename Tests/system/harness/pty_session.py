#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Drives a program on a new pseudo-terminal, as a person at a console would:
waits for what it prints, types answers, and prints the transcript.

Reads a JSON object on stdin:
  {"argv": ["su", "-", "alice", "-c", "id -un"], "timeout": 60,
   "steps": [["expect", "Pattern \\\\(Enter to skip\\\\): "], ["secret", "1235\\n"], ["expect", "alice"],
             ["send", "exit\\n"], ["eof"]]}
"expect" waits for a regular expression in the output not yet matched; "secret"
waits until the program has turned echo off (as a password prompt does) and
types the text; "send" types it at once; "eof" waits for the program to end;
"probe" runs a command about the program at that moment (["probe", ["cat",
"/proc/{pid}/environ"]], say, while it waits at a prompt; {pid} is the
program's pid) and reports its exit status after the transcript as
"[pty_session] probe 0".
Prints the transcript (what the terminal showed; typed secrets are not echoed)
and exits 0 when every step was met, 1 (naming the step) when one was not.
Stdlib only: it runs inside the booted test container with the system python."""
import json
import os
import pty
import re
import select
import subprocess
import sys
import termios
import time


def main():
    spec = json.load(sys.stdin)
    timeout = spec.get("timeout", 60)
    pid, fd = pty.fork()
    if pid == 0:
        env = dict(os.environ, TERM="dumb")
        env.update(spec.get("env", {}))
        try:
            os.execvpe(spec["argv"][0], spec["argv"], env)
        finally:
            os._exit(127)
    out = bytearray()
    seen = 0  # output before this offset was matched already
    failure = None
    probes = []  # the "probe" steps' exit statuses, reported after the transcript

    def pump(wait):
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            # EIO: no slave side is open. util-linux's login (Debian 13) hangs up
            # its terminal (vhangup) and opens it again before it prompts: while
            # the program runs, that is a pause, not the end.
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                time.sleep(0.05)
                return True
            chunk = b""
        out.extend(chunk)
        return bool(chunk)

    for step in spec["steps"]:
        kind, arg = step[0], (step[1] if len(step) > 1 else None)
        deadline = time.monotonic() + timeout
        if kind == "expect":
            rx = re.compile(arg.encode())
            while True:
                m = rx.search(out, seen)
                if m:
                    seen = m.end()
                    break
                if time.monotonic() > deadline or not pump(0.2):
                    failure = f"did not see {arg!r}"
                    break
        elif kind == "secret":
            while termios.tcgetattr(fd)[3] & termios.ECHO:
                if time.monotonic() > deadline:
                    failure = "echo was never turned off for the secret"
                    break
                pump(0.05)
            if failure is None:
                os.write(fd, arg.encode())
        elif kind == "send":
            os.write(fd, arg.encode())
        elif kind == "probe":
            argv = [a.replace("{pid}", str(pid)) for a in arg]
            probes.append(subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode)
        elif kind == "eof":
            while pump(0.2):
                if time.monotonic() > deadline:
                    failure = "the program did not end"
                    break
        if failure:
            failure = f"step {step!r}: {failure}"
            break
    if failure:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    # Drain what is left once the program has ended: only what is already there,
    # since a background process it left behind may hold the terminal open.
    try:
        while select.select([fd], [], [], 0.1)[0] and pump(0):
            pass
    except OSError:
        pass
    sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
    for status in probes:
        sys.stdout.write(f"\n[pty_session] probe {status}")
    if failure:
        sys.stdout.write(f"\n[pty_session] {failure}\n")
        return 1
    sys.stdout.write(f"\n[pty_session] exit status {os.waitstatus_to_exitcode(status)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
