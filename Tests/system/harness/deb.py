# SPDX-License-Identifier: Apache-2.0
"""What the Debian package tests share: commands in a booted container with a
clean PATH (Box), the pattern and password they enroll, and the package
versions."""
import json
import pathlib
import re
import subprocess

from harness.common import MODULE_PASSWORD_PROMPT, ROOT
from harness.booted import PTY_DRIVER as PTY_SESSION


BUILD = ROOT / "build"


TRANSCRIPTS = pathlib.Path("/tmp/patternlock-deb-transcripts.txt")

# The pattern the booted tests enroll (the enroll policy under systemd accepts it)
# and a wrong one (a valid pattern, so each one counts).
PATTERN = "46183"

WRONG = "2589"

PASSWORD = "pl-Pass-w0rd"

# What a clean root login's PATH holds: no /opt/swift, no pyenv.
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# The module's prompt (a regular expression for the pty driver).
# The profile's one prompt.
PROMPT = r"Pattern or password: "

def sh(*args, check=True, **kwargs):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=900, **kwargs)
    if check:
        assert r.returncode == 0, f"{args}\n{r.stdout}{r.stderr}"
    return r

def upstream_version():
    return sh("sh", str(ROOT / "scripts/version.sh")).stdout.strip()

def debian_version():
    return sh("dpkg-parsechangelog", "-l", str(ROOT / "debian/changelog"), "-SVersion").stdout.strip()

class Box:
    """Commands in the booted container, as root with a clean PATH."""

    def __init__(self, system):
        self.system = system

    def run(self, script, input=None):
        return self.system.run(f"export PATH={CLEAN_PATH} LANG=C.UTF-8; {script}", input=input)

    def ok(self, script, input=None):
        r = self.run(script, input)
        assert r.returncode == 0, f"{script}\n{r.stdout}{r.stderr}"
        return r.stdout

    def terminal(self, title, argv, steps, as_user=None):
        """argv on a new pseudo-terminal in the container, driven by steps; the
        transcript is kept in TRANSCRIPTS."""
        if as_user:
            argv = ["setpriv", f"--reuid={as_user}", f"--regid={as_user}", "--init-groups",
                    "env", f"HOME=/home/{as_user}", f"USER={as_user}", f"PATH={CLEAN_PATH}"] + argv
        spec = json.dumps({"argv": argv, "steps": steps, "timeout": 60})
        r = self.run(f"/usr/bin/python3 {PTY_SESSION}", input=spec)
        with open(TRANSCRIPTS, "a") as f:
            f.write(f"==== {title}: {' '.join(argv)}\n{r.stdout}\n")
        assert r.returncode == 0, f"{title}\n{r.stdout}{r.stderr}"
        return r.stdout


    # The shell prompt a session sets: a line that starts with it is the prompt.
    SHELL_PROMPT = "plshell> "

    def session(self, title, user, commands):
        """`login user` on a new pseudo-terminal: a real local logind session, where
        the module asks (su and sudo in no session are not asked). The
        user logs in with the password, enrolled or not (the profile's
        password_at_login), then each command's steps run at the prompt."""
        steps = [["expect", "Password: "], ["secret", PASSWORD + "\n"], ["expect", r"[$#] "],
                  ["send", "PS1='plsh''ell> '\n"], ["expect", r"\n" + self.SHELL_PROMPT]]
        for command in commands:
            steps += command + [["expect", r"\n" + self.SHELL_PROMPT]]
        return self.terminal(title, ["login", user], steps + [["send", "exit\n"], ["eof"]])

SUDO = "sudo -k sh -c 'echo SUDO-OK $(id -un)'\n"

def sudo_steps(*middle):
    return [["send", SUDO], ["expect", PROMPT], *middle, ["expect", "SUDO-OK root"]]


def sudo_until_locked(box, u, title, then=()):
    """sudo in the user's own local session (sudo in no session is not asked),
    as the packages set it up: the right pattern; four wrong ones, each ending
    sudo's attempt, and the password then typed at the one prompt; the fifth,
    which locks the pattern; then, in the next attempt, the lock said and the
    module's own prompt for the password (its words, not pam_unix's, so sudo
    shows them as they are), where the password works. `then`: more commands
    in the same session. Returns the transcript; the pattern is left locked."""
    wrong = []
    for left in (4, 3, 2, 1):
        noun = "attempt" if left == 1 else "attempts"
        wrong.append(sudo_steps(
            # A wrong pattern ends sudo's attempt; the next one is the one
            # prompt again, where the password is typed.
            ["secret", WRONG + "\n"], ["expect", f"{left} {noun} left"], ["expect", "Sorry, try again."],
            ["expect", PROMPT], ["secret", PASSWORD + "\n"]))
    out = box.session(title, u, [
        sudo_steps(["secret", PATTERN + "\n"]),
        *wrong,
        sudo_steps(["secret", WRONG + "\n"], ["expect", "now locked after 5 failed attempts"],
                   ["expect", f"patternlockd reset {u}"], ["expect", "Sorry, try again."],
                   # The next attempt: locked, so the module asks for the password.
                   ["expect", "locked after 5 failed attempts"],
                   ["expect", re.escape(MODULE_PASSWORD_PROMPT)], ["secret", PASSWORD + "\n"]),
        *then,
    ])
    assert "password for" not in out.split(SUDO.strip(), 2)[1], "the right pattern needs no password"
    r = box.run(f"patternlockd status {u}")
    assert r.returncode == 2 and "LOCKED" in r.stdout, r.stdout + r.stderr  # 2: a user shown is locked
    return out

def lib_layout_module_deb(box, version):
    """libpam-patternlock as packages before the /usr merge of our files built it:
    the same files, the module in /lib/MULTIARCH/security, at `version`."""
    box.ok("rm -rf /tmp/liblayout && mkdir /tmp/liblayout && cd /tmp/liblayout && "
           f"dpkg-deb -R {BUILD}/libpam-patternlock_*.deb pkg && "
           "mkdir -p pkg/lib && mv pkg/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || "
           "ls pkg/usr/lib | grep -- -linux-) pkg/lib/ && "
           f"sed -i 's/^Version: .*/Version: {version}/' pkg/DEBIAN/control && "
           "sed -i 's| usr/lib/| lib/|' pkg/DEBIAN/md5sums && "
           "dpkg-deb --root-owner-group -b pkg old.deb >/dev/null")
    assert box.ok("dpkg-deb -c /tmp/liblayout/old.deb | grep -c ' ./lib/.*/security/pam_patternlock.so$'").strip() == "1"
    return "/tmp/liblayout/old.deb"
