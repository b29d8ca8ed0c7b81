# SPDX-License-Identifier: Apache-2.0
"""pl-test-compositor's xdg_wm_base, on which patternlock-setup's window will
be tested by touch: a toplevel is configured maximized to the output, maps at
its first buffer, shows in the screenshot, takes touch, pointer and keyboard
where the test says, hears `close` and answers `ping`, and gives way to the
session lock. Misuse earns the protocol error a real compositor raises, so a
client that only works on a lax compositor fails here. Read by a client of
the tests' own (harness.wayland_probe); no root and no locker."""
import os
import pwd
import subprocess
import time

import pytest

from harness.screen_support import Compositor, Image, build_compositor
from harness.wayland_probe import ProtocolError, Probe, Window

BACKGROUND = (0x20, 0x40, 0x60)
RED = (0xFF, 0x00, 0x00)


@pytest.fixture(scope="module")
def built():
    return build_compositor()


@pytest.fixture
def start(built, tmp_path):
    """start(**compositor options) -> (Compositor, Probe); probe(compositor)
    another client of it."""
    made = []

    def compositor(mode="320x240", **options):
        c = Compositor(pwd.getpwuid(os.getuid()).pw_name, mode=mode,
                       log=tmp_path / f"compositor-{len(made)}.log", **options)
        made.append(c)
        return c, probe(c)

    def probe(c):
        client = Probe(c)
        made.append(client)
        return client
    compositor.probe = probe
    yield compositor
    for thing in reversed(made):
        thing.close()


class EventLog:
    """Keeps the events of the objects it handles, for the probe."""

    def __init__(self):
        self.events = []

    def event(self, interface, opcode, args):
        self.events.append((interface, opcode, args))


def mapped(probe, **kwargs):
    """A toplevel configured, acked and drawn: mapped."""
    window = Window(probe, **kwargs)
    window.ack()
    window.draw(rects=[(10, 20, 30, 40, RED)])
    return window


def test_a_toplevel_is_configured_maximized_and_activated_to_the_output_size(start):
    compositor, probe = start(mode="640x480", scale=2)
    window = Window(probe, title="Draw your pattern — ü", app_id="org.patternlock.Setup")
    assert len(window.configures) == 1, window.configures
    configure = window.configures[0]
    # The output's surface size (the mode over the scale), as a phone shell
    # maximizes every window; the bounds the same, no window menu or
    # minimize among the capabilities.
    assert (configure["width"], configure["height"]) == (320, 240)
    assert sorted(configure["states"]) == ["activated", "maximized"]
    assert configure["bounds"] == (320, 240) and configure["capabilities"] == []
    # Recorded before it maps; set_title's text comes back whole.
    assert compositor.toplevel() == {"title": "Draw your pattern — ü", "app_id": "org.patternlock.Setup",
                                     "mapped": "no", "activated": "yes", "geometry": "0x0",
                                     "configures": "1", "acks": "0"}
    assert compositor.state()["shows"] == "none"


def test_it_maps_at_its_first_buffer_after_the_ack_and_takes_the_keyboard(start):
    compositor, probe = start()
    window = Window(probe, title="Setup")
    window.ack()
    window.draw()
    fields = compositor.toplevel()
    assert fields["mapped"] == "yes" and fields["geometry"] == "320x240" and fields["acks"] == "1", fields
    state = compositor.state()
    assert state["shows"] == "toplevel" and state["commits"] == "1", state
    assert probe.focus() == [("enter", window.surface)]
    compositor.ok("type ab")
    assert [sym for _, sym, _ in probe.keys()[0]] == ["a", "b"]


@pytest.mark.parametrize("output_scale, buffer_scale", [(1, 1), (2, 2), (2, 1)])
def test_the_screenshot_is_its_committed_buffer_at_its_scale(start, tmp_path, output_scale, buffer_scale):
    compositor, probe = start(mode=f"{320 * output_scale}x{240 * output_scale}", scale=output_scale)
    window = Window(probe)
    window.ack()
    # A red box at surface (10, 20), 30x40, drawn at the buffer's scale.
    s = buffer_scale
    window.draw(scale=s, rects=[(10 * s, 20 * s, 30 * s, 40 * s, RED)])
    image, fields = compositor.screenshot(tmp_path / "shot.png")
    assert (fields["width"], fields["height"], fields["scale"]) == (str(320 * s), str(240 * s), str(s)), fields
    assert fields["shows"] == "toplevel"
    assert (image.width, image.height) == (320 * s, 240 * s)
    assert image.rgb(0, 0) == BACKGROUND
    # Pixels over the scale are surface coordinates: the box's corners.
    assert image.rgb(10 * s, 20 * s) == RED and image.rgb(40 * s - 1, 60 * s - 1) == RED
    assert image.rgb(10 * s - 1, 20 * s) == BACKGROUND and image.rgb(40 * s, 60 * s) == BACKGROUND


@pytest.mark.parametrize("scale", [1, 2])
def test_a_touch_lands_on_the_toplevel_where_the_screenshot_shows_it(start, tmp_path, scale):
    compositor, probe = start(mode=f"{320 * scale}x{240 * scale}", scale=scale)
    window = Window(probe)
    window.ack()
    window.draw(scale=scale, rects=[(100 * scale, 50 * scale, 20 * scale, 20 * scale, RED)])
    image, fields = compositor.screenshot(tmp_path / "shot.png")
    # The box's centre found on the screenshot, in surface coordinates.
    reds = [(x, y) for y in range(image.height) for x in range(image.width) if image.rgb(x, y) == RED]
    x = (min(p[0] for p in reds) + max(p[0] for p in reds) + 1) / 2 / int(fields["scale"])
    y = (min(p[1] for p in reds) + max(p[1] for p in reds) + 1) / 2 / int(fields["scale"])
    assert (x, y) == (110, 60)
    compositor.ok(f"touch down 3 {x} {y}")
    compositor.ok("touch motion 3 130.25 70.5")
    compositor.ok("touch up 3")
    assert probe.touches() == [("down", window.surface, 3, 110, 60), ("motion", 3, 130.25, 70.5), ("up", 3)]
    compositor.ok("pointer move 5 6")
    compositor.ok("pointer press")
    assert probe.pointer_events() == [("enter", window.surface, 5, 6), ("button", 0x110, 1)]


def test_close_reaches_the_toplevel_and_its_destroy_unmaps_it(start):
    compositor, probe = start()
    window = mapped(probe)
    compositor.ok("close")
    probe.roundtrip()
    assert window.closes == 1
    window.destroy()
    state = compositor.state()
    assert state["toplevels"] == "0" and state["shows"] == "none", state
    reply = compositor.cmd("touch down 0 1 1")
    assert reply.startswith("error The output shows no surface with a buffer"), reply
    assert compositor.cmd("close") == "error There is no toplevel to close."


def test_ping_waits_for_the_clients_pong(start):
    compositor, probe = start()
    mapped(probe)
    compositor.send("ping 5000")
    probe.dispatch_until(lambda: probe.pings)
    assert compositor.reply() == f"ok serial={probe.pings[-1]}"
    # A client that never answers: the ping times out.
    probe.answer_pings = False
    reply = compositor.cmd("ping 200")
    assert reply.startswith("timeout serial="), reply


def test_a_null_buffer_unmaps_it_and_a_new_initial_commit_is_needed(start):
    compositor, probe = start()
    window = mapped(probe)
    probe.attach(window.surface, 0)
    probe.roundtrip()
    assert compositor.toplevel()["mapped"] == "no" and compositor.state()["shows"] == "none"
    # Unmapped: back to the state after get_toplevel, a new configure to ack.
    probe.commit(window.surface)
    probe.roundtrip()
    assert len(window.configures) == 2
    window.ack()
    window.draw()
    assert compositor.toplevel()["mapped"] == "yes"


def test_a_second_toplevel_goes_on_top_and_gives_back_the_focus_when_it_goes(start):
    compositor, probe = start()
    first = mapped(probe, title="first")
    probe.focus()
    second = mapped(probe, title="second")
    # The first is deactivated by a configure of its own.
    assert "activated" not in first.configures[-1]["states"]
    assert "activated" in second.configures[-1]["states"]
    assert compositor.toplevel()["title"] == "second"
    assert probe.focus() == [("leave", first.surface), ("enter", second.surface)]
    compositor.ok("touch down 0 1 1")
    assert probe.touches()[0][:2] == ("down", second.surface)
    second.destroy()
    assert compositor.toplevel()["title"] == "first"
    assert "activated" in first.configures[-1]["states"]
    # The keyboard leaves the unmapped surface (alive a moment longer).
    assert probe.focus() == [("leave", second.surface), ("enter", first.surface)]


def test_the_session_lock_wins_over_the_toplevel_and_gives_it_back_on_unlock(start, tmp_path):
    compositor, app = start()
    window = mapped(app)
    app.focus()
    locker = start.probe(compositor)
    locker.lock()
    state = compositor.state()
    assert state["state"] == "locked" and state["shows"] == "lock", state
    assert app.focus() == [("leave", window.surface)]
    compositor.ok("touch down 0 5 5")
    compositor.ok("touch up 0")
    assert app.touches() == [] and locker.touches()[0][:2] == ("down", locker.lock_surface)
    image, fields = compositor.screenshot(tmp_path / "locked.png")
    assert fields["shows"] == "lock" and image.rgb(15, 25) == (0, 0, 0)
    locker.unlock()
    assert compositor.state()["shows"] == "toplevel"
    assert app.focus() == [("enter", window.surface)]
    compositor.ok("touch down 0 5 5")
    assert app.touches()[0][:2] == ("down", window.surface)


def test_a_lock_abandoned_by_a_dead_locker_shows_no_toplevel(start):
    compositor, app = start()
    mapped(app)
    locker = start.probe(compositor)
    locker.lock()
    locker.close()
    # The session stays locked: nothing shows, the window takes no input.
    deadline = time.monotonic() + 5
    while (state := compositor.state())["state"] != "abandoned" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert state["state"] == "abandoned" and state["shows"] == "none", state
    reply = compositor.cmd("touch down 0 1 1")
    assert reply.startswith("error The output shows no surface"), reply
    assert app.touches() == []


def test_a_popup_is_placed_by_its_positioner_and_its_grab_is_denied(start):
    compositor, probe = start()
    parent = mapped(probe)
    positioner = probe._new("xdg_positioner")
    probe._send(probe.bound["xdg_wm_base"], 1, "n", positioner)
    probe._send(positioner, 1, "ii", 50, 30)  # set_size
    probe._send(positioner, 2, "iiii", 100, 40, 20, 10)  # set_anchor_rect
    probe._send(positioner, 3, "u", 8)  # anchor bottom_right
    probe._send(positioner, 4, "u", 8)  # gravity bottom_right
    probe._send(positioner, 6, "ii", 2, 3)  # offset
    surface = probe.surface()
    xdg = probe._new("xdg_surface")
    probe._send(probe.bound["xdg_wm_base"], 2, "no", xdg, surface)
    popup = probe._new("xdg_popup")
    probe._send(xdg, 2, "noo", popup, parent.xdg_surface, positioner)
    probe._send(popup, 1, "ou", probe.bound["wl_seat"], 0)  # grab
    probe.commit(surface)
    log = EventLog()
    probe.handlers[popup] = probe.handlers[xdg] = log
    probe.roundtrip()
    assert ("xdg_popup", 1, []) in log.events, "the grab was not denied with popup_done"
    # The anchor rectangle's bottom right corner (120, 50), the popup below
    # and right of it, moved by the offset.
    assert ("xdg_popup", 0, [122, 53, 50, 30]) in log.events, log.events
    # The toplevel keeps the focus and the screen.
    assert compositor.state()["shows"] == "toplevel"


# ---- misuse -------------------------------------------------------------------

def buffer_on_the_initial_commit(probe):
    window = Window(probe, initial_commit=False)
    probe.attach(window.surface, probe.buffer(320, 240))


def buffer_before_the_ack(probe):
    window = Window(probe)
    assert window.configures, "no configure to ack"
    window.draw(roundtrip=False)


def buffer_after_an_unmap_without_a_new_initial_commit(probe):
    window = mapped(probe)
    probe.attach(window.surface, 0)
    window.draw(roundtrip=False)


def a_second_xdg_surface(probe):
    window = Window(probe)
    again = probe._new("xdg_surface")
    probe._send(probe.bound["xdg_wm_base"], 2, "no", again, window.surface)


def a_second_toplevel_for_one_xdg_surface(probe):
    window = Window(probe)
    probe._send(window.xdg_surface, 1, "n", probe._new("xdg_toplevel"))


def an_xdg_surface_for_a_surface_with_a_buffer(probe):
    surface = probe.surface()
    probe.attach(surface, probe.buffer(10, 10))
    probe._send(probe.bound["xdg_wm_base"], 2, "no", probe._new("xdg_surface"), surface)


def a_lock_surface_for_a_toplevel(probe):
    window = Window(probe)
    lock = probe._new("ext_session_lock_v1")
    probe._send(probe.bound["ext_session_lock_manager_v1"], 1, "n", lock)
    probe._send(lock, 1, "noo", probe._new("ext_session_lock_surface_v1"), window.surface,
                probe.bound["wl_output"])


def an_ack_of_a_serial_never_sent(probe):
    window = Window(probe)
    window.ack(window.configures[-1]["serial"] + 1000)


def an_ack_of_the_same_serial_twice(probe):
    window = Window(probe)
    window.ack()
    window.ack()


def a_buffer_not_the_configured_size(probe):
    window = Window(probe)
    window.ack()
    window.draw(300, 240, roundtrip=False)


def a_window_geometry_not_the_configured_size(probe):
    window = Window(probe)
    window.ack()
    window.set_window_geometry(0, 0, 320, 200)
    window.draw(roundtrip=False)


def a_buffer_not_a_multiple_of_its_scale(probe):
    window = Window(probe)
    window.ack()
    probe.attach(window.surface, probe.buffer(641, 480), scale=2)


def a_commit_before_a_role(probe):
    surface = probe.surface()
    probe._send(probe.bound["xdg_wm_base"], 2, "no", probe._new("xdg_surface"), surface)
    probe.commit(surface)


def an_empty_window_geometry(probe):
    window = Window(probe)
    window.set_window_geometry(0, 0, 0, 240)


def the_xdg_surface_destroyed_before_its_toplevel(probe):
    window = Window(probe)
    probe._send(window.xdg_surface, 0, "")


def the_wm_base_destroyed_before_its_surfaces(probe):
    Window(probe)
    probe._send(probe.bound["xdg_wm_base"], 0, "")


def a_toplevel_its_own_parent(probe):
    window = Window(probe)
    probe._send(window.toplevel, 1, "o", window.toplevel)


def a_popup_from_an_incomplete_positioner(probe):
    parent = mapped(probe)
    positioner = probe._new("xdg_positioner")
    probe._send(probe.bound["xdg_wm_base"], 1, "n", positioner)
    probe._send(positioner, 1, "ii", 50, 30)
    surface = probe.surface()
    xdg = probe._new("xdg_surface")
    probe._send(probe.bound["xdg_wm_base"], 2, "no", xdg, surface)
    probe._send(xdg, 2, "noo", probe._new("xdg_popup"), parent.xdg_surface, positioner)


@pytest.mark.parametrize("misuse, interface, code", [
    (buffer_on_the_initial_commit, "xdg_surface", 3),  # unconfigured_buffer
    (buffer_before_the_ack, "xdg_surface", 3),
    (buffer_after_an_unmap_without_a_new_initial_commit, "xdg_surface", 3),
    (a_second_xdg_surface, "xdg_wm_base", 0),  # role
    (a_lock_surface_for_a_toplevel, "ext_session_lock_v1", 2),  # role
    (a_second_toplevel_for_one_xdg_surface, "xdg_surface", 2),  # already_constructed
    (an_xdg_surface_for_a_surface_with_a_buffer, "xdg_wm_base", 4),  # invalid_surface_state
    (an_ack_of_a_serial_never_sent, "xdg_surface", 4),  # invalid_serial
    (an_ack_of_the_same_serial_twice, "xdg_surface", 4),
    (a_buffer_not_the_configured_size, "xdg_wm_base", 4),  # maximized: invalid_surface_state
    (a_window_geometry_not_the_configured_size, "xdg_wm_base", 4),
    (a_buffer_not_a_multiple_of_its_scale, "wl_surface", 2),  # invalid_size
    (a_commit_before_a_role, "xdg_surface", 1),  # not_constructed
    (an_empty_window_geometry, "xdg_surface", 5),  # invalid_size
    (the_xdg_surface_destroyed_before_its_toplevel, "xdg_surface", 6),  # defunct_role_object
    (the_wm_base_destroyed_before_its_surfaces, "xdg_wm_base", 1),  # defunct_surfaces
    (a_toplevel_its_own_parent, "xdg_toplevel", 1),  # invalid_parent
    (a_popup_from_an_incomplete_positioner, "xdg_wm_base", 5),  # invalid_positioner
], ids=lambda v: v.__name__ if callable(v) else None)
def test_misuse_is_the_protocol_error_a_real_compositor_raises(start, misuse, interface, code):
    compositor, probe = start(mode="640x480", scale=2)
    with pytest.raises(ProtocolError) as raised:
        misuse(probe)
        probe.roundtrip()
    assert (raised.value.interface, raised.value.code) == (interface, code), str(raised.value)
    # The compositor goes on: a well-behaved client maps after it.
    compositor.ok("state")
    window = mapped(start.probe(compositor))
    assert compositor.toplevel()["mapped"] == "yes" and window.configures


def test_a_window_with_a_shadow_keeps_its_geometry_to_the_configured_size(start):
    compositor, probe = start()
    window = Window(probe)
    window.ack()
    # Client-side decorations' shadow outside the window geometry.
    window.set_window_geometry(8, 8, 320, 240)
    window.draw(336, 256)
    assert compositor.toplevel()["geometry"] == "320x240"


def test_the_usage_names_the_new_commands(built, tmp_path):
    r = subprocess.run([str(built), "--help"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)))
    assert r.returncode == 2
    for word in ("xdg_wm_base", "maximized", "close", "ping"):
        assert word in r.stderr, r.stderr
