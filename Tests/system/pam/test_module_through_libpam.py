# SPDX-License-Identifier: Apache-2.0
"""pam_patternlock.so loaded by the real libpam (through pam_harness and a
private confdir), against the real daemon and against fake ones."""
import os
import pathlib
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest

from harness.pam_support import (PROMPT, GRID, LOCKED, NOW_LOCKED, PAM_AUTH_ERR, PAM_AUTHINFO_UNAVAIL,
                         PAM_SUCCESS, PAM_USER_UNKNOWN, RIGHT, WRONG, by_verb, failures,
                         FakeDaemon, UNUSED_UNAVAILABLE, on, status_line, wrong)



# ---- against the real daemon ---------------------------------------------

def test_right_pattern_passes(pam, live, enrolled):
    r = pam.authenticate(enrolled, RIGHT, args=[on(live)])
    assert r.code == PAM_SUCCESS, r
    assert r.events == [("TEXT_INFO", GRID.format(user=enrolled)),
                        ("PROMPT_ECHO_OFF", PROMPT)]


def test_wrong_pattern_fails_with_attempts_left(pam, live, enrolled):
    r = pam.authenticate(enrolled, WRONG, args=[on(live)])
    assert r.code == PAM_AUTH_ERR, r
    assert r.errors == ["Wrong pattern \u2014 4 attempts left."]
    assert failures(live, enrolled) == 1


def test_right_pattern_after_a_wrong_one_clears_the_count(pam, live, enrolled):
    assert pam.authenticate(enrolled, WRONG, args=[on(live)]).code == PAM_AUTH_ERR
    assert pam.authenticate(enrolled, RIGHT, args=[on(live)]).code == PAM_SUCCESS
    assert failures(live, enrolled) == 0


def test_five_wrong_patterns_lock_the_user(pam, live, enrolled):
    for attempt in range(1, 6):
        r = pam.authenticate(enrolled, WRONG, args=[on(live)])
        assert r.code == PAM_AUTH_ERR, r
        expected = wrong(5 - attempt) if attempt < 5 else NOW_LOCKED.format(user=enrolled)
        assert r.errors == [expected]
    # Locked: told so, not asked, and nothing was entered to refuse: not
    # PAM_AUTH_ERR (which the profile's auth_err=die makes the end of the
    # attempt), so the stack goes on to the password.
    r = pam.authenticate(enrolled, RIGHT, args=[on(live)])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.prompts == [] and r.infos == []
    assert r.errors == [LOCKED.format(user=enrolled)]


def test_user_without_pattern_gets_no_prompt(pam, live, user):
    r = pam.authenticate(user, RIGHT, args=[on(live)])
    assert r.code == PAM_USER_UNKNOWN, r
    assert r.events == []


@pytest.mark.parametrize("entry, message", [
    ("12", "Connect at least 4 dots. This entry was not counted."),
    ("12a5", "Type the dots as the digits 1 to 9. This entry was not counted."),
    ("12321", "Each dot can be used only once. This entry was not counted."),
])
def test_invalid_entry_is_explained_and_not_counted(pam, live, enrolled, entry, message):
    r = pam.authenticate(enrolled, entry, args=[on(live)])
    assert r.code == PAM_AUTH_ERR, r
    assert r.errors == [message]
    assert failures(live, enrolled) == 0


@pytest.mark.parametrize("answer", ["", "@null", "@fail"], ids=["empty", "null", "conv-error"])
def test_no_entry_falls_through_uncounted(pam, live, enrolled, answer):
    r = pam.authenticate(enrolled, answer, args=[on(live)])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.errors == []
    assert failures(live, enrolled) == 0


def test_overlong_entry_is_not_sent(pam, live, enrolled):
    r = pam.authenticate(enrolled, "1" * 200, args=[on(live)])
    assert r.code == PAM_AUTH_ERR, r
    assert r.errors == ["Each dot can be used only once. This entry was not counted."]
    assert failures(live, enrolled) == 0


@pytest.fixture
def recorder():
    made = []

    def make(user, verify):
        # A stand-in that answers as the real daemon would for these tests (STATUS:
        # enrolled, unlocked; VERIFY: `verify`), so only what it received tells
        # whether the module sent.
        answers = {"STATUS": status_line(user), "VERIFY": verify}
        d = FakeDaemon(lambda line: answers.get(line.split(" ", 1)[0], b"ERROR message=unexpected\n"))
        made.append(d)
        return d
    yield make
    for d in made:
        d.close()


@pytest.mark.parametrize("entry, reason, sentence", [
    ("1" * 65, "repeated_dot", "Each dot can be used only once. This entry was not counted."),
    ("1" * 200, "repeated_dot", "Each dot can be used only once. This entry was not counted."),
    ("x" * 65, "not_a_dot", "Type the dots as the digits 1 to 9. This entry was not counted."),
], ids=["65 dots", "200 dots", "65 letters"])
def test_overlong_entry_never_reaches_the_socket(pam, recorder, entry, reason, sentence):
    """The module answers an over-long entry itself. The daemon would answer it
    alike, so this watches the socket: one connection, the STATUS before the
    prompt, and no byte of the entry."""
    d = recorder("alice", f"INVALID reason={reason}\n".encode())
    r = pam.authenticate("alice", entry, args=[on(d)])
    assert r.code == PAM_AUTH_ERR, r
    assert r.errors == [sentence]
    assert d.received == [b"STATUS user=alice caller=0\n"], "the over-long entry was sent to the daemon"
    assert not any(entry[:65].encode() in data for data in d.received)


def test_entry_of_64_bytes_is_not_overlong_and_is_sent(pam, recorder):
    """The limit's other side, and proof the recorder sees a VERIFY."""
    d = recorder("alice", b"INVALID reason=repeated_dot\n")
    r = pam.authenticate("alice", "1" * 64, args=[on(d)])
    assert r.code == PAM_AUTH_ERR, r
    assert r.errors == ["Each dot can be used only once. This entry was not counted."]
    assert len(d.received) == 2, d.received
    assert d.received[1].startswith(b"VERIFY user=alice pattern=" + b"1" * 64 + b" service=pltest ")


def test_nogrid_shows_only_the_prompt(pam, live, enrolled):
    r = pam.authenticate(enrolled, RIGHT, args=[on(live), "nogrid"])
    assert r.code == PAM_SUCCESS, r
    assert r.events == [("PROMPT_ECHO_OFF", PROMPT)]


def test_quiet_hides_the_grid_but_not_errors(pam, live, enrolled):
    r = pam.authenticate(enrolled, WRONG, args=[on(live), "quiet"])
    assert r.code == PAM_AUTH_ERR, r
    assert r.infos == []
    assert r.errors == [wrong(4)]


def test_pam_silent_sends_no_info_message_but_the_prompt_keeps_the_grid(pam, live, enrolled):
    """sudo passes PAM_SILENT on every call: no PAM_TEXT_INFO is sent, the grid
    becomes part of the prompt, and errors still tell the user why."""
    r = pam.authenticate(enrolled, WRONG, args=[on(live)], silent=True)
    assert r.code == PAM_AUTH_ERR, r
    assert r.events == [("PROMPT_ECHO_OFF", GRID.format(user=enrolled) + "\n" + PROMPT),
                        ("ERROR_MSG", wrong(4))]
    r = pam.authenticate(enrolled, WRONG, args=[on(live), "nogrid"], silent=True)
    assert r.events == [("PROMPT_ECHO_OFF", PROMPT), ("ERROR_MSG", wrong(3))]


def test_unknown_options_are_ignored(pam, live, enrolled):
    r = pam.authenticate(enrolled, RIGHT, args=["bogus", "timeout=never", on(live)])
    assert r.code == PAM_SUCCESS, r


# ---- the daemon unreachable -------------------------------------------------

def test_missing_socket_is_unavailable_at_once(pam, tmp_path):
    r = pam.authenticate("alice", RIGHT, args=[f"socket={tmp_path}/no-such-socket"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.events == []
    assert r.elapsed < 1.0


def test_stale_socket_is_unavailable_at_once(pam, fake):
    d = fake(by_verb())
    d.stop_listening()
    r = pam.authenticate("alice", RIGHT, args=[on(d)])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.events == []
    assert r.elapsed < 1.0


def test_daemon_that_never_accepts_gives_up_within_the_timeout(pam):
    """A full backlog makes a Unix connect fail with EAGAIN; the module keeps
    trying until its deadline, no longer."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="plpam-", dir="/tmp"))
    path = str(d / "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(0)
    queued = []
    try:
        while True:  # fill the backlog
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.setblocking(False)
            queued.append(c)
            try:
                c.connect(path)
            except BlockingIOError:
                break
        r = pam.authenticate("alice", RIGHT, args=[f"socket={path}", "timeout=1", "debug"])
        assert r.code == PAM_AUTHINFO_UNAVAIL, r
        assert 0.9 <= r.elapsed < 2.0, r
        assert r.errors == [f"Pattern unlock unavailable: cannot connect to {path}: "
                            "Connection timed out"]
    finally:
        for c in queued:
            c.close()
        listener.close()
        shutil.rmtree(d, ignore_errors=True)


def test_regular_file_is_not_a_socket(pam, tmp_path):
    path = tmp_path / "socket"
    path.write_text("OK\n")
    r = pam.authenticate("alice", RIGHT, args=[f"socket={path}"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r


def test_debug_says_why_it_is_unavailable(pam, tmp_path):
    r = pam.authenticate("alice", RIGHT, args=[f"socket={tmp_path}/gone", "debug"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert len(r.errors) == 1
    assert r.errors[0].startswith("Pattern unlock unavailable: cannot use socket ")
    assert "No such file or directory" in r.errors[0]


# ---- who is listening -------------------------------------------------------

def test_socket_owned_by_another_user_is_refused(pam, fake):
    d = fake(by_verb())
    nobody = pwd.getpwnam("nobody")
    os.chown(d.socket, nobody.pw_uid, nobody.pw_gid)
    r = pam.authenticate("alice", RIGHT, args=[on(d), "debug"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.errors == [f"Pattern unlock unavailable: socket {d.socket} is owned by "
                        f"uid {nobody.pw_uid}, not root"]
    assert d.connections == 0


def test_symlink_to_the_socket_is_refused(pam, fake):
    d = fake(by_verb())
    link = d.dir / "link"
    link.symlink_to(d.socket)
    r = pam.authenticate("alice", RIGHT, args=[f"socket={link}", "debug"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.errors == [f"Pattern unlock unavailable: {link} is not a socket"]
    assert d.connections == 0


IMPOSTOR = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(4)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    data = c.recv(4096)
    if data:
        print("got", data, flush=True)
        c.sendall(b"STATUS user=alice enrolled=1 locked=0\n")
    c.close()
"""


def test_daemon_not_running_as_root_is_refused(pam):
    """The socket file is root's, but the process behind it is not."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="plpam-", dir="/tmp"))
    d.chmod(0o777)  # for nobody to bind in
    path = d / "s"
    proc = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                             sys.executable, "-c", IMPOSTOR, str(path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        os.chown(path, 0, 0)
        r = pam.authenticate("alice", RIGHT, args=[f"socket={path}", "debug"])
        assert r.code == PAM_AUTHINFO_UNAVAIL, r
        assert r.prompts == []
        nobody = pwd.getpwnam("nobody").pw_uid
        assert r.errors == [f"Pattern unlock unavailable: daemon on {path} runs as "
                            f"uid {nobody}, not root"]
    finally:
        proc.kill()
        out, _ = proc.communicate()
        shutil.rmtree(d, ignore_errors=True)
    assert "got" not in out


# ---- fake daemons: only an exact OK to VERIFY is success ----------------------

@pytest.mark.parametrize("status", [
    b"OK\n",
    b"garbage\n",
    b"STATUS user=alice enrolled=1\n",
    b"STATUS user=alice enrolled=yes locked=0\n",
    b"STATUS user=alice enrolled=1 locked=0",  # no LF, then silence
    b"STATUS user=alice enrolled=1 locked=0\x00\n",
    b"S" * 5000 + b"\n",
    b"<close>",
    b"DENIED\n",
    b"BUSY\n",
    b"ERROR message=internal\n",
], ids=["ok", "garbage", "no-locked", "bad-flag", "no-lf", "nul", "oversized", "closed",
        "denied", "busy", "error"])
def test_bad_status_reply_is_unavailable(pam, fake, status):
    d = fake(by_verb(status=status))
    r = pam.authenticate("alice", RIGHT, args=[on(d), "timeout=1"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.prompts == []
    assert d.verbs() == ["STATUS"]
    assert r.elapsed < 2.0


@pytest.mark.parametrize("verify", [
    b"OKAY\n", b"OK \n", b"OK\x00\n", b"OK x\n", b"ok\n", b" OK\n", b"OK\r\n",
    b"OK iterations=600000\n", b"OK", b"\n", b"PONG version=1\n",
    b"STATUS user=alice enrolled=1 locked=0\n", b"FAIL remaining=abc\n",
    b"FAIL remaining=-1\n", b"FAIL\n", b"OK" * 3000 + b"\n", b"O" * 4096, b"<close>",
    b"INVALID\n", b"BUSY\n", b"DENIED\n", b"ERROR message=internal\n",
], ids=["OKAY", "OK-space", "OK-nul", "OK-x", "ok", "space-OK", "OK-cr", "OK-field",
        "OK-no-lf", "empty-line", "pong", "status", "fail-abc", "fail-negative", "fail-bare",
        "oversized", "4096-no-lf", "closed", "invalid-bare", "busy", "denied", "error"])
def test_bad_verify_reply_is_never_success(pam, fake, verify):
    """Nor a way on to the password modules: the pattern sent got no verdict,
    so the attempt ends with the way to the password said."""
    d = fake(by_verb(verify=verify))
    r = pam.authenticate("alice", RIGHT, args=[on(d), "timeout=1"])
    assert r.code == PAM_AUTH_ERR, r
    assert r.errors == [UNUSED_UNAVAILABLE]
    assert d.verbs() == ["STATUS", "VERIFY"]


def test_exact_ok_from_a_fake_is_success(pam, fake):
    """The control for the cases above: the same fake with a well-formed OK."""
    d = fake(by_verb(verify=b"OK\n"))
    r = pam.authenticate("alice", RIGHT, args=[on(d)])
    assert r.code == PAM_SUCCESS, r


def test_status_never_answered_gives_up_within_the_timeout(pam, fake):
    d = fake(by_verb(status=None))
    d.answer = lambda line: None
    r = pam.authenticate("alice", RIGHT, args=[on(d), "timeout=1"])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.prompts == []
    assert 0.9 <= r.elapsed < 2.0, r


def test_verify_never_answered_gives_up_after_the_hash_allowance(pam, fake):
    d = fake(by_verb(verify=None))
    d.answer = lambda line: status_line("alice") if line.startswith("STATUS") else None
    r = pam.authenticate("alice", RIGHT, args=[on(d), "timeout=1"])
    assert r.code == PAM_AUTH_ERR, r
    assert r.errors == [UNUSED_UNAVAILABLE]
    # timeout=1 for the STATUS, 1 + 10 seconds for the VERIFY.
    assert 10.9 <= r.elapsed < 12.5, r


def test_request_lines_carry_the_pam_context(pam, fake):
    d = fake(by_verb(verify=b"OK\n"))
    r = pam.authenticate("alice", "1 2/3", args=[on(d), "allow_remote"], tty="/dev/pts/7",
                         rhost="host.example", ruser="bob smith")
    assert r.code == PAM_SUCCESS, r
    # caller: the harness's real uid (root here); no logind session, so no
    # session= or seat=.
    assert d.lines == [
        "STATUS user=alice caller=0",
        "VERIFY user=alice pattern=1%202%2F3 service=pltest tty=%2Fdev%2Fpts%2F7 "
        "rhost=host.example ruser=bob%20smith caller=0",
    ]
    assert d.connections == 2


def test_unset_context_is_sent_empty(pam, fake):
    d = fake(by_verb(verify=b"OK\n"))
    assert pam.authenticate("alice", RIGHT, args=[on(d)]).code == PAM_SUCCESS
    assert d.lines[1] == f"VERIFY user=alice pattern={RIGHT} service=pltest tty= rhost= ruser= caller=0"


def test_not_enrolled_status_gets_no_prompt(pam, fake):
    d = fake(by_verb(status=status_line("alice", enrolled=0)))
    r = pam.authenticate("alice", RIGHT, args=[on(d)])
    assert r.code == PAM_USER_UNKNOWN, r
    assert r.events == []


def test_locked_status_with_timed_unlock(pam, fake):
    d = fake(by_verb(status=status_line("alice", locked=1, failures=5, retry_after=540)))
    r = pam.authenticate("alice", RIGHT, args=[on(d)])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.prompts == []
    assert r.errors == ["Pattern unlock for alice is locked after 5 failed attempts. Try again in "
                        "9 minutes, or ask an administrator to run: patternlockd reset alice"]
    assert d.verbs() == ["STATUS"]


def test_a_locked_reply_to_status_goes_on_to_the_password(pam, fake):
    """LOCKED as the answer to STATUS (not a STATUS line): said, nothing asked
    or sent, and PAM_AUTHINFO_UNAVAIL like every way the pattern was not used."""
    d = fake(by_verb(status=b"LOCKED retry_after=0\n"))
    r = pam.authenticate("alice", RIGHT, args=[on(d)])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert r.prompts == []
    assert r.errors == [LOCKED.format(user="alice")]
    assert d.verbs() == ["STATUS"]


# PAM_AUTH_ERR for an entry that was sent and not accepted (or refused here,
# as too long): the profile's auth_err=die ends the attempt on it. A pattern
# that got no verdict (the user's record went away between STATUS and VERIFY,
# a reply that cannot be) never goes on to the password modules either.
@pytest.mark.parametrize("verify, code, errors", [
    (b"FAIL remaining=1\n", PAM_AUTH_ERR, [wrong(1)]),
    (b"FAIL remaining=0\n", PAM_AUTH_ERR, [NOW_LOCKED.format(user="alice")]),
    (b"LOCKED retry_after=0\n", PAM_AUTH_ERR, [LOCKED.format(user="alice")]),
    (b"LOCKED retry_after=60\n", PAM_AUTH_ERR,
     ["Pattern unlock for alice is locked after 5 failed attempts. Try again in 1 minute, "
      "or ask an administrator to run: patternlockd reset alice"]),
    # The failure that locks under a timed unlock says when, as the CLI does.
    (b"FAIL remaining=0 retry_after=90\n", PAM_AUTH_ERR,
     ["Wrong pattern. Pattern unlock for alice is now locked after 5 failed attempts. Try again in "
      "2 minutes, or ask an administrator to run: patternlockd reset alice"]),
    (b"NOT_ENROLLED\n", PAM_AUTH_ERR, [UNUSED_UNAVAILABLE]),
    (b"INVALID reason=too_short\n", PAM_AUTH_ERR,
     ["Connect at least 4 dots. This entry was not counted."]),
    (b"INVALID reason=empty\n", PAM_AUTH_ERR, [UNUSED_UNAVAILABLE]),
], ids=["fail-1", "fail-0", "locked", "locked-timed", "fail-0-timed", "not-enrolled", "too-short", "empty"])
def test_verify_replies_map_to_codes(pam, fake, verify, code, errors):
    d = fake(by_verb(verify=verify))
    r = pam.authenticate("alice", RIGHT, args=[on(d)])
    assert r.code == code, r
    assert r.errors == errors


@pytest.mark.parametrize("name", ["bad user", "-rf", "x" * 65, "caf\u00e9"])
def test_name_the_daemon_cannot_hold_is_unknown(pam, fake, name):
    d = fake(by_verb())
    r = pam.authenticate(name, RIGHT, args=[on(d)])
    assert r.code == PAM_USER_UNKNOWN, r
    assert d.connections == 0


def test_empty_entry_is_not_sent(pam, fake):
    d = fake(by_verb())
    r = pam.authenticate("alice", "", args=[on(d)])
    assert r.code == PAM_AUTHINFO_UNAVAIL, r
    assert d.verbs() == ["STATUS"]


def test_module_exports_only_the_pam_entry_points(pam_module):
    out = subprocess.run(["nm", "-D", "--defined-only", str(pam_module)],
                         capture_output=True, text=True, check=True).stdout
    assert sorted(line.split()[-1] for line in out.splitlines()) == \
        ["pam_sm_authenticate", "pam_sm_setcred"]


def test_module_needs_only_libpam_libsystemd_and_libc(pam_module):
    """libsystemd for sd-login, as pam_fprintd; no Swift runtime. Kept
    loaded (NODELETE), so it says what it says once per process."""
    out = subprocess.run(["readelf", "-d", str(pam_module)],
                         capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert sorted(needed) == ["libc.so.6", "libpam.so.0", "libsystemd.so.0"]
    assert "RPATH" not in out and "RUNPATH" not in out
    assert re.search(r"FLAGS_1\)\s+Flags:.*\bNODELETE\b", out), out
