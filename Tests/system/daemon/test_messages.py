# SPDX-License-Identifier: Apache-2.0
"""Messages, exit statuses and docs an administrator can rely on. The
real patternlockd binary (daemon and CLI) on a private socket, as root and as
throwaway users."""
import os
import pathlib
import pwd
import re
import subprocess

import pytest

from harness.common import DAEMON, ROOT, parse_reply

RIGHT = "1397"
WRONG = "9856"
LOCKED = ("Pattern unlock for {user} is locked after 5 failed attempts. "
          "Ask an administrator to run: patternlockd reset {user}")
TIMED = ("Try again in 2 minutes, or ask an administrator to run: patternlockd reset {user}")
DEAD = "/nonexistent/patternlock/socket"


@pytest.fixture
def user(make_users):
    (name,) = make_users(1)
    return name


def lock(daemon, user):
    for _ in range(5):
        daemon.request(f"VERIFY user={user} pattern={WRONG}")


def failures(daemon, user):
    return parse_reply(daemon.request(f"STATUS user={user}"))[1]["failures"]


def flat(text):
    """Help text with its line wrapping undone."""
    return " ".join(text.split())


def test_verify_exit_statuses(daemon, user, make_users):
    r = daemon.cli("verify", user, input=RIGHT + "\n")
    assert r.returncode == 3 and r.stderr.strip() == f"{user} has no pattern. Enroll one with: patternlockd enroll {user}"
    daemon.enroll(user, RIGHT)
    assert daemon.cli("verify", user, input=RIGHT + "\n").returncode == 0
    assert daemon.cli("verify", user, input=WRONG + "\n").returncode == 1
    assert daemon.cli("verify", user, input="12\n").returncode == 4
    (other,) = make_users(1)
    assert daemon.cli("verify", user, input=RIGHT + "\n", user=other).returncode == 5
    r = daemon.cli("verify", user, "--socket", DEAD, input=RIGHT + "\n")
    assert r.returncode == 6 and "Cannot reach patternlockd" in r.stderr
    assert daemon.cli("verify", "bad/name").returncode == 64
    lock(daemon, user)
    r = daemon.cli("verify", user, input=RIGHT + "\n")
    assert r.returncode == 2 and r.stderr.strip() == LOCKED.format(user=user)


def test_unreachable_says_where_the_socket_came_from(daemon):
    r = daemon.cli("status", "--socket", DEAD)
    assert r.returncode == 6
    assert r.stderr.startswith(f"Cannot reach patternlockd at {DEAD} (from --socket): ")
    assert "check the path given to --socket" in r.stderr and "systemctl" not in r.stderr
    r = daemon.cli("status", env={"PATTERNLOCK_SOCKET": DEAD})
    assert r.returncode == 6 and f"at {DEAD} (from $PATTERNLOCK_SOCKET)" in r.stderr
    assert "unset it to use /run/patternlock/socket" in r.stderr
    # The default socket, with whatever this machine has at /run/patternlock
    # hidden under an empty tmpfs in a private mount namespace.
    env = {k: v for k, v in os.environ.items() if k != "PATTERNLOCK_SOCKET"}
    hide = "if [ -d /run/patternlock ]; then mount -t tmpfs tmpfs /run/patternlock; fi; exec \"$0\" status"
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", hide, str(DAEMON)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 6 and "at /run/patternlock/socket (the default socket)" in r.stderr
    # The systemd hint only where systemd runs.
    assert ("systemctl status patternlockd.socket" in r.stderr) == os.path.isdir("/run/systemd/system")


def test_nothing_is_asked_that_the_daemon_would_refuse(daemon, user):
    """stdin is empty: a command that asked first would say that no pattern was
    entered (exit 4); one that checks first names the real reason."""
    for command in (["verify", user], ["remove", user], ["enroll", user]):
        r = daemon.cli(*command, "--socket", DEAD, input="")
        assert r.returncode == 6 and "Cannot reach patternlockd" in r.stderr, (command, r.stderr)
    r = daemon.cli("remove", input="", user=user)
    assert (r.returncode, r.stderr.strip()) == (3, f"{user} has no pattern; nothing was removed.")
    r = daemon.cli("remove", user, input="")
    assert (r.returncode, r.stderr.strip()) == (3, f"{user} has no pattern; nothing was removed.")
    daemon.enroll(user, RIGHT)
    lock(daemon, user)
    mark = len(daemon.read_log())
    r = daemon.cli("enroll", input="", user=user)
    assert r.returncode == 2
    assert r.stderr.strip() == LOCKED.format(user=user) + " Nothing was changed."
    r = daemon.cli("remove", input="", user=user)
    assert r.returncode == 2 and r.stderr.strip() == LOCKED.format(user=user) + " Nothing was removed."
    log = daemon.read_log()[mark:]
    assert f"enroll user={user}" not in log and f"remove user={user}" not in log


def test_iterations_are_checked_before_anything_is_typed(daemon, user):
    r = daemon.cli("enroll", user, "--iterations", "2000000000", input=f"{RIGHT}\n{RIGHT}\n")
    assert r.returncode == 64
    assert ("--iterations must be between 600000 (OWASP's floor for PBKDF2-HMAC-SHA256) and 1000000000"
            in r.stderr), r.stderr
    assert daemon.request(f"VERIFY user={user} pattern={RIGHT}") == "NOT_ENROLLED"
    # The daemon's own refusal, for other clients, is unchanged.
    assert daemon.request(f"ENROLL user={user} pattern=1234 iterations=2000000000") == "ERROR message=iterations_too_high"
    r = subprocess.run([str(DAEMON), "enroll", "--help"], capture_output=True, text=True)
    assert "Root only: PBKDF2 iterations for this pattern, 600000 to 1000000000" in flat(r.stdout)


def test_enrolling_a_user_that_does_not_exist_is_refused_input(daemon):
    r = daemon.cli("enroll", "plnosuchuser", input=f"{RIGHT}\n{RIGHT}\n")
    assert r.returncode == 4
    assert r.stderr.strip() == "There is no user plnosuchuser on this system; nothing was changed."


def test_changing_a_pattern_says_what_it_needs(daemon, user):
    daemon.enroll(user, RIGHT)
    r = daemon.cli("enroll", input="5678\n5678\n", user=user)
    assert r.returncode == 4
    assert r.stderr.strip() == (
        f"{user} already has a pattern, so enroll reads three lines from stdin: the current pattern, "
        "the new pattern, and the new pattern again. The new pattern was not confirmed; nothing was changed.")
    assert failures(daemon, user) == "0"
    r = daemon.cli("enroll", input="5678\n2468\n2468\n", user=user)
    assert r.returncode == 1
    assert r.stderr.strip() == "Wrong current pattern \u2014 4 attempts left. Nothing was changed."
    r = daemon.cli("remove", input="5678\n", user=user)
    assert r.returncode == 1
    assert r.stderr.strip() == "Wrong current pattern \u2014 3 attempts left. Nothing was changed."
    assert daemon.cli("verify", user, input=RIGHT + "\n").returncode == 0


def test_a_dot_joined_by_a_move_is_explained(daemon, user):
    joined = ("Dot 2 is used twice: the move from 1 to 3 passed over it and already joined it. "
              "Each dot can be used only once; leave 2 out or type it before that move.")
    r = daemon.cli("enroll", user, input="1327\n1327\n")
    assert r.returncode == 4 and joined in r.stderr, r.stderr
    daemon.enroll(user, RIGHT)
    r = daemon.cli("verify", user, input="1327\n")
    assert (r.returncode, r.stderr.strip()) == (4, joined + " This entry was not counted.")
    assert failures(daemon, user) == "0"


def test_reset_says_whether_the_user_was_locked(daemon, user, make_users):
    daemon.enroll(user, RIGHT)
    assert daemon.request(f"RESET user={user}") == "OK count=0 locked=0"
    r = daemon.cli("reset", user)
    assert (r.returncode, r.stdout.strip()) == (0, f"{user} was not locked and had no failed attempts; nothing changed.")
    daemon.request(f"VERIFY user={user} pattern={WRONG}")
    r = daemon.cli("reset", user)
    assert (r.returncode, r.stdout.strip()) == (0, f"{user} was not locked; the failure count is cleared.")
    lock(daemon, user)
    assert daemon.request(f"RESET user={user}") == "OK count=1 locked=1"
    lock(daemon, user)
    r = daemon.cli("reset", user)
    assert (r.returncode, r.stdout.strip()) == (0, f"{user} is unlocked: the lockout and the failure count are cleared.")
    (other,) = make_users(1)
    daemon.enroll(other, RIGHT)
    lock(daemon, user)
    daemon.request(f"VERIFY user={other} pattern={WRONG}")
    r = daemon.cli("reset", "--all")
    assert r.stdout.strip() == "Unlocked 1 user; cleared the failure count of 1 user who was not locked."
    r = daemon.cli("reset", "--all")
    assert r.stdout.strip() == "No user was locked or had failed attempts; nothing changed."
    r = daemon.cli("reset", other)
    assert r.returncode == 0
    daemon.cli("remove", other)
    r = daemon.cli("reset", other)
    assert (r.returncode, r.stderr.strip()) == (3, f"{other} has no pattern; there is nothing to reset.")
    r = daemon.cli("reset", "plnosuchuser")
    assert r.returncode == 3 and r.stderr.startswith("There is no user plnosuchuser on this system"), r.stderr


def test_a_timed_unlock_is_named_wherever_a_lock_is(make_daemon, user):
    d = make_daemon("--unlock-after", "90")
    d.enroll(user, RIGHT)
    for _ in range(3):
        d.cli("verify", user, input=WRONG + "\n")
    r = d.cli("verify", user, input=WRONG + "\n", user=user)
    assert r.stderr.strip() == "Wrong pattern \u2014 1 attempt left."
    r = d.cli("verify", user, input=WRONG + "\n")
    assert r.returncode == 1
    assert r.stderr.strip() == (f"Wrong pattern. Pattern unlock for {user} is now locked after 5 failed attempts. "
                                + TIMED.format(user=user))
    r = d.cli("verify", user, input=RIGHT + "\n")
    assert r.returncode == 2
    assert r.stderr.strip() == f"Pattern unlock for {user} is locked after 5 failed attempts. " + TIMED.format(user=user)
    # A user is told what it can do, not to run what only root may.
    r = d.cli("reset", user, user=user)
    assert r.returncode == 5
    assert r.stderr.strip() == ("Only an administrator (root) can reset pattern unlock. "
                                f"Pattern unlock for {user} is locked after 5 failed attempts. " + TIMED.format(user=user))
    r = d.cli("status", user=user)
    assert r.returncode == 2
    assert f"unlocks by itself in 2 minutes; ask an administrator to run: patternlockd reset {user}" in r.stdout
    assert "unlock with:" not in r.stdout
    r = d.cli("status", user)
    assert f"unlocks by itself in 2 minutes; unlock with: patternlockd reset {user}" in r.stdout


def test_the_failure_that_locks_carries_the_timed_unlock(make_daemon, user):
    d = make_daemon("--unlock-after", "90")
    d.enroll(user, RIGHT)
    replies = [d.request(f"VERIFY user={user} pattern={WRONG}") for _ in range(5)]
    assert replies[:4] == [f"FAIL remaining={n}" for n in (4, 3, 2, 1)]
    verb, fields = parse_reply(replies[4])
    assert verb == "FAIL" and fields["remaining"] == "0" and int(fields["retry_after"]) in (89, 90), replies[4]


def test_status_exit_status_from_column_and_zone(daemon, user, make_users):
    r = daemon.cli("status", user)
    assert r.returncode == 3 and f"{user}: not enrolled" in r.stdout
    daemon.enroll(user, RIGHT)
    assert daemon.cli("status", user).returncode == 0
    # Through PAM the peer is sudo, uid 0: the module names the caller (the user
    # who ran sudo, "By"); ruser is what sudo reported ("From").
    (caller,) = make_users(1)
    caller_uid = pwd.getpwnam(caller).pw_uid
    daemon.request(f"VERIFY user={user} pattern={WRONG} service=sudo tty=pts%2F4 rhost= ruser=mallory "
                   f"caller={caller_uid} session=4 seat=seat0")
    _, st = parse_reply(daemon.request(f"STATUS user={user}"))
    assert st["recent"].endswith(f",sudo,pts%2F4,,mallory,,{caller_uid},4,seat0"), st["recent"]
    record = (pathlib.Path(daemon.state_dir) / user).read_text()
    assert re.search(rf"^failure=\d+,0,sudo,pts%2F4,,mallory,,{caller_uid},4,seat0$", record, re.M), record
    r = daemon.cli("status", user, env={"TZ": "UTC"})
    assert r.returncode == 0
    header, row = r.stdout.splitlines()[-2:]
    assert header.split() == ["When", "By", "Service", "TTY", "Remote", "host", "From", "UID"]
    assert re.fullmatch(rf"\s+\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s+{caller} \(session 4, seat0\)\s+sudo\s+pts/4"
                        r"\s+-\s+mallory\s+0", row), row
    (other,) = make_users(1)
    daemon.enroll(other, RIGHT)
    lock(daemon, user)
    assert daemon.cli("status", user).returncode == 2
    assert daemon.cli("status").returncode == 2, "one locked user among all"
    assert daemon.cli("status", other).returncode == 0


def test_status_of_another_user_says_permission_denied_once(daemon, user, make_users):
    (other,) = make_users(1)
    daemon.enroll(user, RIGHT)
    r = daemon.cli("status", user, user=other)
    assert r.returncode == 5, r.stdout + r.stderr
    said = (r.stdout + r.stderr).strip().splitlines()
    assert len(said) == 1, said
    assert r.stdout == ""


def test_lockouts_and_denials_are_warnings_in_the_journal(make_daemon, user, make_users, monkeypatch):
    monkeypatch.setenv("JOURNAL_STREAM", "8:12345")   # what systemd sets: priorities as <N>
    d = make_daemon()
    d.enroll(user, RIGHT)
    lock(d, user)
    d.request(f"VERIFY user={user} pattern={RIGHT}")
    (other,) = make_users(1)
    d.cli("status", user, user=other)
    d.request("RESET all=1")
    lines = d.read_log().splitlines()

    def priority(fragment):
        found = [line for line in lines if fragment in line]
        assert found, fragment
        return found[0][:3]

    assert priority("result=FAIL,remaining=4") == "<6>"
    assert priority("result=FAIL,remaining=0") == "<4>"
    assert priority("result=LOCKED") == "<4>"
    assert priority("result=DENIED") == "<4>"
    assert priority("created a new key") == "<4>"
    assert any(line.startswith("<6>reset all=1 uid=0 result=OK,count=1,locked=1") for line in lines), lines
    assert not any("user=%2A" in line for line in lines)


def test_serve_that_cannot_start_leaves_nothing_behind(daemon, shared_tmp):
    assert "created a new key " + daemon.key_file in daemon.read_log()
    fresh = shared_tmp / "fresh"
    fresh.mkdir()
    key, state = fresh / "etc" / "key", fresh / "state"
    r = subprocess.run([str(DAEMON), "serve", "--socket", daemon.socket, "--state-dir", str(state),
                        "--key-file", str(key), "--iterations", "600000"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Another patternlockd is already listening on" in r.stderr, r.stderr
    assert sorted(os.listdir(fresh)) == [], "no key, key directory or state directory"
    # A bad key: the state directory this start made goes too.
    bad = fresh / "bad-key"
    bad.write_bytes(b"x" * 31)
    bad.chmod(0o600)
    r = subprocess.run([str(DAEMON), "serve", "--socket", str(fresh / "s"), "--state-dir", str(state),
                        "--key-file", str(bad), "--iterations", "600000"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "exactly 32 bytes" in r.stderr, r.stderr
    assert sorted(os.listdir(fresh)) == ["bad-key"]


@pytest.mark.parametrize("word, command", [
    ("list", "status"), ("delete", "remove"), ("unlock", "reset"), ("show", "status"), ("stauts", "status"),
])
def test_words_from_faillock_and_fprintd_name_the_real_command(word, command):
    r = subprocess.run([str(DAEMON), word], capture_output=True, text=True)
    assert r.returncode == 64
    assert r.stderr.startswith(f"Unknown command '{word}'. Did you mean: patternlockd {command} ("), r.stderr
    assert "Unexpected argument" not in r.stderr


def test_the_user_option_of_faillock_is_explained():
    r = subprocess.run([str(DAEMON), "--user", "alice"], capture_output=True, text=True)
    assert r.returncode == 64
    assert r.stderr.startswith("patternlockd takes the user as an argument, not --user: patternlockd status USER")
    r = subprocess.run([str(DAEMON), "frobnicate"], capture_output=True, text=True)
    assert r.returncode == 64 and "Commands: serve, enroll, verify, status, reset, remove" in r.stderr


def test_help_matches_what_the_commands_do():
    r = subprocess.run([str(DAEMON), "benchmark", "--help"], capture_output=True, text=True)
    assert "`backend iterations_per_second budget_iterations compressions_per_second` lines" in flat(r.stdout)
    r = subprocess.run([str(DAEMON), "serve", "--help"], capture_output=True, text=True)
    assert "docs/PROTOCOL.md" not in r.stdout and "/usr/local/share/doc/patternlock/" in flat(r.stdout)
    assert "/usr/share/doc/patternlockd/" in flat(r.stdout)  # where the package puts it
    r = subprocess.run([str(DAEMON), "verify", "--help"], capture_output=True, text=True)
    assert "6 daemon unreachable, 7 daemon error, 64 usage error" in flat(r.stdout)


def test_the_man_page_documents_every_exit_status():
    page = (ROOT / "docs" / "patternlockd.8").read_text()
    section = page.split(".SH EXIT STATUS", 1)[1].split(".SH ", 1)[0]
    for code in ("0", "1", "2", "3", "4", "5", "6", "7", "64"):
        assert re.search(rf"^\.TP\n\.B {code}$", section, re.M), code
