# SPDX-License-Identifier: Apache-2.0
"""The lock screen by touch alone, at every step that needs the password: its
on-screen keyboard and its "Use password" button, on the project's test
compositor (Tests/wayland-server: no compositor here can inject touch). Not one
keyboard event is sent in these tests: every key is a tap on the key the locker
draws, found by its label in the locker's --debug description of its keyboard
(the keymap's labels, never what was typed) and checked on a screenshot by
OCR. The locker runs as a throwaway user with the real module, the real daemon
and the real pam_unix (the password set with chpasswd)."""
import pytest

from harness.pam_support import failures, set_password
from harness.screen_keyboard import KeyboardTyper
from harness.screen_support import ocr, write_pam_d
from harness.screen_touch import RIGHT_DRAG, WRONG_DRAG, locked_by, private_binaries, unlocked, verify_results


class TouchTyper(KeyboardTyper):
    """Taps with a finger on the test compositor (its `touch` commands), keys
    found in the locker's stderr (harness/screen_keyboard.py)."""

    def __init__(self, compositor, locker):
        super().__init__()
        self.compositor = compositor
        self.locker = locker

    def mark(self):
        return len(self.locker.lines)

    def said(self, pattern, start=0):
        return [line.removeprefix("patternlock-screen: ") for line in self.locker.said(pattern, start)]

    def await_said(self, pattern, start=0):
        self.locker.debug(pattern, start=start)

    def tap_at(self, x, y):
        self.compositor.ok(f"touch down 0 {x} {y}")
        self.compositor.ok("touch up 0")


def five_wrong(s):
    for n in range(5):
        mark = len(s.locker.lines)
        s.drag(WRONG_DRAG)
        s.locker.debug(r"^attempt result=failure$", start=mark)
        if n < 4:
            s.locker.debug(r"^prompt kind=pattern$", start=mark)


PASSWORD = "Tap-2-Open"
# Only the digits 1 to 9, and shaped like a pattern: were it given to the
# module's prompt, it would be checked (and counted) as one. Tapped on the
# keyboard's ?123 page.
DIGITS_PASSWORD = "3692581"


@pytest.mark.parametrize("password", [PASSWORD, DIGITS_PASSWORD], ids=["password", "digits-only"])
def test_after_five_wrong_patterns_the_password_tapped_on_the_screen_unlocks(screens, live, enrolled, password):
    """After the fifth wrong pattern the module asks for the password in its
    own words ("Password (not the pattern): "): the screen answers it empty,
    and the password tapped answers pam_unix's prompt, so a password of
    digits only unlocks too and never reaches the daemon."""
    set_password(enrolled, password)
    s = screens("kb-five-wrong")
    five_wrong(s)
    s.locker.debug(r"^prompt kind=password$")
    assert s.locker.said(r"^prompt kind=module-password$"), "the module's own prompt for the password"
    typer = TouchTyper(s.compositor, s.locker)
    typer.shown()
    shot = s.settled_shot(0, "locked-keyboard")
    text = ocr(shot.path)
    assert "locked" in text.lower() and "Enter" in text, text
    typer.type(password)
    typer.tap("Enter")
    unlocked(s, s.locker)
    # Five wrong patterns, and the password never went to the daemon.
    assert [r for _, r in verify_results(live, enrolled, 5)] == [
        "FAIL,remaining=4", "FAIL,remaining=3", "FAIL,remaining=2", "FAIL,remaining=1", "FAIL,remaining=0"]
    assert verify_results(live, enrolled, 6, timeout=1) == verify_results(live, enrolled, 5)


@pytest.mark.parametrize("password", [PASSWORD, DIGITS_PASSWORD], ids=["password", "digits-only"])
def test_use_password_then_the_password_tapped_unlocks_and_counts_no_attempt(screens, live, enrolled, password):
    set_password(enrolled, password)
    s = screens("kb-use-password")
    typer = TouchTyper(s.compositor, s.locker)
    assert "Use password" in ocr(s.idle.path)
    typer.shown(typer.button("Use password"))
    s.locker.debug(r"^use password$")
    typer.type(password)
    typer.tap("Enter")
    unlocked(s, s.locker)
    # The keyboard was described once (its two pages), never as keys were
    # tapped: not even the Shift taps of the password reach the debug log.
    assert len(s.locker.said(r"^keyboard ")) == 2, s.locker.said(r"^keyboard ")
    assert not any(password in line for line in s.locker.lines)
    assert verify_results(live, enrolled, 0, timeout=1) == []
    assert failures(live, enrolled) == 0


def test_use_password_then_escape_on_the_screen_brings_the_grid_back_and_the_pattern_unlocks(
        screens, live, enrolled):
    s = screens("kb-escape")
    typer = TouchTyper(s.compositor, s.locker)
    typer.shown(typer.button("Use password"))
    typer.type("ab")
    mark = len(s.locker.lines)
    typer.tap("Esc")
    s.locker.debug(r'^button "Use password"', start=mark)
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


def test_a_pattern_locked_before_the_screen_locked_takes_the_password_tapped(
        compositor_built, pam_module, live, enrolled, shared_tmp, tmp_path):
    set_password(enrolled, PASSWORD)
    for _ in range(5):
        live.request(f"VERIFY user={enrolled} pattern=9874")
    assert failures(live, enrolled) == 5
    _, binary, module, _ = private_binaries(shared_tmp, pam_module, enrolled)
    pam_d = write_pam_d(shared_tmp, module, live)
    with locked_by(enrolled, pam_d, binary, log=tmp_path / "locked-compositor.log") as (compositor, locker):
        locker.debug(r"^prompt kind=password$")
        typer = TouchTyper(compositor, locker)
        typer.shown()
        typer.type(PASSWORD)
        typer.tap("Enter")
        assert locker.wait(30) == 0, "\n".join(locker.lines)
        assert compositor.state()["state"] == "unlocked"


@pytest.mark.parametrize("layout,password", [("de", "Zä@Tür-7"), ("fr", "mé?Chat-2")])
def test_under_the_compositors_keymap_a_password_tapped_unlocks(screens, live, enrolled, layout, password):
    # German: ä on its own key, @ at AltGr+Q, Z where us has Y. French (AZERTY):
    # é and the digits on one key (the digit with Shift), ? at Shift+comma.
    set_password(enrolled, password)
    s = screens(f"kb-{layout}", layout=layout)
    typer = TouchTyper(s.compositor, s.locker)
    letters = typer.shown(typer.button("Use password"))["letters"]
    keys = {labels[0] for labels, _ in letters}
    if layout == "de":
        assert {"z", "ä", "AltGr"} <= keys, sorted(keys)
    else:
        assert {"a", "z", "ù", "q"} <= keys, sorted(keys)
    shot = s.settled_shot(0, f"keyboard-{layout}")
    assert shot is not None
    typer.type(password)
    typer.tap("Enter")
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 0, timeout=1) == []


def test_a_hardware_key_hides_the_on_screen_keyboard_and_a_tap_brings_it_back(screens, live, enrolled):
    set_password(enrolled, PASSWORD)
    s = screens("kb-hide")
    typer = TouchTyper(s.compositor, s.locker)
    typer.shown(typer.button("Use password"))
    mark = len(s.locker.lines)
    s.compositor.ok("type T")
    # The field stays open, under the grid, and the button offers the keyboard back.
    s.locker.debug(r'^button "Show keyboard"', start=mark)
    typer.shown(typer.button("Show keyboard"))
    typer.type(PASSWORD[1:])
    typer.tap("Enter")
    unlocked(s, s.locker)


@pytest.mark.parametrize("mode,scale,physical", [
    ("720x1440", 2, (68, 136)),     # a portrait phone
    ("1280x800", 1, (216, 135)),    # a 10-inch tablet
    ("1920x1080", 1, (527, 296)),   # a 24-inch screen
])
def test_the_keyboard_fits_the_screen_with_keys_of_at_least_7_mm_and_unlocks(
        screens, live, enrolled, mode, scale, physical):
    set_password(enrolled, PASSWORD)
    s = screens(f"kb-fit-{mode}", mode=mode, scale=scale, physical=physical)
    typer = TouchTyper(s.compositor, s.locker)
    letters = typer.shown(typer.button("Use password"))["letters"]
    width, height = (int(v) // scale for v in mode.split("x"))
    seven_mm = 7 * width / physical[0]
    centres = sorted((c for _, c in letters), key=lambda c: (c[1], c[0]))
    for x, y in centres:
        assert 0 < x < width and 0 < y < height, (x, y, width, height)
    rows = sorted({y for _, y in centres})
    assert all(b - a >= seven_mm - 1 for a, b in zip(rows, rows[1:])), (rows, seven_mm)
    # A phone's rows of letters are whole (q to p on one row), so its keys are
    # narrower than 7 mm, as a phone keyboard's are: at least 5 mm.
    across = 5 * width / physical[0] if height > 1.5 * width else seven_mm
    for row in rows:
        xs = sorted(x for x, y in centres if y == row)
        assert all(b - a >= across - 1 for a, b in zip(xs, xs[1:])), (row, xs, across)
    shot = s.settled_shot(0, "keyboard")
    # The keyboard on the screen (OCR reads most of its words; one is enough).
    text = ocr(shot.path)
    assert {"Shift", "space", "Enter", "Esc"} & set(text.split()), text
    typer.type(PASSWORD)
    s.settled_shot(0, "typed")
    typer.tap("Enter")
    unlocked(s, s.locker)


def letter_rows(letters):
    """The letters page's rows, top down, as the base labels of their one-letter keys."""
    by_row = {}
    for labels, (x, y) in letters:
        if len(labels[0]) == 1 and labels[0].isalpha():
            by_row.setdefault(y, []).append((x, labels[0]))
    return ["".join(label for _, label in sorted(keys)) for _, keys in sorted(by_row.items())]


@pytest.mark.parametrize("layout,rows,password", [
    ("us", ["qwertyuiop", "asdfghjkl", "zxcvbnm"], "Tap-2-Open"),
    ("de", ["qwertzuiopü", "asdfghjklöä", "yxcvbnm"], "Zä@Tür-7"),
    ("fr", ["azertyuiop", "qsdfghjklmù", "wxcvbn"], "é?Mot-8"),
])
def test_on_a_portrait_phone_the_grid_is_wide_and_low_and_the_keyboard_has_a_phones_rows(
        screens, live, enrolled, layout, rows, password):
    """720x1440 at scale 2, 68 mm wide: the grid spans most of the width in the
    lower half, where a thumb reaches; the keyboard's letters are a phone's three
    rows, the keymap's own letters in their places, the rest of the hardware's
    rows on the symbols page; the password tapped on it unlocks."""
    set_password(enrolled, password)
    s = screens(f"kb-phone-{layout}", mode="720x1440", scale=2, physical=(68, 136), layout=layout)
    width, height = 360, 720
    (x1, y1), (x9, y9) = s.grid.at(1), s.grid.at(9)
    # The outer dots' centres are two thirds of the grid's side apart.
    assert (x9 - x1) * 3 / 2 >= 0.8 * width, (x1, x9, width)
    assert s.grid.at(5)[1] > height / 2, (s.grid.at(5), height)
    if layout == "us":
        # A wrong pattern dragged there: its message whole, above the grid.
        mark = len(s.locker.lines)
        s.drag(WRONG_DRAG)
        s.locker.debug(r"^attempt result=failure$", start=mark)
        s.locker.debug(r"^prompt kind=pattern$", start=mark)
        text = ocr(s.settled_shot(0, "phone-wrong").path)
        assert "attempts left" in text, text
    typer = TouchTyper(s.compositor, s.locker)
    pages = typer.shown(typer.button("Use password"))
    assert letter_rows(pages["letters"]) == rows, pages["letters"]
    # The symbols page: the digits, and what the letter rows' other keys type.
    symbols = {label for labels, _ in pages["symbols"] for label in labels}
    assert {"1", "0", ","} <= symbols, symbols
    assert "," not in {label for labels, _ in pages["letters"] for label in labels}
    shot = s.settled_shot(0, "phone-keyboard")
    text = ocr(shot.path)
    assert {"Shift", "space", "Enter", "Esc"} & set(text.split()), text
    typer.type(password)
    typer.tap("Enter")
    unlocked(s, s.locker)


def test_with_two_layouts_the_layout_key_switches_the_keyboard_and_a_password_tapped_in_the_second_unlocks(
        screens, live, enrolled):
    set_password(enrolled, "Zä@Tür-7")
    s = screens("kb-two-groups", layout="us,de")
    typer = TouchTyper(s.compositor, s.locker)
    pages = typer.shown(typer.button("Use password"))
    assert " group=0 " in s.locker.said(r"^keyboard ")[-1]
    names = [labels[0] for labels, _ in pages["letters"] if len(labels) == 1]
    group_key = next(n for n in names if "German" in n)
    mark = len(s.locker.lines)
    typer.tap(group_key)
    s.locker.debug(r"^keyboard .* group=1 page=symbols ", start=mark)
    typer.shown(mark)
    typer.type("Zä@Tür-7")
    typer.tap("Enter")
    unlocked(s, s.locker)
