# SPDX-License-Identifier: Apache-2.0
"""What an administrator meets following README.md, the man pages and
--help literally. The real patternlockd (and build/patternlockd-fleet against a
real PostgreSQL for the fleet's items), the real PAM module under pamtester, and
the docs themselves. Each test names the issue's item it guards."""
import os
import re
import shlex
import socket
import subprocess
import threading
import time

import pytest


from harness.common import DAEMON, ROOT, Daemon  # noqa: E402
from harness.pg_support import FLEET_DAEMON, PASSWORD  # noqa: E402
from harness.pam_support import module_line, pamtester  # noqa: E402
from harness.pg_support import make_tls, with_tls  # noqa: E402

RIGHT = "1397"
WRONG = "9856"
README = (ROOT / "README.md").read_text()
FLEET_DOC = (ROOT / "docs" / "FLEET.md").read_text()
MAN = (ROOT / "docs" / "patternlockd.8").read_text()
PAM_MAN = (ROOT / "docs" / "pam_patternlock.8").read_text()
# The fleet tests' bound on an answer that must come at once.
AT_ONCE = 3.0


def flat(text):
    """Text with its line wrapping undone (help and man page alike)."""
    return " ".join(text.split())


def man_text(page=MAN):
    """The man page's words as man prints them (fonts dropped), for phrase checks."""
    words = []
    for line in page.splitlines():
        if line.startswith("."):
            macro, _, rest = line.partition(" ")
            if macro in (".B", ".I"):
                line = rest.replace('"', "")
            elif macro in (".BR", ".RB", ".IR", ".RI", ".BI", ".IB"):
                line = "".join(shlex.split(rest))   # alternating fonts, no space between
            else:
                continue
        words.append(line)
    text = "\n".join(words)
    for escape in ("\\fB", "\\fR", "\\fI", "\\:", "\\c"):
        text = text.replace(escape, "")
    return flat(text.replace("\\-", "-").replace("\\(mu", "x"))


def section(name, page=MAN):
    return page.split(f".SH {name}", 1)[1].split("\n.SH ", 1)[0]


def run(*args, input=None, env=None, timeout=60):
    return subprocess.run([str(a) for a in args], input=input, capture_output=True, text=True,
                          timeout=timeout, env=env)


def needs_fleet():
    assert FLEET_DAEMON.exists(), "build/patternlockd-fleet is missing: run make fleet"


@pytest.fixture
def someone(make_users):
    (name,) = make_users(1)
    return name


# ---- 1. db import from the README's own path, a link under systemd -------------------

def test_db_import_follows_the_systemd_link_to_the_state_directory(postgres, shared_tmp, make_users):
    needs_fleet()
    (alice,) = make_users(1)
    (shared_tmp / "files").mkdir()
    files = Daemon(shared_tmp / "files")
    files.start()
    files.enroll(alice, RIGHT)
    files.stop()
    # As systemd lays it out: /var/lib/patternlock -> private/patternlock.
    private = shared_tmp / "private"
    private.mkdir(mode=0o700)
    os.rename(files.state_dir, private / "patternlock")
    link = shared_tmp / "patternlock"
    link.symlink_to("private/patternlock")
    r = run(FLEET_DAEMON, "db", "import", "--state-dir", link, "--key-file", files.key_file,
            "--store", postgres.socket_url())
    assert r.returncode == 0 and "Imported 1 record" in r.stdout, r.stdout + r.stderr


# ---- 2. a connection that fails says why, at once ---------------------------------

def test_a_wrong_database_password_is_named_at_once(postgres, shared_tmp):
    needs_fleet()
    key = shared_tmp / "key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    wrong = shared_tmp / "dbpass"
    wrong.write_text("not-" + PASSWORD + "\n")
    wrong.chmod(0o600)
    _, url = with_tls(postgres, shared_tmp)   # TCP only with a checked certificate, loopback included
    start = time.monotonic()
    r = run(FLEET_DAEMON, "db", "settings", "--store", url, "--store-password-file", wrong,
            "--key-file", key)
    elapsed = time.monotonic() - start
    assert r.returncode == 1, r.stderr
    assert "password authentication failed" in r.stderr and "--store-password-file" in r.stderr, r.stderr
    assert "did not answer" not in r.stderr
    assert elapsed < AT_ONCE, elapsed


def test_a_missing_socket_and_a_refused_port_are_named_at_once(postgres, shared_tmp):
    needs_fleet()
    key = shared_tmp / "key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    nowhere = shared_tmp / "no-postgres-here"
    nowhere.mkdir()
    start = time.monotonic()
    r = run(FLEET_DAEMON, "db", "settings", "--key-file", key,
            "--store", f"postgresql://patternlock@/patternlock?host={nowhere}&port=5999")
    assert r.returncode == 1 and time.monotonic() - start < AT_ONCE, r.stderr
    assert f"{nowhere}/.s.PGSQL.5999" in r.stderr and "does not exist" in r.stderr, r.stderr
    # 10: the URI printed keeps its port, so a copy of it names the same server.
    assert f"host={nowhere}&port=5999" in r.stderr, r.stderr

    tls = shared_tmp / "tls"
    tls.mkdir()
    ca, _, _ = make_tls(tls)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]   # bound, never listening: connections are refused
        start = time.monotonic()
        r = run(FLEET_DAEMON, "db", "settings", "--key-file", key,
                "--store", f"postgresql://patternlock@localhost:{port}/patternlock?sslmode=verify-full&sslrootcert={ca}")
    assert r.returncode == 1 and time.monotonic() - start < AT_ONCE, r.stderr
    assert "connection refused" in r.stderr, r.stderr


# ---- 3. status with the database down ------------------------------------------------

def test_status_with_the_database_down_answers_unavailable_in_time_and_is_logged(fleet, postgres, make_users):
    (host,) = fleet(1)
    (alice,) = make_users(1)
    host.enroll(alice, RIGHT)
    postgres.stop("immediate")
    for args in (("status",), ("status", alice)):
        start = time.monotonic()
        r = host.cli(*args)
        elapsed = time.monotonic() - start
        assert r.returncode == 6 and "cannot reach its database" in r.stderr, (args, r.returncode, r.stderr)
        assert "closed the connection" not in r.stderr
        assert elapsed < 2.5, (args, elapsed)
    # Logged with why, since the sentence sends the administrator to the log.
    assert re.search(r"^.*list why=\S*PostgreSQL\S* uid=0 result=ERROR,message=store_unavailable$", host.read_log(), re.M), \
        host.read_log()


# ---- 4. the db commands without the fleet's key ---------------------------------------

def test_db_commands_without_the_key_say_to_copy_the_fleets_key(postgres, shared_tmp):
    needs_fleet()
    missing = shared_tmp / "no-key"
    for command in (["settings"], ["tag"], ["import", "--state-dir", str(shared_tmp)]):
        r = run(FLEET_DAEMON, "db", *command, "--store", postgres.socket_url(), "--key-file", missing)
        assert r.returncode == 1, r.stderr
        assert "copy it here from a host of the fleet" in r.stderr and "--key-file" in r.stderr, r.stderr
        assert "Start `patternlockd serve` once" not in r.stderr
    assert not missing.exists()


def test_the_docs_db_examples_name_the_key_and_the_password_file():
    for command in ("db import", "db settings"):
        examples = [line for line in FLEET_DOC.splitlines() if line.startswith(f"patternlockd-fleet {command}")]
        assert examples, command
        for line in examples:
            assert "--key-file" in line and "--store-password-file" in line, line
        synopsis = section(f"{command}", MAN.replace(".SS ", ".SH "))
        assert "key\\-file" in synopsis and "store\\-password\\-file" in synopsis, command


# ---- 5. a daemon that cannot start ------------------------------------------------------

def test_a_daemon_that_closes_without_an_answer_points_at_its_journal(shared_tmp):
    path = str(shared_tmp / "socket")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)

    def close_each():   # the request is taken, and the service systemd started for it dies
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.recv(1024)
            conn.close()

    threading.Thread(target=close_each, daemon=True).start()
    try:
        r = run(DAEMON, "status", "--socket", path)
    finally:
        listener.close()
    assert r.returncode == 6, r.stderr
    assert "journalctl -u patternlockd.service" in r.stderr, r.stderr


def test_serve_exit_statuses_are_the_man_pages(shared_tmp):
    d = Daemon(shared_tmp, ["--store", "postgresql://patternlock@/patternlock?host=/tmp"])
    refused = run(*d.args())
    assert refused.returncode == 64, refused.stderr
    (shared_tmp / "run" / "socket").write_text("not a socket")
    cannot = run(*Daemon(shared_tmp).args())
    assert cannot.returncode == 1, cannot.stderr
    text = man_text(section("EXIT STATUS"))
    assert "serve exits with 0 after SIGTERM or SIGINT, 64 when its command line is refused" in text, text
    assert "1 when it cannot start" in text
    assert "64 when its command line is refused" in flat(run(DAEMON, "serve", "--help").stdout)
    # ... and systemd does not restart a refused command line in a loop.
    unit = (ROOT / "systemd" / "patternlockd.service").read_text()
    assert "\nRestart=on-failure\n" in unit and "\nRestartPreventExitStatus=64\n" in unit, unit


# ---- 6. what journalctl -p warning shows -------------------------------------------------

def test_attempts_on_a_locked_user_and_a_users_refused_reset_are_warnings(make_daemon, someone, monkeypatch):
    monkeypatch.setenv("JOURNAL_STREAM", "8:12345")   # what systemd sets: priorities as <N>
    d = make_daemon()
    d.enroll(someone, RIGHT)
    for _ in range(5):
        d.request(f"VERIFY user={someone} pattern={WRONG}")
    before = len(d.read_log().splitlines())
    r = d.cli("verify", someone, input=RIGHT + "\n", user=someone)
    assert r.returncode == 2, r.stderr
    r = d.cli("reset", someone, user=someone)
    assert r.returncode == 5, r.stderr
    lines = d.read_log().splitlines()[before:]
    assert any(line.startswith(f"<4>status user={someone} ") and "result=STATUS,locked=1" in line
               for line in lines), lines
    assert any(line.startswith(f"<4>reset user={someone} ") and "result=DENIED" in line for line in lines), lines
    warning = [line for line in README.splitlines() if "-p warning" in line]
    assert warning and "a user's refused reset" in warning[0] and "locked user" in warning[0], warning
    assert "STATUS that shows a user locked" in man_text(section("LOGGING")), section("LOGGING")


# ---- 7. the enroll loop ----------------------------------------------------------------

def test_a_refused_pattern_says_to_run_enroll_again_and_the_limit_is_documented(make_daemon, someone):
    d = make_daemon(policy_args=())
    r = d.cli("enroll", someone, input="14789\n14789\n")   # the L: among the patterns people choose most
    assert r.returncode == 4, r.stderr
    assert r.stderr.rstrip().endswith("Run patternlockd enroll again with another pattern."), r.stderr
    assert "up to three patterns in all" in man_text(section("COMMANDS"))
    assert "up to three patterns in all" in flat(run(DAEMON, "enroll", "--help").stdout)


def test_on_a_terminal_a_refused_pattern_is_refused_before_it_is_confirmed(make_daemon, someone):
    import json
    d = make_daemon(policy_args=())
    refused = [["expect", "New pattern: "], ["secret", "14789\n"], ["expect", "patterns people choose most"]]
    spec = {"argv": [str(DAEMON), "enroll", "--socket", d.socket, someone], "timeout": 60,
            "steps": refused + [["expect", "Choose another pattern"]]
            + refused + [["expect", "Choose another pattern"]]
            + refused + [["expect", "Run patternlockd enroll again with another pattern."], ["eof"]]}
    r = run("python3", ROOT / "Tests" / "system" / "harness" / "pty_session.py", input=json.dumps(spec), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Draw it again" not in r.stdout, r.stdout
    assert "That was the third pattern the policy refused" in r.stdout, r.stdout
    assert d.request(f"STATUS user={someone}").startswith(f"STATUS user={someone} enrolled=0")


# ---- 8. the same mistake: the module names the rule, never the dots ------------------------

def test_the_module_names_the_rule_not_the_dots_and_both_pages_say_why(pam_service, pam_module, live, enrolled):
    service = pam_service([module_line("required", pam_module, live.socket)])
    r = pamtester(service, enrolled, "1327\n")
    out = r.stdout + r.stderr
    said = [line for line in out.splitlines() if "Each dot can be used only once" in line]
    assert said, out
    # pamtester prints the message after the prompt, whose key map (the compact
    # grid: no terminal here) holds the dots' keys; the message itself names none.
    message = said[0][said[0].index("Each dot"):]
    assert not re.search(r"\d", message), said[0]
    cli = live.cli("verify", enrolled, input="1327\n")
    assert cli.returncode == 4 and "the move from 1 to 3" in cli.stderr, cli.stderr
    assert "the screen may be watched" in man_text(PAM_MAN)
    assert "the PAM module names only the rule" in man_text(section("COMMANDS"))


# ---- 9. policy --check on a numeric keypad ------------------------------------------------

def test_policy_check_reads_the_numpad_like_enroll():
    phone = run(DAEMON, "policy", "--check", input="14789\n")
    numpad = run(DAEMON, "policy", "--check", "--layout", "numpad", input="74123\n")
    assert numpad.returncode == phone.returncode, numpad.stderr
    rank = [line for line in phone.stdout.splitlines() if line.startswith("Guess rank")]
    assert rank and rank[0] in numpad.stdout, (phone.stdout, numpad.stdout)
    assert "--layout numpad" in flat(run(DAEMON, "policy", "--help").stdout)


# ---- 10. help and the man page ------------------------------------------------------------

def test_the_synopsis_names_every_command_and_the_fleet_options():
    synopsis = man_text(section("SYNOPSIS"))
    for words in ("patternlockd db init --store", "patternlockd db import --state-dir", "patternlockd db tag --store",
                  "patternlockd db settings --store",
                  "[--store uri] [--store-password-file file]", "patternlockd policy"):
        assert words in synopsis, words
    assert "--check] [--layout" in synopsis


def test_db_init_help_shows_store_as_required():
    usage = run(DAEMON, "db", "init", "--help").stdout
    line = flat(usage.split("USAGE:", 1)[1].split("OPTIONS:", 1)[0])
    assert "--store <uri>" in line and "[--store <uri>]" not in line, line


def test_reset_help_lists_only_what_reset_returns():
    text = flat(run(DAEMON, "reset", "--help").stdout)
    assert "Exit status: 0 done, 3 no pattern by that name" in text, text
    for impossible in ("1 wrong pattern", "2 locked", "4 input refused"):
        assert impossible not in text


def test_reset_of_a_user_that_does_not_exist_says_so(daemon):
    r = daemon.cli("reset", "nosuchuser24")
    assert r.returncode == 3
    assert r.stderr.startswith("There is no user nosuchuser24 on this system"), r.stderr


def test_exit_status_documents_the_db_commands():
    text = man_text(section("EXIT STATUS"))
    assert "The db commands exit with 0" in text, text
