# SPDX-License-Identifier: Apache-2.0
"""pam_patternlock.so inside real programs — pamtester and sudo — through real
/etc/pam.d services, for throwaway users. Every user, service file and sudoers
snippet a test creates has a unique name and is removed when it ends."""
import os
import pathlib
import pty
import select
import subprocess
import time

import pytest

from harness.pam_support import (module_line, pamtester, COMPACT_PROMPT, GRID, ONE_PROMPT, PROMPT, ROOT, RIGHT, WRONG, failures, unique, without_logind, wrong)


PAM_D = pathlib.Path("/etc/pam.d")
SUDOERS_D = pathlib.Path("/etc/sudoers.d")
TRANSCRIPT = pathlib.Path("/tmp/patternlock-sudo-transcript.txt")
PASSWORD = "pl-Password-1"
# A password that looks like a pattern: digits 1-9, none twice, 4 or more.
DIGIT_PASSWORD = "14789"


# ---- pamtester ------------------------------------------------------------------

def test_pamtester_right_and_wrong_pattern(pam_service, pam_module, live, enrolled):
    service = pam_service([module_line("required", pam_module, live.socket)])
    ok = pamtester(service, enrolled, RIGHT + "\n")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "successfully authenticated" in ok.stdout + ok.stderr
    # pamtester sets no PAM_TTY: grid=auto chooses the compact form,
    # the keys in the prompt and no message.
    assert COMPACT_PROMPT in ok.stdout + ok.stderr
    assert "type the dots in order" not in ok.stdout + ok.stderr

    bad = pamtester(service, enrolled, WRONG + "\n")
    assert bad.returncode != 0, bad.stdout + bad.stderr
    assert wrong(4) in bad.stderr
    assert "Authentication failure" in bad.stderr
    assert failures(live, enrolled) == 1


def shipped_stack(module, daemon_socket):
    """The auth lines of pam/pam.d-example, with the module's path and socket."""
    lines = []
    for line in (ROOT / "pam" / "pam.d-example").read_text().splitlines():
        if line.startswith("auth"):
            lines.append(line.replace("pam_patternlock.so",
                                      f"{module} socket={daemon_socket}"))
    return lines


def test_example_stack_takes_the_pattern_without_a_password(pam_service, pam_module, live,
                                                            enrolled):
    service = pam_service(shipped_stack(pam_module, live.socket))
    r = pamtester(service, enrolled, RIGHT + "\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Password" not in r.stdout + r.stderr


def test_example_stack_ends_the_attempt_at_a_wrong_pattern(pam_service, pam_module, live, enrolled):
    service = pam_service(shipped_stack(pam_module, live.socket))
    r = pamtester(service, enrolled, WRONG + "\n")
    out = r.stdout + r.stderr
    # The wrong pattern is reported and the attempt fails there: pam_unix is
    # not asked.
    assert wrong(4) in out
    assert "Password: " not in out
    assert "Authentication failure" in out
    assert r.returncode != 0
    assert failures(live, enrolled) == 1


def test_example_stack_without_daemon_asks_only_the_password(pam_service, pam_module, enrolled,
                                                            tmp_path):
    service = pam_service(shipped_stack(pam_module, tmp_path / "no-daemon"))
    r = pamtester(service, enrolled, "\n")
    out = r.stdout + r.stderr
    assert "Pattern" not in out
    assert "Password: " in out


# ---- sudo ------------------------------------------------------------------------

@pytest.fixture
def sudo_user(request, live, user, pam_service, pam_module):
    """An enrolled user whom sudo authenticates through a service that is the
    module alone; the sudoers snippet is removed afterwards. Parametrize
    indirectly with more Defaults (e.g. "!pam_silent") for this user."""
    live.enroll(user, RIGHT)
    service = pam_service([module_line("required", pam_module, live.socket)])
    extra = "".join(f"Defaults:{user} {d}\n" for d in getattr(request, "param", ()))
    snippet = SUDOERS_D / unique("pltest_")  # sudo skips names with a dot
    snippet.write_text(
        f"# written by patternlock's Tests/system/pam/test_pam_sudo.py\n"
        f"Defaults:{user} pam_service={service}\n"
        f"Defaults:{user} timestamp_timeout=0\n"
        f"Defaults:{user} !lecture\n"
        # Debian's sudoers sets mail_badpass; no mail for a test's wrong pattern.
        f"Defaults:{user} !mail_badpass\n"
        + extra +
        f"{user} ALL=(root) /usr/bin/id\n")
    try:
        snippet.chmod(0o440)
        check = subprocess.run(["visudo", "-cf", str(snippet)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        yield user
    finally:
        snippet.unlink(missing_ok=True)


def as_user(user, *cmd):
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", *cmd]


def sudo_id(user, stdin):
    return subprocess.run(without_logind(as_user(user, "sudo", "-S", "-k", "/usr/bin/id", "-u")), input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_sudo_runs_the_command_for_the_right_pattern(sudo_user):
    r = sudo_id(sudo_user, RIGHT + "\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "0"
    # sudo -S on a pipe sets no PAM_TTY: the compact form.
    assert COMPACT_PROMPT in r.stderr


def test_sudo_refuses_a_wrong_pattern(live, sudo_user):
    r = sudo_id(sudo_user, WRONG + "\n")
    assert r.returncode != 0
    assert "0" not in r.stdout.splitlines()
    assert wrong(4) in r.stderr
    # sudo asks again; stdin is at its end, so that prompt counts for nothing.
    assert failures(live, sudo_user) == 1


def run_on_terminal(cmd, answers, timeout=60):
    """Runs cmd on a new pseudo-terminal, typing one answer after each prompt;
    an answer is the text for the pattern prompt, or (prompt, text) for another
    prompt. Returns (everything the terminal showed, exit status)."""
    cmd = without_logind(cmd)
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    shown = b""
    seen = 0                # where the text after the last answer starts
    pending = [a if isinstance(a, tuple) else (PROMPT, a) for a in answers]
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if pending and pending[0][0].encode() in shown[seen:]:
                seen = len(shown)
                os.write(fd, pending.pop(0)[1].encode() + b"\n")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return shown.decode(errors="replace").replace("\r\n", "\n"), os.waitstatus_to_exitcode(status)


def save_transcript(path, title, text):
    path.write_text(text)
    print(f"\n--- {title} (also in {path}) ---\n{text}---")


def test_sudo_on_a_terminal_transcript(sudo_user):
    """What the user sees: a wrong pattern, sudo asks again, the right one.
    sudo always passes PAM_SILENT, so the grid comes inside the prompt."""
    shown, code = run_on_terminal(as_user(sudo_user, "sudo", "-k", "/usr/bin/id", "-u"),
                                  [WRONG, RIGHT])
    transcript = f"$ sudo id -u\n{shown}(exit status {code})\n"
    save_transcript(TRANSCRIPT, "sudo on a terminal", transcript)
    assert code == 0, transcript
    assert shown.count(PROMPT) == 2
    assert shown.count("type the dots in order") == 2
    assert "  1 2 3\n  4 5 6\n  7 8 9\n" + PROMPT in shown.replace("\r\n", "\n")
    assert wrong(4) in shown
    assert shown.rstrip().endswith("0")
    typed = shown.replace(sudo_user, "")
    assert RIGHT not in typed and WRONG not in typed  # echo was off


def test_pamtester_on_a_terminal_transcript(pam_service, pam_module, live, enrolled):
    """Without PAM_SILENT the grid comes before the prompt. pamtester sets
    PAM_TTY only when told: told the terminal it runs on, grid=auto shows the
    full grid."""
    service = pam_service([module_line("required", pam_module, live.socket)])
    shown, code = run_on_terminal(
        ["sh", "-c", 'exec pamtester -I "tty=$(tty)" "$0" "$1" authenticate', service, enrolled], [RIGHT])
    transcript = f"$ pamtester {service} {enrolled} authenticate\n{shown}(exit status {code})\n"
    save_transcript(TRANSCRIPT.with_name("patternlock-pamtester-transcript.txt"),
                    "pamtester on a terminal", transcript)
    assert code == 0, transcript
    assert GRID.format(user=enrolled) + "\n" + PROMPT in shown
    assert RIGHT not in shown.replace(enrolled, "").replace(service, "")


@pytest.fixture
def sudo_user_with_the_example_stack(live, user, pam_service, pam_module):
    """An enrolled user with a password, whom sudo authenticates through the
    shipped example stack: the pattern first, the password as the fallback."""
    from harness.pam_support import set_password
    live.enroll(user, RIGHT)
    set_password(user, PASSWORD)
    service = pam_service(shipped_stack(pam_module, live.socket))
    snippet = SUDOERS_D / unique("pltest_")
    snippet.write_text(
        f"# written by patternlock's Tests/system/pam/test_pam_sudo.py\n"
        f"Defaults:{user} pam_service={service}\n"
        f"Defaults:{user} timestamp_timeout=0\n"
        f"Defaults:{user} !lecture\n"
        f"Defaults:{user} !mail_badpass\n"
        f"{user} ALL=(root) /usr/bin/id\n")
    try:
        snippet.chmod(0o440)
        yield user
    finally:
        snippet.unlink(missing_ok=True)


def test_sudo_with_the_example_stack_says_sorry_after_a_wrong_pattern_and_asks_the_one_prompt_again(
        live, sudo_user_with_the_example_stack):
    """What pam_patternlock(8) shows under sudo: the grid inside the prompt, the
    wrong pattern told, and the attempt over (sudo's "Sorry, try again."); the
    next one is the one prompt again, and the password typed there unlocks.
    pam_unix was never asked in the first attempt."""
    user = sudo_user_with_the_example_stack
    shown, code = run_on_terminal(as_user(user, "sudo", "-k", "/usr/bin/id", "-u"),
                                  [(ONE_PROMPT, WRONG), (ONE_PROMPT, PASSWORD)])
    transcript = f"$ sudo id -u\n{shown}(exit status {code})\n"
    save_transcript(TRANSCRIPT.with_name("patternlock-sudo-example-stack-transcript.txt"),
                    "sudo, example stack, wrong pattern then the password", transcript)
    assert code == 0, transcript
    one = GRID.format(user=user) + "\n" + ONE_PROMPT + "\n"
    expected = one + wrong(4) + "\nSorry, try again.\n" + one + "0\n"
    assert shown.endswith(expected), transcript
    assert "password for" not in shown
    assert failures(live, user) == 1


def test_sudo_with_the_example_stack_gives_three_tries_each_at_the_one_prompt(live, sudo_user_with_the_example_stack):
    user = sudo_user_with_the_example_stack
    shown, code = run_on_terminal(as_user(user, "sudo", "-k", "/usr/bin/id", "-u"),
                                  [(ONE_PROMPT, WRONG)] * 3)
    assert code != 0, shown
    assert shown.count(ONE_PROMPT) == 3 and shown.count("Sorry, try again.") == 2, shown
    assert "3 incorrect password attempts" in shown, shown
    assert [wrong(n) in shown for n in (4, 3, 2)] == [True] * 3, shown
    assert "password for" not in shown
    assert failures(live, user) == 3


def test_sudo_with_a_digit_password_shaped_like_a_pattern_unlocks_after_enter_on_the_empty_prompt(
        live, sudo_user_with_the_example_stack):
    """The documented way out for a password made only of distinct digits 1-9:
    Enter on the empty one prompt, then the password at pam_unix's prompt.
    Nothing reaches the daemon."""
    from harness.pam_support import set_password
    user = sudo_user_with_the_example_stack
    set_password(user, DIGIT_PASSWORD)
    shown, code = run_on_terminal(as_user(user, "sudo", "-k", "/usr/bin/id", "-u"),
                                  [(ONE_PROMPT, ""), ("password for", DIGIT_PASSWORD)])
    assert code == 0, shown
    assert shown.endswith(f"[sudo] password for {user}: \n0\n"), shown
    assert "Wrong pattern" not in shown and "Sorry" not in shown
    assert failures(live, user) == 0


def test_sudo_with_the_example_stack_takes_the_password_at_the_one_prompt(
        live, sudo_user_with_the_example_stack):
    """one_prompt: the password typed at "Pattern or password:" is
    handed to pam_unix (try_first_pass); sudo asks nothing more, and the
    daemon never sees it nor counts it."""
    user = sudo_user_with_the_example_stack
    shown, code = run_on_terminal(as_user(user, "sudo", "-k", "/usr/bin/id", "-u"),
                                  [(ONE_PROMPT, PASSWORD)])
    transcript = f"$ sudo id -u\n{shown}(exit status {code})\n"
    save_transcript(TRANSCRIPT.with_name("patternlock-sudo-one-prompt-transcript.txt"),
                    "sudo, example stack, the password at the one prompt", transcript)
    assert code == 0, transcript
    assert shown.endswith(GRID.format(user=user) + "\n" + ONE_PROMPT + "\n0\n"), transcript
    assert "password for" not in shown and "Wrong pattern" not in shown
    assert failures(live, user) == 0
