#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside a user's local login session (test_lockscreens.py logs the user in
# with `login` on a pty and execs this as the session's shell), so that the lock
# screens it starts, and the PAM conversations they run, belong to that session.
#
#   lockscreen_session.sh sway|x11|kde|plasma|plasma-wayland|plasma-mobile DIR
#
# Starts a display server of that kind (sway on the headless wlroots backend, or
# Xvfb :5 for the others), writes DIR/ready, then each time DIR/lock appears
# removes it and runs the lock screen (swaylock, xsecurelock, or KDE Plasma's
# greeter in its testing mode, on a D-Bus session bus of its own) in the foreground, its output in
# DIR/locker.N.log and its exit status in DIR/rc.N. When DIR/quit appears it
# stops the server and ends, which ends the session.
#
# plasma is Plasma's real screen locking, as a Plasma session started by systemd
# has it: the display and the session given to the user's systemd instance (as
# startplasma-x11 does), then the user unit plasma-ksmserver.service, with
# whatever drop-ins the user has (patternlock-plasma enable writes one). ksmserver
# locks when logind tells the session to (`loginctl lock-session`) and starts the
# greeter itself; its output, and the greeter's, is in the journal. DIR/lock is
# not used. plasma-wayland is the same with plasma-kwin_wayland.service, KWin as
# the Wayland compositor that locks and starts the greeter; with no display
# hardware here, the test's drop-in runs KWin in a window on Xvfb.
# plasma-mobile is Plasma Mobile's session as startplasmamobile makes it: that
# script's own environment (every line of it but the last, which starts the
# session: its variables, then plasma-mobile-envmanager --apply-settings, which
# writes the phone's KWin settings, maliit-keyboard as its input method) given to
# the user's systemd, as startplasma-wayland gives it, then
# plasma-kwin_wayland.service, on a phone's 720x1440 Xvfb. EGL_PLATFORM=wayland
# stays out: KWin in a window on Xvfb draws with X11.
set -u
kind=$1
dir=$2
case $kind in
sway)
    printf 'output HEADLESS-1 resolution 800x600\n' >"$dir/sway.cfg"
    WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman sway -c "$dir/sway.cfg" \
        >"$dir/server.log" 2>&1 </dev/null &
    server=$!
    export WAYLAND_DISPLAY=wayland-1
    until [ -S "$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY" ] && grim - >/dev/null 2>&1; do sleep 0.1; done
    ;;
x11 | kde | plasma | plasma-wayland | plasma-mobile)
    screen=800x600x24
    [ "$kind" = plasma-mobile ] && screen=720x1440x24
    Xvfb :5 -screen 0 $screen -nolisten tcp >"$dir/server.log" 2>&1 </dev/null &
    server=$!
    export DISPLAY=:5
    until xdpyinfo >/dev/null 2>&1; do sleep 0.1; done
    unit=
    case $kind in
    plasma) unit=plasma-ksmserver.service ;;
    plasma-wayland) unit=plasma-kwin_wayland.service ;;
    plasma-mobile)
        unit=plasma-kwin_wayland.service
        # The script but its line that starts the session; no such line: not
        # the script this harness knows, and no session.
        grep -q '^startplasma-wayland' /usr/bin/startplasmamobile ||
            { echo "startplasmamobile starts no startplasma-wayland" >>"$dir/server.log"; exit 1; }
        grep -v '^startplasma-wayland' /usr/bin/startplasmamobile >"$dir/startplasmamobile-env"
        vars=$(sed -n 's/^[[:space:]]*export \([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' "$dir/startplasmamobile-env" |
            grep -v '^EGL_PLATFORM$' | sort -u)
        [ -n "$vars" ] || { echo "startplasmamobile exports nothing" >>"$dir/server.log"; exit 1; }
        # In a subshell, so the script cannot change this one's variables; with
        # what a display manager gives the session it starts from
        # plasma-mobile.desktop (DesktopNames=KDE), and without set -u, as a
        # display manager runs it.
        (
            export XDG_SESSION_TYPE=wayland XDG_CURRENT_DESKTOP=KDE XDG_SESSION_DESKTOP=KDE
            set +u
            . "$dir/startplasmamobile-env" >>"$dir/server.log" 2>&1
            # shellcheck disable=SC2086
            systemctl --user import-environment $vars
        )
        ;;
    esac
    if [ -n "$unit" ]; then
        echo "$XDG_SESSION_ID" >"$dir/session"
        systemctl --user import-environment DISPLAY XDG_SESSION_ID &&
            systemctl --user start "$unit" >"$dir/unit.start" 2>&1 ||
            echo "$unit did not start" >>"$dir/server.log"
    fi
    ;;
*)
    echo "usage: $0 sway|x11|kde|plasma|plasma-wayland|plasma-mobile DIR" >&2
    exit 2
    ;;
esac
echo "$server" >"$dir/ready"
n=0
while [ ! -e "$dir/quit" ]; do
    if [ -e "$dir/lock" ]; then
        rm -f "$dir/lock"
        n=$((n + 1))
        case $kind in
        sway) swaylock -d -F -c 336699 >"$dir/locker.$n.log" 2>&1 </dev/null ;;
        x11) xsecurelock >"$dir/locker.$n.log" 2>&1 </dev/null ;;
        kde)
            dbus-run-session /usr/lib/x86_64-linux-gnu/libexec/kscreenlocker_greet --testing \
                >"$dir/locker.$n.log" 2>&1 </dev/null
            ;;
        esac
        echo $? >"$dir/rc.$n"
    fi
    sleep 0.1
done
[ -n "${unit:-}" ] && systemctl --user stop "$unit"
kill "$server"
wait
