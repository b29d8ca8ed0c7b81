# SPDX-License-Identifier: Apache-2.0
"""The Debian packages on Debian 13 (trixie), the current stable, as an
administrator meets them there: trixie's lintian, the man pages under groff
1.23, and the packages' life on a booted Debian 13 (trixie.py's root, booted
with systemd): apt-get install, pam-auth-update, sudo with the pattern on a
pseudo-terminal in a real logind session, an upgrade from the packages that
installed into /lib and one to a newer version, remove and purge, with no
word from dpkg about directories it could not remove.

The booted tests run in file order, each on what the one before left. The
container is this module's own (it removes and purges the packages), not the
session's shared trixie_system."""
import re

import pytest

from harness import booted
from harness import trixie
from harness.common import ROOT, unique
from harness.deb import PASSWORD, PATTERN, PROMPT, Box, debian_version, lib_layout_module_deb, sudo_until_locked

BUILD = ROOT / "build"
# What dpkg says when a package leaves files in a directory that is also
# reached by another name (the /lib -> /usr/lib alias) and cannot remove it.
DPKG_WARNINGS = re.compile(r"^dpkg: warning: .*$", re.M)


@pytest.fixture(scope="module")
def box13(project_debs):
    with trixie.root() as lower, booted.boot(system_class=trixie.TrixieSystem, lower=lower) as system:
        assert system.debian_version().startswith("13"), system.debian_version()
        b = Box(system)
        b.debs = project_debs
        b.user = unique("pl13su")
        b.other = unique("pl13other")
        for name in (b.user, b.other):
            b.ok(f"useradd --create-home --shell /bin/bash {name}")
            b.ok("chpasswd", input=f"{name}:{PASSWORD}\n")
        b.ok(f"echo '{b.user} ALL=(ALL) ALL' > /etc/sudoers.d/{b.user} && chmod 440 /etc/sudoers.d/{b.user}")
        yield b


def no_dpkg_warnings(out, allowed=()):
    warnings = [w for w in DPKG_WARNINGS.findall(out) if w not in allowed]
    assert warnings == [], "\n".join(warnings)
    assert "not empty so not removed" not in out, out


# Once, at the upgrade from the /lib layout: dpkg cannot remove the directories
# the old package listed, since under the merged /usr they are the new ones.
LIB_LAYOUT_LEFT = tuple(f"dpkg: warning: unable to delete old directory '{d}': Directory not empty"
                        for d in ("/lib/x86_64-linux-gnu/security", "/lib/x86_64-linux-gnu"))


def test_trixies_lintian_finds_no_error_and_no_warning(box13):
    r = box13.run(f"lintian --pedantic --display-info {BUILD}/*.deb {BUILD}/gnome/*.deb")
    tags = [line for line in r.stdout.splitlines() if re.match(r"[EWIPX]: ", line)]
    assert not [t for t in tags if t[0] in "EW"], r.stdout + r.stderr
    # An override must name a tag this lintian knows (alien-tag) and still match one.
    assert not [t for t in tags if re.search(r"alien-tag|unused-override|mismatched-override", t)], r.stdout
    # trixie's own lintian (2.122), which knows the /usr merge; Debian 12's is 2.116.
    assert re.match(r"Lintian v2\.(1[2-9]\d|[2-9]\d\d)", box13.ok("lintian --version")), box13.ok("lintian --version")


def test_the_man_pages_render_without_warnings_under_trixies_groff(box13):
    version = box13.ok("groff --version | head -1")
    assert re.search(r"\b1\.2[3-9]", version), version
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.[1-8]"))
    assert "patternlockd.8" in pages
    for page in pages:
        r = box13.run(f"groff -man -Tutf8 -ww -z {ROOT}/docs/{page}")
        assert r.returncode == 0 and r.stderr == "", f"{page}: {r.stderr}"


def test_apt_installs_the_packages_and_systemd_runs_the_daemon(box13):
    names = " ".join(f"./{p.name}" for p in box13.debs.values())
    out = box13.ok(f"cd {BUILD} && apt-get install -y --no-install-recommends {names} 2>&1")
    no_dpkg_warnings(out)
    assert "Created the key /etc/patternlock/key" in out, out
    assert box13.ok("ls /usr/lib/*/security/pam_patternlock.so").strip()
    assert box13.ok("systemctl is-enabled patternlockd.socket").strip() == "enabled"
    box13.ok("patternlockd status")
    assert box13.ok("systemctl is-active patternlockd.service").strip() == "active"
    assert box13.ok("systemctl show -p FragmentPath --value patternlockd.service").strip() == \
        "/usr/lib/systemd/system/patternlockd.service"


def test_the_setup_window_runs_on_debian_13_with_its_entry_and_icon_in_place(box13):
    """patternlock-setup, built on Debian 12, runs on Debian 13's libraries; the
    desktop entry and the icon are where trixie's desktops read them (trixie's
    lintian, above, checks the entry)."""
    usage = box13.ok(f"runuser -u {box13.user} -- patternlock-setup --help")
    assert usage.startswith("Usage: patternlock-setup"), usage
    assert box13.ok("man -w patternlock-setup").strip() == "/usr/share/man/man1/patternlock-setup.1.gz"
    listed = box13.ok("dpkg -L patternlock-screen").split()
    for path in ("/usr/bin/patternlock-setup", "/usr/share/applications/org.patternlock.Setup.desktop",
                 "/usr/share/icons/hicolor/scalable/apps/org.patternlock.Setup.svg"):
        assert path in listed, f"{path} is not installed on Debian 13"


def test_sudo_takes_the_pattern_in_a_local_session_and_five_wrong_lock_it(box13):
    """sudo 1.9.16 (a pty of its own by default) inside the user's own local
    logind session, as on Debian 12 (test_deb)."""
    u = box13.user
    box13.ok(f"patternlockd enroll {u}", input=f"{PATTERN}\n{PATTERN}\n")
    box13.ok("pam-auth-update --enable patternlock")
    written = box13.ok("grep pam_patternlock /etc/pam.d/common-auth").split()
    assert written[:5] == ["auth", "[success=2", "auth_err=die", "default=ignore]", "pam_patternlock.so"], written
    sudo_until_locked(box13, u, "Debian 13 sudo: the right pattern, four wrong ones, the fifth, then locked")
    journal = box13.ok("journalctl -u patternlockd.service --no-pager -o cat")
    assert re.search(rf"verify user={u} .*service=sudo.*result=OK", journal), journal[-2000:]
    box13.ok(f"patternlockd reset {u}")


def test_an_upgrade_from_the_lib_layout_keeps_the_module_present_at_every_moment(box13):
    u = box13.user
    module = box13.ok("ls /usr/lib/*/security/pam_patternlock.so").strip()
    old = lib_layout_module_deb(box13, debian_version() + "~lib")
    box13.ok(f"apt-get install -y --allow-downgrades {old} 2>&1")
    assert box13.ok("dpkg -L libpam-patternlock | grep security/pam_patternlock.so").strip().startswith("/lib/")
    box13.ok("rm -f /tmp/watch.stop /tmp/watch.log /tmp/watch.count; "
             f"nohup sh -c 'n=0; while [ ! -e /tmp/watch.stop ]; do [ -s {module} ] || echo missing >> /tmp/watch.log; "
             "n=$((n+1)); done; echo $n > /tmp/watch.count' >/dev/null 2>&1 &")
    out = box13.ok(f"apt-get install -y {BUILD}/libpam-patternlock_*.deb 2>&1")
    box13.ok("touch /tmp/watch.stop; for i in $(seq 100); do [ -s /tmp/watch.count ] && break; sleep 0.1; done")
    assert int(box13.ok("cat /tmp/watch.count")) > 100, "the watcher did not run through the upgrade"
    assert box13.run("test -e /tmp/watch.log").returncode != 0, box13.ok("sort /tmp/watch.log | uniq -c") + out
    no_dpkg_warnings(out, allowed=LIB_LAYOUT_LEFT)
    assert box13.ok("dpkg -L libpam-patternlock | grep security/pam_patternlock.so").strip().startswith("/usr/lib/")
    box13.ok(f"test -s {module}")
    out = box13.session("sudo with a pattern after the upgrade from /lib", u, [[
        ["send", "sudo -k sh -c 'echo SUDO-OK $(id -un)'\n"], ["expect", PROMPT],
        ["secret", PATTERN + "\n"], ["expect", "SUDO-OK root"]]])
    assert "Password:" not in out.split("sudo -k", 1)[1], out


def test_an_upgrade_to_a_newer_version_keeps_the_key_and_the_patterns(box13):
    u = box13.user
    newer = debian_version() + "+upgrade1"
    box13.ok("rm -rf /tmp/upgrade && mkdir /tmp/upgrade && cd /tmp/upgrade && "
             f"for deb in {BUILD}/*.deb; do n=$(basename $deb .deb); dpkg-deb -R $deb $n && "
             f"sed -i 's/^Version: .*/Version: {newer}/; s/(= {debian_version()})/(= {newer})/' $n/DEBIAN/control && "
             f"dpkg-deb --root-owner-group -b $n ${{n%%_*}}_{newer}_${{n##*_}}.deb >/dev/null && rm -r $n; done")
    key = box13.ok("sha256sum /etc/patternlock/key")
    out = box13.ok("cd /tmp/upgrade && apt-get install -y ./*.deb 2>&1")
    no_dpkg_warnings(out)
    for name in box13.debs:
        assert box13.ok(f"dpkg-query -W -f='${{Version}}' {name}") == newer
    assert box13.ok("sha256sum /etc/patternlock/key") == key
    box13.ok(f"patternlockd verify {u}", input=PATTERN + "\n")


def test_remove_and_purge_print_no_dpkg_warning_and_leave_nothing(box13):
    u = box13.user
    names = " ".join(box13.debs)
    out = box13.ok(f"apt-get remove -y {names} 2>&1")
    no_dpkg_warnings(out)
    assert box13.ok("grep -rl pam_patternlock /etc/pam.d || true").strip() == ""
    assert box13.run("ls /usr/lib/*/security/pam_patternlock.so").returncode != 0
    # A package with no conffile and no script leaves nothing for dpkg to know
    # after remove, and apt-get refuses to purge what it does not know.
    known = box13.ok(f"dpkg-query -W -f='${{db:Status-Abbrev}} ${{Package}}\\n' {names} 2>/dev/null || true")
    names = " ".join(line.split()[-1] for line in known.splitlines() if line.startswith("rc"))
    assert "patternlockd" in names.split(), known
    out = box13.ok(f"apt-get purge -y {names} 2>&1")
    no_dpkg_warnings(out)
    for path in ("/etc/patternlock", "/var/lib/private/patternlock", "/var/lib/patternlock",
                 "/usr/lib/systemd/system/patternlockd.service"):
        assert box13.run(f"test -e {path} || test -L {path}").returncode != 0, f"{path} survived the purge"
    # Debian's convention, as the README says: the system user stays.
    assert box13.ok("getent passwd patternlock").startswith("patternlock:")
    out = box13.terminal("su with the password after purge", ["su", "-", u, "-c", "echo SU-OK $(id -un)"], [
        ["expect", "Password: "], ["secret", PASSWORD + "\n"], ["expect", f"SU-OK {u}"], ["eof"]],
        as_user=box13.other)
    assert "Pattern" not in out
