#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes Fuzz/corpus/auth/: the seeds of fuzz_auth, one per path of
pam_sm_authenticate worth starting from (the input layout is described at the
top of Fuzz/c/fuzz_auth.c).

    python3 Fuzz/gen-auth-seeds.py      # rewrites the folder

The generated files are committed; run this again after changing the layout.
"""
import pathlib
import struct

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "auth"

SILENT, SET_ITEM_FAILS, DISALLOW_NULL, REPEAT = 1, 2, 4, 8
FIELDS = ("user", "service", "tty", "rhost", "ruser", "authtok", "hostname")


def blob(data: bytes) -> bytes:
    return struct.pack("<H", len(data)) + data


def s(text: str) -> bytes:
    """A logind string answer: success, u8 length, the bytes."""
    raw = text.encode()
    return bytes([1, len(raw)]) + raw


def raw(text: str) -> bytes:
    """A string inside a logind answer (a session of a list): u8 length, bytes."""
    data = text.encode()
    return bytes([len(data)]) + data


NODATA = bytes([0])
NO, YES = bytes([0]), bytes([1])

# logind's answers in logind.c's order: access(seats), sd_pid_get_session,
# sd_session_is_remote, (local: sd_session_is_remote, sd_session_get_service),
# get_seat, get_vt (1 + the number), get_tty, get_class.
def logind_session(session="3", remote=False, service="sudo", seat="seat0", vt=None,
                   tty=None, klass="user"):
    out = YES + s(session) + (YES if remote else NO)
    if not remote:
        out += NO + (s(service) if service else NODATA)
    out += s(seat) if seat else NODATA
    out += bytes([1, vt]) if vt else NODATA
    out += s(tty) if tty else NODATA
    out += s(klass) if klass else NODATA
    return out


LOCAL = logind_session()
NO_LOGIND = NO
# A process of the user's service manager (a GNOME terminal): no session of
# its own, the user's graphical session active, no remote session.
SERVICE_MANAGER = (YES + NODATA + s("app-gnome-terminal.scope") + bytes([1, 0])
                   + bytes([1, 0]) + raw("2") + NO + s("gdm-password")
                   + s("2") + YES
                   + NO + NO + s("gdm-password") + s("seat0") + bytes([1, 2]) + NODATA + s("user"))
# In no session at all (login before its session exists, or a daemon).
NO_SESSION = YES + NODATA + NODATA

STATUS_OK = b"STATUS user=alice enrolled=1 failures=0 remaining=5 locked=0 locked_since=0 retry_after=0 iterations=600000 corrupt=0 recent=\n"
STATUS_LOCKED = b"STATUS user=alice enrolled=1 failures=5 remaining=0 locked=1 locked_since=1700000000 retry_after=540 iterations=600000 corrupt=0 recent=\n"
STATUS_NOT_ENROLLED = b"STATUS user=alice enrolled=0 locked=0\n"


def conn(reply: bytes, tape: bytes = b"", lstat=0, sock=0, peer=0) -> bytes:
    return bytes([lstat, sock, peer]) + blob(tape) + blob(reply)


def answer(text) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return bytes([0]) + blob(raw)


def seed(options=(), items=None, logind=LOCAL, answers=(answer("12369"),), messages=b"",
         conns=(conn(STATUS_OK), conn(b"OK\n")), flags=0, uid=1) -> bytes:
    if items is None:
        items = {"user": "alice", "service": "sudo", "tty": "/dev/pts/0", "ruser": "alice",
                 "hostname": "box"}
    mask = 0
    values = []
    for i, name in enumerate(FIELDS):
        if name in items and items[name] is not None:
            mask |= 1 << i
        values.append((items.get(name) or "").encode())
    return (bytes([flags, uid])
            + blob(b"\0".join(o.encode() for o in options))
            + blob(bytes([mask]) + b"\0".join(values))
            + blob(logind) + blob(b"".join(answers)) + blob(messages)
            + b"".join(conns))


def verify(reply: bytes, **kw) -> bytes:
    return seed(conns=(conn(STATUS_OK), conn(reply)), **kw)


SEEDS = {
    # The daemon's answers to the right and wrong patterns.
    "ok": verify(b"OK\n"),
    "ok-weak": verify(b"OK weak=1\n"),
    "ok-weak-quiet": verify(b"OK weak=1\n", options=("quiet",)),
    "ok-weak-silent": verify(b"OK weak=1\n", flags=SILENT),
    "ok-silent-full-grid": verify(b"OK\n", flags=SILENT, options=("grid=full",)),
    "ok-numpad": verify(b"OK\n", options=("layout=numpad", "grid=compact"), answers=(answer("78963"),)),
    "ok-debug": verify(b"OK\n", options=("debug", "timeout=5", "socket=/run/patternlock/socket")),
    "ok-root-caller": verify(b"OK\n", uid=0),
    "fail-remaining": verify(b"FAIL remaining=4\n"),
    "fail-last": verify(b"FAIL remaining=0 retry_after=90\n"),
    "locked-at-verify": verify(b"LOCKED retry_after=540\n"),
    "locked-for-hours": verify(b"LOCKED retry_after=7200\n"),
    "fail-last-locked-for-days": verify(b"FAIL remaining=0 retry_after=200000\n"),
    "serial-console": verify(b"OK\n", logind=NO_LOGIND, options=("allow_remote",),
                             items={"user": "alice", "service": "login", "tty": "ttyS0"}),
    "invalid-too-short": verify(b"INVALID reason=too_short\n"),
    "invalid-empty": verify(b"INVALID reason=empty\n"),
    "invalid-other": verify(b"INVALID reason=new%20reason\n"),
    "not-enrolled-at-verify": verify(b"NOT_ENROLLED\n"),
    "denied-at-verify": verify(b"DENIED\n", options=("debug",)),
    "busy": verify(b"BUSY\n", options=("debug",)),
    "error": verify(b"ERROR message=store_failed\n", options=("debug",)),
    "garbage-okay": verify(b"OKAY\n"),
    "garbage-ok-space": verify(b"OK \n"),
    "garbage-binary": verify(b"\x00\xffOK\r\n"),
    "reply-without-lf": verify(b"OK"),
    "reply-too-long": verify(b"ERROR message=" + b"x" * 4200 + b"\n"),
    "reply-after-lf": verify(b"OK\nFAIL remaining=1\n"),
    # What STATUS says before anything is asked.
    "status-locked": seed(conns=(conn(STATUS_LOCKED),)),
    "status-not-enrolled": seed(conns=(conn(STATUS_NOT_ENROLLED),)),
    "status-not-enrolled-verb": seed(conns=(conn(b"NOT_ENROLLED\n"),), options=("debug",)),
    "status-locked-verb": seed(conns=(conn(b"LOCKED retry_after=60\n"),)),
    "status-denied": seed(conns=(conn(b"DENIED\n"),), options=("debug",)),
    "status-garbage": seed(conns=(conn(b"OK\n"),)),
    # While the pattern cannot be used, one_prompt reads the field itself as
    # "Password: "; a client that repeats its one answer (swaylock, phosh).
    "one-prompt-status-locked-pattern": seed(options=("one_prompt",), conns=(conn(STATUS_LOCKED),), flags=REPEAT),
    "one-prompt-status-locked-password": seed(options=("one_prompt",), conns=(conn(STATUS_LOCKED),),
                                              answers=(answer("hunter2"),), flags=REPEAT),
    "one-prompt-status-busy-pattern": seed(options=("one_prompt", "debug"), conns=(conn(b"BUSY\n"),)),
    "one-prompt-status-unreachable": seed(options=("one_prompt",), conns=(conn(b"", lstat=1),)),
    "one-prompt-verify-busy-repeat": verify(b"BUSY\n", options=("one_prompt",), flags=REPEAT),
    "one-prompt-verify-closed": verify(b"", options=("one_prompt",)),
    "digit-passwords-locked": seed(options=("one_prompt", "digit_passwords=phosh,sudo"),
                                   conns=(conn(STATUS_LOCKED),), flags=REPEAT),
    "digit-passwords-verify-error": verify(b"ERROR message=internal\n", options=("digit_passwords=sudo",)),
    "user-prompted-repeat": seed(items={"service": "sudo", "tty": "/dev/pts/0", "hostname": "box"},
                                 answers=(answer("12369"),), flags=REPEAT),
    # What the user types.
    "entry-empty": seed(answers=(answer(""),)),
    "entry-overlong-dots": seed(answers=(answer("123456789" * 8),)),
    "entry-overlong-letters": seed(answers=(answer("correct horse battery staple " * 3),)),
    "entry-not-a-pattern": verify(b"INVALID reason=not_a_dot\n", answers=(answer("hunter2"),)),
    "entry-null-response": seed(answers=(bytes([1]),)),
    "entry-no-response-array": seed(answers=(bytes([2]),)),
    "entry-conv-error": seed(answers=(bytes([3]),)),
    "entry-conv-error-filled": seed(answers=(bytes([4]) + blob(b"12369"),)),
    "entry-conv-again": seed(answers=(bytes([5]),)),
    "one-prompt-password": seed(options=("one_prompt",), answers=(answer("hunter2"),)),
    "one-prompt-password-set-fails": seed(options=("one_prompt", "debug"), answers=(answer("hunter2"),),
                                          flags=SET_ITEM_FAILS),
    "one-prompt-pattern": verify(b"OK\n", options=("one_prompt",)),
    "one-prompt-wrong-pattern": verify(b"FAIL remaining=2\n", options=("one_prompt",)),
    "one-prompt-token-set": seed(options=("one_prompt", "debug"),
                                 items={"user": "alice", "service": "sudo", "tty": "/dev/pts/0",
                                        "authtok": "hunter2", "hostname": "box"}),
    "messages-answered": verify(b"FAIL remaining=3\n", options=("grid=full",),
                                items={"user": "alice", "service": "login", "tty": "/dev/tty1",
                                       "hostname": "box"},
                                messages=bytes([1, 4, 3, 2])),
    # Who is asked.
    "user-prompted": seed(items={"service": "sudo", "tty": "/dev/pts/0", "hostname": "box"},
                          answers=(answer("alice"), answer("12369"))),
    "user-prompt-again": seed(items={"service": "sudo", "hostname": "box"}, answers=(bytes([5]),)),
    "user-invalid": seed(items={"user": "bad user", "service": "sudo", "hostname": "box"},
                         options=("debug",)),
    "user-encoded": verify(b"OK\n", items={"user": "host$", "service": "sudo", "tty": "pts/1",
                                           "rhost": "box", "ruser": "ädmin", "hostname": "box"}),
    "no-logind": seed(logind=NO_LOGIND),
    "no-logind-listed": verify(b"OK\n", logind=NO_LOGIND, options=("services=sudo,su",)),
    "no-logind-not-listed": seed(logind=NO_LOGIND, options=("services=su",)),
    "no-logind-new-login": seed(logind=NO_LOGIND, options=("services=login", "password_at_login"),
                                items={"user": "alice", "service": "login", "tty": "tty1"}),
    "remote-session": seed(logind=logind_session(remote=True, seat=None, tty="pts/3")),
    "sshd-session": seed(logind=logind_session(service="sshd")),
    "session-no-terminal": seed(logind=logind_session(seat=None)),
    "session-vt": verify(b"OK\n", logind=logind_session(seat=None, vt=2, klass=None)),
    "session-tty": verify(b"OK\n", logind=logind_session(seat=None, tty="/dev/pts/4")),
    "greeter-password-at-login": seed(logind=logind_session(klass="greeter"), options=("password_at_login",)),
    "service-manager": verify(b"OK\n", logind=SERVICE_MANAGER),
    "login-in-no-session": verify(b"OK\n", logind=NO_SESSION,
                                  items={"user": "alice", "service": "login", "tty": "/dev/tty1",
                                         "hostname": "box"}),
    "daemon-in-no-session": seed(logind=NO_SESSION, items={"user": "alice", "service": "saslauthd",
                                                           "hostname": "box"}),
    "rhost-remote": seed(items={"user": "alice", "service": "sudo", "rhost": "example.org",
                                "hostname": "box"}),
    "rhost-own-name": verify(b"OK\n", items={"user": "alice", "service": "sudo", "rhost": "Box",
                                             "hostname": "box"}),
    "tty-ssh": seed(items={"user": "alice", "service": "sshd", "tty": "ssh", "hostname": "box"}),
    "allow-remote": verify(b"OK\n", logind=NO_LOGIND, options=("allow_remote", "nogrid"),
                           items={"user": "alice", "service": "dovecot", "rhost": "example.org"}),
    "allow-remote-greeter-password-at-login": seed(logind=logind_session(klass="greeter"),
                                                   options=("allow_remote", "password_at_login")),
    "allow-remote-login-password-at-login": seed(logind=NO_SESSION, options=("allow_remote", "password_at_login"),
                                                 items={"user": "alice", "service": "login", "tty": "tty1"}),
    "debug-grid-full": verify(b"OK\n", options=("debug", "grid=full", "layout=numpad"), answers=(answer("78963"),)),
    "debug-grid-compact": verify(b"OK\n", options=("debug", "grid=compact")),
    "debug-grid-none": verify(b"OK\n", options=("debug", "grid=none", "one_prompt")),
    "no-hostname": verify(b"OK\n", items={"user": "alice", "service": "sudo", "tty": ":0"}),
    "options-bad": verify(b"OK\n", options=("timeout=0", "socket=relative", "layout=qwerty",
                                            "grid=huge", "services=", "bogus", "")),
    # The socket and the exchange.
    "socket-missing": seed(conns=(conn(b"", lstat=1),), options=("debug",)),
    "socket-not-a-socket": seed(conns=(conn(b"", lstat=2),)),
    "socket-not-root": seed(conns=(conn(b"", lstat=3),)),
    "socket-symlink": seed(conns=(conn(b"", lstat=5),)),
    "socket-fails": seed(conns=(conn(b"", sock=7),)),
    "peer-not-root": seed(conns=(conn(STATUS_OK, peer=1),)),
    "peer-unknown": seed(conns=(conn(STATUS_OK, peer=2),)),
    "connect-in-progress": seed(conns=(conn(STATUS_OK, tape=bytes([1, 0, 0])), conn(b"OK\n", tape=bytes([1, 0, 0])))),
    "connect-in-progress-refused": seed(conns=(conn(STATUS_OK, tape=bytes([1, 0, 0])),
                                                  conn(b"OK\n", tape=bytes([1, 0, 1])))),
    "connect-backlog": seed(conns=(conn(STATUS_OK, tape=bytes([2, 2, 3, 0])), conn(b"OK\n"))),
    "connect-refused": seed(conns=(conn(b"", tape=bytes([4])),)),
    "send-partial": seed(conns=(conn(STATUS_OK, tape=bytes([0, 4 + 8 * 9, 5, 0, 0])),
                                conn(b"OK\n", tape=bytes([0, 4, 4, 6, 0])))),
    "send-broken-pipe": seed(conns=(conn(STATUS_OK, tape=bytes([0, 7])),)),
    "recv-one-byte-at-a-time": seed(conns=(conn(STATUS_OK, tape=bytes([0, 0]) + bytes([0, 1]) * 140),
                                           conn(b"OK weak=1\n", tape=bytes([0, 0]) + bytes([6, 1, 0, 2, 0, 3]) + bytes([0, 1]) * 12))),
    "recv-reset": seed(conns=(conn(STATUS_OK, tape=bytes([0, 0, 0, 4])),)),
    "recv-early-eof": seed(conns=(conn(STATUS_OK), conn(b"OK\n", tape=bytes([0, 0, 0, 5])))),
    "status-timeout": seed(conns=(conn(STATUS_OK, tape=bytes([0, 0, 5])),), options=("debug", "timeout=1")),
    "verify-timeout": seed(conns=(conn(STATUS_OK), conn(b"OK\n", tape=bytes([0, 0, 5]))),
                           options=("timeout=300",)),
    "poll-error": seed(conns=(conn(STATUS_OK, tape=bytes([0, 0, 7])),)),
}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    for name, data in SEEDS.items():
        (OUT / name).write_bytes(data)
    print(f"{len(SEEDS)} seeds in {OUT}")


if __name__ == "__main__":
    main()
