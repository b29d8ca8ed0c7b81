#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside a user's local login session (test_screen_sway.py and
# test_phosh.py log the user in with `login` on a pty and exec this as the
# session's shell), so that the lockers it starts, and the PAM conversations
# they run, belong to that session.
#
#   screen_session.sh DIR WIDTHxHEIGHT [sway|labwc|phosh]
#
# Starts a compositor on the headless wlroots backend with one output of that
# size: sway (the default) or labwc with a green desktop, or phoc
# running phosh, the phone shell, at scale 2 as on a phone, on the session's
# D-Bus session bus.
# phosh starts unlocked (-U): started locked (-L), it does not tell logind
# (the session's LockedHint stays "no"); locked over D-Bus (org.gnome.ScreenSaver
# Lock), as its idle timer or power button would, it does. It writes DIR/ready, then runs each command file
# DIR/cmd.N (N = 1, 2, ...) as it appears, in the background, with its output
# in DIR/out.N and its exit status in DIR/rc.N once it ends. When DIR/quit
# appears it stops the compositor and ends, which ends the session.
set -u
dir=$1
size=$2
kind=${3:-sway}
case $kind in
sway)
    cat >"$dir/sway.cfg" <<EOF
output HEADLESS-1 resolution $size
output * bg #00aa00 solid_color
EOF
    export WAYLAND_DISPLAY=wayland-1
    WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman sway -c "$dir/sway.cfg" \
        >"$dir/sway.log" 2>&1 </dev/null &
    ;;
labwc)
    # labwc 0.8: the desktop is swaybg's (layer-shell), started by its autostart;
    # the output's size is set once it runs (wlr-output-management, wlr-randr).
    mkdir -p "$dir/labwc"
    printf '<?xml version="1.0"?>\n<labwc_config/>\n' >"$dir/labwc/rc.xml"
    printf 'swaybg -m solid_color -c "#00aa00" >/dev/null 2>&1 &\n' >"$dir/labwc/autostart"
    export WAYLAND_DISPLAY=wayland-0
    WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman labwc -C "$dir/labwc" \
        >"$dir/labwc.log" 2>&1 </dev/null &
    ;;
phosh)
    cat >"$dir/phoc.ini" <<EOF
[core]
xwayland=false

[output:HEADLESS-1]
mode = $size
scale = 2
EOF
    # phoc takes the first free wayland-N (sway skips wayland-0; phoc does not).
    export WAYLAND_DISPLAY=wayland-0
    WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman \
        phoc -S -C "$dir/phoc.ini" -E "/usr/libexec/phosh -U" >"$dir/phoc.log" 2>&1 </dev/null &
    ;;
*)
    echo "usage: $0 DIR WIDTHxHEIGHT [sway|labwc|phosh]" >&2
    exit 2
    ;;
esac
server=$!
until [ -S "$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY" ] && grim - >/dev/null 2>&1; do
    kill -0 "$server" 2>/dev/null || exit 1
    sleep 0.1
done
if [ "$kind" = labwc ]; then
    wlr-randr --output HEADLESS-1 --custom-mode "$size" >>"$dir/labwc.log" 2>&1 || exit 1
fi
echo "$server" >"$dir/ready"
n=1
while [ ! -e "$dir/quit" ]; do
    if [ -e "$dir/cmd.$n" ]; then
        (
            sh "$dir/cmd.$n" >"$dir/out.$n" 2>&1 </dev/null
            echo $? >"$dir/rc.$n.part" && mv "$dir/rc.$n.part" "$dir/rc.$n"
        ) &
        n=$((n + 1))
    fi
    sleep 0.05
done
kill "$server"
wait "$server"
