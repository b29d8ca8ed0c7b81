# SPDX-License-Identifier: Apache-2.0
"""A hand for GNOME Shell, run as the session's user inside its container:
mutter's own remote-desktop input (org.gnome.Mutter.RemoteDesktop on the
user's session bus, as GNOME's remote desktop and screen sharing drive it),
the pointer moved and pressed and keys pressed and released as a person's
would be. Touch goes through a ScreenCast stream of the same session (mutter
takes touch only at a stream's coordinates), so PipeWire must run.

One command a line on standard input, one answer a line ("ok" or "error: ..."):
  move X Y            the pointer to (X, Y) of the screen
  press / release     the primary button
  click X Y           move, press and release
  drag X,Y X,Y ...    press at the first point, move through the rest, release
  key KEYSYM          a key pressed and released (an X keysym number)
  type TEXT           TEXT's characters as keys (printable ASCII, no blank)
  touch X,Y X,Y ...   a finger down at the first point, through the rest, up
  screenshot PATH     the screen to PATH (org.gnome.Shell.Screenshot)
  area X Y W H PATH   that part of the screen to PATH
Every position is the monitor's stream's (its pixels): mutter moves the
pointer to a place, and takes a touch, only in a stream's coordinates; without
one it moves the pointer only relatively, and loses motions it clamps."""
import sys
import time

from gi.repository import Gio, GLib

BUS = Gio.bus_get_sync(Gio.BusType.SESSION)
STEP_S = 0.015
# Through how many motions a drag moves from one point to the next.
STEPS = 8


def call(name, path, interface, method, args=None, reply=None):
    return BUS.call_sync(name, path, interface, method, args, reply and GLib.VariantType(reply),
                         Gio.DBusCallFlags.NONE, 10000, None)


class Hand:
    def __init__(self):
        out = call("org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop",
                   "org.gnome.Mutter.RemoteDesktop", "CreateSession", None, "(o)")
        self.path = out.unpack()[0]
        self.session_id = call("org.gnome.Mutter.RemoteDesktop", self.path, "org.freedesktop.DBus.Properties",
                               "Get", GLib.Variant("(ss)", ("org.gnome.Mutter.RemoteDesktop.Session", "SessionId")),
                               "(v)").unpack()[0]
        self.stream = None
        self.stream = self.monitor_stream()
        self.rd("Start")

    def rd(self, method, args=None):
        call("org.gnome.Mutter.RemoteDesktop", self.path, "org.gnome.Mutter.RemoteDesktop.Session", method, args)

    def monitor_stream(self):
        """A ScreenCast stream of the whole monitor, made before Start."""
        cast = call("org.gnome.Mutter.ScreenCast", "/org/gnome/Mutter/ScreenCast", "org.gnome.Mutter.ScreenCast",
                    "CreateSession", GLib.Variant("(a{sv})", ({"remote-desktop-session-id":
                                                                GLib.Variant("s", self.session_id)},)),
                    "(o)").unpack()[0]
        monitor = call("org.gnome.Mutter.DisplayConfig", "/org/gnome/Mutter/DisplayConfig",
                       "org.gnome.Mutter.DisplayConfig", "GetCurrentState", None,
                       "(ua((ssss)a(siiddada{sv})a{sv})a(iiduba(ssss)a{sv})a{sv})").unpack()[1][0][0][0]
        return call("org.gnome.Mutter.ScreenCast", cast, "org.gnome.Mutter.ScreenCast.Session",
                    "RecordMonitor", GLib.Variant("(sa{sv})", (monitor, {})), "(o)").unpack()[0]

    def move(self, x, y):
        self.rd("NotifyPointerMotionAbsolute", GLib.Variant("(sdd)", (self.stream, x, y)))
        time.sleep(STEP_S)

    def button(self, pressed):
        self.rd("NotifyPointerButton", GLib.Variant("(ib)", (0x110, pressed)))  # BTN_LEFT
        time.sleep(STEP_S)

    def along(self, points, each):
        previous = points[0]
        for point in points[1:]:
            for i in range(1, STEPS + 1):
                each(previous[0] + (point[0] - previous[0]) * i / STEPS,
                     previous[1] + (point[1] - previous[1]) * i / STEPS)
            previous = point

    def drag(self, points):
        self.move(*points[0])
        self.button(True)
        self.along(points, self.move)
        self.button(False)

    def key(self, keysym):
        for pressed in (True, False):
            self.rd("NotifyKeyboardKeysym", GLib.Variant("(ub)", (keysym, pressed)))
            time.sleep(STEP_S)

    def touch(self, points):
        stream = self.stream
        self.rd("NotifyTouchDown", GLib.Variant("(sudd)", (stream, 0, *points[0])))
        time.sleep(STEP_S)
        self.along(points, lambda x, y: (self.rd("NotifyTouchMotion", GLib.Variant("(sudd)", (stream, 0, x, y))),
                                        time.sleep(STEP_S)))
        self.rd("NotifyTouchUp", GLib.Variant("(u)", (0,)))
        time.sleep(STEP_S)

    def screenshot(self, path):
        ok, _ = call("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot", "org.gnome.Shell.Screenshot",
                     "Screenshot", GLib.Variant("(bbs)", (False, False, path)), "(bs)").unpack()
        if not ok:
            raise RuntimeError("org.gnome.Shell.Screenshot refused")


    def area(self, x, y, width, height, path):
        ok, _ = call("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot", "org.gnome.Shell.Screenshot",
                     "ScreenshotArea", GLib.Variant("(iiiibs)", (x, y, width, height, False, path)), "(bs)").unpack()
        if not ok:
            raise RuntimeError("org.gnome.Shell.Screenshot refused")


def points(words):
    return [tuple(float(v) for v in w.split(",")) for w in words]


def main():
    hand = Hand()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            command, rest = words[0], words[1:]
            if command == "move":
                hand.move(float(rest[0]), float(rest[1]))
            elif command == "click":
                hand.move(float(rest[0]), float(rest[1]))
                hand.button(True)
                hand.button(False)
            elif command in ("press", "release"):
                hand.button(command == "press")
            elif command == "drag":
                hand.drag(points(rest))
            elif command == "key":
                hand.key(int(rest[0], 0))
            elif command == "type":
                for ch in rest[0]:
                    hand.key(ord(ch))
            elif command == "touch":
                hand.touch(points(rest))
            elif command == "area":
                hand.area(*(int(v) for v in rest[:4]), rest[4])
            elif command == "screenshot":
                hand.screenshot(rest[0])
            else:
                raise ValueError(f"no command {command}")
            print("ok", flush=True)
        except Exception as e:  # noqa: BLE001 - the answer names it
            print(f"error: {e}", flush=True)


if __name__ == "__main__":
    main()
