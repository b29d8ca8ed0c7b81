# SPDX-License-Identifier: Apache-2.0
"""Installing and operating patternlock: the staged `make install`, the systemd
units (hardening score, socket activation as a non-root daemon), the key that
install creates, the man page, and `make demo` run the way CI runs it."""
import os
import pathlib
import pwd
import re
import shutil
import socket
import stat
import struct
import subprocess
import tempfile
import time

import pytest

from harness.common import DAEMON, ROOT, desktop_groups, read_line, skip_or_fail, unique
from harness.pam_support import without_logind

UNITS = ROOT / "systemd"
SERVICE = UNITS / "patternlockd.service"
SOCKET_UNIT = UNITS / "patternlockd.socket"
MAX_EXPOSURE = 2.0


def pam_module_dir():
    return subprocess.run(["sh", "scripts/install-pamdir.sh"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()


def make(*args, check=True):
    r = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT)] + list(args),
                       capture_output=True, text=True, timeout=900)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def files_under(root):
    """{'/usr/local/sbin/patternlockd': mode, ...} for every file below root."""
    found = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = pathlib.Path(dirpath) / name
            found["/" + str(p.relative_to(root))] = stat.S_IMODE(p.lstat().st_mode)
    return found


def expected_files(prefix, unitdir, sysusersdir=None):
    pamdir = pam_module_dir()
    sysusersdir = sysusersdir or f"{prefix}/lib/sysusers.d"
    files = {
        f"{prefix}/sbin/patternlockd": 0o755,
        f"{prefix}/bin/patternlockd": 0o777,  # a symbolic link to ../sbin/patternlockd
        f"{pamdir}/pam_patternlock.so": 0o644,
        f"{unitdir}/patternlockd.service": 0o644,
        f"{unitdir}/patternlockd.socket": 0o644,
        f"{sysusersdir}/patternlockd.conf": 0o644,
        "/usr/share/polkit-1/actions/org.patternlock.policy": 0o644,
        "/usr/share/pam-configs/patternlock": 0o644,
        f"{prefix}/share/man/man8/patternlockd.8": 0o644,
        f"{prefix}/share/man/man8/pam_patternlock.8": 0o644,
        f"{prefix}/share/doc/patternlock/PROTOCOL.md": 0o644,
        f"{prefix}/share/doc/patternlock/GUESSING.md": 0o644,
        f"{prefix}/share/doc/patternlock/pam.d-example": 0o644,
        f"{prefix}/share/doc/patternlock/pam.d-example-faillock": 0o644,
    }
    if (ROOT / "docs" / "SECURITY.md").exists():
        files[f"{prefix}/share/doc/patternlock/SECURITY.md"] = 0o644
    return files


@pytest.fixture
def stage(tmp_path):
    return tmp_path / "stage"


# ---- make install DESTDIR=… -------------------------------------------------------

def test_staged_install_puts_every_file_in_place_with_its_mode(stage):
    key_existed = os.path.exists("/etc/patternlock/key")
    r = make("install", f"DESTDIR={stage}")
    assert "pam-auth-update" not in r.stdout, "a staged install must not touch the live system"

    want = expected_files("/usr/local", "/usr/local/lib/systemd/system")
    assert files_under(stage) == want
    for dirpath, _, _ in os.walk(stage):
        mode = stat.S_IMODE(os.stat(dirpath).st_mode)
        if pathlib.Path(dirpath) != stage:
            assert mode == 0o755, f"{dirpath} has mode {oct(mode)}"

    pamdir = pam_module_dir()
    assert (stage / "usr/local/sbin/patternlockd").read_bytes() == DAEMON.read_bytes()
    # Users find the command on their PATH; the link stays right wherever the tree goes.
    assert os.readlink(stage / "usr/local/bin/patternlockd") == "../sbin/patternlockd"
    assert (stage / pamdir.lstrip("/") / "pam_patternlock.so").read_bytes() == \
        (ROOT / "build/pam_patternlock.so").read_bytes()
    assert (stage / "usr/share/pam-configs/patternlock").read_text() == \
        (ROOT / "pam/pam-configs/patternlock").read_text()
    # Nothing outside DESTDIR: no key appears on the live system.
    assert os.path.exists("/etc/patternlock/key") == key_existed


@pytest.mark.fleet  # make install FLEET=1 builds the fleet daemon
def test_install_fleet_puts_the_fleet_daemon_where_the_readme_unit_runs_it(stage):
    """make install FLEET=1: docs/FLEET.md's drop-in runs
    /usr/local/sbin/patternlockd-fleet serve --store, which must be the
    PostgreSQL-capable build; patternlockd stays the plain one, and uninstall
    removes both."""
    fleet = ROOT / "build" / "patternlockd-fleet"
    if not fleet.exists():
        skip_or_fail("build/patternlockd-fleet is missing: run make fleet")
    make("install", f"DESTDIR={stage}", "FLEET=1")
    installed = stage / "usr/local/sbin/patternlockd-fleet"
    assert installed.read_bytes() == fleet.read_bytes()
    assert (stage / "usr/local/sbin/patternlockd").read_bytes() == (ROOT / "build/patternlockd").read_bytes()
    assert (stage / "usr/local/share/man/man8/patternlockd-fleet.8").is_file()
    r = subprocess.run([str(installed), "serve", "--store", "postgresql://pl@/pl?host=/nonexistent-patternlock"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "built without PostgreSQL support" not in r.stderr, r.stderr
    r = subprocess.run([str(stage / "usr/local/sbin/patternlockd"), "serve", "--store", "postgresql://pl@/pl?host=/x"],
                       capture_output=True, text=True, timeout=60)
    assert "Run patternlockd-fleet instead" in r.stderr, r.stderr
    make("uninstall", f"DESTDIR={stage}")
    assert not installed.exists() and not (stage / "usr/local/share/man/man8/patternlockd-fleet.8").exists()


SETUP = ROOT / "build" / "patternlock-setup"
SETUP_FILES = {
    "/usr/local/bin/patternlock-setup": 0o755,
    "/usr/local/share/applications/org.patternlock.Setup.desktop": 0o644,
    "/usr/local/share/icons/hicolor/scalable/apps/org.patternlock.Setup.svg": 0o644,
    "/usr/local/share/man/man1/patternlock-setup.1": 0o644,
}


def test_install_setup_puts_the_window_its_menu_entry_icon_and_man_page_where_desktops_look(stage):
    """make install-setup (mk/setup.mk): the command on users' PATH, the desktop
    entry that starts it (valid for desktop-file-validate), its icon in hicolor's
    scalable apps under the name the entry gives, and the man page, all under
    PREFIX/share, which desktops read; uninstall-setup takes all four away."""
    if not SETUP.exists():
        pytest.fail("build/patternlock-setup is missing: make setup builds it (make test-system does)")
    make("install-setup", f"DESTDIR={stage}")
    assert files_under(stage) == SETUP_FILES
    installed = stage / "usr/local/bin/patternlock-setup"
    assert installed.read_bytes() == SETUP.read_bytes()
    entry = stage / "usr/local/share/applications/org.patternlock.Setup.desktop"
    assert entry.read_text() == (ROOT / "desktop/org.patternlock.Setup.desktop").read_text()
    if shutil.which("desktop-file-validate") is None:
        skip_or_fail("desktop-file-validate is not installed (apt-get install desktop-file-utils)")
    r = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout + r.stderr == "", r.stdout + r.stderr
    fields = desktop_groups(entry.read_text())["Desktop Entry"]
    assert fields["Exec"] == "patternlock-setup" and fields["Icon"] == "org.patternlock.Setup", fields
    assert "<svg" in (stage / "usr/local/share/icons/hicolor/scalable/apps/org.patternlock.Setup.svg").read_text()
    r = subprocess.run([str(installed), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("Usage: patternlock-setup"), r.stdout + r.stderr
    make("uninstall-setup", f"DESTDIR={stage}")
    assert files_under(stage) == {}


def test_install_plasma_puts_both_lock_screen_packages_where_plasma_looks_and_turns_nothing_on(stage):
    """make install-plasma (mk/plasma.mk): the Plasma 6 shell package and the
    5.27 Look-and-Feel package under PREFIX/share/plasma, each with its
    metadata and LockScreen.qml as make plasma built them, the environment file
    the Plasma 6 drop-ins read at its fixed path, the command and its man page;
    nothing in /etc or among systemd's units (nobody's lock screen changes);
    uninstall-plasma takes it all away."""
    make("install-plasma", f"DESTDIR={stage}")
    found = files_under(stage)
    for package, kind in (("shells/org.patternlock.plasma", "Plasma/Shell"),
                          ("look-and-feel/org.patternlock.lookandfeel", "Plasma/LookAndFeel")):
        base = f"/usr/local/share/plasma/{package}"
        assert found.get(f"{base}/contents/lockscreen/LockScreen.qml") == 0o644, found
        assert f'"KPackageStructure": "{kind}"' in (stage / base.lstrip("/") / "metadata.json").read_text()
    assert found["/usr/share/patternlock/plasma-greeter.env"] == 0o644
    assert "PLASMA_DEFAULT_SHELL=org.patternlock.plasma" in \
        (stage / "usr/share/patternlock/plasma-greeter.env").read_text().splitlines()
    assert found["/usr/local/bin/patternlock-plasma"] == 0o755
    assert found["/usr/local/share/man/man1/patternlock-plasma.1"] == 0o644
    assert not [f for f in found if f.startswith(("/etc/", "/usr/lib/systemd/", "/usr/local/lib/systemd/"))], found
    r = subprocess.run([str(stage / "usr/local/bin/patternlock-plasma"), "--help"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("Usage: patternlock-plasma"), r.stdout + r.stderr
    make("uninstall-plasma", f"DESTDIR={stage}")
    assert files_under(stage) == {}


@pytest.fixture
def nobody_home():
    """A home directory nobody owns, where nobody can reach it (pytest's tmp_path is root's alone)."""
    home = pathlib.Path(tempfile.mkdtemp(prefix="pl-home-", dir="/var/tmp"))
    home.chmod(0o755)
    shutil.chown(home, "nobody")
    yield home
    shutil.rmtree(home, ignore_errors=True)


def test_patternlock_plasma_writes_and_removes_only_the_users_own_drop_ins_and_refuses_root(nobody_home):
    """The command of patternlock-plasma, run as a user (nobody, with a home of
    its own here): enable writes a drop-in for each unit that starts Plasma 6's
    lock screen, naming the package's environment file (missing: ignored), and
    nothing outside the user's config; disable removes them. As root it refuses
    and writes nothing: `sudo patternlock-plasma enable` would change root's
    lock screen, not the user's."""
    script = ROOT / "plasma" / "patternlock-plasma"
    home = nobody_home

    def run(*args, user="nobody"):
        argv = ["env", f"HOME={home}", "XDG_CONFIG_HOME=", "sh", str(script), *args]
        if user:
            argv = ["runuser", "-u", user, "--"] + argv
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    r = run("enable", user=None)
    assert r.returncode == 1 and "not as root" in r.stderr, r.stdout + r.stderr
    assert list(home.iterdir()) == []
    r = run("enable")
    # Without the package's environment file (a build host), Plasma 6 would keep
    # its own lock screen: enable says so and fails, after writing what it can.
    installed = pathlib.Path("/usr/share/patternlock/plasma-greeter.env").exists()
    assert r.returncode == (0 if installed else 1), r.stdout + r.stderr
    assert installed or "plasma-greeter.env is missing" in r.stderr, r.stderr
    # Only the user's own config: nothing else in the home, no temporary file left.
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()) == sorted(
        [".config/systemd/user/plasma-ksmserver.service.d/patternlock.conf",
         ".config/systemd/user/plasma-kwin_wayland.service.d/patternlock.conf"]
        + ([".config/kscreenlockerrc"] if shutil.which("kwriteconfig5") or shutil.which("kwriteconfig6") else [])), \
        list(home.rglob("*"))
    for unit in ("plasma-ksmserver.service", "plasma-kwin_wayland.service"):
        dropin = home / ".config/systemd/user" / f"{unit}.d" / "patternlock.conf"
        lines = dropin.read_text().splitlines()
        assert "[Service]" in lines and "EnvironmentFile=-/usr/share/patternlock/plasma-greeter.env" in lines, lines
    r = run("disable")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Plasma's own lock screen is back" in r.stdout
    assert not (home / ".config/systemd/user/plasma-ksmserver.service.d").exists()
    assert "Plasma 6: off" in run("status").stdout
    r = run("frobnicate")
    assert r.returncode == 2 and r.stderr.startswith("Usage: patternlock-plasma"), r.stdout + r.stderr


def test_the_pam_module_goes_where_pam_unix_is():
    pamdir = pathlib.Path(pam_module_dir())
    assert (pamdir / "pam_unix.so").exists(), f"{pamdir} holds no pam_unix.so"


def test_prefix_usr_puts_the_daemon_in_usr_sbin_and_the_unit_runs_it(stage):
    make("install", f"DESTDIR={stage}", "PREFIX=/usr")
    unitdir = subprocess.run(["pkg-config", "--variable=systemdsystemunitdir", "systemd"],
                             capture_output=True, text=True).stdout.strip() or "/usr/lib/systemd/system"
    sysusersdir = subprocess.run(["pkg-config", "--variable=sysusersdir", "systemd"],
                                 capture_output=True, text=True).stdout.strip() or "/usr/lib/sysusers.d"
    assert files_under(stage) == expected_files("/usr", unitdir, sysusersdir)
    service = (stage / unitdir.lstrip("/") / "patternlockd.service").read_text()
    assert re.search(r"^ExecStart=/usr/sbin/patternlockd serve ", service, re.M), service


def test_staged_uninstall_removes_every_file(stage):
    make("install", f"DESTDIR={stage}")
    make("uninstall", f"DESTDIR={stage}")
    assert files_under(stage) == {}


def test_install_refuses_to_write_the_live_system_without_root(stage):
    nobody = pwd.getpwnam("nobody")
    r = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                        "--clear-groups", "make", "--no-print-directory", "-C", str(ROOT), "install"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "Run it as root: sudo make install" in r.stdout


# ---- the key that install creates --------------------------------------------------

def install_key(directory, credstore=None):
    credstore = credstore or pathlib.Path(directory).parent / "credstore.encrypted"
    env = dict(os.environ, PATTERNLOCK_KEY_DIR=str(directory), PATTERNLOCK_CREDSTORE=str(credstore))
    return subprocess.run(["bash", "scripts/install-live.sh", "key"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True).stdout


def test_install_creates_a_32_byte_root_only_key(tmp_path):
    keydir = tmp_path / "etc-patternlock"
    out = install_key(keydir)
    key = keydir / "key"
    st = key.stat()
    assert st.st_size == 32 and st.st_uid == 0
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert stat.S_IMODE(keydir.stat().st_mode) == 0o700
    assert "Back it up" in out
    assert [p.name for p in keydir.iterdir()] == ["key"]


def test_install_never_replaces_an_existing_key(tmp_path):
    keydir = tmp_path / "etc-patternlock"
    install_key(keydir)
    before = (keydir / "key").read_bytes()
    out = install_key(keydir)
    assert (keydir / "key").read_bytes() == before
    assert "Kept the existing key" in out


def test_install_warns_about_a_key_the_daemon_would_refuse(tmp_path):
    keydir = tmp_path / "etc-patternlock"
    keydir.mkdir()
    (keydir / "key").write_bytes(b"x" * 32)
    (keydir / "key").chmod(0o644)
    out = install_key(keydir)
    assert "chmod 600" in out
    assert (keydir / "key").read_bytes() == b"x" * 32


def test_install_keeps_the_sealed_key_of_the_tpm_recipe_and_makes_no_plain_one(tmp_path):
    """After the recipe in SECURITY.md and patternlockd(8) the plain key
    is gone; the next make install must not create a second, different pepper."""
    keydir, store = tmp_path / "etc-patternlock", tmp_path / "credstore.encrypted"
    store.mkdir()
    (store / "patternlock.key").write_bytes(b"sealed by systemd-creds")
    out = install_key(keydir, store)
    assert f"Kept the sealed key {store}/patternlock.key (LoadCredentialEncrypted); no plain key was created." in out
    assert not (keydir / "key").exists()


def test_one_tpm_recipe_in_the_docs_and_the_unit():
    drop_in = "LoadCredentialEncrypted=patternlock.key:/etc/credstore.encrypted/patternlock.key"
    for name in ["docs/SECURITY.md", "docs/patternlockd.8", "systemd/patternlockd.service"]:
        text = (ROOT / name).read_text().replace("\\-", "-")
        assert drop_in in text, name
        assert "systemd-creds encrypt --with-key=tpm2 --name=patternlock.key" in text, name
        assert "key.cred" not in text, name


# ---- systemd units -------------------------------------------------------------------

def systemd_analyze(*args):
    if shutil.which("systemd-analyze") is None:
        skip_or_fail("systemd-analyze is not installed (apt-get install systemd)")
    return subprocess.run(["systemd-analyze"] + list(args), capture_output=True, text=True, timeout=120)


def test_the_service_scores_2_0_or_lower_in_systemd_analyze_security():
    r = systemd_analyze("security", "--offline=true", str(SERVICE))
    if "--offline" in r.stderr and "unrecognized" in r.stderr:
        skip_or_fail("this systemd-analyze has no --offline (systemd < 250)")
    m = re.search(r"Overall exposure level for patternlockd\.service: (\d+\.\d+)", r.stdout)
    assert m, r.stdout + r.stderr
    assert float(m.group(1)) <= MAX_EXPOSURE, r.stdout
    # docs/INSTALL.md gives the figure this command prints.
    install = " ".join((ROOT / "docs" / "INSTALL.md").read_text().split())
    assert f"rates its exposure {m.group(1)} (SAFE)" in install, m.group(1)


def test_the_staged_units_verify(stage, tmp_path):
    make("install", f"DESTDIR={stage}")
    staged = stage / "usr/local/lib/systemd/system"
    # verify checks that ExecStart exists on this system: point it at the staged binary.
    units = tmp_path / "units"
    units.mkdir()
    service = (staged / "patternlockd.service").read_text()
    assert "ExecStart=/usr/local/sbin/patternlockd " in service
    (units / "patternlockd.service").write_text(
        service.replace("/usr/local/sbin/patternlockd", str(stage / "usr/local/sbin/patternlockd")))
    shutil.copy(staged / "patternlockd.socket", units / "patternlockd.socket")
    r = systemd_analyze("verify", "--man=no", str(units / "patternlockd.socket"),
                        str(units / "patternlockd.service"))
    assert r.returncode == 0 and r.stderr == "", r.stdout + r.stderr


def unit_settings(path):
    settings = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            k, _, v = line.partition("=")
            settings.setdefault(k.strip(), []).append(v.strip())
    return settings


def test_the_socket_is_where_the_pam_module_and_the_cli_look_and_anyone_may_connect():
    s = unit_settings(SOCKET_UNIT)
    assert s["ListenStream"] == ["/run/patternlock/socket"]
    assert s["SocketMode"] == ["0666"]
    assert "SocketUser" not in s, "the PAM module trusts only a socket owned by root"


def test_the_service_runs_unprivileged_with_its_state_and_the_key_as_a_credential():
    s = unit_settings(SERVICE)
    assert s["DynamicUser"] == ["yes"]
    # The static user the sysusers file makes and polkit's action names as its owner.
    assert s["User"] == ["patternlock"]
    assert re.search(r"^u patternlock - ", (UNITS / "patternlockd.sysusers").read_text(), re.M)
    assert '<annotate key="org.freedesktop.policykit.owner">unix-user:patternlock</annotate>' in \
        (ROOT / "polkit/org.patternlock.policy").read_text()
    assert s["StateDirectory"] == ["patternlock"] and s["StateDirectoryMode"] == ["0700"]
    assert s["LoadCredential"] == ["patternlock.key:/etc/patternlock/key"]
    # With DynamicUser the state directory is private/patternlock behind a symlink,
    # and the daemon refuses a symlinked state directory.
    assert "--state-dir /var/lib/private/patternlock" in s["ExecStart"][0]
    assert s["CapabilityBoundingSet"] == [""]
    # PrivateUsers would show every other uid as nobody in SO_PEERCRED, and the
    # daemon authorizes each request by the peer's uid.
    assert "PrivateUsers" not in s
    assert s["RestrictAddressFamilies"] == ["AF_UNIX"]


# ---- socket activation ------------------------------------------------------------

def peer_uid(sock):
    _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return uid


@pytest.fixture
def activated_daemon(shared_tmp):
    """patternlockd as systemd runs it: a root-owned listening socket passed with
    LISTEN_FDS to a daemon that runs as an unprivileged user, its key given as a
    credential. systemd-socket-activate binds the socket as root and then runs the
    daemon, which setpriv turns into nobody."""
    if shutil.which("systemd-socket-activate") is None:
        skip_or_fail("systemd-socket-activate is not installed (apt-get install systemd)")
    nobody = pwd.getpwnam("nobody")
    state = shared_tmp / "state"
    state.mkdir(mode=0o700)
    creds = shared_tmp / "credentials"
    creds.mkdir(mode=0o700)
    (creds / "patternlock.key").write_bytes(os.urandom(32))
    (creds / "patternlock.key").chmod(0o400)
    for p in (state, creds, creds / "patternlock.key"):
        os.chown(p, nobody.pw_uid, nobody.pw_gid)
    sock = shared_tmp / "run" / "socket"
    sock.parent.mkdir()
    log = open(shared_tmp / "daemon.log", "wb")
    proc = subprocess.Popen(
        ["systemd-socket-activate", "-l", str(sock), f"--setenv=CREDENTIALS_DIRECTORY={creds}",
         "setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
         str(DAEMON), "serve", "--state-dir", str(state), "--iterations", "600000",
         "--socket", str(shared_tmp / "not-this-one")],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    deadline = time.monotonic() + 10
    while not sock.exists():
        assert time.monotonic() < deadline and proc.poll() is None, (shared_tmp / "daemon.log").read_text()
        time.sleep(0.05)
    yield sock, proc
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


def test_a_socket_activated_daemon_runs_unprivileged_and_clients_see_root_as_the_peer(
        activated_daemon, shared_tmp):
    sock, proc = activated_daemon
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(str(sock))
        s.sendall(b"PING\n")
        assert read_line(s) == "PONG version=1"
        # SO_PEERCRED holds the credentials of whoever called listen(): root.
        assert peer_uid(s) == 0
    assert os.stat(sock).st_uid == 0
    assert not (shared_tmp / "not-this-one").exists(), "--socket must be ignored when systemd passes one"
    daemon_uid = int(subprocess.run(["ps", "-o", "uid=", "--ppid", str(proc.pid), "-p", str(proc.pid)],
                                    capture_output=True, text=True).stdout.split()[0])
    assert daemon_uid == pwd.getpwnam("nobody").pw_uid
    assert "listening on the socket from systemd" in (shared_tmp / "daemon.log").read_text()


def test_the_pam_module_unlocks_through_a_socket_activated_unprivileged_daemon(
        activated_daemon, shared_tmp):
    sock, _ = activated_daemon
    env = dict(os.environ, PATTERNLOCK_SOCKET=str(sock))
    user = "root"
    r = subprocess.run([str(DAEMON), "enroll", user], input="46183\n46183\n", env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    conv = shared_tmp / "demo-conv"
    subprocess.run(["cc", "-std=gnu11", "-Wall", "-Werror", "-o", str(conv),
                    str(ROOT / "scripts/demo-conv.c"), "-lpam"], check=True)
    confdir = shared_tmp / "pam.d"
    confdir.mkdir()
    # Listed in services= and run where logind cannot be seen (pam_support).
    (confdir / "pltest").write_text(
        f"auth required {ROOT / 'build/pam_patternlock.so'} socket={sock} services=pltest\n")
    ok = subprocess.run(without_logind([str(conv), str(confdir), "pltest", user, "46183"]),
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "=> PAM_SUCCESS" in ok.stdout, ok.stdout + ok.stderr
    bad = subprocess.run(without_logind([str(conv), str(confdir), "pltest", user, "2589"]),
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "Wrong pattern \u2014 4 attempts left." in bad.stdout, bad.stdout


# ---- man pages -------------------------------------------------------------------

def help_text(*args):
    return subprocess.run([str(DAEMON)] + list(args) + ["--help"], capture_output=True,
                          text=True, check=True).stdout


def test_the_man_page_describes_every_command_and_option():
    page = (ROOT / "docs/patternlockd.8").read_text().replace("\\-", "-")
    commands = re.findall(r"^  (\w+) {2,}", help_text().split("SUBCOMMANDS:")[1], re.M)
    assert len(commands) >= 6
    for command in commands:
        assert f".SS {command}" in page, f"docs/patternlockd.8 does not describe `{command}`"
        for option in set(re.findall(r"--[a-z][a-z-]+", help_text(command))) - {"--help"}:
            assert option in page, f"docs/patternlockd.8 does not describe `{command} {option}`"


MAN_PAGES = sorted(p.name for p in (ROOT / "docs").glob("*.[1-8]"))


def test_every_man_page_is_checked():
    assert {"patternlockd.8", "pam_patternlock.8", "patternlockd-fleet.8", "patternlock-screen.1",
            "patternlock-setup.1"} <= set(MAN_PAGES), MAN_PAGES


def test_the_setup_window_s_man_page_describes_every_option_of_its_help():
    if not SETUP.exists():
        pytest.fail("build/patternlock-setup is missing: make setup builds it (make test-system does)")
    usage = subprocess.run([str(SETUP), "--help"], capture_output=True, text=True, check=True, timeout=60).stdout
    page = (ROOT / "docs/patternlock-setup.1").read_text().replace("\\-", "-")
    options = set(re.findall(r"(?<![\w-])--?[a-z][a-z-]*", usage.split("Options:")[1]))
    assert {"--socket", "--layout", "--debug", "-d"} <= options, options
    for option in options:
        assert option in page, f"docs/patternlock-setup.1 does not describe {option}"


@pytest.mark.parametrize("page", MAN_PAGES)
def test_the_man_pages_render_without_warnings(page):
    if shutil.which("groff") is None:
        skip_or_fail("groff is not installed")
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(ROOT / "docs" / page)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    # groff 1.22 (Debian 12) passes a stray control byte silently; 1.23 (Debian 13)
    # warns, and a reader sees "IUSERR" where \fIUSER\fR was meant.
    for number, line in enumerate((ROOT / "docs" / page).read_bytes().splitlines(), 1):
        stray = [b for b in line if b < 0x20 and b != 0x09]
        assert not stray, f"docs/{page} line {number} holds control bytes {stray}: {line!r}"


# ---- make demo ---------------------------------------------------------------------

def test_make_demo_installs_only_what_it_needs_and_ci_installs_the_rest():
    """The demo installs a compiler, make and the PAM headers, not the
    tests' packages; `install-deps.sh --check` (make check) and .ci/run install
    the same whole list."""
    ci = re.search(r"^packages=\(([^)]*)\)", (ROOT / ".ci/run").read_text(), re.M)
    assert ci, ".ci/run has no packages=(...) line"
    ci = set(ci.group(1).split())

    def listed(option):
        return set(subprocess.run(["bash", "scripts/install-deps.sh", option], cwd=ROOT, check=True,
                                  capture_output=True, text=True).stdout.split())

    demo, check = listed("--list"), listed("--list-check")
    assert demo == {"libpam0g-dev", "libsystemd-dev", "gcc", "make", "util-linux"}
    assert demo <= ci, "CI runs the demo: it must install what the demo needs"
    # python3-pytest: .ci/run installs pytest with pip when python3 -m pytest is missing.
    assert ci == check - {"python3-pytest"}, "install-deps.sh --check and .ci/run disagree"


def test_plain_make_without_the_pam_headers_names_the_package():
    r = make("pam-headers", "CC=cc --sysroot=/nonexistent", check=False)
    assert r.returncode != 0
    assert "Install them with: sudo apt-get install libpam0g-dev" in r.stdout, r.stdout + r.stderr
    assert "fatal error" not in r.stdout + r.stderr


def test_plain_make_without_the_sd_login_headers_names_the_package(tmp_path):
    """The compiler sees every header of this machine but libsystemd-dev's, as on
    a machine without that package."""
    include = tmp_path / "include"
    include.mkdir()
    for entry in pathlib.Path("/usr/include").iterdir():
        if entry.name != "systemd":
            (include / entry.name).symlink_to(entry)
    builtin = subprocess.run(["cc", "-print-file-name=include"], capture_output=True, text=True).stdout.strip()
    multiarch = subprocess.run(["cc", "-print-multiarch"], capture_output=True, text=True).stdout.strip()
    cc = f"cc -nostdinc -isystem {builtin} -isystem {include}" + (f" -isystem {include / multiarch}" if multiarch else "")
    assert subprocess.run(cc.split() + ["-E", "-x", "c", "-"], input="#include <security/pam_ext.h>\n",
                          capture_output=True, text=True).returncode == 0, "the PAM headers must stay visible"
    r = make("pam-headers", f"CC={cc}", check=False)
    assert r.returncode != 0
    assert "Install them with: sudo apt-get install libsystemd-dev" in r.stdout, r.stdout + r.stderr
    assert "libpam0g-dev" not in r.stdout and "fatal error" not in r.stdout + r.stderr


def run_demo(user=None, timeout=300):
    cmd = ["make", "--no-print-directory", "-C", str(ROOT), "demo", "DEMO_PATTERN=46183"]
    if user is not None:
        make("build/patternlockd", "build/pam_patternlock.so")  # they may not have swift
        pw = pwd.getpwnam(user)
        cmd = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups",
               "env", f"HOME={pw.pw_dir}", "PATH=/usr/bin:/bin:/usr/sbin:/sbin", "PYTHON=/usr/bin/python3"] + cmd
    before = set(pathlib.Path("/tmp").glob("patternlock-demo.*"))
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    after = set(pathlib.Path("/tmp").glob("patternlock-demo.*"))
    return r, after - before


def assert_the_whole_story(r, user):
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    assert f"Pattern enrolled for {user}" in out
    assert out.count("=> PAM_SUCCESS: unlocked.") == 2, out
    assert "Wrong pattern \u2014 4 attempts left." in out
    assert f"Pattern unlock for {user} is now locked after 5 failed attempts" in out
    assert (f"Pattern unlock for {user} is locked after 5 failed attempts. "
            f"Ask an administrator to run: patternlockd reset {user}") in out
    assert f"{user} is unlocked" in out
    assert "nothing else on this system changed" in out


def test_make_demo_tells_the_whole_story_and_cleans_up():
    r, left = run_demo()
    assert_the_whole_story(r, "root")
    assert left == set(), f"the demo left {left} behind"


@pytest.fixture
def plain_user():
    name = unique("pldemo")
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True)
    yield name
    subprocess.run(["userdel", "--remove", name], capture_output=True)


def test_make_demo_works_for_a_user_who_is_not_root(plain_user):
    if subprocess.run(["setpriv", "--reuid=nobody", "unshare", "--user", "--map-root-user", "true"],
                      capture_output=True).returncode != 0:
        pytest.skip("unprivileged user namespaces are disabled here; the demo then asks for sudo")
    home = pathlib.Path(pwd.getpwnam(plain_user).pw_dir)
    if not os.access(ROOT / "Makefile", os.R_OK) or not all(
            os.access(p, os.X_OK) for p in list(ROOT.parents)[:-1]):
        pytest.skip("the checkout is not readable by other users")
    r, left = run_demo(plain_user)
    if "These packages are missing" in r.stdout:
        skip_or_fail("packages are missing; the demo printed the apt-get command")
    assert_the_whole_story(r, plain_user)
    assert "user namespace" in r.stdout
    assert left == set(), f"the demo left {left} behind"
    assert home.exists()


# ---- the live install on a booted systemd ------------------------------------------

def test_a_live_install_runs_the_hardened_daemon_under_systemd_and_uninstall_removes_it(booted_system):
    system = booted_system
    user = unique("plboot")
    out = system.ok(f"make --no-print-directory -C {ROOT} install")
    assert "Created the key /etc/patternlock/key" in out
    assert "patternlockd.socket is enabled and listening on /run/patternlock/socket." in out
    assert "pam-auth-update --enable patternlock" in out
    assert system.ok("stat -c '%s %a %U' /etc/patternlock/key").split() == ["32", "600", "root"]
    assert system.ok("stat -c '%a %U %F' /run/patternlock/socket").split()[:2] == ["666", "root"]
    assert system.ok("grep -c pam_patternlock /etc/pam.d/common-auth || true").strip() == "0", \
        "install must not enable the module by itself"

    # Root enrolls through the socket; the first connection starts the service.
    system.ok(f"useradd --create-home {user}")
    system.ok(f"patternlockd enroll {user}", input="46183\n46183\n")
    uid = system.ok("ps -o uid= -C patternlockd").split()
    assert len(uid) == 1 and uid[0] != "0", "the daemon must not run as root"
    # As the static user polkit's action names as its owner (sysusers.d).
    assert system.ok("getent passwd patternlock").split(":")[2] == uid[0]
    assert system.ok("stat -c '%a %u' /var/lib/private/patternlock").split() == ["700", uid[0]]
    assert "listening on the socket from systemd" in system.ok("journalctl -u patternlockd.service --no-pager")

    # A user checks their own pattern: a non-root peer is seen with its own uid. The
    # command is on a plain user's login PATH (/usr/local/bin, not sbin).
    assert system.ok(f"su - {user} -c 'command -v patternlockd'").strip() == "/usr/local/bin/patternlockd"
    system.ok(f"su - {user} -c 'patternlockd verify'", input="46183\n")

    # The administrator's step, then a real PAM stack through common-auth: a
    # console login's (login on tty1, before its logind session exists). The
    # profile's password_at_login leaves a new login to the password,
    # which unlocks the keyring too: not asked, the pattern is no password, the
    # password logs in. sudo run from here, in no session and without a
    # terminal, is not asked: its stack goes straight to the password.
    system.ok("pam-auth-update --enable patternlock")
    assert "pam_patternlock.so one_prompt password_at_login" in system.ok("cat /etc/pam.d/common-auth")
    r = system.run(f"pamtester -I tty=/dev/tty1 login {user} authenticate", input="46183\n")
    assert "Pattern" not in r.stdout + r.stderr and r.returncode != 0, r.stdout + r.stderr
    system.ok("chpasswd", input=f"{user}:Boot-Pass-w0rd\n")
    r = system.run(f"pamtester -I tty=/dev/tty1 login {user} authenticate", input="Boot-Pass-w0rd\n")
    assert "successfully authenticated" in r.stdout + r.stderr, r.stdout + r.stderr
    assert "Pattern" not in r.stdout + r.stderr
    r = system.run(f"pamtester sudo {user} authenticate", input="46183\n")
    assert "Pattern" not in r.stdout + r.stderr and r.returncode != 0, r.stdout + r.stderr

    r = system.run("systemd-analyze security patternlockd.service")
    m = re.search(r"Overall exposure level for patternlockd\.service: (\d+\.\d+)", r.stdout)
    assert m and float(m.group(1)) <= MAX_EXPOSURE, r.stdout

    out = system.ok(f"make --no-print-directory -C {ROOT} uninstall")
    assert "Kept the key and the enrolled patterns" in out
    assert system.ok("grep -c pam_patternlock /etc/pam.d/common-auth || true").strip() == "0"
    assert system.run("systemctl is-active patternlockd.socket").stdout.strip() == "inactive"
    assert system.run("test -e /usr/local/sbin/patternlockd").returncode != 0
