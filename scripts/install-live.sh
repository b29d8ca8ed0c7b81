#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The steps of `make install` / `make uninstall` that only make sense on the
# live system (no DESTDIR): the key, the socket unit, and on removal the PAM
# configuration that pam-auth-update wrote. /etc/pam.d is never edited to
# enable the module: that stays the administrator's step.
#
#   scripts/install-live.sh install          after install copied the files
#   scripts/install-live.sh check-pam        first thing in uninstall
#   scripts/install-live.sh uninstall        before uninstall removes the files
#   scripts/install-live.sh after-uninstall  after that
#   scripts/install-live.sh key              only create the key (tests)
#
# Environment: SBINDIR, PAMCONFIGDIR, SYSUSERSDIR (as make install uses them);
# PATTERNLOCK_KEY_DIR replaces /etc/patternlock and PATTERNLOCK_CREDSTORE
# /etc/credstore.encrypted, for the tests only.
set -euo pipefail

KEY_DIR=${PATTERNLOCK_KEY_DIR:-/etc/patternlock}
KEY=$KEY_DIR/key
# The sealed key of the one TPM recipe (patternlockd(8), SYSTEMD; SECURITY.md):
# systemd's own directory for encrypted credentials.
CREDSTORE=${PATTERNLOCK_CREDSTORE:-/etc/credstore.encrypted}
SEALED=$CREDSTORE/patternlock.key
SBINDIR=${SBINDIR:-/usr/local/sbin}
PAMCONFIGDIR=${PAMCONFIGDIR:-/usr/share/pam-configs}
SYSUSERSDIR=${SYSUSERSDIR:-/usr/local/lib/sysusers.d}

systemd_running() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }

# 32 random bytes, mode 0600, owned by root; an existing key is never replaced.
create_key() {
    # A key sealed with systemd-creds replaces the plain one, which the recipe
    # shreds: a new plain key beside it would be a second, different pepper.
    # (key.cred in the key directory: where an earlier recipe put it.)
    local sealed
    for sealed in "$SEALED" "$KEY_DIR/key.cred"; do
        if [ -e "$sealed" ] && [ ! -e "$KEY" ]; then
            echo "Kept the sealed key $sealed (LoadCredentialEncrypted); no plain key was created."
            return
        fi
    done
    if [ -e "$KEY" ] || [ -L "$KEY" ]; then
        local size mode owner
        size=$(stat -Lc %s "$KEY"); mode=$(stat -Lc %a "$KEY"); owner=$(stat -Lc %u "$KEY")
        if [ "$size" != 32 ] || [ "$owner" != 0 ] || [ $((8#$mode & 8#077)) -ne 0 ]; then
            echo "warning: $KEY exists but is not 32 bytes, mode 0600, owned by root (it is $size bytes, mode $mode, uid $owner)."
            echo "         patternlockd will not start with it. Restore it from a backup, or fix it with: chown root $KEY && chmod 600 $KEY"
        else
            echo "Kept the existing key $KEY."
        fi
        return
    fi
    umask 077
    mkdir -p "$KEY_DIR"
    chmod 700 "$KEY_DIR"
    local tmp
    tmp=$(mktemp "$KEY_DIR/.key.XXXXXX")
    if ! head -c 32 /dev/urandom >"$tmp" || [ "$(stat -c %s "$tmp")" != 32 ]; then
        rm -f "$tmp"
        echo "Could not read 32 random bytes from /dev/urandom for $KEY." >&2
        exit 1
    fi
    sync "$tmp"
    # link(2) fails when the key appeared meanwhile: never overwrite a key.
    if ln "$tmp" "$KEY" 2>/dev/null; then
        echo "Created the key $KEY (32 random bytes, mode 0600). Back it up: without it no enrolled pattern can be verified."
    else
        echo "Kept the existing key $KEY."
    fi
    rm -f "$tmp"
}

# The daemon's user, which polkit's action names as its owner (the unit runs as
# it). An existing user is kept; uninstall keeps it too, as Debian does.
create_user() {
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers "$SYSUSERSDIR/patternlockd.conf"
    elif ! getent passwd patternlock >/dev/null; then
        useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin --comment "patternlock daemon" patternlock
    fi
}

install_live() {
    create_user
    create_key
    if systemd_running; then
        systemctl daemon-reload
        systemctl enable --now patternlockd.socket
        # An upgrade: a running daemon picks up the new binary.
        systemctl try-restart patternlockd.service
        echo "patternlockd.socket is enabled and listening on /run/patternlock/socket."
    else
        echo "systemd is not running here, so nothing was started. Start the daemon as root with: $SBINDIR/patternlockd serve"
    fi
    cat <<EOF

Installed. Next steps:
  1. Enroll a pattern:  sudo $SBINDIR/patternlockd enroll USER   (or, as USER: patternlockd enroll)
  2. Enable it for every PAM service, pattern first and the password as fallback:
                        sudo pam-auth-update --enable patternlock
  3. Try it in a new terminal, keeping a root shell open:  sudo -k; sudo true
EOF
}

# pam-auth-update removes what it wrote; a line someone wrote by hand must go
# before the module does, or that service would name a module that is gone.
check_pam() {
    if command -v pam-auth-update >/dev/null 2>&1 && [ -e "$PAMCONFIGDIR/patternlock" ]; then
        pam-auth-update --package --remove patternlock
    fi
    local users
    users=$(grep -lE '^[[:space:]]*[^#[:space:]].*pam_patternlock\.so' /etc/pam.d/* 2>/dev/null || true)
    if [ -n "$users" ]; then
        echo "These files under /etc/pam.d still use pam_patternlock.so:" >&2
        printf '  %s\n' $users >&2
        echo "Remove the pam_patternlock.so lines from them, then run make uninstall again. No installed file was removed." >&2
        exit 1
    fi
}

uninstall_live() {
    if systemd_running; then
        systemctl disable --now patternlockd.socket patternlockd.service 2>/dev/null || true
    fi
}

after_uninstall() {
    if systemd_running; then systemctl daemon-reload; fi
    local kept=()
    [ -e "$KEY_DIR" ] && kept+=("$KEY_DIR")
    [ -e /var/lib/private/patternlock ] && kept+=(/var/lib/private/patternlock)
    [ -e /var/lib/patternlock ] || [ -L /var/lib/patternlock ] && kept+=(/var/lib/patternlock)
    if [ "${#kept[@]}" -gt 0 ]; then
        echo "Kept the key and the enrolled patterns: ${kept[*]}. To erase them for good run: sudo rm -r ${kept[*]}"
    fi
}

case "${1:-}" in
    install)         install_live ;;
    check-pam)       check_pam ;;
    uninstall)       uninstall_live ;;
    after-uninstall) after_uninstall ;;
    key)             create_key ;;
    *) echo "usage: $0 install|check-pam|uninstall|after-uninstall|key" >&2; exit 2 ;;
esac
