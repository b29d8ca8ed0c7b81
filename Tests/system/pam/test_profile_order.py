# SPDX-License-Identifier: Apache-2.0
"""The pam-auth-update profile's place among the profiles Debian ships.

pam-auth-update writes common-auth in the order of the profiles' Priority,
highest first, and gives the first its Auth-Initial line. A module placed above
pattern unlock that asks "Password:" itself (pam_krb5 does, at 704, when it is
first) takes what a client with one field holds, a pattern too, and Kerberos
pre-authentication can then be attacked offline over every pattern. So the
pattern's line must come first, and each module after it must take the
password it hands on (try_first_pass / use_first_pass) or ask nothing.

The real profiles: Debian's packages downloaded with apt-get and unpacked (not
installed); the real pam-auth-update, in a private mount namespace where
/usr/share/pam-configs, /etc/pam.d and /var/lib/pam are the test's own."""
import pathlib
import subprocess

import pytest

from harness.common import ROOT, skip_or_fail

# Every Debian package whose profile puts a module that reads or asks for a
# password into the auth stack (docs/SECURITY.md, "Other modules in the one
# field"), and fprintd, which asks nothing but wants to be early.
PACKAGES = ["libpam-krb5", "libpam-sss", "systemd-homed", "libpam-fprintd", "libpam-winbind", "libpam-ldapd"]
# Modules that ask nothing a client would answer with its field.
ASK_NOTHING = {"pam_fprintd.so"}
# The options with which a module takes the password handed on.
TAKES_IT = {"try_first_pass", "use_first_pass", "force_first_pass"}


@pytest.fixture(scope="module")
def debian_profiles(tmp_path_factory):
    d = tmp_path_factory.mktemp("debs")
    r = subprocess.run(["apt-get", "download", *PACKAGES], cwd=d, capture_output=True, text=True)
    if r.returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        r = subprocess.run(["apt-get", "download", *PACKAGES], cwd=d, capture_output=True, text=True)
    if r.returncode != 0:
        skip_or_fail(f"apt-get download {' '.join(PACKAGES)} failed: {r.stderr.strip()}")
    unpacked = d / "x"
    for deb in sorted(d.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    profiles = sorted((unpacked / "usr/share/pam-configs").iterdir())
    assert {p.name for p in profiles} >= {"krb5", "sss", "systemd-homed", "fprintd", "winbind", "ldap"}, profiles
    return profiles


def priority(profile):
    for line in pathlib.Path(profile).read_text().splitlines():
        if line.startswith("Priority:"):
            return int(line.split(":", 1)[1])
    raise AssertionError(f"no Priority in {profile}")


def common_auth(tmp_path, profiles, ours):
    """common-auth as pam-auth-update writes it with these profiles, the
    system's own (unix) and ours, every one with Default: yes enabled, and
    fprintd too."""
    cfg, pamd, state = tmp_path / "pam-configs", tmp_path / "pam.d", tmp_path / "var-lib-pam"
    for d in (cfg, pamd, state):
        d.mkdir()
    for p in [*pathlib.Path("/usr/share/pam-configs").iterdir(), *profiles]:
        (cfg / p.name).write_bytes(p.read_bytes())
    (cfg / "patternlock").write_text(ours)
    subprocess.run(["cp", "-a", "/etc/pam.d/.", str(pamd)], check=True)
    script = (f"mount --bind {cfg} /usr/share/pam-configs && mount --bind {pamd} /etc/pam.d && "
              f"mount --bind {state} /var/lib/pam && "
              "pam-auth-update --enable patternlock fprintd --force")
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                       env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return [line.split() for line in (pamd / "common-auth").read_text().splitlines() if line.startswith("auth")]


def module_of(fields):
    return next(f for f in fields if f.endswith(".so"))


def test_the_pattern_comes_before_every_module_that_asks_for_a_password(tmp_path, debian_profiles):
    lines = common_auth(tmp_path, debian_profiles, (ROOT / "pam" / "pam-configs" / "patternlock").read_text())
    modules = [module_of(f) for f in lines]
    assert modules[0] == "pam_patternlock.so", modules
    assert {"pam_krb5.so", "pam_sss.so", "pam_systemd_home.so", "pam_unix.so"} <= set(modules), modules
    # Every module after it that can read a password takes the one handed on.
    for fields in lines[1:]:
        module = module_of(fields)
        if module in ASK_NOTHING or module in ("pam_deny.so", "pam_permit.so", "pam_cap.so"):
            continue
        if module == "pam_systemd_home.so":
            continue  # takes PAM_AUTHTOK as its password whatever its options (pam_systemd_home(8))
        assert TAKES_IT & set(fields), f"{module} would ask for itself: {' '.join(fields)}"


def test_no_profile_debian_ships_outranks_the_pattern(debian_profiles):
    ours = priority(ROOT / "pam" / "pam-configs" / "patternlock")
    system = list(pathlib.Path("/usr/share/pam-configs").iterdir())
    above = [(p.name, priority(p)) for p in [*debian_profiles, *system]
             if priority(p) >= ours and "Auth:" in p.read_text()]
    assert above == [], f"these auth profiles come before the pattern's ({ours}): {above}"


def test_at_the_old_priority_kerberos_asks_first(tmp_path, debian_profiles):
    """Why 768: at 512 pam_krb5 is first, without try_first_pass, so it asks."""
    old = (ROOT / "pam" / "pam-configs" / "patternlock").read_text()
    old = "\n".join("Priority: 512" if line.startswith("Priority:") else line for line in old.splitlines()) + "\n"
    lines = common_auth(tmp_path, debian_profiles, old)
    assert module_of(lines[0]) == "pam_krb5.so"
    assert not TAKES_IT & set(lines[0]), lines[0]
