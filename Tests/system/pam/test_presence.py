# SPDX-License-Identifier: Apache-2.0
"""The module asks only someone at this machine, and names who asks.

On the host (no logind in sight: pam_support runs every PAM application with
/run/systemd hidden) the fallback: without logind the module asks only the
services its services= option lists, says once per process why it asks nobody or
that the list is in use, and never contacts the daemon when it does not ask.

In a container booted with systemd (conftest's client_system) the real clients:
sudo inside an SSH session, saslauthd, a console login and su/sudo inside a local
logind session, a process in no session, and polkit-agent-helper-1 run by
another user against the victim, whose uid the daemon then logs and `status`
shows."""
import json
import os
import pwd
import re
import shutil
import subprocess

import pytest


from harness import booted  # noqa: E402
from harness.common import SYSTEM_PYTHON, figure, skip_or_fail  # noqa: E402
from harness.clients import Clients
from harness.pam_support import (GRID, PAM_AUTH_ERR, PAM_AUTHINFO_UNAVAIL, PAM_SUCCESS, PROMPT, RIGHT,  # noqa: E402
                         WRONG, by_verb, documented_stack, on, set_password, without_logind)


NO_LOGIND_ONCE = ("logind does not run here, so nothing tells a person at this machine from a network "
                  "service: pattern unlock asks nobody. List the services to ask in the module's options, "
                  "e.g. services=sudo,su,login (pam_patternlock(8))")


# syslog(3) priorities as pam_syslog sends them: the authpriv facility.
AUTHPRIV, NOTICE, INFO, DEBUG = 10 << 3, 5, 6, 7


def logged(messages, text):
    """The syslog messages (as syslog(3) sends them) that contain text."""
    return [m for m in messages if text in m]


# ---- without logind: the services= fallback (on the host) -------------------------

def test_without_logind_and_without_services_nobody_is_asked_and_the_daemon_never_hears(pam, fake, syslog):
    d = fake(by_verb(verify=b"OK\n"))
    # Three logins in one process, as saslauthd serves them; the module stays loaded.
    r = pam.authenticate("alice", RIGHT, args=[on(d)], listed=False, tty="/dev/pts/0", syslog=syslog,
                         times=3)
    assert r.codes == [PAM_AUTHINFO_UNAVAIL] * 3, r
    assert r.events == [], "nothing shown: the stack asks the password as if the module were absent"
    assert d.connections == 0 and d.lines == []
    messages = syslog.messages()
    assert len(logged(messages, NO_LOGIND_ONCE)) == 1, messages
    assert logged(messages, NO_LOGIND_ONCE)[0].startswith(f"<{AUTHPRIV | NOTICE}>"), messages
    skipped = logged(messages, "not asked: no logind, and no services= option")
    assert len(skipped) == 3, messages
    assert all(m.startswith(f"<{AUTHPRIV | DEBUG}>") and m.endswith(
        "(service=pltest tty=/dev/pts/0 rhost= session= uid=0)") for m in skipped), messages


def test_without_logind_a_console_login_is_not_asked_either(pam, fake, syslog):
    """The login services' exception needs logind to tell that no session exists yet."""
    d = fake(by_verb(verify=b"OK\n"))
    pam.service = "login"
    r = pam.authenticate("alice", RIGHT, args=[on(d)], listed=False, tty="/dev/tty1", syslog=syslog)
    assert r.code == PAM_AUTHINFO_UNAVAIL and r.events == [], r
    assert d.connections == 0
    assert len(logged(syslog.messages(), NO_LOGIND_ONCE)) == 1


def test_services_listing_this_service_asks_and_says_so_once(pam, live, enrolled, syslog):
    r = pam.authenticate(enrolled, RIGHT, args=[on(live)], listed=False, syslog=syslog, times=2,
                         stack=["auth required {module} services=sudo,pltest,login " + on(live)])
    assert r.codes == [PAM_SUCCESS, PAM_SUCCESS], r
    assert r.events == [("TEXT_INFO", GRID.format(user=enrolled)), ("PROMPT_ECHO_OFF", PROMPT)] * 2
    messages = syslog.messages()
    listed = logged(messages, "logind does not run here: pattern unlock asks the services listed in "
                              "services=sudo,pltest,login")
    assert len(listed) == 1 and listed[0].startswith(f"<{AUTHPRIV | INFO}>"), messages
    assert logged(messages, "not asked") == []


def test_services_without_this_service_asks_nobody(pam, fake, syslog):
    d = fake(by_verb(verify=b"OK\n"))
    r = pam.authenticate("alice", RIGHT, listed=False, syslog=syslog,
                         stack=["auth required {module} services=sudo,su,login,pltes " + on(d)])
    assert r.code == PAM_AUTHINFO_UNAVAIL and r.events == [], r
    assert d.connections == 0
    messages = syslog.messages()
    assert len(logged(messages, "not asked: no logind, and services= does not list this service")) == 1
    assert logged(messages, NO_LOGIND_ONCE) == [] and logged(messages, "asks the services listed") == []


def test_a_network_service_left_out_of_services_never_counts_a_digit_password(pam, live, user):
    """saslauthd's case on a host without logind: the stack is common-auth with the
    module first, every prompt gets the network password (6 distinct digits, a
    valid pattern). Not listed, so the password logs in every time, nothing is
    counted, and the daemon never hears of the user."""
    password = "418529"
    set_password(user, password)
    live.enroll(user, RIGHT)
    pam.service = "smtp"
    stack = [line.replace("{module}", "{module} services=sudo,su,login " + on(live))
             for line in documented_stack()]
    before = [line for line in live.read_log().splitlines() if f"user={user}" in line]
    for _ in range(6):
        r = pam.authenticate(user, password, stack=stack, listed=False, repeat=True)
        assert r.code == PAM_SUCCESS and r.prompts == ["Password: "], r
    r = pam.authenticate(user, RIGHT, stack=stack, listed=False, repeat=True)
    assert r.code == PAM_AUTH_ERR, "the pattern is no password"
    assert [line for line in live.read_log().splitlines() if f"user={user}" in line] == before
    assert " failures=0 " in live.request(f"STATUS user={user}")


# ---- who asks: the caller's real uid (on the host) -------------------------------

def test_a_setuid_program_names_the_user_who_ran_it_and_status_shows_them(live, enrolled, harness, pam_module,
                                                                          shared_tmp, make_users):
    """polkit-agent-helper-1 and sudo are setuid root: the peer is root, so the
    daemon takes the module's caller=, the real uid of the process: the user who
    ran it. A copy of the harness made setuid root stands in for such a program."""
    if os.statvfs(shared_tmp).f_flag & os.ST_NOSUID:
        skip_or_fail(f"{shared_tmp} is mounted nosuid: a setuid program cannot run from it")
    (mallory,) = make_users(1)
    uid = pwd.getpwnam(mallory).pw_uid
    helper = shared_tmp / "setuid-harness"
    shutil.copy(harness, helper)
    os.chown(helper, 0, 0)
    os.chmod(helper, 0o4755)
    confdir = shared_tmp / "pam.d"
    confdir.mkdir()
    (confdir / "pltest").write_text(f"auth required {pam_module} services=pltest {on(live)}\n")
    r = subprocess.run(without_logind(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                                       str(helper), str(confdir), "pltest", enrolled, WRONG]),
                       capture_output=True, text=True, timeout=60)
    assert f"RESULT {PAM_AUTH_ERR} " in r.stdout, r.stdout + r.stderr
    line = [x for x in live.read_log().splitlines() if f"verify user={enrolled}" in x][-1]
    assert f" caller={uid} caller_user={mallory} " in line and " uid=0 " in line, line
    status = live.cli("status", enrolled)
    header, row = status.stdout.splitlines()[-2:]
    assert header.split()[:2] == ["When", "By"], status.stdout
    assert f" {mallory} " in row, status.stdout
    # The record keeps it: after a restart status still names mallory.
    live.restart()
    assert f" {mallory} " in live.cli("status", enrolled).stdout.splitlines()[-1]
    # A plain user's own peer cannot pass the blame on: its caller is itself,
    # whatever caller= it sends.
    own = pwd.getpwnam(enrolled).pw_uid
    sent = subprocess.run(
        ["setpriv", f"--reuid={own}", f"--regid={own}", "--clear-groups", SYSTEM_PYTHON, "-c",
         "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
         "s.sendall(sys.argv[2].encode()); print(s.recv(4096).decode().strip())",
         live.socket, f"VERIFY user={enrolled} pattern={WRONG} caller={uid} session=9\n"],
        capture_output=True, text=True, timeout=60)
    assert sent.stdout.startswith("FAIL"), sent.stdout + sent.stderr
    line = [x for x in live.read_log().splitlines() if f"verify user={enrolled}" in x][-1]
    assert f" caller={own} caller_user={enrolled} session=9 " in line, line
    assert f" {enrolled} (session 9) " in live.cli("status", enrolled).stdout.splitlines()[-1]


# ---- real clients in a container booted with systemd (logind runs) ----------------

PATTERN = "46183"      # accepted by the enroll policy the installed daemon runs
WRONG_PATTERN = "2589"  # a valid pattern, so each one counts
# The pam-auth-update profile's one prompt: on a terminal (sudo, su)
# the full grid comes before it.
PATTERN_PROMPT = r"Pattern or password: "


@pytest.fixture(scope="module")
def clients(client_system):
    return Clients(client_system)


def test_sudo_and_su_inside_an_ssh_session_are_not_asked_and_the_daemon_never_hears(clients):
    s = clients.system
    password = "Ssh-Pass-w0rd"
    user = clients.user("plssh", password, pattern=PATTERN, sudo=True)
    ssh = clients.ssh(user)
    before = clients.daemon_lines(user)
    rc, out = s.pty(ssh, [
        ["expect", r"[$#] "], ["send", "PS1='plsh''ell> '\n"], ["expect", r"\nplshell> "],
        ["send", "loginctl show-session $XDG_SESSION_ID -p Remote -p Service\n"],
        ["expect", r"Remote=yes\r?\nService=sshd"], ["expect", r"\nplshell> "],
        # sudo: straight to the password, no grid, no pattern prompt.
        ["send", "sudo -k id -un\n"], ["expect", rf"\[sudo\] password for {user}: "],
        ["secret", password + "\n"], ["expect", r"\nroot\r?\nplshell> "],
        # su to the user itself: the password, not the pattern.
        ["send", f"su - {user} -c 'echo SU-OK'\n"], ["expect", "Password: "],
        ["secret", password + "\n"], ["expect", "SU-OK"], ["expect", r"\nplshell> "],
        ["send", "exit\n"], ["eof"]])
    assert rc == 0, out
    assert "Pattern" not in out and "1 2 3" not in out, out
    assert clients.daemon_lines(user) == before, "the daemon was contacted from inside an SSH session"
    # The module said why, in the journal, at debug level.
    log = s.ok("journalctl -t sudo -t su -o cat --no-pager | grep 'pam_patternlock' | tail -n 5")
    assert "not asked: the logind session is remote" in log, log


def test_sudo_moved_out_of_an_ssh_session_into_the_user_manager_is_not_asked(clients):
    """A user logged in over SSH can leave the SSH session for their service
    manager (`systemd-run --user --scope sudo`): in no session, the module would
    take the user's local seat session as the evidence (it does so for the
    terminals and polkit agent GNOME and KDE run there), and sudo over SSH would
    take the pattern. While the user has a remote session it does not."""
    s = clients.system
    password = "Scope-Pass-w0rd"
    user = clients.user("plscope", password, pattern=PATTERN, sudo=True)
    ssh = clients.ssh(user)
    # The same user at this machine, in a session on seat0 that stays open.
    spec = json.dumps({"argv": ["login", "-p", user], "timeout": 150,
                       "env": {"XDG_SEAT": "seat0", "XDG_VTNR": "0", "HOME": f"/home/{user}"},
                       "steps": s.login_steps(user, password)
                       + [["send", "sleep 120; exit\n"], ["eof"]]})
    s.ok(f"cat > /tmp/{user}.json && (setsid /usr/bin/python3 {booted.PTY_DRIVER} < /tmp/{user}.json "
         f"> /tmp/{user}.out 2>&1 &)", input=spec)
    try:
        s.ok(f"for i in $(seq 60); do loginctl show-user {user} -p Display --value | grep -q . && exit 0; "
             f"sleep 0.5; done; cat /tmp/{user}.out; exit 1")
        before = clients.daemon_lines(user)
        rc, out = s.pty(ssh, [
            ["expect", r"[$#] "], ["send", "PS1='plsh''ell> '\n"], ["expect", r"\nplshell> "],
            ["send", "systemd-run --user --scope -q sh -c 'cat /proc/self/cgroup; sudo -k id -un'\n"],
            ["expect", r"user@\d+\.service"],
            ["expect", rf"\[sudo\] password for {user}: "],
            ["secret", password + "\n"], ["expect", r"\nroot\r?\nplshell> "],
            ["send", "exit\n"], ["eof"]], timeout=90)
        assert rc == 0, out
        assert "Pattern" not in out and "1 2 3" not in out, out
        assert clients.daemon_lines(user) == before, "the daemon was asked for a sudo that came from SSH"
    finally:
        s.run(f"loginctl terminate-user {user}; rm -f /tmp/{user}.json /tmp/{user}.out")


def test_saslauthd_never_reaches_the_daemon_and_a_digit_password_is_never_counted(clients):
    s = clients.system
    password = "418529"  # 6 distinct digits, a valid pattern: 4-1-8-5-2-9
    user = clients.user("plsasl", password, pattern=PATTERN)
    mux = "/run/pl-saslauthd"
    # setsid: saslauthd signals its whole process group when it exits.
    pid = s.ok(f"mkdir -p {mux}; setsid saslauthd -a pam -m {mux} -d -n 1 >{mux}.log 2>&1 </dev/null & "
               f"echo $!; for i in $(seq 50); do [ -S {mux}/mux ] && break; sleep 0.1; done", timeout=60).split()[0]
    try:
        before = clients.daemon_lines(user)

        def sasl(pw):
            return s.run(f"testsaslauthd -u {user} -p {pw} -s smtp -f {mux}/mux").stdout.strip()

        assert sasl(PATTERN).startswith("0: NO"), "the pattern is not a password"
        for _ in range(6):
            assert sasl(password) == '0: OK "Success."'
        assert clients.daemon_lines(user) == before, "saslauthd reached the daemon"
        assert clients.failures(user) == 0
    finally:
        s.run(f"kill {pid}")


def test_a_console_login_asks_the_password_and_su_and_sudo_inside_the_session_the_pattern(clients):
    """password_at_login (the profile's): `login` opens a new session,
    so it asks the password (what unlocks a keyring) and never contacts the
    daemon; sudo and su inside that local session are offered the pattern."""
    s = clients.system
    password = "Local-Pass-w0rd"
    user = clients.user("pllocal", password, pattern=PATTERN, sudo=True)
    other = clients.user("plother", "Other-Pass-w0rd")
    before = clients.daemon_lines(user)
    rc, out = s.pty(["login", user], [
        ["expect", "Password: "], ["secret", password + "\n"],
        ["expect", r"[$#] "], ["send", "PS1='plsh''ell> '\n"], ["expect", r"\nplshell> "],
        ["send", "loginctl show-session $XDG_SESSION_ID -p Remote\n"], ["expect", "Remote=no"],
        ["expect", r"\nplshell> "],
        ["send", "echo LOGGED-IN\n"], ["expect", r"\nLOGGED-IN"], ["expect", r"\nplshell> "],
        # sudo inside the local session: the grid in the prompt, the pattern.
        ["send", "sudo -k id -un\n"], ["expect", "7 8 9"], ["expect", PATTERN_PROMPT], ["secret", PATTERN + "\n"],
        ["expect", r"\nroot\r?\nplshell> "],
        # sudo again, the password typed at the same prompt: one answer.
        ["send", "sudo -k id -un\n"], ["expect", PATTERN_PROMPT], ["secret", password + "\n"],
        ["expect", r"\nroot\r?\nplshell> "],
        ["send", "exit\n"], ["eof"]])
    assert rc == 0, out
    at_login = out.split("LOGGED-IN", 1)[0]
    assert "Pattern" not in at_login and "7 8 9" not in at_login, out
    assert "password for" not in out, "sudo asked nothing after the one prompt"
    verifies = [x for x in clients.daemon_lines(user) if x.startswith("verify ") and x not in before]
    assert len(verifies) == 1 and " service=sudo " in verifies[0] and " result=OK" in verifies[0], verifies
    assert clients.failures(user) == 0
    # su from another user's local session: asked for the target's pattern, and the
    # daemon names the caller, with the session and its tty.
    out = clients.session(other, "Other-Pass-w0rd", [
        [["send", f"su - {user} -c 'echo SU-OK $(id -un)'\n"], ["expect", "7 8 9"], ["expect", PATTERN_PROMPT],
         ["secret", WRONG_PATTERN + "\n"], ["expect", "4 attempts left"],
         # A wrong pattern ends su's one attempt; the next su takes the password
         # at the same prompt.
         ["expect", "su: Authentication failure"]],
        [["send", f"su - {user} -c 'echo SU-OK $(id -un)'\n"], ["expect", PATTERN_PROMPT],
         ["secret", password + "\n"], ["expect", f"SU-OK {user}"]],
        [["send", "echo SESSION=$XDG_SESSION_ID TTY=$(tty)\n"], ["expect", r"SESSION=\w+ TTY=/dev/pts/\d+"]],
    ])
    session, tty = re.search(r"SESSION=(\w+) TTY=/dev/(pts/\d+)", out).groups()
    line = [x for x in clients.daemon_lines(user) if x.startswith("verify ")][-1]
    assert " service=su-l " in line and f" caller={clients.uid(other)} caller_user={other} " in line, line
    assert f" session={session} seat={tty.replace('/', '/')} " in line and " uid=0 " in line, line
    status = s.ok(f"patternlockd status {user}")
    assert f"{other} (session {session}, {tty})" in status, status


def test_a_process_in_no_session_without_a_tty_is_not_asked(clients):
    s = clients.system
    password = "NoSession-Pass-w0rd"
    user = clients.user("plnosess", password, pattern=PATTERN)
    before = clients.daemon_lines(user)
    # nsenter: in no logind session, no terminal; sudo's stack through common-auth.
    r = s.run(f"pamtester -v sudo {user} authenticate", input=password + "\n")
    assert r.returncode == 0 and "successfully authenticated" in r.stdout + r.stderr, r.stdout + r.stderr
    assert "Pattern" not in r.stdout + r.stderr
    r = s.run(f"pamtester -v login {user} authenticate", input=PATTERN + "\n")
    assert r.returncode != 0 and "Pattern" not in r.stdout + r.stderr, "login without a tty is not asked"
    assert clients.daemon_lines(user) == before


def test_polkit_helper_run_by_another_user_is_named_in_the_log_and_in_status(clients):
    """polkit-agent-helper-1 is setuid root and authenticates whatever user it is
    given: a local user can spend another user's attempts. The daemon's log and
    `status` name that user (its real uid), not the victim polkit reports."""
    s = clients.system
    victim = clients.user("plvictim", "Victim-Pass-w0rd", pattern=PATTERN)
    mallory = clients.user("plmallory", "Mallory-Pass-w0rd")
    helper = "/usr/lib/polkit-1/polkit-agent-helper-1"
    # Five wrong patterns from mallory's local session, timed.
    attempt = f"printf 'cookie\\n{WRONG_PATTERN}\\n' | {helper} {victim} >/dev/null 2>&1"
    out = clients.session(mallory, "Mallory-Pass-w0rd", [
        [["send", "echo SESSION=$XDG_SESSION_ID TTY=$(tty)\n"], ["expect", r"SESSION=\w+ TTY=/dev/pts/\d+"]],
        [["send", f"t0=$(date +%s.%N); for i in 1 2 3 4 5; do {attempt}; done; "
                  "echo ELAPSED=$(echo \"$(date +%s.%N) - $t0\" | bc)\n"], ["expect", r"ELAPSED=[\d.]+"]],
    ], timeout=120)
    session, tty = re.search(r"SESSION=(\w+) TTY=/dev/(pts/\d+)", out).groups()
    elapsed = float(re.search(r"ELAPSED=([\d.]+)", out).group(1))
    lines = [x for x in clients.daemon_lines(victim) if x.startswith("verify ")]
    assert len(lines) == 5, lines
    for line in lines:
        assert " service=polkit-1 " in line and f" ruser={victim} " in line, line  # what polkit reports
        assert f" caller={clients.uid(mallory)} caller_user={mallory} session={session} seat={tty} " in line, line
        assert " uid=0 " in line, line
    assert "result=FAIL,remaining=0" in lines[-1]
    status = s.run(f"patternlockd status {victim}").stdout
    assert "LOCKED" in status and status.count(f"{mallory} (session {session}, {tty})") == 5, status
    figure("polkit-agent-helper-1: five wrong patterns for another user, from a local session",
           f"{elapsed:.2f} s, then the victim's pattern is locked")


def test_the_module_in_a_real_session_under_valgrind_leaks_nothing(clients):
    """The sd-login calls run only where logind does (the host tests hide it):
    pamtester under memcheck inside a local session, the pattern right."""
    s = clients.system
    password = "Valgrind-Pass-w0rd"
    user = clients.user("plvg", password, pattern=PATTERN)
    log = f"/tmp/{user}-valgrind.log"
    out = clients.session(user, password, [
        [["send", f"echo {PATTERN} | valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect "
                  f"--error-exitcode=99 --log-file={log} pamtester -v sudo {user} authenticate; echo RC=$?\n"],
         ["expect", r"RC=\d+"]],
    ], timeout=180)
    assert "successfully authenticated" in out and "RC=0" in out, out
    report = s.ok(f"cat {log}")
    assert "ERROR SUMMARY: 0 errors" in report, report
    assert re.search(r"definitely lost: 0 bytes", report) or "All heap blocks were freed" in report, report
    line = [x for x in clients.daemon_lines(user) if x.startswith("verify ")][-1]
    assert " service=sudo " in line and " result=OK" in line and re.search(r" session=\w+ seat=pts/\d+ ", line), line
