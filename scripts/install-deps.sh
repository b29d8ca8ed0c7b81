#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian/Ubuntu packages that `make demo` needs, or with --check
# those `make check` needs too. As root the missing ones are installed with
# apt-get; otherwise the exact command is printed and the script fails, so the
# caller stops.
#
#   scripts/install-deps.sh               the demo's packages: install (root) or print the command
#   scripts/install-deps.sh --check       the demo's and the tests' packages (and pytest)
#   scripts/install-deps.sh --list        print the demo's package names, one a line
#   scripts/install-deps.sh --window      the demo's packages and those of its drawing window
#   scripts/install-deps.sh --list-window print the drawing window's package names
#   scripts/install-deps.sh --list-check  print every package make check needs
set -euo pipefail

# The demo builds the module (libpam, and libsystemd for sd-login) and a small
# PAM conversation program with cc against libpam, and runs unprivileged users in
# a user namespace (unshare): libpam0g-dev, libsystemd-dev, gcc, make,
# util-linux. Nothing else.
demo_packages=(libpam0g-dev libsystemd-dev gcc make util-linux)
# On a Wayland desktop the demo draws the pattern in patternlock-setup's window
# (make setup): Wayland, cairo, fontconfig and xkbcommon, found by pkg-config.
window_packages=(libwayland-dev libcairo2-dev libfontconfig-dev libxkbcommon-dev pkg-config)
# make check adds: pamtester, sudo, passwd (useradd): the PAM and authorization
# tests; valgrind: the module's memory checks; strace: holds the daemon's
# listen() to show its socket path appears only once it accepts; systemd:
# systemd-analyze and systemd-socket-activate for the unit checks;
# systemd-container: systemd-nspawn, to boot this machine's files and install
# for real; pkg-config: where PAM modules go; groff-base: the man page checks;
# python3 and pytest: the system tests; debhelper, dpkg-dev, lintian: make deb
# and its checks; postgresql: the fleet tests' own database server; pgbouncer:
# the fleet behind a pooler in transaction mode (docs/FLEET.md); openssl:
# their TLS test certificates; clang-format: make lint checks the C formatting
# (swift format comes with the toolchain). The lock screen (make screen) builds
# against libwayland-dev, libcairo2-dev, libfontconfig-dev, libxkbcommon-dev and wayland-protocols;
# libwayland-bin (wayland-scanner) builds the touch test server and the virtual
# pointer its tests drive sway with; xkb-data is the test server's keymap;
# tesseract-ocr, tesseract-ocr-eng and fonts-dejavu-core read the screenshots as a
# person would; mmdebstrap makes the Debian 13 root the sway and packaging tests
# boot (Tests/system/harness/trixie.py); desktop-file-utils (desktop-file-validate)
# checks patternlock-setup's desktop entry as installed and as packaged; nodejs
# runs the Plasma lock screen's drawing rule (js/PatternRule.js) over
# every pattern against the core's; libpolkit-agent-1-dev builds the tests' stand-in
# for a desktop's polkit agent (build/tools/session_agent); libglib2.0-bin
# (glib-compile-schemas) compiles GNOME Shell's extension's settings schema
# (make gnome, which make deb runs). .ci/run installs the same.
check_packages=(pamtester sudo pkg-config python3 python3-pytest passwd valgrind strace systemd systemd-container groff-base
                debhelper dpkg-dev lintian postgresql pgbouncer openssl clang-format
                libwayland-dev libwayland-bin libcairo2-dev libfontconfig-dev libxkbcommon-dev xkb-data wayland-protocols
                tesseract-ocr tesseract-ocr-eng fonts-dejavu-core mmdebstrap desktop-file-utils nodejs libpolkit-agent-1-dev
                libglib2.0-bin)

mode=demo
case "${1:-}" in
    --list) printf '%s\n' "${demo_packages[@]}"; exit 0 ;;
    --list-window) printf '%s\n' "${window_packages[@]}"; exit 0 ;;
    --list-check) printf '%s\n' "${demo_packages[@]}" "${check_packages[@]}"; exit 0 ;;
    --check) mode=check ;;
    --window) mode=window ;;
    "") ;;
    *) echo "usage: $0 [--check | --window | --list | --list-window | --list-check]" >&2; exit 64 ;;
esac
packages=("${demo_packages[@]}")
[ "$mode" = check ] && packages+=("${check_packages[@]}")
[ "$mode" = window ] && packages+=("${window_packages[@]}")

python=${PYTHON:-python3}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "This helper knows Debian and Ubuntu only (dpkg and apt-get are missing here)."
    echo "Install the equivalents of these packages with your system's package manager: ${packages[*]}"
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "These packages are missing: ${missing[*]}."
        echo "Install them with:"
        echo
        echo "    sudo apt-get install -y --no-install-recommends ${missing[*]}"
        echo
        echo "then run the same make command again."
        exit 1
    fi
    echo "Installing ${#missing[@]} missing package(s) with apt-get (usually under a minute): ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$mode" = check ] || exit 0

# A python3 from pyenv or a virtualenv does not see Debian's python3-pytest.
if ! "$python" -m pytest --version >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] || [ -n "${VIRTUAL_ENV:-}" ] || [ -w "$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null || echo /)" ]; then
        echo "Installing pytest for $python with pip."
        "$python" -m pip install -q pytest
    else
        echo "pytest is missing for $python. Install it with: $python -m pip install --user pytest"
        exit 1
    fi
fi
