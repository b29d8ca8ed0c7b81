# SPDX-License-Identifier: Apache-2.0
"""Issue 20 item 4: the real lock screens and polkit, in the booted container
(conftest's client_system), each inside a real local logind session that
`login` opened on a pty, with the module as pam-auth-update installs it
(one_prompt password_at_login):

- swaylock on a headless sway, typed into with wtype, shot with grim;
- xsecurelock on Xvfb, typed into with xdotool, shot with xwd and convert;
- pkexec with pkttyagent and polkitd, through /etc/pam.d/polkit-1 written as a
  distribution ships it (Debian ships none).

Each one is unlocked with the pattern, unlocked with the password typed once,
and taken through five wrong patterns: the pattern is then locked and no longer
unlocks, the password still does, and after `patternlockd reset` the pattern
does again. The password never reaches the daemon: the daemon's journal lines
for the user are exactly the verify results the patterns explain (a password
that was sent would add one) and `patternlockd status` counts only the wrong
patterns.

Screenshots land in build/lockscreens/ (the chosen ones are in docs/screenshots/,
README.md links them)."""
import json
import re
import shlex
import shutil
import time

import pytest

import booted
from test_presence import Clients

PASSWORD = "Lock-Scr33n-pass"
PATTERN = "46183"  # accepted by the enroll policy the installed daemon runs
WRONG_PATTERN = "2589"  # a valid pattern, so each one counts
# one_prompt's prompt with grid=auto where there is no terminal: the keys in the prompt.
PROMPT = "Pattern [123 456 789] or password: "
SESSION_SCRIPT = booted.ROOT / "Tests" / "system" / "lockscreen_session.sh"
SHOTS = booted.ROOT / "build" / "lockscreens"
# A distribution's /etc/pam.d/polkit-1 (Debian's policykit-1 shipped this one
# until polkit 121; the `other` stack applies without it, with the same auth).
POLKIT_PAM = """#%PAM-1.0
@include common-auth
@include common-account
@include common-password
session       required   pam_env.so readenv=1 user_readenv=0
session       required   pam_env.so readenv=1 envfile=/etc/default/locale user_readenv=0
@include common-session-noninteractive
"""
# The daemon's verify results for one client's run: the pattern; the password
# (nothing); five wrong patterns; the pattern while locked (nothing: the module
# learns from STATUS that the user is locked and asks no VERIFY); the password
# (nothing); after the reset, the pattern.
EXPECTED_RESULTS = ["OK"] + [f"FAIL,remaining={n}" for n in (4, 3, 2, 1, 0)] + ["OK"]


@pytest.fixture(scope="module")
def clients(client_system):
    SHOTS.mkdir(parents=True, exist_ok=True)
    return Clients(client_system)


def verify_results(clients, user):
    """The result= of each verify line the daemon logged about user, in order."""
    return [re.search(r" result=(\S+)", line).group(1) for line in verify_lines(clients, user)]


def verify_lines(clients, user):
    """The daemon's journal lines about user's attempts (the module also asks
    STATUS before it prompts: that carries no secret and counts nothing)."""
    return [line for line in clients.daemon_lines(user) if line.startswith("verify ")]


def status(clients, user):
    return clients.system.run(f"patternlockd status {user}").stdout


def locked_after(clients, user):
    """How many failures `patternlockd status` lists for a locked user (None
    when the user is not locked)."""
    out = status(clients, user)
    if f"{user}: LOCKED since " not in out:
        return None
    return len(re.findall(r"^  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC ", out, re.M))


class Desktop:
    """A user's local login session, opened by `login` on a pty in the background,
    whose shell is lockscreen_session.sh: a display server (`kind` sway or x11)
    and, on request, its lock screen, both in the session. The test types and
    takes screenshots as the user from outside, as a keyboard and a camera would."""

    LOCKER = {"sway": "swaylock", "x11": "xsecurelock"}
    SERVICE = {"sway": "swaylock", "x11": "common-auth"}  # xsecurelock's default XSECURELOCK_PAM_SERVICE

    def __init__(self, clients, user, kind):
        self.clients, self.system, self.user, self.kind = clients, clients.system, user, kind
        self.dir = f"/var/tmp/pl-lock-{user}"  # not the container's /tmp tmpfs: the host reads it in the overlay
        self.locks = 0
        uid = clients.uid(user)
        self.env = (f"XDG_RUNTIME_DIR=/run/user/{uid} WAYLAND_DISPLAY=wayland-1" if kind == "sway"
                    else "DISPLAY=:5")

    def __enter__(self):
        s, d = self.system, self.dir
        steps = s.login_steps(self.user, PASSWORD) + [
            ["send", f"exec /bin/sh {SESSION_SCRIPT} {self.kind} {d}\n"], ["eof"]]
        spec = json.dumps({"argv": ["login", self.user], "timeout": 600, "steps": steps})
        s.ok(f"rm -rf {d} && mkdir -m 700 {d} && chown {self.user}: {d} && cat > {d}.json && "
             f"(setsid /usr/bin/python3 {booted.PTY_DRIVER} < {d}.json > {d}.out 2>&1 &)", input=spec)
        self.wait(f"test -e {d}/ready", "the display server started in the session", timeout=60)
        return self

    def __exit__(self, *exc):
        self.system.run(f"touch {self.dir}/quit; sleep 0.5; loginctl terminate-user {self.user}; "
                        f"for i in $(seq 100); do loginctl show-user {self.user} >/dev/null 2>&1 || break; "
                        "sleep 0.1; done")

    def diagnostics(self):
        return self.system.run(f"cd {self.dir} && tail -n 20 ../pl-lock-{self.user}.out server.log locker.*.log; "
                               f"ls {self.dir}").stdout

    def wait(self, condition, what, timeout=30):
        """Polls a shell condition in the container (as root) until it holds."""
        r = self.system.run(f"for i in $(seq {timeout * 10}); do {condition} && exit 0; sleep 0.1; done; exit 1",
                            timeout=timeout + 30)
        assert r.returncode == 0, f"waited {timeout} s for: {what}\n{self.diagnostics()}"

    def as_user(self, script, input=None):
        r = self.system.run(f"cd {self.dir} && runuser -u {self.user} -- env {self.env} sh -c {shlex.quote(script)}",
                            input=input, timeout=60)
        assert r.returncode == 0, f"{script}\n{r.stdout}{r.stderr}"
        return r.stdout

    def grab(self):
        """Shell words that write a PNG of the screen to stdout."""
        return "grim -" if self.kind == "sway" else "xwd -root -silent | /usr/bin/convert xwd:- png:-"

    def probe(self, fmt):
        """ImageMagick's `fmt` of the screen (/usr/bin/convert: the host's
        /usr/local/bin, which the container shares, may hold something else by
        that name)."""
        return self.as_user(f"{self.grab()} | /usr/bin/convert png:- -format '{fmt}' info:")

    def shot(self, name):
        """Saves the screen as build/lockscreens/KIND-NAME.png on the host."""
        self.as_user(f"{self.grab()} > {name}.png")
        target = SHOTS / f"{self.kind}-{name}.png"
        shutil.copyfile(self.system.merged / self.dir.lstrip("/") / f"{name}.png", target)
        return target

    def poll(self, check, what, timeout=30):
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, f"waited {timeout} s for: {what}\n{self.diagnostics()}"
            time.sleep(0.2)

    def lock(self):
        """Starts the lock screen in the session and waits until it shows."""
        self.locks += 1
        self.as_user("touch lock")
        self.wait(f"pgrep -u {self.user} -x {self.LOCKER[self.kind]} >/dev/null", "the lock screen started")
        if self.kind == "sway":
            # swaylock's colour (-c 336699) fills the screen once it is locked.
            self.poll(lambda: self.probe("%[hex:p{20,20}]") == "336699", "swaylock's colour on the screen")
        else:
            # xsecurelock blanks the screen, and a key shows its PAM prompt.
            self.poll(self.prompted, "xsecurelock's prompt on the screen")

    def screen(self):
        """What xsecurelock shows, and how bright: "blank", "error" (a red
        message) or "text" (white: a prompt or "Processing..."; it moves a few
        pixels each time, against burn-in, so pixels are not compared)."""
        red, green = map(float, self.probe("%[fx:mean.r] %[fx:mean.g]").split())
        return ("blank" if red == 0 else "error" if red > green * 1.05 else "text"), red

    def prompted(self):
        """Wakes xsecurelock with a key; true once it shows the prompt."""
        self.as_user("xdotool key shift")
        return self.screen()[0] == "text"

    def prompted_again(self, wake=True):
        """True once xsecurelock asks again: white text on the screen (a prompt,
        not the red message) while its PAM helper waits on the pipe for the
        answer (not in the fail delay behind "Processing..."). The prompt is the
        module's, or pam_unix's "Password:" once the pattern is locked."""
        if wake:
            self.as_user("xdotool key shift")
        waiting = self.system.run(f"for p in $(pgrep -u {self.user} -x authproto_pam); do "
                                  "grep -q pipe /proc/$p/wchan && exit 0; done; exit 1").returncode == 0
        return waiting and self.screen()[0] == "text"

    def unlocked(self):
        r = self.system.run(f"cat {self.dir}/rc.{self.locks}")
        return r.stdout.strip() if r.returncode == 0 else None

    def refusals_seen(self):
        """How many entries this lock screen has refused: swaylock logs each
        failed pam_authenticate; for xsecurelock (which logs none), pam_unix's
        helper logs each password it checked in vain: a refused entry always
        reaches pam_unix, as one_prompt hands a wrong or locked pattern on."""
        if self.kind == "sway":
            return int(self.system.ok(f"grep -c 'pam_authenticate failed' {self.dir}/locker.{self.locks}.log || true"))
        out = self.system.ok("journalctl -o cat --no-pager")
        return out.count(f"password check failed for user ({self.user})")

    def type(self, text):
        """Types text and Enter, from stdin (never in argv)."""
        if self.kind == "sway":
            # The first key of each wtype call is often lost: a throwaway Escape
            # (which clears swaylock's buffer) goes first.
            self.as_user("wtype -d 20 -k Escape - -k Return", input=text)
        else:
            self.as_user("xdotool type --delay 30 --file - && xdotool key Return", input=text)

    def attempt(self, text, then=None, shot=None):
        """Types text at the lock screen, and `then` at xsecurelock's next prompt
        (after a wrong pattern the module hands nothing on, and pam_unix asks
        "Password:"); returns "unlocked" when the lock screen ended (with status
        0), "refused" when PAM said no and it asks again."""
        refusals = self.refusals_seen()
        if self.kind == "sway":
            # wtype's keys are now and then lost (a virtual keyboard that has
            # just connected): type again, after the Escape that clears what
            # swaylock got, until swaylock takes the entry to PAM.
            log = f"{self.dir}/locker.{self.locks}.log"
            count = f"grep -c 'received pw check request' {log} || true"
            requests = int(self.system.ok(count))
            for _ in range(3):
                self.type(text)
                if self.system.run(f"for i in $(seq 50); do [ $({count}) -gt {requests} ] && exit 0; sleep 0.1; "
                                   "done; exit 1").returncode == 0:
                    break
            else:
                raise AssertionError(f"swaylock never took the entry to PAM\n{self.diagnostics()}")
        else:
            self.type(text)

        shots = []

        def snap():
            if shot and self.kind == "x11" and not shots and self.screen()[0] == "error":
                shots.append(self.shot(shot))  # xsecurelock's message shows only for a while

        if then is not None:
            self.poll(lambda: snap() or self.prompted_again(wake=False), "xsecurelock's next prompt")
            self.type(then)

        def settled():
            snap()
            return self.unlocked() is not None or self.refusals_seen() > refusals
        self.poll(settled, "the lock screen to unlock or refuse")
        if shot and not shots:
            self.shot(shot)
        rc = self.unlocked()
        if rc is not None:
            assert rc == "0", f"{self.LOCKER[self.kind]} ended with status {rc}\n{self.diagnostics()}"
            return "unlocked"
        if self.kind == "x11":
            self.poll(self.prompted_again, "xsecurelock's prompt again")
        return "refused"


@pytest.mark.parametrize("kind", ["sway", "x11"])
def test_a_lock_screen_takes_the_pattern_the_password_once_and_locks_the_pattern_after_five_wrong(clients, kind):
    s = clients.system
    user = clients.user(f"pl{kind}", PASSWORD, pattern=PATTERN)
    with Desktop(clients, user, kind) as desk:
        # The pattern unlocks.
        desk.lock()
        desk.shot("locked")
        assert desk.attempt(PATTERN) == "unlocked"
        assert verify_results(clients, user) == ["OK"]
        line = verify_lines(clients, user)[-1]
        assert f" service={desk.SERVICE[kind]} " in line and re.search(r" session=\d+ seat=pts/\d+ ", line), line

        # The password, typed once, unlocks, and the daemon never hears of it.
        desk.lock()
        before = verify_lines(clients, user)
        assert desk.attempt(PASSWORD) == "unlocked"
        assert verify_lines(clients, user) == before, "the password reached the daemon"

        # Five wrong patterns lock the pattern.
        desk.lock()
        for n in range(5):
            # swaylock answers pam_unix's "Password:" with the same entry; at
            # xsecurelock's the user types the pattern again.
            assert desk.attempt(WRONG_PATTERN, then=WRONG_PATTERN if kind == "x11" else None,
                                shot={0: "wrong", 4: "now-locked"}.get(n)) == "refused"
        assert locked_after(clients, user) == 5, status(clients, user)
        # Locked: the right pattern no longer unlocks.
        assert desk.attempt(PATTERN, shot="pattern-locked") == "refused"
        if kind == "x11":
            desk.shot("password-only")  # the module no longer asks: pam_unix's own prompt
        # The password still does, and moves nothing in the daemon.
        before, counted = verify_lines(clients, user), status(clients, user)
        assert desk.attempt(PASSWORD) == "unlocked"
        assert verify_lines(clients, user) == before and status(clients, user) == counted, \
            "the password reached the daemon"

        # After root's reset the pattern unlocks again.
        s.ok(f"patternlockd reset {user}")
        desk.lock()
        assert desk.attempt(PATTERN) == "unlocked"
    assert verify_results(clients, user) == EXPECTED_RESULTS


@pytest.fixture
def polkit_pam(clients):
    s = clients.system
    assert s.run("test -e /etc/pam.d/polkit-1").returncode != 0, "Debian now ships /etc/pam.d/polkit-1: test it"
    s.ok("cat > /etc/pam.d/polkit-1", input=POLKIT_PAM)
    yield
    s.ok("rm /etc/pam.d/polkit-1")


# pkexec through pkttyagent, which answers polkit for this shell: a plain sh (no
# job control, so the agent may read the terminal in the background), the agent
# registered (--notify-fd closes the fifo) before pkexec asks.
PKEXEC = ("sh -c 'f=$(mktemp -u) && mkfifo $f && { pkttyagent --process $$ --notify-fd 3 3>$f & cat $f; rm $f; "
          "pkexec /usr/bin/id -un; echo PKEXEC=$?; kill $!; }'")


def pkexec_steps(answer, user, ok, locked=False, then=None):
    """Steps: pkexec at the shell prompt, answered once. While the pattern is
    locked the module says so and pam_unix asks its own "Password: "."""
    asked = ([["expect", f"Pattern unlock for {user} is locked after 5 failed attempts"], ["expect", "Password: "]]
             if locked else [["expect", re.escape(PROMPT)]])
    end = [["expect", r"root\r?\nPKEXEC=0"]] if ok else [["expect", "AUTHENTICATION FAILED"],
                                                         ["expect", r"PKEXEC=(?!0)\d+"]]
    if then is not None:  # a wrong pattern: the module says so, and pam_unix asks
        asked_again = [["expect", r"Wrong pattern[^\n]*\n"], ["expect", "Password: "], ["secret", then + "\n"]]
    else:
        asked_again = []
    return [["send", PKEXEC + "\n"], ["expect", f"Authenticating as: {user}"], *asked,
            ["secret", answer + "\n"], *asked_again, *end]  # Clients.session waits for the shell prompt


def test_pkexec_with_pkttyagent_takes_the_pattern_the_password_once_and_locks_the_pattern_after_five_wrong(
        clients, polkit_pam):
    """polkit asks an administrator (group sudo, Debian's rule) for pkexec: the
    user itself. The prompt is one line with the keys in it, and each pkexec is
    one PAM conversation."""
    s = clients.system
    user = clients.user("plpk", PASSWORD, pattern=PATTERN)
    s.ok(f"usermod -aG sudo {user}")
    try:
        pkexec_runs(clients, user)
    finally:
        # An administrator left in group sudo would be the identity polkit
        # offers every later auth_admin check in this container.
        s.ok(f"gpasswd -d {user} sudo >/dev/null")


def pkexec_runs(clients, user):
    s = clients.system
    out = clients.session(user, PASSWORD, [
        pkexec_steps(PATTERN, user, ok=True),
        pkexec_steps(PASSWORD, user, ok=True),
        # A wrong pattern, then Enter at pam_unix's "Password:".
        *[pkexec_steps(WRONG_PATTERN, user, ok=False, then="") for _ in range(5)],
        pkexec_steps(PATTERN, user, ok=False, locked=True),
        pkexec_steps(PASSWORD, user, ok=True, locked=True),
    ], timeout=180)
    assert out.count(PROMPT) == 7 and out.count("\nPassword: ") == 7, \
        "one prompt each time, and Password: only after a wrong or locked pattern"
    assert "Error: Wrong pattern" in out, out
    results = verify_results(clients, user)
    assert results == EXPECTED_RESULTS[:-1], f"the password reached the daemon, or a pattern did not: {results}"
    assert locked_after(clients, user) == 5, status(clients, user)
    lines = verify_lines(clients, user)
    assert all(" service=polkit-1 " in x and f" caller_user={user} " in x for x in lines), lines
    s.ok(f"patternlockd reset {user}")
    clients.session(user, PASSWORD, [pkexec_steps(PATTERN, user, ok=True)])
    assert verify_results(clients, user) == EXPECTED_RESULTS
