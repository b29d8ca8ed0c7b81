# SPDX-License-Identifier: Apache-2.0
"""What patternlock-screen says with --debug about its on-screen keyboard and
its button (Drawing.swift, describeKeyboard), read the same way by the tests
that tap keys (Tests/system/screen/test_screen_keyboard.py) and by make
bench-screen: a `button "LABEL"@X,Y` line, and a `keyboard output=NAME group=N
page=PAGE keys=...` line for each page, each key as its labels at the levels
the locker lists (one label for a control key) and its centre, in the
surface's logical pixels."""
import re

KEY = re.compile(r'\[((?:"(?:[^"\\]|\\.)*",?)+)\]@(-?\d+),(-?\d+)')
LABEL = re.compile(r'"((?:[^"\\]|\\.)*)"')
BUTTON = re.compile(r'button "((?:[^"\\]|\\.)*)"@(-?\d+),(-?\d+)')


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
