#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside a user's local login session (test_screen_sway.py logs the user in
# with `login` on a pty and execs this as the session's shell), so that the
# lockers it starts, and the PAM conversations they run, belong to that session.
#
#   screen_session.sh DIR WIDTHxHEIGHT
#
# Starts sway on the headless wlroots backend with one output of that size and a
# green desktop, writes DIR/ready, then runs each command file DIR/cmd.N (N = 1,
# 2, ...) as it appears, in the background, with its output in DIR/out.N and its
# exit status in DIR/rc.N once it ends. When DIR/quit appears it stops sway and
# ends, which ends the session.
set -u
dir=$1
size=$2
cat >"$dir/sway.cfg" <<EOF
output HEADLESS-1 resolution $size
output * bg #00aa00 solid_color
EOF
WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman sway -c "$dir/sway.cfg" \
    >"$dir/sway.log" 2>&1 </dev/null &
server=$!
export WAYLAND_DISPLAY=wayland-1
until [ -S "$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY" ] && grim - >/dev/null 2>&1; do
    kill -0 "$server" 2>/dev/null || exit 1
    sleep 0.1
done
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
