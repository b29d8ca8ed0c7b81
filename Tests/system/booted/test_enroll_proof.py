# SPDX-License-Identifier: Apache-2.0
"""A user's first pattern needs the user's password, checked by polkit
(the real polkitd, pkcheck and pkttyagent) in the shared booted container, never
by the client: a raw ENROLL from the user's own process is refused and writes
nothing; `patternlockd enroll` on a terminal gets pkttyagent's password prompt;
a wrong password, or no polkit, leaves nothing written; root (sudo) enrolls
without polkit; after root removes a pattern the password is asked again.

polkit asks for the user's OWN password only in an active LOCAL session, and
polkit calls a session local when it is on a seat. A login on a pseudo-terminal
has no seat (as an SSH session has none), so these tests log in the way a
console or a seat's terminal does: `login -p` with XDG_SEAT=seat0, which
pam_systemd passes to logind (the container's seat0 has no VTs, so such a
session is active at once). A session without a seat is asked for an
administrator's password instead; one test shows that too."""
import re

import pytest

PASSWORD = "Sesame-42-open"
WRONG_PASSWORD = "Open-24-sesame"
# A pattern the enroll policy of the installed daemon (its defaults) accepts.
PATTERN = "46183"
STATE = "/var/lib/private/patternlock"
ACTION = "org.patternlock.enroll-self"
PROMPT_TAIL = r"\n" + "plshell> "
# The PAM module's prompt (sudo with pam_patternlock in common-auth: the
# profile's one_prompt).
PATTERN_PROMPT = r"Pattern or password: "
REQUIRED = "Setting your first pattern needs your password, and it was not confirmed"
UNAVAILABLE = "This system cannot ask for your password (polkit is not installed or not running)"


@pytest.fixture
def system(client_system):
    return client_system


@pytest.fixture
def user(system):
    """A new user with PASSWORD who may use sudo (sudo asks it for its password)."""
    name = system.add_user("plproof", PASSWORD)
    system.ok(f"echo '{name} ALL=(ALL) ALL' > /etc/sudoers.d/{name} && chmod 440 /etc/sudoers.d/{name}")
    yield name
    system.run(f"rm -f /etc/sudoers.d/{name}; patternlockd remove {name} >/dev/null 2>&1; "
               f"loginctl terminate-user {name} 2>/dev/null; userdel --remove {name} 2>/dev/null")


def seat_session(system, user, steps, pattern_prompt=False, timeout=120):
    """Logs USER in on a pty in a session on seat0 (see the module docstring),
    runs `steps` at its shell prompt, logs out; returns the transcript, and fails
    the test when a step was not met."""
    rc, out = system.pty(["login", "-p", user],
                         system.login_steps(user, PASSWORD, pattern_prompt) + steps + [["send", "exit\n"], ["eof"]],
                         timeout=timeout, env={"XDG_SEAT": "seat0", "XDG_VTNR": "0", "HOME": f"/home/{user}"})
    assert rc == 0, out
    return out


def command(text, expected):
    """Steps: run a command at the prompt, wait for `expected`, then the prompt."""
    return [["send", text + "\n"], ["expect", expected], ["expect", PROMPT_TAIL]]


def exit_status(status):
    return command("echo rc=$?", f"rc={status}\\b")


RAW_ENROLL = ("/usr/bin/python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); "
              "s.connect('/run/patternlock/socket'); s.sendall(b'ENROLL user={user} pattern={pattern}\\\\n'); "
              "print('REPLY', s.recv(200).decode().strip())\"")


def raw_enroll_steps(user, pattern=PATTERN):
    """Steps: the user's own process (in its session) sends ENROLL itself, over
    the raw socket, with no agent and nothing from patternlockd's client."""
    return [["send", RAW_ENROLL.format(user=user, pattern=pattern) + "\n"], ["expect", r"REPLY [^\r\n]*"],
            ["expect", PROMPT_TAIL]]


def raw_reply(out):
    return re.search(r"REPLY ([^\r\n]*)", out).group(1)


def enroll_steps():
    """Steps: `patternlockd enroll` on the terminal, up to polkit's prompt."""
    return [["send", "patternlockd enroll\n"],
            ["expect", "you are asked for your password, once"],
            ["expect", "New pattern: "], ["secret", PATTERN + "\n"],
            ["expect", "Draw it again to confirm: "], ["secret", PATTERN + "\n"],
            ["expect", f"AUTHENTICATING FOR {re.escape(ACTION)}"],
            ["expect", "Setting your first unlock pattern needs your password."]]


def sudo_steps(with_pattern):
    """Steps: sudo in the session, after forgetting sudo's own timestamp: with the
    pattern, or (not enrolled) with the password."""
    first = ([["expect", PATTERN_PROMPT], ["secret", PATTERN + "\n"]] if with_pattern else
             [["expect", r"\[sudo\] password for [^:]+: "], ["secret", PASSWORD + "\n"]])
    return [["send", "sudo -k; sudo echo SUDO-OK $(id -un)\n"], *first, ["expect", "SUDO-OK [a-z]"],
            ["expect", PROMPT_TAIL]]


def has_record(system, user):
    return system.run(f"test -e {STATE}/{user}").returncode == 0


def warnings_about(system, user):
    """The daemon's journal lines at warning priority or worse about USER's enroll."""
    out = system.ok("journalctl -u patternlockd.service -p warning --no-pager -o cat")
    return [line for line in out.splitlines() if line.startswith(f"enroll user={user} ")]


def test_a_raw_enroll_from_the_users_own_process_is_refused_and_sudo_still_asks_the_password(system, user):
    out = seat_session(system, user, raw_enroll_steps(user) + sudo_steps(with_pattern=False))
    # Its own local session, where polkit would take its password, but no one asked it.
    assert raw_reply(out) == "ERROR message=password_proof_required", out
    assert not has_record(system, user)
    assert re.search(PATTERN_PROMPT, out) is None, "sudo asked for a pattern the user does not have"
    logged = warnings_about(system, user)
    assert len(logged) == 1 and "result=ERROR,message=password_proof_required" in logged[0], logged
    # The same from a process in no session at all.
    r = system.run(f"setpriv --reuid={user} --regid={user} --init-groups " + RAW_ENROLL.format(user=user, pattern=PATTERN))
    assert r.stdout.strip() == "REPLY ERROR message=password_proof_required", r.stdout + r.stderr
    assert not has_record(system, user)


def test_enroll_on_a_terminal_asks_the_password_through_pkttyagent_and_then_sudo_takes_the_pattern(system, user):
    out = seat_session(system, user, enroll_steps() + [
        ["expect", f"Authenticating as: [^\\n]*{user}"], ["expect", "Password: "], ["secret", PASSWORD + "\n"],
        ["expect", f"Pattern enrolled for {user}"], ["expect", PROMPT_TAIL],
        *exit_status(0), *sudo_steps(with_pattern=True)])
    assert "AUTHENTICATION COMPLETE" in out, out
    assert not re.search(r"\[sudo\] password", out), "sudo asked for the password although the pattern was right"
    assert has_record(system, user)
    assert "password_proof=proven" in system.ok(f"journalctl -u patternlockd.service --no-pager -o cat | grep 'enroll user={user} '")


def test_a_wrong_password_is_refused_and_nothing_is_written(system, user):
    out = seat_session(system, user, enroll_steps() + [
        ["expect", "Password: "], ["secret", WRONG_PASSWORD + "\n"],
        ["expect", "AUTHENTICATION FAILED"], ["expect", re.escape(REQUIRED)], ["expect", PROMPT_TAIL],
        *exit_status(5), *sudo_steps(with_pattern=False)])
    assert f"Pattern enrolled for {user}" not in out
    assert not has_record(system, user)
    assert any("message=password_proof_required" in line for line in warnings_about(system, user))


def test_a_session_without_a_seat_is_asked_for_an_administrator_not_its_own_password(system, user):
    """allow_any=auth_admin: from a session polkit does not call local (an SSH
    login, or a pty login as here), the user's own password is not enough."""
    rc, out = system.pty(["login", user], system.login_steps(user, PASSWORD) + enroll_steps() + [
        ["expect", r"Authenticating as: root|Choose identity to authenticate as"],
        # Ctrl-C: the prompt and the command end; the daemon sees the client go.
        ["send", "\x03"], ["expect", PROMPT_TAIL], ["send", "exit\n"], ["eof"]], timeout=120)
    assert rc == 0, out
    assert f"Authenticating as: {user}" not in out
    assert not has_record(system, user)


@pytest.fixture
def polkit_gone(system):
    """polkit out of the way: its service masked and stopped, and (with `hide`)
    pkcheck and pkttyagent renamed, as on a system without polkitd; put back after."""
    hidden = []

    def take_away(hide=False):
        system.ok("systemctl mask --now polkit.service")
        if hide:
            for tool in ("/usr/bin/pkcheck", "/usr/bin/pkttyagent"):
                system.ok(f"mv {tool} {tool}.hidden")
                hidden.append(tool)

    yield take_away
    for tool in hidden:
        system.run(f"mv {tool}.hidden {tool}")
    system.ok("systemctl unmask polkit.service")


def test_without_a_running_polkit_the_cli_says_to_ask_root_or_use_sudo_and_nothing_is_written(system, user, polkit_gone):
    polkit_gone()
    out = seat_session(system, user, [
        ["send", "patternlockd enroll\n"],
        ["expect", "New pattern: "], ["secret", PATTERN + "\n"],
        ["expect", "Draw it again to confirm: "], ["secret", PATTERN + "\n"],
        ["expect", re.escape(UNAVAILABLE)], ["expect", PROMPT_TAIL], *exit_status(5),
        *raw_enroll_steps(user)])
    assert re.search(r"run sudo patternlockd enroll, or ask root to run: patternlockd enroll "
                     + user + r"\. Nothing was changed\.", out.replace("\n", " ")), out
    assert raw_reply(out) == "ERROR message=password_proof_unavailable", out
    assert not has_record(system, user)
    assert any("message=password_proof_unavailable" in line for line in warnings_about(system, user))


def test_without_polkit_installed_the_cli_says_so_before_a_pattern_is_drawn(system, user, polkit_gone):
    polkit_gone(hide=True)
    out = seat_session(system, user, [
        ["send", "patternlockd enroll\n"], ["expect", re.escape(UNAVAILABLE)], ["expect", PROMPT_TAIL],
        *exit_status(5), *raw_enroll_steps(user)])
    assert "New pattern" not in out, "a pattern was asked for although it could not be set"
    assert raw_reply(out) == "ERROR message=password_proof_unavailable", out
    assert not has_record(system, user)


def test_sudo_patternlockd_enroll_enrolls_the_user_who_ran_sudo_without_polkit(system, user):
    out = seat_session(system, user, [
        ["send", "sudo -k; sudo patternlockd enroll\n"],
        ["expect", r"\[sudo\] password for [^:]+: "], ["secret", PASSWORD + "\n"],
        ["expect", f"You ran sudo, so this is the pattern of {user} \\(not root\\)"],
        ["expect", "New pattern: "], ["secret", PATTERN + "\n"],
        ["expect", "Draw it again to confirm: "], ["secret", PATTERN + "\n"],
        ["expect", f"Pattern enrolled for {user}"],
        # On a terminal, the advice for a password that looks like a pattern.
        ["expect", "add a 0, a letter or a repeated digit"], ["expect", PROMPT_TAIL], *exit_status(0),
        *sudo_steps(with_pattern=True)])
    assert "AUTHENTICATING" not in out, "root's enroll needs no polkit"
    assert has_record(system, user)
    assert system.run("patternlockd verify root", input=PATTERN + "\n").returncode == 3, "root was enrolled instead"


def test_after_roots_remove_the_user_needs_its_password_again(system, user):
    system.ok(f"patternlockd enroll {user}", input=f"{PATTERN}\n{PATTERN}\n")
    system.ok(f"patternlockd verify {user}", input=PATTERN + "\n")
    system.ok(f"patternlockd remove {user}")
    assert not has_record(system, user)
    out = seat_session(system, user, raw_enroll_steps(user) + enroll_steps() + [
        ["expect", f"Authenticating as: [^\\n]*{user}"], ["expect", "Password: "], ["secret", PASSWORD + "\n"],
        ["expect", f"Pattern enrolled for {user}"], ["expect", PROMPT_TAIL], *exit_status(0)])
    assert raw_reply(out) == "ERROR message=password_proof_required", out
    assert has_record(system, user)
