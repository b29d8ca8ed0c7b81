# SPDX-License-Identifier: Apache-2.0
"""The --debug lines the tests read from the screens: their one declared
format, and its parsers. A program says them on stderr (the lock screen and
the setup window, each line after `PROGRAM: `) or in the journal (Plasma's
lock screen, after `patternlock-plasma: `); never a dot of a pattern nor a
character typed.

patternlock-screen:
    locked outputs=N                      the compositor's `locked`
    prompt kind=pattern|module-password|password
                                          PAM asked: the module's pattern prompt,
                                          its prompt for the password (answered
                                          empty), any other prompt (the field)
    message TEXT                          a PAM message shown
    attempt result=success|failure|account refused
    use password | too short | unlocked | ...
    keyboard output=NAME group=G page=letters|symbols keys=[...]@X,Y ...
    button "LABEL"@X,Y                    (both read by harness/screen_keyboard.py)

patternlock-setup:
    stage=STAGE title="T" verdict=V dots=N grid=X,Y,SIDE buttons=["L"@X,Y(off),...]
        [detail="D"] [question="Q" said="S"]
                                          each time what it shows changes; a
                                          button with (off) is disabled
    keyboard ...                          as the lock screen's
    window user=U stage=S | close set=0|1
    socket full: ...                      a flush met EAGAIN (the compositor
                                          not reading): the rest is written
                                          once the socket takes it (POLLOUT)

Plasma's lock screen (plasma/common/PatternScreen.qml):
    phase=pattern|password|checking grid=X,Y,SIDE button=X,Y shown=0|1 keyboard=... messages=[...] ...
    prompt kind=... | answered kind=pattern|empty|field | attempt result=failure | unlocked

GNOME Shell's dialogs (gnome/extension.js), in the journal after `patternlock-gnome: `:
    attached to=unlock|polkit | detached from=unlock|polkit
    prompt kind=... | answered kind=pattern|empty|field | attempt result=success|failure
    where=unlock|polkit view=grid|field phase=P grid=X,Y,SIDE button=X,Y|none label="L"
                                          (gnome_view), the stage's pixels

Coordinates are the surface's, in logical pixels; the grid's dots sit at the
centres of its three by three cells."""
import re

GRID = re.compile(r" grid=(\d+),(\d+),(\d+)")


def grid(line):
    """The grid a stage (or phase) line says: (x, y, side)."""
    found = GRID.search(line)
    assert found, f"no grid= in {line!r}"
    return tuple(int(v) for v in found.groups())


def centre(grid_xyz, dot):
    """Where dot 1-9 of a grid (x, y, side) is: the centre of its cell."""
    x, y, side = grid_xyz
    spacing = side / 3
    return x + ((dot - 1) % 3 + 0.5) * spacing, y + ((dot - 1) // 3 + 0.5) * spacing


def button(line, label):
    """Where the enabled button `label` of a stage line is, or None."""
    found = re.search(rf'"{re.escape(label)}"@(\d+),(\d+)(?![\d(])', line)
    return (int(found[1]), int(found[2])) if found else None


GNOME_VIEW = re.compile(r'^where=(\w+) view=(\w+) phase=(\w+) grid=(\d+),(\d+),(\d+) button=(none|\d+,\d+) label=(".*")$')


def gnome_view(line):
    """A `where=` line of GNOME Shell's extension: {where, view, phase, grid:
    (x, y, side), button: (x, y) or None, label}."""
    import json
    found = GNOME_VIEW.match(line)
    assert found, f"not a where= line: {line!r}"
    where, view, phase, x, y, side, at, label = found.groups()
    return {"where": where, "view": view, "phase": phase, "grid": (int(x), int(y), int(side)),
            "button": None if at == "none" else tuple(int(v) for v in at.split(",")), "label": json.loads(label)}
