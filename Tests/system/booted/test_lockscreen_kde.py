# SPDX-License-Identifier: Apache-2.0
"""KDE Plasma 5.27's lock screen (the greeter of libkscreenlocker5 with the Breeze
design of plasma-workspace), in the booted container (conftest's client_system),
inside a real local logind session that `login` opened on a pty, with the module
as pam-auth-update installs it: kscreenlocker_greet --testing on Xvfb, typed
into with xdotool, its screen read with tesseract as a person would read it.

Breeze labels its one field "Password" whatever PAM asks, keeps what was typed
in it while a second prompt comes in the same pam_authenticate, and clears it
only when an attempt has failed. So a wrong pattern must end the attempt (the
profile's auth_err=die): the greeter says so, clears the field, and the next
attempt starts again at the module's prompt. If pam_unix asked "Password:" after
a wrong pattern, the greeter would answer it with the pattern still in the field
(or the pattern followed by the password)."""
import re
import time

import pytest

from harness.common import figure
from harness.lockscreen_support import (PASSWORD, PATTERN, SHOTS, WRONG_PATTERN, Desktop, locked_after,
                                password_checks_failed, status, verify_lines, verify_results)
from harness.clients import Clients

GREETER = "/usr/lib/x86_64-linux-gnu/libexec/kscreenlocker_greet"
# Where Breeze puts its messages and its field on an 800x600 screen: under the
# user's name, above and in the field's row (x, y, width, height).
TEXT_BAND = (100, 300, 600, 190)
FIELD_COLUMN = 450


@pytest.fixture(scope="module")
def clients(client_system):
    SHOTS.mkdir(parents=True, exist_ok=True)
    if client_system.run(f"test -x {GREETER}").returncode != 0:
        pytest.fail(f"{GREETER} is missing in the container: booted.py's CLIENT_PACKAGES installs libkscreenlocker5")
    return Clients(client_system)


def words(text):
    """OCR'd text as one line: runs of white space made one space."""
    return " ".join(text.split())


class Plasma(Desktop):
    """A user's session with Xvfb and KDE's greeter as its lock screen."""

    def __init__(self, clients, user):
        super().__init__(clients, user, "kde")

    def lock(self):
        """Starts the greeter and waits until it shows its field, ready for an entry."""
        self.locks += 1
        self.as_user("touch lock")
        # The process name is cut to 15 bytes: match the command line.
        self.wait(f"pgrep -u {self.user} -f {GREETER} >/dev/null", "the greeter started")
        self.poll(self.woken, "the greeter's field, enabled")

    def woken(self):
        """Wakes the greeter with a key (it shows a clock until then); true once
        its field takes input."""
        self.as_user("xdotool key shift")
        return self.field_rows() is not None

    def field_rows(self, png=None):
        """The first and last row of Breeze's field while it is white, as it is
        while it takes input (greyed while an attempt runs and for the fail
        delay after a refusal); None when it is not."""
        _, y, _, h = TEXT_BAND
        source = f"/usr/bin/convert {png}" if png else f"{self.grab()} | /usr/bin/convert png:-"
        column = self.as_user(f"{source} -crop 1x{h}+{FIELD_COLUMN}+{y} txt:-")
        rows = [y + int(m) for m in re.findall(r"^0,(\d+):.*#FFFFFF", column, re.M)]
        return (min(rows), max(rows)) if len(rows) >= 10 else None

    def field_text(self, name):
        """What tesseract reads in the field on screenshot NAME (its text left
        of the eye button): Breeze's placeholder "Password" when it is empty."""
        rows = self.field_rows(f"{name}.png")
        assert rows is not None, f"the field is not enabled on {name}.png"
        top, bottom = rows
        return words(self.as_user(f"/usr/bin/convert {name}.png -crop 220x{bottom - top - 3}+260+{top + 2} "
                                  f"-resize 400% -colorspace gray {name}-field.png && "
                                  f"tesseract --psm 7 {name}-field.png - 2>/dev/null"))

    def read(self, name):
        """Takes a screenshot (build/lockscreens/kde-NAME.png) and returns the
        text of its message band as tesseract reads it: cropped, three times
        larger, grey, dark on light."""
        self.shot(name)
        x, y, w, h = TEXT_BAND
        return words(self.as_user(f"/usr/bin/convert {name}.png -crop {w}x{h}+{x}+{y} -resize 300% "
                                  f"-colorspace gray -negate {name}-band.png && tesseract {name}-band.png - "
                                  "2>/dev/null"))

    def refusals(self):
        """The refused patterns the module logged for this user (to the journal)."""
        out = self.system.ok("journalctl -o cat --no-pager")
        return out.count(f"pam_patternlock(kde:auth): wrong pattern for {self.user};")

    def type(self, text):
        """Types text and Enter into the focused field, from stdin (never in argv)."""
        self.as_user("xdotool type --delay 30 --file - && xdotool key Return", input=text)

    def attempt(self, text, shot=None):
        """Types text at the greeter. Returns ("unlocked", "") when the greeter
        ended with status 0, or ("refused", what the screen said) once the
        module refused it; then waits until the field takes input again."""
        refusals = self.refusals()
        self.type(text)
        self.poll(lambda: self.unlocked() is not None or self.refusals() > refusals,
                  "the greeter to unlock or refuse")
        rc = self.unlocked()
        if rc is not None:
            assert rc == "0", f"the greeter ended with status {rc}\n{self.diagnostics()}"
            return "unlocked", ""
        said = ""
        # The message shows while the field is greyed (about 3 s): read it then.
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and "attempt" not in said:
            said = self.read(shot or "refused")
        self.poll(lambda: self.field_rows() is not None, "the greeter's field, enabled again after the refusal")
        return "refused", said


def test_kde_lock_screen_ends_the_attempt_at_a_wrong_pattern_and_takes_the_password_in_a_clear_field(clients):
    s = clients.system
    user = clients.user("plkde", PASSWORD, pattern=PATTERN)
    start = time.monotonic()
    with Plasma(clients, user) as desk:
        # The right pattern unlocks, as service kde (Debian ships no
        # /etc/pam.d/kde: the `other` stack, with common-auth).
        desk.lock()
        desk.shot("locked")
        assert desk.field_text("locked").startswith("Password"), "Breeze's placeholder in the empty field"
        assert desk.attempt(PATTERN) == ("unlocked", "")
        assert verify_results(clients, user) == ["OK"]
        line = verify_lines(clients, user)[-1]
        assert " service=kde " in line and re.search(r" session=\d+ seat=pts/\d+ ", line), line

        # A wrong pattern: said whole, the attempt ends, and the field comes
        # back empty (Breeze's placeholder shows) at the module's prompt.
        desk.lock()
        outcome, said = desk.attempt(WRONG_PATTERN, shot="wrong")
        assert outcome == "refused"
        assert "Wrong pattern" in said and "4 attempts left" in said, said
        desk.shot("after-wrong")
        assert desk.field_text("after-wrong").startswith("Password"), "the field was not cleared"
        # The password, typed once into that field, unlocks; it never reaches
        # the daemon, and pam_unix never checked anything but it.
        before = verify_lines(clients, user)
        assert desk.attempt(PASSWORD) == ("unlocked", "")
        assert verify_lines(clients, user) == before, "the password reached the daemon"
        assert password_checks_failed(s.ok("journalctl -o cat --no-pager"), user) == 0, "pam_unix was given the pattern (or pattern+password)"

        # Five wrong patterns: the fifth says the pattern is now locked, and
        # the next attempt asks the password alone (pam_unix's prompt, in the
        # same field) after the module said the pattern is locked.
        s.ok(f"patternlockd reset {user}")
        desk.lock()
        for n in range(4, 0, -1):
            outcome, said = desk.attempt(WRONG_PATTERN)
            assert outcome == "refused" and f"{n} attempt" in said, said
        outcome, said = desk.attempt(WRONG_PATTERN, shot="now-locked")
        assert outcome == "refused"
        assert "locked after 5 failed attempts" in said and "patternlockd reset" in said, said
        assert locked_after(clients, user) == 5, status(clients, user)
        # The next attempt has begun: the module said why it asks no pattern,
        # and Breeze's empty field now answers the module's own prompt for the
        # password.
        said = desk.read("password-only")
        assert "is locked after 5 failed attempts" in said and "now locked" not in said, said
        assert desk.field_text("password-only").startswith("Password"), "the field was not cleared"
        before, counted = verify_lines(clients, user), status(clients, user)
        assert desk.attempt(PASSWORD) == ("unlocked", "")
        assert verify_lines(clients, user) == before and status(clients, user) == counted, \
            "the password reached the daemon"
        assert password_checks_failed(s.ok("journalctl -o cat --no-pager"), user) == 0
    assert verify_results(clients, user) == ["OK", "FAIL,remaining=4"] + [
        f"FAIL,remaining={n}" for n in (4, 3, 2, 1, 0)]
    figure("kde lock screen run (login, 3 locks, 8 entries)", f"{time.monotonic() - start:.1f} s")
