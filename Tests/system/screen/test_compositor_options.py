# SPDX-License-Identifier: Apache-2.0
"""pl-test-compositor's own options, --layout, --variant and --physical: the
keymap and the output geometry it sends, and the keys its `key` and `type`
commands press under other layouts, read by a client of the tests' own
(harness.wayland_probe) through the keymap it was sent, as the locker reads
them. No locker and no root: these run wherever the compositor builds."""
import os
import pwd
import subprocess

import pytest

from harness.screen_support import Compositor, build_compositor
from harness.wayland_probe import Probe

# evdev codes (linux/input-event-codes.h)
KEY_1, KEY_0, KEY_Q, KEY_W, KEY_Y, KEY_A, KEY_Z = 2, 11, 16, 17, 21, 30, 44


@pytest.fixture(scope="module")
def built():
    return build_compositor()


@pytest.fixture
def probe(built, tmp_path):
    """start(**compositor options) -> (Compositor, Probe holding a lock surface)."""
    made = []

    def start(**options):
        compositor = Compositor(pwd.getpwuid(os.getuid()).pw_name, mode="320x240",
                                log=tmp_path / f"compositor-{len(made)}.log", **options)
        made.append(compositor)
        client = Probe(compositor)
        made.append(client)
        client.lock()
        return compositor, client
    yield start
    for thing in reversed(made):
        thing.close()


def test_without_options_the_keymap_is_us_and_the_output_96_dots_an_inch(probe):
    compositor, client = probe()
    assert client.keymap.layouts() == ["English (US)"]
    # 320x240 pixels at 96 dots an inch: 84.7 x 63.5 mm.
    assert (client.geometry["physical_width"], client.geometry["physical_height"]) == (84, 63)
    assert compositor.ready["physical"] == "84x63" and compositor.ready["layout"] == "us"
    compositor.ok("type zy")
    assert client.keys() == ([(KEY_Z, "z", []), (KEY_Y, "y", [])], [])


@pytest.mark.parametrize("physical", ["344x194", (600, 340), "0x0"])
def test_physical_is_the_size_wl_output_geometry_sends(probe, physical):
    compositor, client = probe(physical=physical)
    want = tuple(int(n) for n in physical.split("x")) if isinstance(physical, str) else physical
    assert (client.geometry["physical_width"], client.geometry["physical_height"]) == want
    # The size in pixels stays the mode's.
    assert (client.mode["width"], client.mode["height"]) == (320, 240)


def test_under_de_the_keymap_is_german_and_type_presses_the_swapped_z_and_y(probe):
    compositor, client = probe(layout="de")
    assert client.keymap.layouts() == ["German"]
    assert compositor.ready["layout"] == "de"
    compositor.ok("type zyZ")
    assert client.keys() == ([(KEY_Y, "z", []), (KEY_Z, "y", []), (KEY_Y, "Z", ["Shift"])], [])


def test_under_de_a_keysym_on_altgr_is_pressed_with_the_level3_modifier_and_released(probe):
    compositor, client = probe(layout="de")
    compositor.ok("key at")
    compositor.ok("type @")
    # AltGr+Q; xkb-data's LevelThree is the real modifier Mod5. Nothing stays
    # depressed after the key.
    assert client.keys() == ([(KEY_Q, "at", ["Mod5"])] * 2, [])


def test_under_fr_azerty_type_presses_the_french_keys_with_shift_and_altgr(probe):
    compositor, client = probe(layout="fr")
    assert client.keymap.layouts() == ["French"]
    compositor.ok("type aqzw1@")
    assert client.keys() == ([(KEY_Q, "a", []), (KEY_A, "q", []), (KEY_W, "z", []), (KEY_Z, "w", []),
                              (KEY_1, "1", ["Shift"]), (KEY_0, "at", ["Mod5"])], [])


def test_two_layouts_are_two_groups_and_keys_come_from_the_first(probe):
    compositor, client = probe(layout="us,de", variant=",nodeadkeys")
    assert client.keymap.layouts() == ["English (US)", "German (no dead keys)"]
    assert compositor.ready["variant"] == ",nodeadkeys"
    compositor.ok("type zy")
    assert client.keys() == ([(KEY_Z, "z", []), (KEY_Y, "y", [])], [])


def test_a_keysym_the_first_layout_lacks_is_an_error_naming_the_layout(probe):
    compositor, client = probe(layout="de")
    reply = compositor.cmd("key dollar")  # de has $ on Shift+4: found
    assert reply.startswith("ok"), reply
    reply = compositor.cmd("key Cyrillic_a")
    assert reply == "error The keymap's first layout (de) has no key for keysym Cyrillic_a.", reply


def run(built, tmp_path, *args):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    return subprocess.run([str(built), "--socket", "wayland-bad", *args], input="", capture_output=True,
                          text=True, env=env, timeout=30)


@pytest.mark.parametrize("args, named", [
    (["--layout", "xx"], "--layout 'xx'"),
    (["--layout", "us,xx"], "--layout 'us,xx'"),
    (["--layout", "de", "--variant", "bogus"], "--layout 'de' --variant 'bogus'"),
    (["--layout", ""], "--layout ''"),
])
def test_a_layout_xkbcommon_cannot_compile_is_refused_with_a_sentence_and_exit_2(built, tmp_path, args, named):
    r = run(built, tmp_path, *args)
    assert r.returncode == 2, r
    assert r.stdout == "", "it never said ready"
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"pl-test-compositor: xkbcommon cannot compile a keymap from {named}: "), last
    assert "/usr/share/X11/xkb/rules/evdev.lst" in last and "e.g. --layout de" in last, last


@pytest.mark.parametrize("value", ["344", "344x", "-1x200", "344x194mm", "wide"])
def test_a_physical_size_that_is_not_w_x_h_millimetres_is_refused_with_exit_2(built, tmp_path, value):
    r = run(built, tmp_path, "--physical", value)
    assert r.returncode == 2, r
    assert r.stderr.startswith("pl-test-compositor: --physical must be WIDTHxHEIGHT in millimetres"), r.stderr


def test_the_usage_names_the_new_options(built, tmp_path):
    r = run(built, tmp_path, "--help")
    assert r.returncode == 2
    for option in ("--physical WIDTHxHEIGHT", "--layout NAMES", "--variant NAMES"):
        assert option in r.stderr, r.stderr


def test_the_harness_says_what_a_compositor_that_did_not_start_said(built, tmp_path):
    with pytest.raises(AssertionError, match="cannot compile a keymap from --layout 'xx'"):
        Compositor(pwd.getpwuid(os.getuid()).pw_name, log=tmp_path / "bad.log", layout="xx")

