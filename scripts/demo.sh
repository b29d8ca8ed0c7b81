#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo: install what is missing, build, then run patternlock in a sandbox
# that changes nothing on the system — a private daemon whose socket, records
# and key live in a temporary directory, and real PAM conversations through
# the built pam_patternlock.so with a private PAM configuration directory
# (pam_start_confdir), so /etc/pam.d is never read or written.
#
# Interactive on a terminal. Scripted when stdin is not a terminal or when
# DEMO_PATTERN is set (make demo DEMO_PATTERN=46183): the same steps, with the
# pattern typed by the script.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MAKE=${MAKE:-make}
# Not CC: swift build takes a CC from the environment for its C targets.
DEMO_CC=${DEMO_CC:-cc}

say()     { printf '%s\n' "$*"; }
if [ -t 1 ]; then
    section() { printf '\n\033[1m── %s\033[0m\n' "$*"; }
else
    section() { printf '\n── %s\n' "$*"; }
fi
fail()    { printf '%s\n' "$*" >&2; exit 1; }

# On a terminal of a Wayland desktop the pattern is drawn in patternlock-setup's
# window (DEMO_WINDOW=0 keeps to the terminal); scripted runs type it.
WINDOW=0
if [ -z "${DEMO_PATTERN:-}" ] && [ -t 0 ] && [ "${DEMO_WINDOW:-1}" != 0 ] && [ -n "${WAYLAND_DISPLAY:-}" ]; then
    case $WAYLAND_DISPLAY in /*) wl=$WAYLAND_DISPLAY ;; *) wl=${XDG_RUNTIME_DIR:-/nonexistent}/$WAYLAND_DISPLAY ;; esac
    [ -S "$wl" ] && WINDOW=1
fi

# --- 1. What the machine needs (skipped on the second pass, in the namespace).
if [ -z "${PL_DEMO_INNER:-}" ]; then
    if [ "$WINDOW" = 1 ]; then
        section "Checking what the demo needs: a C compiler, make, the PAM headers, and for its window Wayland, cairo and xkbcommon"
        if ! bash scripts/install-deps.sh --window; then
            say "Without those the pattern is typed on this terminal instead of drawn in a window."
            WINDOW=0
            bash scripts/install-deps.sh
        fi
    else
        section "Checking what the demo needs: a C compiler, make and the PAM headers"
        bash scripts/install-deps.sh
    fi
    targets=(build/patternlockd build/pam_patternlock.so)
    [ "$WINDOW" = 1 ] && targets+=(build/patternlock-setup)
    if ! command -v "${SWIFT:-swift}" >/dev/null 2>&1 &&
       ! "$MAKE" -q "${targets[@]}" 2>/dev/null; then
        if [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ]; then
            fail "swift is not on root's PATH (sudo resets it). Run: sudo env PATH=\"\$PATH\" make demo"
        fi
        fail "The Swift 6 toolchain is missing. Install it from https://www.swift.org/install/linux/ (for example with swiftly), make sure 'swift --version' works, then run make demo again."
    fi
    if [ "$WINDOW" = 1 ]; then
        section "Building patternlockd, pam_patternlock.so and the window patternlock-setup"
    else
        section "Building patternlockd and pam_patternlock.so"
    fi
    if "$MAKE" -q "${targets[@]}" 2>/dev/null; then
        say "Already built and up to date."
    else
        say "A release build of the Swift daemon (SwiftPM prints its steps as [n/N]) and the C module:"
        say "about 2 to 5 minutes on 2 cores the first time, seconds after that."
        started=$SECONDS
        "$MAKE" --no-print-directory "${targets[@]}"
        say "Built in $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s."
    fi

    if [ "$(id -u)" -ne 0 ]; then
        # The module only trusts a socket owned by root and a daemon listening
        # as root. In a user namespace the demo is root without being root.
        if unshare --user --map-root-user true 2>/dev/null; then
            say "You are not root, so the demo runs in a user namespace where you appear as root."
            say "Nothing outside it changes."
            PL_DEMO_INNER=1 DEMO_WINDOW="$WINDOW" DEMO_USER="$(id -un)" exec unshare --user --map-root-user -- bash "$0"
        fi
        fail "The demo's private daemon must run as root, because the PAM module only trusts a socket and a daemon owned by root, and this system does not allow unprivileged user namespaces. Run it with: sudo make demo"
    fi
fi

# --- 2. The sandbox.
DEMO_USER=${DEMO_USER:-${SUDO_USER:-$(id -un)}}
getent passwd "$DEMO_USER" >/dev/null || fail "The user $DEMO_USER is not in the password database. Name another one: make demo DEMO_USER=NAME"

SCRIPTED=0
PATTERN=${DEMO_PATTERN:-}
if [ -n "$PATTERN" ] || [ ! -t 0 ]; then
    SCRIPTED=1
    PATTERN=${PATTERN:-46183}
fi

SANDBOX=$(mktemp -d /tmp/patternlock-demo.XXXXXX)
DAEMON_PID=
cleanup() {
    if [ -n "$DAEMON_PID" ]; then
        kill "$DAEMON_PID" 2>/dev/null || true
        wait "$DAEMON_PID" 2>/dev/null || true
    fi
    rm -rf "$SANDBOX"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SOCKET=$SANDBOX/run/socket
PLD=$ROOT/build/patternlockd
CONV=$SANDBOX/demo-conv
mkdir -p "$SANDBOX/run" "$SANDBOX/pam.d"
"$DEMO_CC" -std=gnu11 -O2 -Wall -o "$CONV" scripts/demo-conv.c -lpam
# A copy of the module: a PAM configuration line cannot hold a path with spaces.
cp build/pam_patternlock.so "$SANDBOX/pam_patternlock.so"
# allow_remote: a real stack asks only a person at this machine (a local logind
# session; pam_patternlock(8), WHO IS ASKED), but the demo is a program you run on
# your own terminal, over SSH or in a container too, and holds the conversation
# itself. Never put allow_remote in a stack a network service reaches.
printf 'auth required %s socket=%s allow_remote\n' "$SANDBOX/pam_patternlock.so" "$SOCKET" \
    > "$SANDBOX/pam.d/patternlock-demo"

say "Starting a private daemon (it measures this CPU first: a few seconds)."
"$PLD" serve --socket "$SOCKET" --state-dir "$SANDBOX/state" --key-file "$SANDBOX/etc/key" \
    >"$SANDBOX/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 200); do
    "$PLD" status --socket "$SOCKET" >/dev/null 2>&1 && break
    kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$SANDBOX/daemon.log" >&2; fail "The demo daemon did not start; its log is above."; }
    sleep 0.1
done

section "A private patternlockd"
say "Socket, records and key are in $SANDBOX; the daemon runs until the demo ends."
sed -n 's/^[^ ]* patternlockd: //p' "$SANDBOX/daemon.log" | sed 's/^/  daemon: /'

pld()  { "$PLD" "$@" --socket "$SOCKET"; }
# One PAM conversation, as su or sudo would hold it; $1 is the scripted answer.
unlock() {
    if [ "$SCRIPTED" = 1 ]; then "$CONV" "$SANDBOX/pam.d" patternlock-demo "$DEMO_USER" "$1"
    else "$CONV" "$SANDBOX/pam.d" patternlock-demo "$DEMO_USER"; fi
}
wrong_pattern() {   # a pattern that is not $PATTERN, different each time
    local w
    for w in 2589 7412 3578 1596 4753 8521; do
        [ "$w" != "$PATTERN" ] && [ "$w" != "${1:-}" ] && { echo "$w"; return; }
    done
}

# --- 3. Enroll.
section "1. Enroll a pattern for $DEMO_USER"
say "Pick at least 4 dots on the keypad grid. A straight move over an unused dot takes it"
say "too, so 46183 draws 4-5-6-1-8-3. The patterns attackers try first (an L, a square,"
say "a Z, their rotations and mirror images) are refused, so choose your own path."
if [ "$SCRIPTED" = 1 ]; then
    say "\$ patternlockd enroll $DEMO_USER        (the script first types 1397, three sides of the square)"
    printf '1397\n1397\n' | pld enroll "$DEMO_USER" || true
    say "\$ patternlockd enroll $DEMO_USER        (the script types $PATTERN twice)"
    printf '%s\n%s\n' "$PATTERN" "$PATTERN" | pld enroll "$DEMO_USER"
elif [ "$WINDOW" = 1 ] && {
    say "A window opens on your desktop: draw a pattern for $DEMO_USER with the mouse or a finger."
    say "As you draw, the line turns red when the pattern is one attackers try first (the window"
    say "says why) and green when it is acceptable. Continue, draw it again to confirm, then Done."
    say "\$ patternlock-setup --user $DEMO_USER"
    "$ROOT/build/patternlock-setup" --socket "$SOCKET" --user "$DEMO_USER"
}; then
    say "The pattern is set. Keep it in mind: the next step asks for it."
else
    [ "$WINDOW" = 1 ] && say "The window closed without setting a pattern; type one here instead."
    say "\$ patternlockd enroll $DEMO_USER"
    until pld enroll "$DEMO_USER"; do say "Let's try that again."; done
fi

# --- 4. Unlock.
section "2. Unlock through PAM with that pattern"
say "This is the conversation sudo, su or login would hold with pam_patternlock.so:"
tries=1
until unlock "$PATTERN"; do
    [ "$SCRIPTED" = 1 ] || [ "$tries" -ge 3 ] && break
    tries=$((tries + 1))
    say "That did not unlock. Type the pattern you enrolled."
done

# --- 5. A wrong pattern.
section "3. A wrong pattern"
if [ "$SCRIPTED" = 1 ]; then
    WRONG=$(wrong_pattern)
    unlock "$WRONG" || true
else
    say "Now type any pattern that is NOT yours."
    tries=1
    while unlock "" && [ "$tries" -lt 3 ]; do
        tries=$((tries + 1))
        say "That one was your pattern and it unlocked. Type a different one."
    done
fi

# --- 6. Lockout.
section "4. Lockout after 5 failed attempts"
say "The script now types wrong patterns until the daemon locks pattern unlock for $DEMO_USER"
say "(the same conversation each time; the grid is left out here):"
last=
for _ in 1 2 3 4 5; do
    w=$(wrong_pattern "$last"); last=$w
    out=$(SCRIPTED=1 unlock "$w" || true)
    printf '%s\n' "$out" | grep -v -e '^  [147] [258] [369]$' -e '^Pattern unlock for .*: type the dots in order\.$'
    case $out in *"locked after"*) break ;; esac
done
say
say "Now even the right pattern is refused, and no hash is computed:"
unlock "$PATTERN" || true

# --- 7. What the administrator does.
section "5. The administrator's view"
say "\$ patternlockd status $DEMO_USER"
pld status "$DEMO_USER" || true
say "\$ patternlockd reset $DEMO_USER"
pld reset "$DEMO_USER"
say
say "After the reset the pattern works again:"
unlock "$PATTERN" || true

# --- 8. Done.
section "Done"
kill "$DAEMON_PID" 2>/dev/null || true
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=
say "The demo daemon is stopped and $SANDBOX will be removed; nothing else on this system changed."
say "Next: make check runs every test; README.md shows the real installation (sudo make install)."
