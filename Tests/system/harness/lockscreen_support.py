# SPDX-License-Identifier: Apache-2.0
"""What the real lock screens' tests (test_lockscreens.py, test_lockscreen_kde.py)
share: the user's desktop session in the booted container (conftest's
client_system), with a lock screen in it that the test types into and takes
screenshots of, and what the daemon logged about the user."""
import json
import re
import shlex
import shutil
import time

from harness import booted

PASSWORD = "Lock-Scr33n-pass"
PATTERN = "46183"  # accepted by the enroll policy the installed daemon runs
WRONG_PATTERN = "2589"  # a valid pattern, so each one counts
# one_prompt's prompt with grid=auto where there is no terminal: the keys in the prompt.
PROMPT = "Pattern [123 456 789] or password: "
SESSION_SCRIPT = booted.ROOT / "Tests" / "system" / "harness" / "lockscreen_session.sh"
SHOTS = booted.ROOT / "build" / "lockscreens"


def password_checks_failed(journal, user):
    """How many passwords pam_unix checked in vain for user, in the text of the
    journal: it logs each one, through its helper unix_chkpwd where it runs
    without root (a lock screen), itself where it runs as root (polkit's
    helper)."""
    helper = journal.count(f"password check failed for user ({user})")
    itself = len(re.findall(rf"^pam_unix\([^)]*:auth\): authentication failure;.* user={re.escape(user)}$", journal,
                            re.M))
    return helper + itself


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

    LOCKER = {"sway": "swaylock", "x11": "xsecurelock", "kde": "kscreenlocker_greet", "plasma": "kscreenlocker_greet",
              "plasma-wayland": "kscreenlocker_greet", "plasma-mobile": "kscreenlocker_greet"}
    # xsecurelock's default XSECURELOCK_PAM_SERVICE; KDE's greeter has "kde" in its code.
    SERVICE = {"sway": "swaylock", "x11": "common-auth", "kde": "kde", "plasma": "kde", "plasma-wayland": "kde",
               "plasma-mobile": "kde"}

    def __init__(self, clients, user, kind, password=PASSWORD):
        """`password`: the user's, which `login` is given."""
        self.clients, self.system, self.user, self.kind = clients, clients.system, user, kind
        self.password = password
        self.dir = f"/var/tmp/pl-lock-{user}"  # not the container's /tmp tmpfs: the host reads it in the overlay
        self.locks = 0
        uid = clients.uid(user)
        self.env = (f"XDG_RUNTIME_DIR=/run/user/{uid} WAYLAND_DISPLAY=wayland-1" if kind == "sway"
                    else "DISPLAY=:5")

    def __enter__(self):
        s, d = self.system, self.dir
        steps = s.login_steps(self.user, self.password) + [
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
        module's pattern prompt, or its own "Password (not the pattern): " once
        the pattern is locked."""
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
        failed pam_authenticate; for the others (which log none), the journal
        holds the module's line for each wrong pattern it refused and for each
        pattern it did not use (typed while locked), and pam_unix's helper's
        for each password it checked in vain."""
        if self.kind == "sway":
            return int(self.system.ok(f"grep -c 'pam_authenticate failed' {self.dir}/locker.{self.locks}.log || true"))
        out = self.system.ok("journalctl -o cat --no-pager")
        return (out.count(f"): wrong pattern for {self.user};")
                + out.count(f"): an entry shaped like a pattern for {self.user} was not used")
                + password_checks_failed(out, self.user))

    def type(self, text):
        """Types text and Enter, from stdin (never in argv)."""
        if self.kind == "sway":
            # The first key of each wtype call is often lost: a throwaway Escape
            # (which clears swaylock's buffer) goes first.
            self.as_user("wtype -d 20 -k Escape - -k Return", input=text)
        else:
            self.as_user("xdotool type --delay 30 --file - && xdotool key Return", input=text)

    def attempt(self, text, shot=None):
        """Types text at the lock screen; returns "unlocked" when the lock screen
        ended (with status 0), "refused" when PAM said no and it asks again."""
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


