# SPDX-License-Identifier: Apache-2.0
"""The Debian packages that `make deb` builds: what they hold and depend on,
lintian's verdict, and the whole life of a package on this machine's own files
booted with systemd in a container (test_install's overlay, a fresh boot):
apt-get install with the Swift toolchain out of sight, su and login and sudo
on a pseudo-terminal with a pattern, an upgrade, remove and purge.

The booted tests run in file order, each on what the one before left."""
import json
import pathlib
import re
import shutil
import subprocess

import pytest

from harness.common import DAEMON, MODULE_PASSWORD_PROMPT, ROOT, desktop_groups, unique
from harness.deb import (BUILD, PASSWORD, PATTERN, PROMPT, SUDO, TRANSCRIPTS, WRONG, Box, debian_version,
                         lib_layout_module_deb, sh, sudo_steps, sudo_until_locked, upstream_version)

PACKAGES = ("libpam-patternlock", "patternlockd", "patternlockd-postgresql", "patternlock-screen", "patternlock-plasma")
# patternlock-setup's desktop entry and icon, in the patternlock-screen package.
SETUP_ENTRY = "/usr/share/applications/org.patternlock.Setup.desktop"
SETUP_ICON = "/usr/share/icons/hicolor/scalable/apps/org.patternlock.Setup.svg"
# The places a package installs into or its scripts write, less the package
# manager's own records and logs (dpkg keeps a purged package's history by design),
# caches, users' homes (what a login leaves there belongs to the user), and the
# data of a PostgreSQL the booted copy of this machine starts (the server rewrites
# and deletes its own files, e.g. pg_internal.init, whenever it likes).
SNAPSHOT = ("find /etc /usr /lib /lib64 /opt /srv /var /run/patternlock -xdev "
            r"\( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/lib/PackageKit -o -path /var/log -o -path /var/cache "
            r"-o -path /var/tmp -o -path /var/lib/systemd/timers -o -path /var/lib/systemd/catalog "
            r"-o -path /var/lib/systemd/random-seed -o -path /var/lib/systemd/linger "
            r"-o -path /var/mail -o -path /var/spool/mail -o -path /var/lib/postgresql \) -prune -o -print 2>/dev/null | sort")


def host_snapshot():
    """SNAPSHOT's list taken on this machine rather than in the container."""
    return subprocess.run(["bash", "-c", SNAPSHOT], capture_output=True, text=True, timeout=300).stdout.splitlines()


def test_the_compiled_in_version_is_the_changelog_s():
    """`patternlockd --version` comes from the committed Version.swift; a changelog
    bump without `make version-swift` would ship a binary that names the old one."""
    generated = sh("sh", str(ROOT / "scripts/version.sh"), "swift").stdout
    committed = (ROOT / "Sources/patternlockd/Version.swift").read_text()
    # The licence line is scripts/check-spdx's business: version.sh writes it and
    # scripts/add-spdx adds the same line to a Version.swift written before it did.
    spdx = "// SPDX-License-Identifier: Apache-2.0\n"
    assert generated.startswith(spdx)
    generated, committed = generated.removeprefix(spdx), committed.removeprefix(spdx)
    assert committed == generated, "Sources/patternlockd/Version.swift disagrees with debian/changelog: run make version-swift"
    r = sh(str(BUILD / "patternlockd"), "--version")
    assert r.stdout.strip() == f"patternlockd {upstream_version()}", r.stdout


@pytest.fixture(scope="module")
def debs(project_debs):
    """The packages `make deb` made once for the whole run (conftest's project_debs)."""
    assert sorted(project_debs) == sorted(PACKAGES), project_debs
    return project_debs


def control(deb):
    fields = {}
    for line in sh("dpkg-deb", "-f", str(deb)).stdout.splitlines():
        if line[:1].strip():
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    return fields


def contents(deb):
    """{path: mode string} of every file and link in a .deb (directories left out)."""
    found = {}
    for line in sh("dpkg-deb", "-c", str(deb)).stdout.splitlines():
        parts = line.split()
        if not parts[0].startswith("d"):
            found[parts[5].lstrip(".")] = parts[0]
    return found


# ---- the packages, on the build host ------------------------------------------------

def test_the_version_is_the_changelogs_in_the_packages_and_in_patternlockd_version(debs):
    version = debian_version()
    assert version.startswith(upstream_version() + "-")
    for name, deb in debs.items():
        assert deb.name == f"{name}_{version}_{control(deb)['Architecture']}.deb"
        assert control(deb)["Version"] == version
    out = sh(str(DAEMON), "--version").stdout.strip()
    assert out == f"patternlockd {upstream_version()}"


def test_the_packages_depend_on_debian_libraries_only(debs):
    def names(deb):
        return {re.match(r"[a-z0-9.+-]+", d.strip()).group(0) for d in control(deb)["Depends"].split(",")}
    # As dpkg-shlibdeps finds them: the daemon carries the Swift runtime itself.
    # Besides, what creates its user (dh_installsysusers: systemd-sysusers).
    assert names(debs["patternlockd"]) == {"libc6", "libgcc-s1", "libstdc++6", "systemd"}
    assert "systemd | systemd-standalone-sysusers | systemd-sysusers" in control(debs["patternlockd"])["Depends"]
    # polkitd checks a user's password before its first pattern; without it root sets it.
    assert control(debs["patternlockd"])["Recommends"] == "libpam-patternlock, polkitd"
    # libsystemd0: sd-login, to ask only a person at this machine.
    assert names(debs["libpam-patternlock"]) == {"libc6", "libpam0g", "libsystemd0"}
    # The fleet daemon adds no Debian library (postgres-nio speaks the protocol
    # itself): only the plain package it runs beside, at the same version.
    assert names(debs["patternlockd-postgresql"]) == {"libc6", "libgcc-s1", "libstdc++6", "patternlockd"}
    assert f"patternlockd (= {debian_version()})" in control(debs["patternlockd-postgresql"])["Depends"]
    # The lock screen: Wayland, cairo (which draws) and xkbcommon (keys), libpam
    # for its PAM child; the Swift runtime is inside.
    assert {"libc6", "libpam0g", "libwayland-client0", "libcairo2", "libxkbcommon0"} <= names(debs["patternlock-screen"])
    assert control(debs["patternlock-screen"])["Recommends"].startswith("libpam-patternlock")
    for deb in debs.values():
        assert "swift" not in json.dumps(control(deb)).lower()


def test_each_package_holds_its_part(debs):
    multiarch = sh("dpkg-architecture", "-qDEB_HOST_MULTIARCH").stdout.strip()
    module = contents(debs["libpam-patternlock"])
    assert set(module) == {
        f"/usr/lib/{multiarch}/security/pam_patternlock.so",
        "/usr/share/pam-configs/patternlock",
        "/usr/share/man/man8/pam_patternlock.8.gz",
        "/usr/share/doc/libpam-patternlock/pam.d-example",
        "/usr/share/doc/libpam-patternlock/pam.d-example-faillock",
        "/usr/share/doc/libpam-patternlock/changelog.Debian.gz",
        "/usr/share/doc/libpam-patternlock/copyright",
        "/usr/share/lintian/overrides/libpam-patternlock",
    }
    daemon = contents(debs["patternlockd"])
    assert daemon["/usr/sbin/patternlockd"] == "-rwxr-xr-x"
    assert daemon["/usr/bin/patternlockd"].startswith("l")
    for path in ("/usr/lib/systemd/system/patternlockd.service", "/usr/lib/systemd/system/patternlockd.socket",
                 "/usr/share/man/man8/patternlockd.8.gz",
                 "/usr/share/bash-completion/completions/patternlockd",
                 "/usr/share/zsh/vendor-completions/_patternlockd",
                 "/usr/share/fish/vendor_completions.d/patternlockd.fish",
                 "/usr/share/doc/patternlockd/SECURITY.md.gz", "/usr/share/doc/patternlockd/PROTOCOL.md.gz",
                 "/usr/share/polkit-1/actions/org.patternlock.policy", "/usr/lib/sysusers.d/patternlockd.conf"):
        assert path in daemon, f"{path} is not in the patternlockd package"
    # Since the /usr merge every file lives under /usr (trixie's lintian calls /lib,
    # /bin and /sbin aliased locations; dpkg cannot remove their directories).
    for deb in debs.values():
        aliased = [p for p in contents(deb) if p.split("/")[1] in ("lib", "lib32", "lib64", "libx32", "bin", "sbin")]
        assert aliased == [], f"{deb.name} installs into an aliased location: {aliased}"
    screen = contents(debs["patternlock-screen"])
    assert screen["/usr/bin/patternlock-screen"] == "-rwxr-xr-x"
    # The setup window travels with the lock screen: the same libraries, the same users.
    assert screen["/usr/bin/patternlock-setup"] == "-rwxr-xr-x"
    for path in ("/etc/pam.d/patternlock-screen", "/usr/share/man/man1/patternlock-screen.1.gz",
                 SETUP_ENTRY, SETUP_ICON, "/usr/share/man/man1/patternlock-setup.1.gz"):
        assert path in screen, f"{path} is not in the patternlock-screen package"
    # Plasma's lock screen: the two packages where Plasma looks, the file its
    # Plasma 6 drop-ins read, the command that writes them; no dependency on
    # Plasma (it enhances the greeter's library), and nothing that turns it on.
    plasma = contents(debs["patternlock-plasma"])
    assert plasma["/usr/bin/patternlock-plasma"] == "-rwxr-xr-x"
    for path in ("/usr/share/plasma/shells/org.patternlock.plasma/metadata.json",
                 "/usr/share/plasma/shells/org.patternlock.plasma/contents/lockscreen/LockScreen.qml",
                 "/usr/share/plasma/look-and-feel/org.patternlock.lookandfeel/metadata.json",
                 "/usr/share/plasma/look-and-feel/org.patternlock.lookandfeel/contents/lockscreen/LockScreen.qml",
                 "/usr/share/patternlock/plasma-greeter.env", "/usr/share/man/man1/patternlock-plasma.1.gz"):
        assert path in plasma, f"{path} is not in the patternlock-plasma package"
    assert not [p for p in plasma if p.startswith(("/etc/", "/usr/lib/systemd/"))], plasma
    assert control(debs["patternlock-plasma"])["Architecture"] == "all"
    assert "libkscreenlocker6" in control(debs["patternlock-plasma"])["Enhances"]
    fleet = contents(debs["patternlockd-postgresql"])
    assert set(fleet) == {
        "/usr/sbin/patternlockd-fleet",
        "/usr/share/man/man8/patternlockd-fleet.8.gz",
        "/usr/share/doc/patternlockd-postgresql/changelog.Debian.gz",
        "/usr/share/doc/patternlockd-postgresql/copyright",
        "/usr/share/doc/patternlockd-postgresql/FLEET.md.gz",  # setting a fleet up
        "/usr/share/lintian/overrides/patternlockd-postgresql",
    }
    assert fleet["/usr/sbin/patternlockd-fleet"] == "-rwxr-xr-x"


def test_the_packaged_desktop_entry_is_valid_and_names_the_packaged_command_and_icon(debs, tmp_path):
    """What a desktop reads from the package: an entry desktop-file-validate
    accepts, "Unlock Pattern" starting /usr/bin/patternlock-setup, with the
    icon the package puts in hicolor's scalable apps."""
    if shutil.which("desktop-file-validate") is None:
        pytest.fail("desktop-file-validate is not installed: apt-get install desktop-file-utils (.ci/run does)")
    sh("dpkg-deb", "-x", str(debs["patternlock-screen"]), str(tmp_path))
    entry = tmp_path / SETUP_ENTRY.lstrip("/")
    r = sh("desktop-file-validate", str(entry), check=False)
    assert r.returncode == 0 and r.stdout + r.stderr == "", r.stdout + r.stderr
    groups = desktop_groups(entry.read_text())
    fields = groups["Desktop Entry"]
    assert fields["Name"] == "Unlock Pattern" and fields["Terminal"] == "false", fields
    assert (tmp_path / "usr/bin" / fields["Exec"]).is_file(), fields["Exec"]
    # Its action, "Remove My Unlock Pattern", runs the same command with --remove.
    remove = groups["Desktop Action Remove"]["Exec"].split()
    assert remove == [fields["Exec"], "--remove"], groups
    icon = tmp_path / "usr/share/icons/hicolor/scalable/apps" / (fields["Icon"] + ".svg")
    assert icon.read_text() == (ROOT / "desktop/org.patternlock.Setup.svg").read_text()


def test_the_packaged_unit_runs_the_packaged_daemon(debs, tmp_path):
    sh("dpkg-deb", "-x", str(debs["patternlockd"]), str(tmp_path))
    service = (tmp_path / "usr/lib/systemd/system/patternlockd.service").read_text()
    assert re.search(r"^ExecStart=/usr/sbin/patternlockd serve ", service, re.M), service
    assert "/usr/local" not in service


def test_the_completions_are_swift_argument_parsers_for_every_command(debs, tmp_path):
    sh("dpkg-deb", "-x", str(debs["patternlockd"]), str(tmp_path))
    bash = (tmp_path / "usr/share/bash-completion/completions/patternlockd").read_text()
    assert not bash.startswith("#!"), "bash-completion sources the file: no #! line"
    for shell_file in ("usr/share/bash-completion/completions/patternlockd",
                       "usr/share/zsh/vendor-completions/_patternlockd",
                       "usr/share/fish/vendor_completions.d/patternlockd.fish"):
        text = (tmp_path / shell_file).read_text()
        for word in ("enroll", "verify", "status", "reset", "remove", "layout", "numpad"):
            assert word in text, f"{shell_file} does not complete {word}"
    if shutil.which("bash"):
        r = sh("bash", "-c", f"source {tmp_path}/usr/share/bash-completion/completions/patternlockd "
                             "&& complete -p patternlockd")
        assert "patternlockd" in r.stdout


def test_lintian_finds_no_error_and_no_warning(debs):
    if shutil.which("lintian") is None:
        pytest.fail("lintian is not installed, and make check runs it on the packages: apt-get install lintian (.ci/run does)")
    r = sh("lintian", "--pedantic", "--display-info", *map(str, debs.values()), check=False)
    tags = [line for line in r.stdout.splitlines() if re.match(r"[EWIPX]: ", line)]
    assert not [t for t in tags if t[0] in "EW"], r.stdout + r.stderr
    # Every override still matches a tag lintian would give, so none hides a new one.
    assert not [t for t in tags if "unused-override" in t or "mismatched-override" in t], r.stdout
    assert r.returncode == 0, r.stdout + r.stderr


# ---- the life of the packages on a booted system ----------------------------------

@pytest.fixture(scope="module")
def box(booted_system, debs):  # noqa: F811
    TRANSCRIPTS.unlink(missing_ok=True)
    b = Box(booted_system)
    # The Swift toolchain is a build tool only: out of sight for the whole life.
    b.ok("if [ -d /opt/swift ]; then mount -t tmpfs -o ro,mode=0755 tmpfs /opt/swift; fi")
    assert b.run("command -v swift").returncode != 0
    # A container image's policy-rc.d (Docker's exits 101) forbids maintainer
    # scripts to start services; a booted Debian system has none.
    b.ok("rm -f /usr/sbin/policy-rc.d")
    # Anything the host has of patternlock is not part of this life.
    b.ok("rm -rf /etc/patternlock /var/lib/private/patternlock /var/lib/patternlock")
    b.user = unique("plsu")
    b.other = unique("plother")
    for name in (b.user, b.other):
        b.ok(f"useradd --create-home --shell /bin/bash {name}")
        b.ok("chpasswd", input=f"{name}:{PASSWORD}\n")
    b.ok(f"echo '{b.user} ALL=(ALL) ALL' > /etc/sudoers.d/{b.user} && chmod 440 /etc/sudoers.d/{b.user}")
    b.before = b.ok(SNAPSHOT).splitlines()
    # The container's root is an overlay on this machine's: what changes here
    # meanwhile (another test, an apt-get) shows through and is not the packages'.
    b.host_before = host_snapshot()
    b.pam_before = b.ok("cat /etc/pam.d/common-auth /etc/pam.d/common-account "
                        "/etc/pam.d/common-session /etc/pam.d/common-password")
    return b


def installed_files(box):
    out = box.ok("dpkg -L " + " ".join(PACKAGES))
    return [line for line in out.splitlines() if line.startswith("/")]


def test_apt_installs_both_packages_and_systemd_runs_the_daemon(box):
    debs_in_build = " ".join(f"./{p.name}" for p in sorted(BUILD.glob("*.deb")))
    out = box.ok(f"cd {BUILD} && apt-get install -y --no-install-recommends {debs_in_build} 2>&1")
    assert "Created the key /etc/patternlock/key" in out, out
    assert box.ok("stat -c '%s %a %U' /etc/patternlock/key").split() == ["32", "600", "root"]
    # Socket activation: systemd listens, the first connection starts the daemon.
    assert box.ok("systemctl is-active patternlockd.socket").strip() == "active"
    assert box.ok("systemctl is-enabled patternlockd.socket").strip() == "enabled"
    assert box.ok("stat -c '%a %U' /run/patternlock/socket").split() == ["666", "root"]
    box.ok("patternlockd status")
    assert box.ok("systemctl is-active patternlockd.service").strip() == "active"
    # No toolchain anywhere in sight, and the daemon needs none.
    assert "/opt/swift" not in box.ok("ldd /usr/sbin/patternlockd")
    assert box.ok("patternlockd --version").strip() == f"patternlockd {upstream_version()}"
    assert box.ok("ps -o uid= -C patternlockd").strip() not in ("", "0"), "the daemon must not run as root"
    # Installing changes nobody's login until the administrator says so.
    assert box.ok("grep -rl pam_patternlock /etc/pam.d || true").strip() == ""
    assert box.ok("ls /usr/lib/*/security/pam_patternlock.so").strip()


def test_the_setup_window_is_installed_for_the_desktop_and_runs_without_the_toolchain(box):
    """patternlock-setup from the installed package: on users' PATH, its help
    printed with the Swift toolchain out of sight, its man page found by man, the
    desktop entry valid where desktops read it and its icon in hicolor."""
    assert box.ok("command -v patternlock-setup").strip() == "/usr/bin/patternlock-setup"
    assert "/opt/swift" not in box.ok("ldd /usr/bin/patternlock-setup")
    usage = box.ok(f"runuser -u {box.user} -- patternlock-setup --help")
    assert usage.startswith("Usage: patternlock-setup") and "patternlockd enroll" in usage, usage
    assert box.ok("patternlock-setup --version").strip() == f"patternlock-setup {upstream_version()}"
    assert box.ok("man -w patternlock-setup").strip() == "/usr/share/man/man1/patternlock-setup.1.gz"
    if box.run("command -v desktop-file-validate").returncode != 0:
        pytest.fail("desktop-file-validate is not installed: apt-get install desktop-file-utils (.ci/run does)")
    assert box.ok(f"desktop-file-validate {SETUP_ENTRY} 2>&1") == ""
    box.ok(f"test -s {SETUP_ICON}")
    assert box.ok(f"dpkg -S {SETUP_ENTRY} {SETUP_ICON}").count("patternlock-screen:") == 2


def test_su_takes_the_pattern_and_login_on_a_terminal_the_password(box):
    u = box.user
    box.ok(f"patternlockd enroll {u}", input=f"{PATTERN}\n{PATTERN}\n")
    box.ok("pam-auth-update --enable patternlock")
    assert box.ok("grep -c pam_patternlock /etc/pam.d/common-auth").strip() == "1"
    # The line the README quotes is the one pam-auth-update writes (a jump count).
    written = box.ok("grep pam_patternlock /etc/pam.d/common-auth").split()
    quoted = re.search(r"`(auth \[[^`]*\] pam_patternlock\.so[^`]*)`", (ROOT / "README.md").read_text())
    assert quoted and quoted.group(1).split() == written, (quoted and quoted.group(1), written)

    # su from an unprivileged user's local session: the grid, the pattern, a
    # shell as the user.
    out = box.session("su with a pattern", box.other, [[
        ["send", f"su - {u} -c 'echo SU-OK $(id -un)'\n"], ["expect", "7 8 9"], ["expect", PROMPT],
        ["secret", PATTERN + "\n"], ["expect", f"SU-OK {u}"]]])
    assert "Password" not in out.split("su - ", 1)[1], out

    # A console login: /bin/login on a terminal, as getty starts it. A new
    # session: the password (password_at_login, for the keyring), no pattern.
    out = box.terminal("login with the password", ["login", u], [
        ["expect", "Password: "], ["secret", PASSWORD + "\n"],
        ["expect", r"\$ "], ["send", "echo LOGIN-OK $(id -un) $(tty)\n"],
        ["expect", f"LOGIN-OK {u} /dev/pts/"], ["send", "exit\n"], ["eof"]])
    assert "Pattern" not in out


def test_sudo_takes_the_pattern_falls_back_to_the_password_and_locks_after_five(box):
    """sudo inside the user's own local session (sudo in no session is
    not asked)."""
    u = box.user
    out = sudo_until_locked(box, u, "sudo: the right pattern, four wrong ones, the fifth, then locked", then=[
        # Locked: no pattern prompt at all, the way out named, the password still works.
        [["send", SUDO], ["expect", "locked after 5 failed attempts"], ["expect", re.escape(MODULE_PASSWORD_PROMPT)],
         ["secret", PASSWORD + "\n"], ["expect", "SUDO-OK root"]]])
    assert out.rsplit(SUDO.strip(), 1)[1].count("Pattern or password: ") == 0, out

    box.ok(f"patternlockd reset {u}")
    out = box.session("sudo after patternlockd reset", u, [sudo_steps(["secret", PATTERN + "\n"])])
    assert "password for" not in out.split(SUDO.strip(), 1)[1]


def doc_block(doc, after, language):
    """The first ```language block of `doc` (a path in the tree) after the line holding `after`."""
    text = (ROOT / doc).read_text()
    start = text.index(f"```{language}\n", text.index(after)) + len(language) + 4
    return text[start:text.index("```", start)]


# docs/FLEET.md's fleet steps on this booted host, with its own PostgreSQL (Debian's
# cluster, started by systemd here) reached through its Unix socket: only the
# site's URI differs from what the README says.
LOCAL_STORE = "postgresql://patternlock_admin@/patternlock?host=/run/postgresql"
HBA = "/etc/postgresql/15/main/pg_hba.conf"
DROP_IN = "/etc/systemd/system/patternlockd.service.d/fleet.conf"


def test_the_documented_fleet_steps_run_the_packaged_fleet_daemon_on_a_real_postgresql(box):
    """patternlockd-postgresql installs patternlockd-fleet, and
    docs/FLEET.md's steps as written (install, db init, the GRANTs, stop, db import,
    db settings, the Unix-socket drop-in) move this host's records into the
    database and make systemd run the fleet daemon on it."""
    u = box.user
    assert box.ok("patternlockd-fleet --version").strip() == f"patternlockd {upstream_version()}"
    assert box.ok("dpkg-query -W -f='${Status}' patternlockd-postgresql") == "install ok installed"
    steps = doc_block("docs/FLEET.md", "The fleet daemon is a program of its own", "sh")
    store_line = next(line for line in steps.splitlines() if line.startswith("STORE="))
    steps = steps.replace(store_line, f"STORE='{LOCAL_STORE}'")
    grants = doc_block("docs/FLEET.md", "The role the daemons log in as needs these rights", "sql")
    drop_in = doc_block("docs/FLEET.md", "Through the Unix socket of a\nPostgreSQL on the same host", "ini")
    box.ok(f"cp {HBA} {HBA}.patternlock-test")
    try:
        # The database administrator's part, which is the site's: the server, the
        # two roles with SCRAM passwords from files (given to psql on stdin, never
        # in argv), password logins for them on the local socket.
        box.ok("systemctl start postgresql.service && for i in $(seq 60); do "
               "pg_isready -q -h /run/postgresql && break; sleep 1; done; pg_isready -h /run/postgresql")
        box.ok("umask 077; head -c 18 /dev/urandom | base64 > /root/admin.pass; "
               "head -c 18 /dev/urandom | base64 > /etc/patternlock/dbpass")
        box.ok(f"sed -i '1i local patternlock patternlock_admin,patternlock scram-sha-256' {HBA} && "
               "systemctl reload postgresql@15-main.service || systemctl reload postgresql.service")
        box.ok("runuser -u postgres -- psql -q -v ON_ERROR_STOP=1", input=(
            "SET password_encryption = 'scram-sha-256';\n"
            f"CREATE ROLE patternlock_admin LOGIN PASSWORD '{box.ok('cat /root/admin.pass').strip()}';\n"
            "CREATE DATABASE patternlock OWNER patternlock_admin;\n"))

        # The README's steps.
        box.ok(f"set -e; cd {ROOT}; {steps}")
        box.ok("runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d patternlock", input=(
            grants + "SET password_encryption = 'scram-sha-256';\n"
            f"ALTER ROLE patternlock PASSWORD '{box.ok('cat /etc/patternlock/dbpass').strip()}';\n"))
        box.ok(f"mkdir -p {pathlib.Path(DROP_IN).parent} && cat > {DROP_IN}", input=drop_in)
        box.ok("systemctl daemon-reload && systemctl restart patternlockd.socket")

        # The user enrolled on this host before is now the database's: the
        # pattern verifies through the fleet daemon, a wrong one is counted there.
        def sql(query):
            return box.ok(f"runuser -u postgres -- psql -tA -d patternlock -c \"{query}\"").strip()
        assert sql(f"SELECT count(*) FROM patternlock_users WHERE user_name = '{u}'") == "1"
        assert sql("SELECT unlock_after FROM patternlock_settings") == "900"
        box.ok(f"patternlockd verify {u}", input=PATTERN + "\n")
        pid = box.ok("systemctl show -p MainPID --value patternlockd.service").strip()
        assert box.ok(f"readlink /proc/{pid}/exe").strip() == "/usr/sbin/patternlockd-fleet"
        assert box.run(f"patternlockd verify {u}", input=WRONG + "\n").returncode != 0
        assert sql(f"SELECT count(*) FROM patternlock_failures WHERE user_name = '{u}'") == "1"
        assert "enrolled, 1 failure, 4 attempts left" in box.ok(f"patternlockd status {u}")
        box.ok(f"patternlockd reset {u}")
        assert sql(f"SELECT count(*) FROM patternlock_failures WHERE user_name = '{u}'") == "0"
        journal = box.ok("journalctl -u patternlockd.service --no-pager -o cat")
        assert "listening on the socket from systemd (state postgresql://patternlock@/patternlock" in journal, journal[-2000:]
        assert box.ok("cat /etc/patternlock/dbpass").strip() not in journal
    finally:
        # Back to the plain daemon and its own records, for the tests after this one.
        box.run(f"rm -f {DROP_IN} /root/admin.pass /etc/patternlock/dbpass; rmdir {pathlib.Path(DROP_IN).parent}; "
                "systemctl daemon-reload; systemctl restart patternlockd.socket")
        box.run("runuser -u postgres -- psql -q -c 'DROP DATABASE IF EXISTS patternlock' "
                "-c 'DROP ROLE IF EXISTS patternlock' -c 'DROP ROLE IF EXISTS patternlock_admin'")
        box.run(f"mv -f {HBA}.patternlock-test {HBA}; systemctl reload postgresql@15-main.service; "
                "systemctl stop postgresql.service 'postgresql@*'")
    box.ok(f"patternlockd verify {u}", input=PATTERN + "\n")


def test_an_upgrade_from_the_lib_layout_keeps_the_module_present_at_every_moment(box):
    """On a merged-/usr system /lib/M/security and /usr/lib/M/security are one
    directory: a package that moves its file from the one name to the other must
    not let dpkg delete the "old" name, which is the new file. A PAM stack that
    names a missing module fails every login, so the module must never vanish,
    not even for a moment, while the package is upgraded."""
    u = box.user
    module = box.ok("ls /usr/lib/*/security/pam_patternlock.so").strip()
    old = lib_layout_module_deb(box, debian_version() + "~lib")
    box.ok(f"apt-get install -y --allow-downgrades {old} 2>&1")
    assert box.ok("dpkg -L libpam-patternlock | grep security/pam_patternlock.so").strip().startswith("/lib/")
    box.ok(f"test -s {module}")
    # A watcher that looks for the module as fast as a shell can, all through the upgrade.
    box.ok("rm -f /tmp/watch.stop /tmp/watch.log /tmp/watch.count; "
           f"nohup sh -c 'n=0; while [ ! -e /tmp/watch.stop ]; do [ -s {module} ] || echo missing >> /tmp/watch.log; "
           "n=$((n+1)); done; echo $n > /tmp/watch.count' >/dev/null 2>&1 &")
    out = box.ok(f"apt-get install -y {BUILD}/libpam-patternlock_*.deb 2>&1")
    box.ok("touch /tmp/watch.stop; for i in $(seq 100); do [ -s /tmp/watch.count ] && break; sleep 0.1; done")
    assert int(box.ok("cat /tmp/watch.count")) > 100, "the watcher did not run through the upgrade"
    assert box.run("test -e /tmp/watch.log").returncode != 0, box.ok("sort /tmp/watch.log | uniq -c") + out
    assert box.ok("dpkg-query -W -f='${Version}' libpam-patternlock") == debian_version()
    assert box.ok("dpkg -L libpam-patternlock | grep security/pam_patternlock.so").strip().startswith("/usr/lib/")
    box.ok(f"test -s {module}")
    assert "not empty so not removed" not in out, out
    # And the module still does its work: su in a local session takes the pattern.
    out = box.session("su with a pattern after the upgrade from /lib", box.other, [[
        ["send", f"su - {u} -c 'echo SU-OK $(id -un)'\n"], ["expect", PROMPT],
        ["secret", PATTERN + "\n"], ["expect", f"SU-OK {u}"]]])
    assert "Password" not in out.split("su - ", 1)[1], out


def test_an_upgrade_keeps_the_key_and_the_patterns_and_restarts_the_daemon(box):
    u = box.user
    newer = debian_version() + "+upgrade1"
    # The same binaries repacked with a higher version: an upgrade as apt runs it,
    # without compiling anything twice.
    box.ok("rm -rf /tmp/upgrade && mkdir /tmp/upgrade && cd /tmp/upgrade && "
           f"for deb in {BUILD}/*.deb; do n=$(basename $deb .deb); dpkg-deb -R $deb $n && "
           f"sed -i 's/^Version: .*/Version: {newer}/; s/(= {debian_version()})/(= {newer})/' $n/DEBIAN/control && "
           f"dpkg-deb --root-owner-group -b $n ${{n%%_*}}_{newer}_${{n##*_}}.deb >/dev/null && rm -r $n; done")
    key = box.ok("sha256sum /etc/patternlock/key")
    records = box.ok("ls /var/lib/private/patternlock")
    pid = box.ok("systemctl show -p MainPID --value patternlockd.service").strip()
    assert pid != "0", "the daemon should be running before the upgrade"

    out = box.ok("cd /tmp/upgrade && apt-get install -y ./*.deb 2>&1")
    assert "Created the key" not in out
    for name in PACKAGES:
        assert box.ok(f"dpkg-query -W -f='${{Version}}' {name}") == newer
    assert box.ok("sha256sum /etc/patternlock/key") == key
    assert box.ok("ls /var/lib/private/patternlock") == records
    # The old daemon is gone; the next connection runs the new one.
    assert box.run(f"kill -0 {pid}").returncode != 0, "the daemon was not restarted"
    box.ok(f"patternlockd verify {u}", input=PATTERN + "\n")
    assert box.ok("systemctl is-active patternlockd.service").strip() == "active"
    assert box.ok("systemctl show -p MainPID --value patternlockd.service").strip() not in ("0", pid)
    assert box.ok("grep -c pam_patternlock /etc/pam.d/common-auth").strip() == "1"


def test_remove_refuses_while_a_hand_written_pam_line_names_the_module(box):
    service = unique("plhand")
    box.ok(f"echo 'auth required pam_patternlock.so' > /etc/pam.d/{service}")
    r = box.run("apt-get remove -y libpam-patternlock 2>&1")
    assert r.returncode != 0
    assert f"/etc/pam.d/{service}" in r.stdout and "Nothing was removed" in r.stdout, r.stdout
    # Refused before anything changed: the module, and the profile in common-auth.
    assert box.ok("ls /usr/lib/*/security/pam_patternlock.so").strip()
    assert box.ok("grep -c pam_patternlock /etc/pam.d/common-auth").strip() == "1"
    assert box.ok("dpkg-query -W -f='${Status}' libpam-patternlock") == "install ok installed"
    box.ok(f"rm /etc/pam.d/{service}")


def test_remove_takes_the_module_out_of_pam_first_and_passwords_still_work(box):
    u = box.user
    box.ok("apt-get remove -y " + " ".join(PACKAGES) + " 2>&1")
    assert box.ok("grep -rl pam_patternlock /etc/pam.d || true").strip() == ""
    assert box.run("ls /usr/lib/*/security/pam_patternlock.so").returncode != 0
    assert box.run("test -e /usr/sbin/patternlockd").returncode != 0
    assert box.run("systemctl is-active patternlockd.socket").stdout.strip() == "inactive"
    # Remove keeps the key and the patterns, for a reinstall.
    assert box.ok("stat -c %s /etc/patternlock/key").strip() == "32"
    assert box.ok("ls /var/lib/private/patternlock").strip()

    out = box.terminal("login with the password after remove", ["login", u], [
        ["expect", "Password: "], ["secret", PASSWORD + "\n"],
        ["expect", r"\$ "], ["send", "echo LOGIN-OK $(id -un)\n"],
        ["expect", f"LOGIN-OK {u}"], ["send", "exit\n"], ["eof"]])
    assert "Pattern" not in out
    box.terminal("su with the password after remove", ["su", "-", u, "-c", "echo SU-OK $(id -un)"], [
        ["expect", "Password: "], ["secret", PASSWORD + "\n"], ["expect", f"SU-OK {u}"], ["eof"]],
        as_user=box.other)


def test_purge_leaves_no_file_of_the_packages_behind(box):
    # patternlockd-postgresql has no conffile or script: remove left nothing of
    # it for dpkg to know, and apt-get refuses to purge a package it does not know.
    known = box.ok("dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' " + " ".join(PACKAGES) + " 2>/dev/null || true")
    assert "patternlockd-postgresql" not in known, known
    # The lock screen's PAM service is a conffile: it stays after remove, until purge.
    assert re.search(r"^rc\s+patternlock-screen$", known, re.M), known
    box.ok("apt-get purge -y libpam-patternlock patternlockd patternlock-screen 2>&1")
    for path in ("/etc/patternlock", "/var/lib/private/patternlock", "/var/lib/patternlock",
                 "/etc/pam.d/patternlock-screen"):
        assert box.run(f"test -e {path} || test -L {path}").returncode != 0, f"{path} survived the purge"
    after = box.ok(SNAPSHOT).splitlines()
    host_changed = set(host_snapshot()) ^ set(box.host_before)
    assert sorted(set(after) - set(box.before) - host_changed) == [], "left behind by the packages"
    assert sorted(set(box.before) - set(after) - host_changed) == [], "removed although not the packages'"
    assert box.ok("cat /etc/pam.d/common-auth /etc/pam.d/common-account "
                  "/etc/pam.d/common-session /etc/pam.d/common-password") == box.pam_before
    assert box.run("dpkg-query -W " + " ".join(PACKAGES)).returncode != 0


def test_a_key_sealed_by_the_tpm_recipe_is_kept_and_no_plain_key_is_made(box):
    # docs/SECURITY.md's recipe seals the key into the credential store and shreds
    # the plain one; an install (or upgrade) after it must not make a second,
    # different pepper beside it.
    sealed = "/etc/credstore.encrypted/patternlock.key"
    box.ok(f"mkdir -p /etc/credstore.encrypted && head -c 200 /dev/urandom > {sealed} && chmod 600 {sealed}")
    try:
        debs_in_build = " ".join(f"./{p.name}" for p in sorted(BUILD.glob("*.deb")))
        out = box.ok(f"cd {BUILD} && apt-get install -y --no-install-recommends {debs_in_build} 2>&1")
        assert f"Kept the sealed key {sealed}" in out, out
        assert "Created the key" not in out, out
        assert box.run("test -e /etc/patternlock/key").returncode != 0, "a plain key was made beside the sealed one"
        box.ok("apt-get purge -y " + " ".join(PACKAGES) + " 2>&1")
        # Purge removes the package's key and records, not the administrator's sealed key.
        assert box.run(f"test -e {sealed}").returncode == 0
    finally:
        box.run(f"rm -rf /etc/credstore.encrypted; apt-get purge -y {' '.join(PACKAGES)} >/dev/null 2>&1")
