# SPDX-License-Identifier: Apache-2.0
"""Typing a password on patternlock-screen's on-screen keyboard by taps or
clicks alone, as a person does: each key is found by what it types in the
locker's --debug description of its keyboard, never by a keyboard event.

The parsers (described_keys, described_button) are make bench-screen's too.
Shared by the touch tests on the test compositor (screen/test_screen_keyboard.py,
a finger through the compositor's `touch` commands) and by sway in the booted
Debian 13 container (booted/test_screen_sway.py, clicks of a virtual pointer):
each subclasses KeyboardTyper with where the locker's debug lines are and how
a tap lands.

The locker describes the keyboard when it shows (or its keymap or size
changes), never as keys are tapped: for each page (letters, symbols) a line

    keyboard output=NAME group=G page=PAGE keys=["q","Q","@","Ω","Q"]@92,368 ["Shift"]@50,496 ...

with each key's centre (surface-local logical coordinates) and what it types
at each level (OnScreenKeyboard.describedLevels: none, Shift, AltGr,
Shift+AltGr, Caps), or the one label of a control key; and, while the keyboard
is hidden, `button "Use password"@400,422`. So the typer keeps the page and the
modifiers itself, by the keyboard's rules (Shift and AltGr hold for one key)."""
import re

KEY = re.compile(r'\[((?:"(?:[^"\\]|\\.)*",?)+)\]@(-?\d+),(-?\d+)')
LABEL = re.compile(r'"((?:[^"\\]|\\.)*)"')
BUTTON = re.compile(r'button "((?:[^"\\]|\\.)*)"@(-?\d+),(-?\d+)')
# The levels the locker lists for each key (OnScreenKeyboard.describedLevels),
# and the modifier keys a person taps for each.
LEVELS = [[], ["Shift"], ["AltGr"], ["Shift", "AltGr"]]


def unquote(label):
    return re.sub(r"\\(.)", r"\1", label)


def described_keys(line):
    """The page a `keyboard ...` line describes, and its keys: (page, [(labels, (x, y))])."""
    page = re.search(r" page=(\w+) ", line).group(1)
    return page, [([unquote(x) for x in LABEL.findall(m.group(1))], (int(m.group(2)), int(m.group(3))))
                  for m in KEY.finditer(line)]


def described_button(line):
    """The label of the button a `button ...` line describes, and its centre: (label, (x, y))."""
    m = BUTTON.search(line)
    return unquote(m.group(1)), (int(m.group(2)), int(m.group(3)))


class KeyboardTyper:
    """Taps keys of the locker's on-screen keyboard by what they type.

    A subclass gives `mark()` (where the locker's debug output is now),
    `said(pattern, start)` (its debug lines from mark `start` on that match,
    without the `patternlock-screen: ` prefix), `await_said(pattern, start)`
    (waits for one) and `tap_at(x, y)` (a tap at surface-local coordinates)."""

    # The keyboard lines this typer reads (a subclass may name one output).
    KEYBOARD = r"^keyboard "

    def __init__(self):
        self.page = "letters"

    def mark(self):
        raise NotImplementedError

    def said(self, pattern, start=0):
        raise NotImplementedError

    def await_said(self, pattern, start=0):
        raise NotImplementedError

    def tap_at(self, x, y):
        raise NotImplementedError

    def pages(self, start=0):
        """page -> [(labels, centre)], from the last description said from mark
        `start` on (waiting for one)."""
        self.await_said(self.KEYBOARD + r".* page=symbols ", start)
        return dict(described_keys(line) for line in self.said(self.KEYBOARD, start)[-2:])

    def shown(self, start=0):
        """Waits until the keyboard shows (described after mark `start`); it
        shows its letters, nothing held."""
        self.page = "letters"
        return self.pages(start)

    def control(self, name, page=None):
        for labels, centre in self.pages()[page or self.page]:
            if labels == [name]:
                return centre
        return None

    def tap(self, name):
        """Taps the control key `name` (Shift, Enter, Esc, ?123...) of the page shown."""
        centre = self.control(name)
        assert centre, f"no key {name!r} on the {self.page} page: {self.pages()[self.page]}"
        self.tap_at(*centre)

    def switch(self, page):
        if self.page != page:
            self.tap("?123" if self.page == "letters" else "ABC")
            self.page = page

    def button(self, label):
        """Taps the screen's button (it shows while the keyboard does not);
        returns the mark before the tap."""
        self.await_said(r"^button ")
        name, (x, y) = described_button(self.said(r"^button ")[-1])
        assert name == label, f"the button says {name!r}, not {label!r}"
        mark = self.mark()
        self.tap_at(x, y)
        return mark

    def type(self, text):
        """Types `text` by taps alone: for each character, the page and the
        modifiers under which a key types it, then that key; back to letters."""
        for ch in text:
            self.type_one(ch)
        self.switch("letters")

    def type_one(self, ch):
        pages = self.pages()
        for page in ("letters", "symbols"):
            for level, route in enumerate(LEVELS):
                if any(self.control(m, page) is None for m in route):
                    continue
                for labels, centre in pages[page]:
                    if len(labels) > 1 and labels[level] == ch:
                        self.switch(page)
                        for m in route:
                            self.tap(m)
                        self.tap_at(*centre)
                        return
        raise AssertionError(f"no key of the on-screen keyboard types {ch!r}: {pages}")
