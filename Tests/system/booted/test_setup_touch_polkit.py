# SPDX-License-Identifier: Apache-2.0
"""The whole first setup by touch alone, the password tapped on the setup
window's on-screen keyboard, against the real polkit: no compositor that runs
here has touch (sway's seat takes a virtual pointer, not a finger), so the
window is shown on the project's test compositor (a real Wayland server whose
`touch` commands are a finger's wl_touch events), run on this machine with its
socket inside the booted Debian 13 container's tree; the window itself runs in
the container, in the user's logind session on seat0 (as a display manager's:
polkit asks the user's own password there), with the project's packages
installed and the daemon, polkitd and pkttyagent as Debian ships them. Not one
key event reaches the window."""
import contextlib
import re
import subprocess
import time

import pytest

from harness.clients import Clients
from harness.booted import ROOT
from harness.common import skip_or_fail
from harness.screen_desk import Desk
from harness.screen_keyboard import KeyboardTyper
from harness.screen_support import Compositor, build_compositor
from harness.screen_touch import SHOTS

PASSWORD = "Touch-0nly-pass"
NEW = "2761834"  # accepted by the default policy
SETUP = "patternlock-setup"


class TouchWindow(KeyboardTyper):
    """patternlock-setup --debug in the desk's session, on `compositor`; taps
    its keys and buttons and drags its grid with a finger."""

    PREFIX = f"{SETUP}: "

    def __init__(self, desk, compositor, socket):
        super().__init__()
        self.desk, self.compositor = desk, compositor
        self.n = desk.start(f"export WAYLAND_DISPLAY={socket}\nexec {SETUP} --debug")

    def lines(self):
        log = self.desk.out(self.n)
        return [line[len(self.PREFIX):] for line in log[:log.rfind("\n") + 1].splitlines()
                if line.startswith(self.PREFIX)]

    def mark(self):
        return len(self.lines())

    def said(self, pattern, start=0):
        rx = re.compile(pattern)
        return [line for line in self.lines()[start:] if rx.search(line)]

    def await_said(self, pattern, start=0, timeout=30):
        self.desk.poll(lambda: self.said(pattern, start) or self.desk.rc(self.n) is not None,
                       f"/{pattern}/ from {SETUP}", timeout)
        found = self.said(pattern, start)
        assert found, f"{SETUP} ended with status {self.desk.rc(self.n)}:\n{self.desk.out(self.n)}"
        return found[0]

    def tap_at(self, x, y):
        self.compositor.ok(f"touch down 1 {x} {y}")
        reply = self.compositor.cmd("touch up 1")
        assert reply.startswith("ok") or "no surface" in reply, reply

    def button(self, label, start=0):
        line = self.await_said(rf'"{label}"@\d+,\d+(?![\d(])', start)
        x, y = re.search(rf'"{label}"@(\d+),(\d+)', line).groups()
        self.tap_at(int(x), int(y))

    def draw(self, pattern):
        line = self.await_said(r"^stage=.* grid=")
        x, y, side = (int(v) for v in re.search(r"grid=(\d+),(\d+),(\d+)", line).groups())

        def centre(d):
            return x + ((d - 1) % 3 + 0.5) * side / 3, y + ((d - 1) // 3 + 0.5) * side / 3
        dots = [int(d) for d in pattern]
        cx, cy = centre(dots[0])
        self.compositor.ok(f"touch down 0 {round(cx)} {round(cy)}")
        for d in dots[1:]:
            nx, ny = centre(d)
            for i in range(1, 7):
                self.compositor.ok(f"touch motion 0 {round(cx + (nx - cx) * i / 6)} {round(cy + (ny - cy) * i / 6)}")
            cx, cy = nx, ny
        self.compositor.ok("touch up 0")


@pytest.fixture
def first_user(trixie_system):
    s = trixie_system
    if "patternlock-screen" not in s.debs:
        skip_or_fail(f"make deb made no patternlock-screen package: {', '.join(sorted(s.debs))}")
    user = Clients(s).user("pltouch", PASSWORD, sudo=True)
    yield user
    s.run(f"rm -f /etc/sudoers.d/{user}; patternlockd remove {user} >/dev/null 2>&1; "
          f"loginctl terminate-user {user} 2>/dev/null; userdel --remove {user}")


@contextlib.contextmanager
def window_on_touch(s, user):
    """The user's seat0 session with the setup window on the test compositor;
    yields the window."""
    build_compositor()
    uid, gid = (int(s.ok(f"id -{flag} {user}")) for flag in ("u", "g"))
    with Desk(s, user, PASSWORD, shot_prefix="setup-touch", seat=True) as desk:
        compositor = Compositor((uid, gid), "480x800", runtime_in=f"{s.merged}/var/tmp")
        try:
            inside = "/" + str(compositor.runtime.relative_to(s.merged)) + "/" + compositor.socket
            yield TouchWindow(desk, compositor, inside)
        finally:
            compositor.close()


def to_the_confirmation(w):
    """The new pattern drawn once by touch and Continue; returns the mark at the confirmation."""
    w.await_said(r'^stage=first title="Draw an unlock pattern"')
    mark = w.mark()
    w.draw(NEW)
    w.await_said(r'^stage=recorded title="Pattern recorded" verdict=acceptable', mark)
    w.button("Continue", mark)
    w.await_said(r'^stage=confirm ', mark)
    return w.mark()


def to_the_password(w):
    """The new pattern drawn twice by touch; returns the mark before the password stage."""
    mark = to_the_confirmation(w)
    w.draw(NEW)
    line = w.await_said(r'^stage=password title="Enter your password"', mark, timeout=40)
    assert 'question="Password: "' in line, line
    return mark


def test_a_first_pattern_is_set_by_touch_alone_with_the_password_tapped_through_polkit(trixie_system, first_user):
    s, user = trixie_system, first_user
    clients = Clients(s)
    with window_on_touch(s, user) as w:
        desk, compositor = w.desk, w.compositor
        mark = to_the_password(w)
        w.shown(mark)
        w.type(PASSWORD)
        SHOTS.mkdir(parents=True, exist_ok=True)
        compositor.screenshot(SHOTS / "setup-touch-password.png")
        mark = w.mark()
        w.tap("Enter")  # the keyboard's own Enter answers, as Authenticate does
        w.await_said(r'^stage=done title="Your new unlock pattern is set"', mark, timeout=40)
        compositor.screenshot(SHOTS / "setup-touch-done.png")
        w.button("Done")
        assert desk.ended(w.n) == 0, desk.out(w.n)
        log = desk.out(w.n)
    assert PASSWORD not in log and NEW not in log.replace(user, ""), "a secret reached the --debug output"
    enrolls = [line for line in clients.daemon_lines(user) if line.startswith("enroll ")]
    assert len(enrolls) == 1 and " result=OK" in enrolls[0] and "password_proof=proven" in enrolls[0], enrolls
    out = clients.session(user, PASSWORD, [
        [["send", "sudo -k sh -c 'echo SUDO-OK $(id -un)'\n"], ["expect", "Pattern or password: "],
         ["secret", NEW + "\n"], ["expect", "SUDO-OK root"]],
    ])
    assert "password for" not in out and "Sorry" not in out, out


def test_a_wrong_password_tapped_sets_nothing_and_asks_to_confirm_again(trixie_system, first_user):
    s, user = trixie_system, first_user
    clients = Clients(s)
    with window_on_touch(s, user) as w:
        mark = to_the_password(w)
        w.shown(mark)
        w.type("Wrong-pass-1")
        mark = w.mark()
        w.button("Authenticate", mark - 1)
        line = w.await_said(r'^stage=confirm title="Draw the pattern again to confirm"', mark, timeout=40)
        assert "Your password was not confirmed, so nothing was changed" in line, line
        mark = w.mark()
        w.button("Cancel", mark - 1)
        assert w.desk.ended(w.n) == 1, w.desk.out(w.n)
        log = w.desk.out(w.n)
    assert "Wrong-pass-1" not in log
    assert s.run(f"test -e /var/lib/private/patternlock/{user}").returncode != 0, "a record was written"
    enrolls = [line for line in clients.daemon_lines(user) if line.startswith("enroll ")]
    assert len(enrolls) == 1 and "password_proof_required" in enrolls[0], enrolls


# ---------------------------------------------------------------- another program's password dialog

# Another program of the same user (malware, say) asks the daemon to set a first
# pattern of its own: it connects as the user and waits for polkit's answer.
OTHER_PATTERN = "4381672"
OTHER_ENROLL = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect("/run/patternlock/socket")
s.sendall(f"ENROLL user={sys.argv[1]} pattern={sys.argv[2]}\n".encode())
print("REPLY", s.recv(200).decode().strip(), flush=True)
"""


SESSION_AGENT = ROOT / "build" / "tools" / "session_agent"


def desktop_agent(w):
    """polkit's agent for the whole session, as GNOME's or Plasma's is (the
    window's own agent is a fallback, so polkit asks this one):
    build/tools/session_agent, polkit's text listener registered for the
    session, on a terminal of its own whose screen is the command's output.
    Returns its command number once it is registered."""
    desk, s = w.desk, w.desk.system
    r = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "build/tools/session_agent"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "cannot build the session agent:\n" + r.stdout + r.stderr
    fifo, keys = f"{desk.dir}/agent-registered", f"{desk.dir}/agent-keys"
    s.ok(f"rm -f {fifo} && mkfifo -m 600 {fifo} && touch {keys} && chown {desk.user}: {fifo} {keys}")
    # It closes fd 3 once it is registered with polkit, and the reader of the
    # fifo then sees its end. What is appended to agent-keys is typed on its terminal.
    n = desk.start(f"tail -f {keys} | script -qfc 'exec {SESSION_AGENT} 3 3>{fifo}' /dev/null")
    r = s.run(f"timeout 30 cat {fifo}", timeout=60)
    assert r.returncode == 0 and "session_agent:" not in desk.out(n), (
        f"the desktop's agent did not register: {desk.out(n)}")
    return n


def window_pid(w):
    return int(w.desk.system.ok(f"pgrep -u {w.desk.user} -x patternlock-set").split()[0])


def no_record(s, user):
    return s.run(f"test -e /var/lib/private/patternlock/{user}").returncode != 0


def test_while_another_program_asks_for_a_first_pattern_the_window_says_not_to_type_the_password(
        trixie_system, first_user):
    """Another program of the user sends its own ENROLL as the window starts, and
    the desktop's dialog asks the password for it. The dialog names that program;
    the window's own ENROLL is answered at once that another program is asking,
    and the window says so, and not to enter the password there. Nothing is set."""
    s, user = trixie_system, first_user
    clients = Clients(s)
    with window_on_touch(s, user) as w:
        agent = desktop_agent(w)
        s.ok("cat > /var/tmp/pl-other-enroll.py", input=OTHER_ENROLL)
        other = w.desk.start(f"exec python3 /var/tmp/pl-other-enroll.py {user} {OTHER_PATTERN}")
        shown = w.desk.poll(lambda: "Password: " in w.desk.out(agent) and w.desk.out(agent),
                            "the desktop's dialog asking for the other program")
        assert f"Asked by python3 (process {w.desk.pid(other)})." in shown, shown
        mark = to_the_confirmation(w)
        w.draw(NEW)
        line = w.await_said(r"^stage=confirm .*Another program is asking to set your unlock pattern", mark, timeout=40)
        assert "Do not enter your password" in line, line
        assert not w.said(r"^stage=password", mark), "the window did not ask for a password"
        s.run(f"kill {w.desk.pid(other)}")
        mark = w.mark()
        w.button("Cancel", mark - 1)
        assert w.desk.ended(w.n) == 1, w.desk.out(w.n)
    enrolls = [line for line in clients.daemon_lines(user) if line.startswith("enroll ")]
    assert any("result=ERROR,message=password_proof_in_progress" in line for line in enrolls), enrolls
    assert no_record(s, user), "a record was written"


def test_closing_the_window_while_the_desktops_dialog_asks_ends_that_dialog_and_sets_nothing(
        trixie_system, first_user):
    """A desktop's agent asks the password for the window's first pattern (its
    dialog names the window's process); the window is closed. The request is
    hung up, so the daemon ends its check and the dialog goes with it: a
    password typed there now could set nothing. The window exits 1."""
    s, user = trixie_system, first_user
    clients = Clients(s)
    with window_on_touch(s, user) as w:
        agent = desktop_agent(w)
        to_the_confirmation(w)
        w.draw(NEW)
        shown = w.desk.poll(lambda: "Password: " in w.desk.out(agent) and w.desk.out(agent),
                            "the desktop's dialog asking for the window")
        assert f"Asked by patternlock-setup (process {window_pid(w)})." in shown, shown
        w.compositor.ok("close")
        assert w.desk.ended(w.n) == 1, w.desk.out(w.n)
        enrolls = w.desk.poll(lambda: [line for line in clients.daemon_lines(user) if line.startswith("enroll ")],
                              "the daemon's answer to the hung-up request")
        assert len(enrolls) == 1 and "client%20hung%20up" in enrolls[0], enrolls
        # The right password, typed into the dialog now, proves nothing for anyone:
        # polkit cancelled that question (this text agent says so once its read
        # of the terminal returns; a desktop's dialog closes at once).
        s.ok(f"printf '%s\\n' '{PASSWORD}' >> {w.desk.dir}/agent-keys")
        after = w.desk.poll(lambda: re.search(r"Cancelled|==== AUTHENTICATION", w.desk.out(agent)[len(shown):]),
                            "the dialog's question to end")
        assert after.group(0) == "Cancelled", w.desk.out(agent)
        time.sleep(2)
    assert no_record(s, user), "a record was written"
    enrolls = [line for line in clients.daemon_lines(user) if line.startswith("enroll ")]
    assert len(enrolls) == 1, enrolls


def test_another_programs_check_of_the_windows_process_is_not_answered_in_the_window(trixie_system, first_user):
    """While the window's first pattern is being sent, another program of the
    user asks polkit about the window's own process (`pkcheck --process`), and
    polkit asks the window's agent before the daemon's check comes (the daemon
    held back with SIGSTOP to put them in that order). That question's message
    names no process, as polkit takes details only from the daemon: the window
    never opens its password stage for it, ends its agent (which ends that
    check, refused), and says why nothing was set."""
    s, user = trixie_system, first_user
    with window_on_touch(s, user) as w:
        to_the_confirmation(w)
        mark = w.mark()
        daemon = s.ok("systemctl show -p MainPID --value patternlockd.service").strip()
        assert daemon not in ("", "0"), "the daemon runs (the window asked its STATUS)"
        s.ok(f"kill -STOP {daemon}")
        try:
            w.draw(NEW)
            wpid = window_pid(w)
            w.desk.wait(f"pgrep -u {user} -f 'pkttyagent --process {wpid} ' >/dev/null", "the window's agent")
            time.sleep(1.5)  # registered with polkit before the window sends its ENROLL
            foreign = w.desk.start(
                f"exec pkcheck --action-id org.patternlock.enroll-self --process {wpid} --allow-user-interaction")
            assert w.desk.ended(foreign, timeout=40) != 0, w.desk.out(foreign)
        finally:
            s.run(f"kill -CONT {daemon}")
        line = w.await_said(r"^stage=confirm .*Another program asked for your password through this window",
                            mark, timeout=40)
        assert not w.said(r"^stage=password", mark), "the window opened its password stage for that question"
        w.button("Cancel", w.mark() - 1)
        assert w.desk.ended(w.n) == 1, w.desk.out(w.n)
    assert no_record(s, user), "a record was written"
