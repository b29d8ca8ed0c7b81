# SPDX-License-Identifier: Apache-2.0
"""Debian 13 (trixie), the current stable, booted with systemd in a container,
with this project's .deb packages installed: the tests that need what Debian 12
lacks (sway 1.10 and its ext-session-lock-v1) and the packaging tests for the
current stable run in it.

`root()` makes the Debian 13 root once per machine with mmdebstrap (a Debian 12
package) from Debian's mirror, with PACKAGES installed, and keeps it outside the
clone in CACHE, under a name that hashes the package list: a new list makes a
new root, the same list reuses the one there. It is built beside its final name
and renamed into place only once complete, under a lock, so a half-made root
(a build killed or failed) is never used.

`trixie_system()` boots that root the way booted.py boots this machine (a tmpfs
holds the writes of an overlay over the root, a fresh machine-id,
`systemd-nspawn --boot --private-network`), installs every package `make deb`
made with apt-get, enables the pam-auth-update profile and waits for the
daemon. conftest.py's session-scoped `trixie_system` fixture boots it once per
run."""
import contextlib
import fcntl
import hashlib
import os
import pathlib
import shutil
import subprocess
import time

from harness import booted
from harness.common import skip_or_fail

SUITE = "trixie"
CACHE = pathlib.Path("/var/cache/patternlock-tests")
# The roots this process holds the lock of, and how many times over.
_held = {}
BUILD = booted.ROOT / "build"

# Everything the tests need inside Debian 13; the container has no network once
# booted, so the project's packages' dependencies are here too.
PACKAGES = sorted([
    # a booted system with logind, local logins on a pty, sudo
    "systemd", "systemd-sysv", "dbus", "libpam-systemd", "libpam-runtime", "libpam-modules",
    "login", "passwd", "util-linux", "sudo", "procps", "python3",  # python3: pty_session.py
    # polkit checks a user's password before a first pattern (patternlockd Recommends it)
    "polkitd", "pkexec",
    # the lock screens on a headless sway 1.10: sway, the comparison locker,
    # screenshots, typed keys, the screen read by OCR, the protocols listed
    "sway", "swaylock", "grim", "wtype", "tesseract-ocr", "tesseract-ocr-eng", "fonts-dejavu-core",
    "wayland-utils",
    # the locker that draws a UI (GTK 3, gtk-session-lock), beside swaylock in make bench-screen
    "gtklock",
    # a desktop of one colour, which a lock screen must never let show
    "swaybg",
    # labwc 0.8, the other compositor of Debian 13 with ext-session-lock-v1 that runs
    # without a GPU (wayfire 0.9 needs a DRM device for its GLES2 renderer), the lock
    # screen on it headless (test_screen_sway.py); wlr-randr sets its output's mode
    "labwc", "wlr-randr",
    # what patternlock-screen and the virtual-pointer driver (built on this
    # machine, run there unchanged) link
    "libwayland-client0", "libcairo2", "libxkbcommon0",
    # the packaging tests on the current stable: its lintian, and groff 1.23 for the man pages
    "lintian", "groff-base", "man-db",
    # phosh (the phone shell's lock screen, test_phosh.py) on a headless phoc:
    # without gnome-settings-daemon-common phosh aborts on a missing schema;
    # librsvg2-common draws its icons; gdbus (libglib2.0-bin) asks its
    # org.gnome.ScreenSaver; the user's session bus comes from dbus-user-session
    "phosh", "phoc", "gnome-settings-daemon-common", "librsvg2-common", "libglib2.0-bin",
    "dbus-user-session",
    # KDE Plasma 6.3's lock screen (test_lockscreen_plasma_grid.py): the greeter, ksmserver
    # (plasma-workspace), the desktop shell package our lock screen falls back to
    # (plasma-desktop), kwin_wayland, which starts the greeter on Wayland; on X11 a
    # virtual server, the pointer driven and the screen grabbed
    "libkscreenlocker6", "plasma-workspace", "plasma-desktop", "kwin-wayland",
    # Plasma Mobile 6.3 (its shell package, startplasmamobile): the phone session whose
    # kwin_wayland starts the same greeter (test_lockscreen_plasma_grid.py); its
    # on-screen keyboard, maliit-keyboard, is a Qt 5 program, and Qt 5's Wayland
    # platform plugin is in qtwayland5, which no package of the session pulls in
    # (without it maliit crashes at once, "Could not find the Qt platform plugin")
    "plasma-mobile", "qtwayland5",
    # Qt's on-screen keyboard behind the lock screen's Virtual Keyboard button on X11
    # (a Plasma desktop has it through sddm-theme-breeze's Recommends)
    "qt6-virtualkeyboard-plugin",
    "xvfb", "xdotool", "dbus-x11", "x11-apps", "x11-utils", "imagemagick", "xauth",
])
# GNOME Shell 48 on GDM 48 (test_gnome.py), a root of its own: GDM is a display
# manager that starts at boot, which no other test's container should have, and
# without Recommends GNOME Shell brings only what its lock screen needs
# (../shared/REAL-CLIENTS.md, "GNOME Shell 48's lock screen and polkit dialog").
GNOME_PACKAGES = sorted([
    "systemd", "systemd-sysv", "dbus", "dbus-user-session", "libpam-systemd", "libpam-runtime",
    "libpam-modules", "login", "passwd", "util-linux", "sudo", "procps", "python3",
    "polkitd", "pkexec",
    # the shell, GDM (the D-Bus service its lock screen unlocks through), what the shell reads
    "gnome-shell", "gnome-shell-common", "gdm3", "gsettings-desktop-schemas", "gnome-settings-daemon-common",
    "adwaita-icon-theme", "fonts-cantarell", "libglib2.0-bin", "python3-gi", "gir1.2-glib-2.0",
    # llvmpipe: mutter renders headless without a GPU
    "libgl1-mesa-dri", "libegl-mesa0", "mesa-libgallium",
    # touch comes through a ScreenCast stream of mutter's RemoteDesktop session: PipeWire
    "pipewire", "wireplumber",
    # the screen read
    "tesseract-ocr", "tesseract-ocr-eng",
])
# Part of the cache key: bump it when the way the root is made changes.
RECIPE = "mmdebstrap --variant=apt --include, v1"


def root_name(packages=PACKAGES):
    recommends = [] if packages is not GNOME_PACKAGES else ["no-recommends"]
    key = hashlib.sha256("\n".join([SUITE, RECIPE, *recommends, *sorted(packages)]).encode()).hexdigest()[:16]
    return f"{SUITE}-{key}"


@contextlib.contextmanager
def root(packages=PACKAGES):
    """Yields the path of the cached Debian 13 root holding `packages`, made
    first if it is not there (about two minutes). The root is in use (a shared
    lock) until the block ends: roots of other package lists that no run is
    using are removed once a new one is made."""
    if os.geteuid() != 0:
        skip_or_fail("making a Debian 13 root needs root")
    if shutil.which("mmdebstrap") is None:
        skip_or_fail("mmdebstrap is not installed (apt-get install mmdebstrap)")
    CACHE.mkdir(parents=True, exist_ok=True)
    name = root_name(packages)
    final = CACHE / name
    # Already held by this process (a session fixture's root while a test boots
    # another system from it): flock treats each open of the lock file on its
    # own, so asking for it exclusively again would wait for ourselves forever.
    if _held.get(name, 0) > 0:
        _held[name] += 1
        try:
            yield final
        finally:
            _held[name] -= 1
        return
    with open(CACHE / f"{name}.lock", "w") as lock:
        # In use (shared): not pruned by a run that makes another, and used by
        # any number of runs at once. Made once, under a lock of its own that
        # only the runs making it take (a run waiting for it then finds it made).
        fcntl.flock(lock, fcntl.LOCK_SH)
        if not (final / "etc/os-release").exists():
            with open(CACHE / f"{name}.making", "w") as making:
                fcntl.flock(making, fcntl.LOCK_EX)
                if not (final / "etc/os-release").exists():
                    make_root(final, packages)
                    prune(keep={root_name(PACKAGES), root_name(GNOME_PACKAGES)})
        _held[name] = 1
        try:
            yield final
        finally:
            _held[name] = 0


def make_root(final, packages):
    # Left by a build that was killed: never used, removed before the next try.
    for stale in CACHE.glob(f"{final.name}.part-*"):
        shutil.rmtree(stale, ignore_errors=True)
    part = CACHE / f"{final.name}.part-{os.getpid()}"
    started = time.monotonic()
    options = ["--aptopt=APT::Install-Recommends \"false\""] if packages is GNOME_PACKAGES else []
    r = subprocess.run(["mmdebstrap", "--quiet", "--variant=apt", *options, "--include=" + ",".join(packages),
                        SUITE, str(part)],
                       capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        shutil.rmtree(part, ignore_errors=True)
        skip_or_fail(f"mmdebstrap could not make a Debian 13 root from Debian's mirror: {(r.stdout + r.stderr)[-2000:]}")
    # A booted Debian system has no policy-rc.d (maintainer scripts may start
    # services), and each boot gets its own machine-id.
    (part / "usr/sbin/policy-rc.d").unlink(missing_ok=True)
    (part / "etc/machine-id").write_text("")
    os.rename(part, final)
    print(f"\nmade the Debian 13 root {final} in {time.monotonic() - started:.0f} s")


def prune(keep):
    """Removes the roots of other package lists (not in `keep`) that no run holds."""
    for lock_path in CACHE.glob(f"{SUITE}-*.lock"):
        name = lock_path.name.removesuffix(".lock")
        if name in keep:
            continue
        with open(lock_path, "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(CACHE / name, ignore_errors=True)
            (CACHE / f"{name}.making").unlink(missing_ok=True)
            lock_path.unlink()


class TrixieSystem(booted.ClientSystem):
    """The booted Debian 13 container: ClientSystem's users, pty and login steps."""

    def debian_version(self):
        return self.ok("cat /etc/debian_version").strip()


def project_debs():
    """The .deb packages `make deb` makes, made now: {package name: path}."""
    r = subprocess.run(["make", "--no-print-directory", "-C", str(booted.ROOT), "deb"],
                       capture_output=True, text=True, timeout=3600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, "make deb failed:\n" + (r.stdout + r.stderr)[-3000:]
    return {p.name.split("_")[0]: p for p in sorted(BUILD.glob("*.deb"))}


@contextlib.contextmanager
def trixie_system(debs, packages=PACKAGES, prepare=None):
    """Yields a TrixieSystem booted from the cached root of `packages`, with
    `debs` (paths of .deb packages) installed by apt-get and the patternlock
    profile enabled; `prepare(merged)` runs on its overlay before the boot."""
    with root(packages) as lower, booted.boot(prepare=prepare, system_class=TrixieSystem, lower=lower) as system:
        assert system.debian_version().startswith("13"), system.debian_version()
        # apt-get resolves the packages' dependencies from the root's own
        # (the booted container has no network).
        paths = " ".join(str(p) for p in debs)  # absolute: apt-get takes a path, not a package name
        system.ok(f"apt-get install -y -q --no-install-recommends {paths} 2>&1")
        system.ok("pam-auth-update --enable patternlock")
        system.ok("patternlockd status >/dev/null")  # the socket starts the daemon
        assert system.ok("systemctl is-active patternlockd.service").strip() == "active"
        yield system
