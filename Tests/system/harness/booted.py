# SPDX-License-Identifier: Apache-2.0
"""This machine's own file system booted with systemd in a container, for the
tests that need systemd, logind, polkitd, sshd or saslauthd for real.

`boot()` mounts a tmpfs, lays an overlay over `/` whose writes land in it, lets
the caller prepare the overlay before booting (e.g. apt-get install into it with
a plain, not booted, systemd-nspawn that has the network), boots it with
`systemd-nspawn --boot --private-network`, and powers it off and unmounts
everything afterwards. The host's /etc is never touched. The checkout is
bind-mounted read-only at its own path, so `make -C ROOT install` works inside.

`ClientSystem` is one such container with patternlock installed (`make install`,
`pam-auth-update --enable patternlock`) and the real clients of
../shared/REAL-CLIENTS.md: conftest.py's session-scoped `client_system` fixture
boots one for every test file that needs it (one boot per run)."""
import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
import uuid

from harness.common import skip_or_fail

ROOT = pathlib.Path(__file__).resolve().parents[3]
PTY_DRIVER = ROOT / "Tests" / "system" / "harness" / "pty_session.py"

# What the client tests need beyond the host's own packages (installed into the
# overlay before boot, never on the host).
CLIENT_PACKAGES = ["polkitd", "pkexec", "openssh-server", "openssh-client", "sasl2-bin", "dbus", "libpam-systemd",
                   # the lock screens of test_lockscreens.py: swaylock on a headless sway, typed into with
                   # wtype and shot with grim; xsecurelock on Xvfb, typed into with xdotool and shot with
                   # xwd (x11-apps) and ImageMagick's convert
                   "sway", "swaylock", "wtype", "grim", "xvfb", "xsecurelock", "xdotool", "x11-apps", "x11-utils",
                   "imagemagick", "fonts-dejavu-core", "xauth",
                   # KDE Plasma's lock screen (test_lockscreen_kde.py): the greeter and Breeze's lock screen
                   # design (about 420 packages; tesseract, which reads its screen, is the host's)
                   "libkscreenlocker5", "plasma-workspace"]


class BootedSystem:
    """Commands as root inside the booted container (nsenter into all of its
    namespaces): outside any logind session and without a terminal."""

    def __init__(self, leader, merged):
        self.leader = leader
        self.merged = merged

    def run(self, script, input=None, timeout=900):
        return subprocess.run(["nsenter", "-t", str(self.leader), "-a", "bash", "-c", script],
                              input=input, capture_output=True, text=True, timeout=timeout)

    def ok(self, script, input=None, timeout=900):
        r = self.run(script, input, timeout)
        assert r.returncode == 0, f"{script}\n{r.stdout}{r.stderr}"
        return r.stdout


def container_leader(nspawn_pid):
    children = pathlib.Path(f"/proc/{nspawn_pid}/task/{nspawn_pid}/children")
    try:
        pids = children.read_text().split()
    except OSError:
        return None
    return int(pids[0]) if pids else None


@contextlib.contextmanager
def boot(prepare=None, system_class=BootedSystem, lower="/"):
    """Yields a `system_class` for a freshly booted overlay of `lower` (this
    machine's `/`, or another root such as trixie.py's Debian 13); `prepare(merged)`
    runs on the overlay before the boot."""
    if os.geteuid() != 0:
        skip_or_fail("booting a container needs root")
    if shutil.which("systemd-nspawn") is None or shutil.which("nsenter") is None:
        skip_or_fail("systemd-nspawn is not installed (apt-get install systemd-container)")
    base = pathlib.Path(tempfile.mkdtemp(prefix="patternlock-boot-", dir="/tmp"))
    merged = base / "merged"
    mounted = []
    proc = None
    log = base.parent / (base.name + ".log")
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(base)]).returncode != 0:
            skip_or_fail("cannot mount a tmpfs here")
        mounted.append(base)
        for d in ("upper", "work", "merged"):
            (base / d).mkdir()
        if subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                           f"lowerdir={lower},upperdir={base}/upper,workdir={base}/work", str(merged)]).returncode != 0:
            skip_or_fail("cannot mount an overlay of / here")
        mounted.append(merged)
        machine_id = subprocess.run(["systemd-id128", "new"], capture_output=True, text=True).stdout.strip()
        (merged / "etc/machine-id").write_text(machine_id + "\n")
        if prepare is not None:
            prepare(merged)
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                ["systemd-nspawn", "--quiet", "--register=no", "--keep-unit", "--link-journal=no",
                 "--private-network", "--directory", str(merged), f"--bind-ro={ROOT}",
                 "--boot", "--console=passive"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        deadline = time.monotonic() + 120
        system = None
        while time.monotonic() < deadline and proc.poll() is None:
            leader = container_leader(proc.pid)
            if leader:
                system = system_class(leader, merged)
                state = system.run("systemctl is-system-running", timeout=30).stdout.strip()
                if state in ("running", "degraded"):
                    break
            time.sleep(1)
        else:
            skip_or_fail("systemd did not boot in a container here: " + log.read_text(errors="replace")[-2000:])
        yield system
    finally:
        if proc is not None and proc.poll() is None:
            leader = container_leader(proc.pid)
            if leader:
                subprocess.run(["nsenter", "-t", str(leader), "-a", "systemctl", "poweroff"],
                               capture_output=True, timeout=60)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for m in reversed(mounted):
            subprocess.run(["umount", "--lazy", str(m)])
        shutil.rmtree(base, ignore_errors=True)
        log.unlink(missing_ok=True)


def apt_install(merged, packages):
    """Installs Debian packages into the overlay with a plain (not booted)
    systemd-nspawn, which shares the host's network; maintainer scripts find no
    running systemd there and start nothing."""
    def install():
        return subprocess.run(
            ["systemd-nspawn", "--quiet", "--register=no", "--keep-unit", "--directory", str(merged),
             "--setenv=DEBIAN_FRONTEND=noninteractive",
             "apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
            capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    r = install()
    if r.returncode != 0:  # package lists missing or stale on this machine: update them in the overlay only
        subprocess.run(["systemd-nspawn", "--quiet", "--register=no", "--keep-unit", "--directory", str(merged),
                        "apt-get", "update", "-q"], capture_output=True, timeout=900, stdin=subprocess.DEVNULL)
        r = install()
    if r.returncode != 0:
        skip_or_fail(f"cannot install {' '.join(packages)} into the container: {(r.stdout + r.stderr)[-1500:]}")


class ClientSystem(BootedSystem):
    """A booted container with patternlock installed and the real clients; see
    the module docstring."""

    def add_user(self, prefix, password):
        """A new user with a home, bash and this password; returns its name."""
        name = f"{prefix}{uuid.uuid4().hex[:6]}"
        self.ok(f"useradd --create-home --shell /bin/bash {name}")
        self.ok("chpasswd", input=f"{name}:{password}\n")
        return name

    def pty(self, argv, steps, timeout=60, env=None):
        """Runs argv on a new pseudo-terminal inside the container (as root, in no
        session) with pty_session.py's step language; returns (returncode,
        transcript)."""
        spec = {"argv": argv, "steps": steps, "timeout": timeout, "env": env or {}}
        r = self.run(f"/usr/bin/python3 {PTY_DRIVER}", input=json.dumps(spec), timeout=timeout + 60)
        return r.returncode, r.stdout + r.stderr

    # The shell prompt the session steps set: a line that starts with it is the
    # prompt, never the echo of the command that set it.
    PROMPT = "plshell> "

    def login_steps(self, user, password, pattern_prompt=False):
        """pty steps for `login USER` up to a shell prompt in the user's new local
        logind session (pam_systemd makes it). The pam-auth-update profile has
        password_at_login: login asks the password alone, enrolled or not. With
        `pattern_prompt`, a stack without it offers the enrolled user the one
        prompt first: Enter skips it, then the password."""
        steps = []
        if pattern_prompt:
            steps += [["expect", r"Pattern or password: "], ["secret", "\n"]]
        return steps + [
            ["expect", "Password: "], ["secret", password + "\n"],
            ["expect", r"[$#] "],
            ["send", "PS1='plsh''ell> '\n"],
            ["expect", r"\n" + self.PROMPT],
        ]

    def session_steps(self, user, password, commands, pattern_prompt=False):
        """Steps that log in, run each (command, expected-regex) pair at the
        prompt, and log out."""
        steps = self.login_steps(user, password, pattern_prompt)
        for command, expected in commands:
            steps += [["send", command + "\n"], ["expect", expected], ["expect", r"\n" + self.PROMPT]]
        return steps + [["send", "exit\n"], ["eof"]]


def prepare_clients(merged):
    apt_install(merged, CLIENT_PACKAGES)


@contextlib.contextmanager
def client_system():
    with boot(prepare_clients, ClientSystem) as system:
        system.ok(f"make --no-print-directory -C {ROOT} install")
        system.ok("pam-auth-update --enable patternlock")
        yield system
