# SPDX-License-Identifier: Apache-2.0
"""Accounts that are not who they seem, patterns that outlive their account, sudo
enrolling root by accident, and what root's `status` shows: the real daemon and
CLI over a real socket, with real users from useradd."""
import os
import pathlib
import pwd
import re
import shutil
import socket
import stat
import subprocess
import time
import uuid
from urllib.parse import unquote

import pytest

from harness.common import DAEMON, TEST_ITERATIONS, Daemon, add_user, parse_reply, remove_user, skip_or_fail

from harness.pam_support import PAM_SUCCESS, PAM_USER_UNKNOWN, RIGHT, on  # noqa: E402


KELVIN = "\u212a"  # KELVIN SIGN: canonically equivalent to "K"


@pytest.fixture
def accounts():
    """useradd/userdel with names the test chooses; every one removed afterwards."""
    made = []

    def add(name, *options):
        made.append(name)
        return add_user(name, "/usr/sbin/nologin", "-N", *options)

    def delete(name):
        subprocess.run(["userdel", name], check=True, capture_output=True)
        made.remove(name)

    add.delete = delete
    yield add
    for name in made:
        remove_user(name)


def as_uid(daemon, uid, line):
    """One request line from a process running as `uid` (SO_PEERCRED sees it)."""
    script = ("import socket,sys\n"
              "s=socket.socket(socket.AF_UNIX)\n"
              f"s.connect({daemon.socket!r})\n"
              "s.sendall(sys.argv[1].encode()+b'\\n')\n"
              "b=b''\n"
              "while not b.endswith(b'\\n'):\n"
              "    c=s.recv(4096)\n"
              "    if not c: break\n"
              "    b+=c\n"
              "print(b.decode().strip())\n")
    r = subprocess.run(["setpriv", f"--reuid={uid}", "--regid=65534", "--clear-groups",
                        "/usr/bin/python3", "-c", script, line],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


# ---- look-alike names ----------------------------------------------------------------

def test_a_look_alike_account_cannot_act_for_the_user_it_imitates(daemon, accounts):
    victim = "plsr" + uuid.uuid4().hex[:6] + "K"
    accounts(victim)
    mimic = accounts(victim[:-1] + KELVIN, "--badname")  # "plsr…K" with U+212A
    daemon.enroll(victim, RIGHT)
    before = daemon.request(f"STATUS user={victim}")

    for line in (f"ENROLL user={victim} pattern=2589",
                 f"VERIFY user={victim} pattern=9876 service=su tty= rhost= ruser=",
                 f"REMOVE user={victim} current=9876",
                 f"STATUS user={victim}"):
        assert as_uid(daemon, mimic.pw_uid, line) == "DENIED", line
    assert daemon.request(f"STATUS user={victim}") == before, "nothing about the victim changed"
    assert daemon.request(f"VERIFY user={victim} pattern={RIGHT}") == "OK"


def test_the_cli_run_by_a_look_alike_account_is_denied(daemon, accounts):
    victim = "plsr" + uuid.uuid4().hex[:6] + "K"
    accounts(victim)
    mimic = accounts(victim[:-1] + KELVIN, "--badname")
    r = subprocess.run(["setpriv", f"--reuid={mimic.pw_uid}", "--regid=65534", "--clear-groups",
                        str(DAEMON), "enroll", victim, "--socket", daemon.socket],
                       input="2589\n2589\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 5, r.stdout + r.stderr
    assert daemon.request(f"STATUS user={victim}").split()[2] == "enrolled=0"


# ---- patterns do not outlive their account -------------------------------------------

def test_a_re_created_account_does_not_inherit_the_old_pattern(daemon, accounts, pam):
    name = "plre" + uuid.uuid4().hex[:8]
    old = accounts(name)
    daemon.enroll(name, RIGHT)
    accounts.delete(name)
    new = accounts(name, "-u", str(old.pw_uid + 1000))
    assert new.pw_uid != old.pw_uid

    assert daemon.request(f"VERIFY user={name} pattern={RIGHT}") == "NOT_ENROLLED"
    verb, fields = parse_reply(daemon.request(f"STATUS user={name}"))
    assert (verb, fields["enrolled"], fields["account"]) == ("STATUS", "0", "changed")
    # The PAM module does not prompt the new account for the old owner's pattern.
    r = pam.authenticate(name, RIGHT, args=[on(daemon)])
    assert r.code == PAM_USER_UNKNOWN and r.events == [], r
    # Root's status flags the record and names the fix.
    out = daemon.cli("status").stdout
    assert f"{name}: not enrolled: the pattern on record was enrolled by an earlier account" in out
    assert f"patternlockd remove {name}" in out
    # The new owner's own first pattern needs its password: this
    # daemon cannot have polkit ask for it, so it refuses and writes nothing.
    r = daemon.cli("enroll", input="2589\n2589\n", user=name)
    assert r.returncode == 5 and "first pattern" in r.stderr, r.stdout + r.stderr
    assert parse_reply(daemon.request(f"STATUS user={name}"))[1]["account"] == "changed"
    # Root enrolls the new owner without the old owner's pattern, and it works.
    r = daemon.cli("enroll", name, input="2589\n2589\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert daemon.request(f"VERIFY user={name} pattern=2589") == "OK"
    assert daemon.request(f"VERIFY user={name} pattern={RIGHT}").startswith("FAIL")


def test_a_deleted_account_is_flagged_and_root_can_remove_its_record(daemon, accounts):
    name = "plgo" + uuid.uuid4().hex[:8]
    accounts(name)
    daemon.enroll(name, RIGHT)
    accounts.delete(name)
    assert daemon.request(f"VERIFY user={name} pattern={RIGHT}") == "NOT_ENROLLED"
    assert "belongs to an account that no longer exists" in daemon.cli("status", name).stdout
    assert daemon.request(f"REMOVE user={name}") == "OK"
    assert name not in os.listdir(daemon.state_dir)


# ---- fail closed on an unreadable record ------------------------------------------------

def test_a_user_cannot_replace_a_record_the_daemon_cannot_read(daemon, make_users):
    (user,) = make_users(1)
    daemon.enroll(user, RIGHT)
    record = pathlib.Path(daemon.state_dir) / user
    record.write_text(record.read_text().replace("credential=", "credential=x"))
    r = daemon.cli("enroll", input="2589\n2589\n", user=user)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "cannot be read" in r.stderr and f"patternlockd remove {user}" in r.stderr
    assert "credential=x" in record.read_text(), "the record was not replaced"


def test_a_record_that_cannot_be_read_now_gets_one_answer_from_every_command(daemon, make_users):
    """A socket in the record's place: open(2) fails with ENXIO, so the record may
    well exist (and be locked). Every command says the daemon could not read its
    state and exits 7 (daemon error): never "no pattern", never "unlocked", and never
    a database, which this host does not have. Nothing is changed."""
    (user,) = make_users(1)
    daemon.enroll(user, RIGHT)
    record = pathlib.Path(daemon.state_dir) / user
    record.unlink()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stand_in:
        stand_in.bind(str(record))
        commands = [
            (("verify", user), None, RIGHT + "\n"),
            (("verify",), user, RIGHT + "\n"),
            (("status", user), None, None),
            (("status",), user, None),
            (("reset", user), None, None),
            (("reset", "--all"), None, None),
            (("enroll",), user, "2589\n2589\n"),
            (("remove",), user, RIGHT + "\n"),
        ]
        said = []
        for args, as_user, typed in commands:
            r = daemon.cli(*args, input=typed, user=as_user)
            said.append((args, as_user, r.returncode, r.stderr.strip()))
        for args, as_user, code, stderr in said:
            assert code == 7, said
            assert "patternlockd could not read or write its state" in stderr, said
            assert "database" not in stderr, said
        assert stat.S_ISSOCK(record.lstat().st_mode), "the record's place was left as it was"


def test_a_fifo_in_a_records_place_never_keeps_the_daemon_waiting(daemon, make_users):
    """Opening a FIFO for reading waits for a writer: the daemon must not, or the
    user's requests (and that thread, with the user's lock) would wait for ever. It
    is something other than a record: never success, and every request about the
    user is answered at once, as are other users'."""
    user, other = make_users(2)
    daemon.enroll(user, RIGHT)
    daemon.enroll(other, RIGHT)
    record = pathlib.Path(daemon.state_dir) / user
    record.unlink()
    os.mkfifo(record, 0o600)
    for line in (f"STATUS user={user}", f"VERIFY user={user} pattern={RIGHT}", f"RESET user={user}"):
        t = time.monotonic()
        try:
            reply = daemon.request(line, timeout=5)
        except socket.timeout:
            reply = "no answer within 5 s"
        assert time.monotonic() - t < 5 and not reply.startswith("OK") and reply != "no answer within 5 s", (line, reply)
    assert daemon.request(f"STATUS user={user}", timeout=5).startswith(f"STATUS user={user} enrolled=0")
    assert "corrupt=1" in daemon.request(f"STATUS user={user}", timeout=5)
    assert daemon.request(f"VERIFY user={other} pattern={RIGHT}", timeout=5) == "OK"
    assert stat.S_ISFIFO(record.lstat().st_mode), "the record's place was left as it was"


# ---- every kind of bad record, every command: one story, and its cure works ---------------

# What stands in a user's record's place, made from the user's own record and that of
# another user (enrolled with OTHER). Each is "there but not a record" (the daemon
# answers record_unreadable, STATUS corrupt=1) or "cannot be read now" (store_failed).
OTHER = "2589"
NEW = "3578"
UNREADABLE = "corrupt"
CANNOT_READ_NOW = "io"


def _garble(record, other):
    data = bytearray(record.read_bytes())
    data[len(data) // 3:len(data) // 3 + 8] = b"\x00\xff\xfe=\n\x80\x01="
    record.write_bytes(bytes(data))


def _directory_with_files(record, other):
    record.unlink()
    record.mkdir(mode=0o700)
    (record / "notes").write_text("someone's files\n")
    (record / "sub").mkdir()
    (record / "sub" / "more").write_text("more\n")


def _copied_credential(record, other):
    theirs = next(line for line in other.read_text().splitlines() if line.startswith("credential="))
    record.write_text("".join((theirs if line.startswith("credential=") else line) + "\n"
                              for line in record.read_text().splitlines()))


def _socket(record, other):
    record.unlink()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(record))
    return s


def _not_the_daemons(record, other):
    os.chown(record, 0, 0)
    record.chmod(0o600)


BAD_RECORDS = {
    "empty directory": (UNREADABLE, lambda r, o: (r.unlink(), r.mkdir(mode=0o700))),
    "directory with files": (UNREADABLE, _directory_with_files),
    "FIFO": (UNREADABLE, lambda r, o: (r.unlink(), os.mkfifo(r, 0o600))),
    "dangling symbolic link": (UNREADABLE, lambda r, o: (r.unlink(), r.symlink_to(r.parent / "gone"))),
    "symbolic link to another user's record": (UNREADABLE, lambda r, o: (r.unlink(), r.symlink_to(o))),
    "truncated file": (UNREADABLE, lambda r, o: r.write_bytes(r.read_bytes()[:len(r.read_bytes()) // 2])),
    "garbled file": (UNREADABLE, _garble),
    "empty file": (UNREADABLE, lambda r, o: r.write_bytes(b"")),
    "oversized file": (UNREADABLE, lambda r, o: r.write_bytes(r.read_bytes() + b"#" * 17000)),
    "record naming another user": (UNREADABLE, lambda r, o: r.write_bytes(o.read_bytes())),
    "credential copied from another user": (UNREADABLE, _copied_credential),
    "socket": (CANNOT_READ_NOW, _socket),
    # Realistic only for a daemon that does not run as root, as under systemd.
    "file the daemon may not open": (CANNOT_READ_NOW, _not_the_daemons),
}
UNPRIVILEGED = {"file the daemon may not open"}


class UnprivilegedDaemon(Daemon):
    """patternlockd as systemd runs it: the socket bound by root
    (systemd-socket-activate), the daemon itself as nobody, its key a credential."""

    def __init__(self, base):
        super().__init__(base)
        self.nobody = pwd.getpwnam("nobody")
        state = pathlib.Path(self.state_dir)
        state.mkdir(mode=0o700)
        self.credentials = base / "credentials"
        self.credentials.mkdir(mode=0o700)
        key = self.credentials / "patternlock.key"
        key.write_bytes(os.urandom(32))
        key.chmod(0o400)
        for p in (state, self.credentials, key):
            os.chown(p, self.nobody.pw_uid, self.nobody.pw_gid)

    def args(self):
        return ["systemd-socket-activate", "-l", self.socket,
                f"--setenv=CREDENTIALS_DIRECTORY={self.credentials}",
                "setpriv", f"--reuid={self.nobody.pw_uid}", f"--regid={self.nobody.pw_gid}", "--clear-groups",
                str(DAEMON), "serve", "--state-dir", self.state_dir, "--iterations", str(TEST_ITERATIONS),
                "--socket", str(self.base / "not-this-one")] + self.extra_args

    def start(self, timeout=20.0):
        super().start(timeout)
        os.chmod(self.socket, 0o666)  # as patternlockd.socket's SocketMode
        return self


@pytest.fixture
def bad_record(request, shared_tmp, make_users):
    """(daemon, user, kind, what) with the kind `request.param` standing in the
    user's record's place; the user's pattern was RIGHT, another user's OTHER."""
    name = request.param
    kind, make = BAD_RECORDS[name]
    if name in UNPRIVILEGED:
        if shutil.which("systemd-socket-activate") is None:
            skip_or_fail("systemd-socket-activate is not installed (apt-get install systemd)")
        daemon = UnprivilegedDaemon(shared_tmp)
    else:
        daemon = Daemon(shared_tmp)
    daemon.start()
    user, other = make_users(2)
    daemon.enroll(user, RIGHT)
    daemon.enroll(other, OTHER)
    state = pathlib.Path(daemon.state_dir)
    kept = make(state / user, state / other)
    try:
        yield daemon, user, kind, name
    finally:
        if isinstance(kept, socket.socket):
            kept.close()
        daemon.stop()


def place(path):
    """What stands at `path`, in full: its type, owner and mode, and its content
    (a file's bytes, a link's target, a directory's tree)."""
    st = path.lstat()
    what = (stat.S_IFMT(st.st_mode), st.st_uid, stat.S_IMODE(st.st_mode))
    if stat.S_ISLNK(st.st_mode):
        return what + (os.readlink(path),)
    if stat.S_ISREG(st.st_mode):
        return what + (path.read_bytes(),)
    if stat.S_ISDIR(st.st_mode):
        return what + (sorted((str(p.relative_to(path)), p.is_dir() or p.read_bytes()) for p in path.rglob("*")),)
    return what


def one_story(kind, user):
    if kind == UNREADABLE:
        return (f"The pattern record of {user} cannot be read, so pattern unlock is off for {user}. "
                f"An administrator removes it with: sudo patternlockd remove {user} (then {user} can enroll again).")
    return "patternlockd could not read or write its state; nothing was changed. See its log (journalctl -u patternlockd)."


# Every command about the user, by root and by the user itself. Root's `remove` is
# the cure, below.
COMMANDS = {
    "status USER": (("status", "{user}"), False, None),
    "status (every user)": (("status",), False, None),
    "status (the user)": (("status",), True, None),
    "verify USER": (("verify", "{user}"), False, RIGHT + "\n"),
    "verify (the user)": (("verify",), True, RIGHT + "\n"),
    "reset USER": (("reset", "{user}"), False, None),
    "remove (the user)": (("remove",), True, RIGHT + "\n"),
    "enroll (the user)": (("enroll",), True, NEW + "\n" + NEW + "\n"),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("bad_record", BAD_RECORDS, indirect=True)
def test_every_command_tells_one_story_about_a_bad_record_and_changes_nothing(bad_record, command):
    """Whatever stands in a user's record's place, every command says the same
    whole sentence and exits 7 (daemon error): never "no pattern", never "not
    locked", never success. `status` of every user shows it in the user's block.
    Nothing is changed."""
    daemon, user, kind, _ = bad_record
    record = pathlib.Path(daemon.state_dir) / user
    before = place(record)
    args, as_user, typed = COMMANDS[command]
    r = daemon.cli(*(a.format(user=user) for a in args), input=typed, user=user if as_user else None)
    said = r.stderr.strip() if command != "status (every user)" else r.stdout + r.stderr
    assert r.returncode == 7, (r.returncode, r.stdout, r.stderr)
    if command == "status (every user)":
        assert f"{user}: {one_story(kind, user)}" in said.splitlines(), said
    else:
        assert said == one_story(kind, user), said
    assert place(record) == before, "the record's place was left as it was"


@pytest.mark.parametrize("bad_record", BAD_RECORDS, indirect=True)
def test_the_protocol_tells_one_story_about_a_bad_record_and_never_success(bad_record):
    """On the wire: STATUS never says enrolled=1 (the PAM module then asks no
    pattern), and VERIFY, RESET and a user's own REMOVE give one answer, never OK,
    with no hash computed."""
    daemon, user, kind, _ = bad_record
    answer = "ERROR message=record_unreadable" if kind == UNREADABLE else "ERROR message=store_failed"
    status = daemon.request(f"STATUS user={user}")
    if kind == UNREADABLE:
        assert status.startswith(f"STATUS user={user} enrolled=0 ") and " corrupt=1 " in status, status
    else:
        assert status == answer, status
    assert daemon.request(f"VERIFY user={user} pattern={RIGHT}") == answer
    assert daemon.request(f"VERIFY user={user} pattern={OTHER}") == answer
    assert daemon.request(f"VERIFY user={user} pattern=12") == answer
    assert daemon.request(f"RESET user={user}") == answer
    assert as_uid(daemon, pwd.getpwnam(user).pw_uid, f"REMOVE user={user} current={RIGHT}") == answer
    assert not re.search(rf"verify user={user} .*hash_ms=", daemon.read_log()), daemon.read_log()


@pytest.mark.parametrize("bad_record", BAD_RECORDS, indirect=True)
def test_what_status_tells_the_administrator_to_do_about_a_bad_record_works(bad_record):
    """`status` names the cure: root's `remove` takes away whatever stands in the
    record's place (a link, never what it points to; a directory with files in it
    moved aside whole, never deleted), then the user enrolls again and its new
    pattern verifies. Where the daemon could not read its state, the log it points
    to names the record and why."""
    daemon, user, kind, name = bad_record
    state = pathlib.Path(daemon.state_dir)
    record = state / user
    others = {p.name: place(p) for p in state.iterdir() if p.name not in (user, ".lock")}
    r = daemon.cli("status", user)
    assert r.returncode == 7
    if kind == UNREADABLE:
        assert f"sudo patternlockd remove {user}" in r.stderr, r.stderr
    else:
        assert f"the record of {user}" in unquote(daemon.read_log()), daemon.read_log()

    r = daemon.cli("remove", user)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"The pattern of {user} is removed." in r.stdout, r.stdout
    assert not os.path.lexists(record)
    # Nothing else was touched: another user's record a link pointed to stays.
    now = {p.name: place(p) for p in state.iterdir() if p.name not in (user, ".lock")}
    if name == "directory with files":
        (aside,) = set(now) - set(others)
        assert aside.startswith(f".{user}.unreadable."), now
        assert f"moved aside, not deleted, to {state / aside}" in r.stdout, r.stdout
        assert sorted(str(p.relative_to(state / aside)) for p in (state / aside).rglob("*")) == \
            ["notes", "sub", "sub/more"]
        now.pop(aside)
    assert now == others

    r = daemon.cli("enroll", user, input=NEW + "\n" + NEW + "\n")
    assert r.returncode == 0, r.stdout + r.stderr
    r = daemon.cli("verify", input=NEW + "\n", user=user)
    assert r.returncode == 0 and "Pattern accepted." in r.stdout, r.stdout + r.stderr
    r = daemon.cli("status", user)
    assert r.returncode == 0 and f"{user}: enrolled, 0 failures" in r.stdout, r.stdout + r.stderr


# ---- sudo patternlockd enroll -----------------------------------------------------------

@pytest.fixture
def sudoer(make_users):
    """A user allowed to run build/patternlockd as root without a password."""
    (user,) = make_users(1)
    snippet = pathlib.Path("/etc/sudoers.d") / ("pltest_" + uuid.uuid4().hex[:8])
    snippet.write_text(f"# written by patternlock's Tests/system/daemon/test_accounts.py\n"
                       f"Defaults:{user} !lecture\n"
                       f"{user} ALL=(root) NOPASSWD: {DAEMON}\n")
    snippet.chmod(0o440)
    try:
        check = subprocess.run(["visudo", "-cf", str(snippet)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        yield user
    finally:
        snippet.unlink(missing_ok=True)


def test_sudo_patternlockd_enroll_enrolls_the_user_who_ran_sudo_not_root(daemon, sudoer):
    pw = pwd.getpwnam(sudoer)
    r = subprocess.run(["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups",
                        "sudo", "-n", str(DAEMON), "enroll", "--socket", daemon.socket],
                       input="1397\n1397\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"this is the pattern of {sudoer} (not root)" in r.stderr
    assert f"Pattern enrolled for {sudoer}" in r.stdout
    assert daemon.request("STATUS user=root").split()[2] == "enrolled=0"
    assert daemon.request(f"VERIFY user={sudoer} pattern=1397") == "OK"


def test_a_sudo_user_that_is_no_account_is_refused_with_the_fix(daemon):
    r = daemon.cli("enroll", input="1397\n1397\n", env={"SUDO_USER": "nosuchuser" + uuid.uuid4().hex[:6]})
    assert r.returncode == 64, r.stdout + r.stderr
    assert "Name the user: sudo patternlockd enroll USER" in r.stderr
    assert daemon.request("STATUS user=root").split()[2] == "enrolled=0"


# ---- what root's status shows ---------------------------------------------------------------

def test_status_shows_control_and_bidi_characters_escaped(daemon, make_users):
    (user,) = make_users(1)
    daemon.enroll(user, RIGHT)
    # U+202E RIGHT-TO-LEFT OVERRIDE, U+0085 NEXT LINE (C1), ESC, U+200B ZERO WIDTH SPACE
    reply = daemon.request(f"VERIFY user={user} pattern=9876 service=su%E2%80%AEdus "
                           f"tty=pts%C2%85x rhost=a%1B%5B31mb ruser=z%E2%80%8Bz")
    assert reply.startswith("FAIL"), reply
    r = daemon.cli("status", user)
    assert r.returncode == 0, r.stderr
    for bad in ("\u202e", "\u0085", "\x1b", "\u200b"):
        assert bad not in r.stdout, repr(r.stdout)
    assert "su\\u{202E}dus" in r.stdout and "pts\\u{85}x" in r.stdout and "a\\u{1B}[31mb" in r.stdout


def test_a_long_failure_history_breaks_neither_pam_nor_roots_status(make_daemon, accounts, pam):
    daemon = make_daemon("--unlock-after", "1")
    tag = uuid.uuid4().hex[:6]
    first, last = "pla" + tag, "plz" + tag   # `status` lists them in this order
    accounts(first)
    accounts(last)
    daemon.enroll(first, RIGHT)
    daemon.enroll(last, RIGHT)
    long = "%E2%80%AE" * 21  # 63 bytes, 189 once encoded: every field as long as it may be
    for _ in range(3):       # three timed locks: far more history than one lock makes
        for _ in range(5):
            assert daemon.request(f"VERIFY user={first} pattern=9876 service={long} tty={long} "
                                  f"rhost={long} ruser=").startswith(("FAIL", "LOCKED"))
        time.sleep(1.2)
    status = daemon.request(f"STATUS user={first}")
    assert len(status.encode()) < 4096, len(status.encode())
    verb, _ = parse_reply(status)
    assert verb == "STATUS"
    r = pam.authenticate(first, RIGHT, args=[on(daemon)])
    assert r.code == PAM_SUCCESS, r
    r = daemon.cli("status")
    assert r.returncode == 0, r.stderr
    assert f"{first}: enrolled" in r.stdout and f"{last}: enrolled" in r.stdout


# ---- --unlock-after ----------------------------------------------------------------------------

def test_unlock_after_is_bounded_with_a_sentence(shared_tmp):
    r = subprocess.run([str(DAEMON), "serve", "--socket", str(shared_tmp / "s"),
                        "--state-dir", str(shared_tmp / "state"), "--key-file", str(shared_tmp / "key"),
                        "--unlock-after", "9223372036854775000"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 64, r.stdout + r.stderr
    assert "--unlock-after must be 0" in r.stderr and "31536000 (a year)" in r.stderr
    assert not (shared_tmp / "state").exists() and not (shared_tmp / "key").exists()


def test_a_lock_time_near_the_end_of_time_does_not_kill_the_daemon(make_daemon, make_users):
    daemon = make_daemon("--unlock-after", "31536000")
    (user,) = make_users(1)
    daemon.enroll(user, RIGHT)
    record = pathlib.Path(daemon.state_dir) / user
    daemon.stop()
    text = record.read_text()
    text = re.sub(r"failures=\d+", "failures=5", text)
    record.write_text(re.sub(r"locked_since=\d+", "locked_since=9223372036854775000", text))
    daemon.start()
    assert daemon.request(f"VERIFY user={user} pattern={RIGHT}").startswith("LOCKED")
    assert daemon.request(f"STATUS user={user}").startswith("STATUS ")
    r = daemon.cli("status", user)
    assert r.returncode == 2 and "LOCKED" in r.stdout, r.stdout + r.stderr   # 2: locked
    assert daemon.proc.poll() is None
