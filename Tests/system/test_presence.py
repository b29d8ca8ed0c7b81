# SPDX-License-Identifier: Apache-2.0
"""Issue 19: the module asks only someone at this machine, and names who asks.

On the host (no logind in sight: pam_support runs every PAM application with
/run/systemd hidden) the fallback: without logind the module asks only the
services its services= option lists, says once per process why it asks nobody or
that the list is in use, and never contacts the daemon when it does not ask.

In a container booted with systemd (conftest's client_system) the real clients:
sudo inside an SSH session, saslauthd, a console login and su/sudo inside a local
logind session, a process in no session, and polkit-agent-helper-1 run by
another user against the victim, whose uid the daemon then logs and `status`
shows."""
import os
import pathlib
import pwd
import re
import shutil
import subprocess
import time

import pytest

pytest.register_assert_rewrite("pam_support")

from conftest import SYSTEM_PYTHON, skip_or_fail  # noqa: E402
from pam_support import (GRID, PAM_AUTH_ERR, PAM_AUTHINFO_UNAVAIL, PAM_SUCCESS, PROMPT, RIGHT,  # noqa: E402
                         WRONG, by_verb, documented_stack, on, set_password, without_logind)

# The fixtures: pam, pam_module, harness, fake, live, user, enrolled, syslog.
pytest_plugins = ["pam_support"]

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
