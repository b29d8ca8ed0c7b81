# SPDX-License-Identifier: Apache-2.0
"""phosh, the phone shell of Mobian and postmarketOS (0.46 in Debian 13), on a
headless phoc in the booted Debian 13 container (conftest's trixie_system),
with this project's packages installed from `make deb` and the pam-auth-update
profile enabled, inside a real local logind session that `login` opened on a
pty (screen_desk.py with compositor="phosh").

What phosh does with PAM (docs/REAL-CLIENTS.md, "Touch-first surfaces"): its
PAM service is `phosh`, for which Debian ships no file (so `other`, hence
common-auth); it starts a new PAM handle when an entry is submitted and answers
every prompt with that one entry; it shows no PAM text, only "Enter Passcode",
"Checking…" and a shake. So the module must decide alone, from one entry,
whether it is the pattern or the password, and whether it may go to pam_unix.

The tests type with wtype as a keyboard would (digits open phosh's keypad and
go into its entry; letters go straight into the same entry), read phosh's
label with grim and tesseract, and tell locked from unlocked by phosh's own
report to logind (the session's LockedHint, which phosh sets and clears). What
the daemon heard comes from its journal; what pam_unix heard from the journal
(its helper unix_chkpwd logs each password it checked in vain) and from
pam_faillock's tally (`faillock --user`), kept by /etc/pam.d/phosh with the
documented faillock order (pam/pam.d-example-faillock, deny=3) in the tests
that need it.

One user and one phosh session serve the whole module; each test resets the
pattern, the tally, the user's password and the PAM file it needs, and locks
the phone first."""
import random
import re
import time

import pytest

from harness.clients import Clients
from harness.common import ROOT, figure
from harness.lockscreen_support import password_checks_failed, status, verify_lines, verify_results
from harness.pam_support import documented_stack
from harness.screen_desk import Desk

SERVICE = "phosh"
PAM_FILE = f"/etc/pam.d/{SERVICE}"
# The account password, letters and digits. The tests count the dots phosh
# shows for what they typed, and its entry shows about 14: passwords shorter
# than that.
PASSWORD = "Ph0ne-pass"
WRONG_PASSWORD = "Not-my-pw0"
PATTERN = "46183"  # accepted by the enroll policy the packaged daemon runs
WRONG = "2589"  # a valid pattern, so each one counts
# A password made only of the dots 1-9, each once, at least 4: shaped like a
# pattern (2-5-8-9-6-3), and not the user's pattern.
DIGITS_PASSWORD = "258963"
# A phone's screen: 720x1440 at scale 2 (screen_session.sh), 360x720 logical.
SIZE = (720, 1440)
# Where phosh's keypad page shows its one line of text ("Enter Passcode",
# "Checking…"), in logical pixels.
LABEL = (0, 120, 360, 60)
# Where the keypad page shows the entry, a white dot a key.
ENTRY = (0, 190, 360, 40)
# Where its clock page says "Slide up to unlock".
SLIDE = (0, 655, 360, 45)
FAILLOCK_EXAMPLE = ROOT / "pam" / "pam.d-example-faillock"


def phosh_stack(module_options=""):
    """/etc/pam.d/phosh with the documented faillock order (deny=3), the
    module's line as the example has it plus `module_options`."""
    lines = []
    for line in documented_stack(FAILLOCK_EXAMPLE):
        line = line.replace("{module}", "pam_patternlock.so")
        if "pam_faillock.so" in line:
            line += " deny=3"
        if "pam_patternlock.so" in line and module_options:
            line += " " + module_options
        lines.append(line)
    return ("# written by patternlock's Tests/system/booted/test_phosh.py\n"
            + "".join(line + "\n" for line in lines)
            + "@include common-account\n@include common-session\n")


class Phone:
    """The user's phosh session: a hand that types, an eye that reads phosh's
    label, and what logind, the daemon, pam_unix and faillock say."""

    def __init__(self, clients, desk, user):
        self.clients, self.desk, self.user = clients, desk, user
        self.system = clients.system

    def session(self):
        """The logind session phosh runs in."""
        out = self.system.ok(f"cat /proc/$(pgrep -u {self.user} -x phosh)/cgroup")
        return re.search(r"/session-([^/]+)\.scope$", out, re.M).group(1)

    def locked(self):
        """phosh's own word, given to logind (SetLockedHint)."""
        hint = self.system.ok(f"loginctl show-session {self.session()} -p LockedHint --value").strip()
        assert hint in ("yes", "no"), hint
        return hint == "yes"

    def gdbus(self, method, *args):
        return self.desk.as_user("gdbus call --session --dest org.gnome.ScreenSaver --object-path "
                                 f"/org/gnome/ScreenSaver --method org.gnome.ScreenSaver.{method} "
                                 + " ".join(args)).stdout.strip()

    def lock(self):
        """Locks the phone, if it is not, and wakes its screen: Lock blanks
        the output (grim then fails), and phosh wakes it on SetActive false
        (keys typed with wtype do not)."""
        if not self.locked():
            self.gdbus("Lock")
            self.desk.poll(self.locked, "phosh to lock", timeout=10)
        self.gdbus("SetActive", "false")
        self.desk.poll(lambda: self.desk.as_user("grim -t ppm - >/dev/null", check=False).returncode == 0,
                       "the screen to wake", timeout=10)
        self.desk.poll(self.shows_lock_screen, "phosh's lock screen on the screen", timeout=20, every=0.2)

    def shows_lock_screen(self):
        """Its clock page ("Slide up to unlock") or its keypad page."""
        return "Slide up" in self.desk.read(self.desk.screen(region=SLIDE)) or "Passcode" in self.label()

    def label(self):
        """What phosh's keypad page says (empty on its clock page)."""
        return self.desk.read(self.desk.screen(region=LABEL))

    def entry(self):
        """How many keys phosh's entry holds: its dots on the screen."""
        return len(self.desk.screen(region=ENTRY).blobs(lambda r, g, b: min(r, g, b) > 128))

    def type(self, text):
        """Types text and Enter into phosh's entry (the text on stdin, never
        in argv). The first key opens the keypad page, and what follows goes
        into its entry while the page slides in; an Enter before the page is
        there is lost, so Enter waits for "Enter Passcode" and a dot for each
        key typed."""
        self.desk.as_user("wtype -d 20 -", input=text)
        self.desk.poll(lambda: "Passcode" in self.label() and self.entry() == len(text),
                       f"phosh's keypad page with {len(text)} dots (it shows {self.entry()})", timeout=10, every=0.1)
        self.desk.as_user("wtype -k Return")

    def journal(self):
        return self.system.ok("journalctl -o cat --no-pager")

    def daemon_lines(self):
        return self.clients.daemon_lines(self.user)

    def explain(self):
        """For a failed assertion: what phosh's PAM stack and the daemon said
        lately, and the screen."""
        shot = self.desk.save(self.desk.screen(), "last")
        return (self.system.run("journalctl -o short --no-pager -n 15 SYSLOG_IDENTIFIER=phosh "
                                "SYSLOG_IDENTIFIER=unix_chkpwd").stdout
                + "\n".join(self.daemon_lines()[-8:]) + f"\nthe screen: {shot}")

    def faillock(self):
        """The failures pam_faillock's tally holds for the user."""
        out = self.system.ok(f"faillock --user {self.user}")
        return [line for line in out.splitlines()[2:] if line.strip()]

    def reset(self, password=PASSWORD, stack=None):
        """Before a test: the pattern unlocked with no failure, the tally
        empty, the account password `password`, /etc/pam.d/phosh `stack`
        (None: none, so `other`), the phone locked."""
        s = self.system
        s.ok(f"patternlockd reset {self.user} >/dev/null")
        s.ok("chpasswd", input=f"{self.user}:{password}\n")
        if stack is None:
            s.ok(f"rm -f {PAM_FILE}")
        else:
            s.ok(f"cat > {PAM_FILE}", input=stack)
        # pam_faillock runs as the user in phosh and cannot create a tally in
        # root's /run/faillock: root's `faillock --user` makes the user's, the
        # user's own (as a login through a faillock stack would).
        s.ok(f"faillock --user {self.user} >/dev/null && faillock --user {self.user} --reset")
        assert s.ok(f"stat -c %U /run/faillock/{self.user}").strip() == self.user
        self.lock()
        assert self.locked()

    def attempt(self, text, timeout=30):
        """Types text and Enter; returns "unlocked" once phosh says so to
        logind, or "refused" once the attempt has ended with the phone still
        locked: the daemon heard of it (the module asks STATUS on every
        attempt), phosh is no longer "Checking…", and it has emptied its
        entry (after its shake: keys typed before that are lost)."""
        heard = len(self.daemon_lines())
        self.type(text)
        started = time.monotonic()

        def settled():
            if not self.locked():
                return "unlocked"
            if len(self.daemon_lines()) > heard and "Checking" not in self.label() and self.entry() == 0:
                return "refused" if self.locked() else "unlocked"
            return None
        outcome = self.desk.poll(settled, f"phosh to unlock or refuse {len(text)} keys", timeout, every=0.1)
        # From Enter to phosh's word (the label read, LockedHint asked): a
        # little more than phosh took.
        self.elapsed = time.monotonic() - started
        return outcome


@pytest.fixture(scope="module")
def phone(trixie_system):
    clients = Clients(trixie_system)
    s = trixie_system
    assert s.run("command -v phosh phoc || test -x /usr/libexec/phosh").returncode == 0, \
        "phosh is not installed in the container: trixie.py's PACKAGES installs it"
    assert "pam_patternlock.so" in s.ok("grep pam_patternlock /etc/pam.d/common-auth")
    assert s.run(f"test -e {PAM_FILE}").returncode != 0, f"{PAM_FILE} is there before the tests wrote one"
    user = "plphone" + "".join(random.choice("abcdefghkmnprstuvwxyz") for _ in range(6))
    s.ok(f"useradd --create-home --shell /bin/bash {user}")
    s.ok("chpasswd", input=f"{user}:{PASSWORD}\n")
    s.ok(f"patternlockd enroll {user}", input=f"{PATTERN}\n{PATTERN}\n")
    try:
        with Desk(s, user, PASSWORD, size=SIZE, shot_prefix="phosh", compositor="phosh") as desk:
            # Keys reach phosh only while a virtual keyboard stays: one that
            # lives as long as the session, beside each wtype's own.
            desk.start("exec wtype -s 3600000 -k Shift_L")
            phone = Phone(clients, desk, user)
            desk.poll(lambda: desk.as_user("gdbus call --session --dest org.gnome.ScreenSaver --object-path "
                                           "/org/gnome/ScreenSaver --method org.gnome.ScreenSaver.GetActive",
                                           check=False).returncode == 0, "phosh on the session bus")
            assert not phone.locked(), "phosh -U started locked"
            yield phone
    finally:
        s.run(f"rm -f {PAM_FILE}")


def test_the_pattern_typed_on_phosh_s_keypad_unlocks_and_the_daemon_logs_it_for_phosh(phone):
    """Through Debian's own path: no /etc/pam.d/phosh, so `other` and the
    common-auth pam-auth-update wrote."""
    s = phone.system
    assert s.run("test -e /usr/lib/pam.d/phosh").returncode != 0, "Debian now ships a PAM file for phosh: test it"
    phone.reset()
    phone.desk.save(phone.desk.screen(), "locked")
    before = verify_lines(phone.clients, phone.user)
    assert phone.attempt(PATTERN) == "unlocked", phone.explain()
    figure("phosh pattern unlock", f"{phone.elapsed:.2f} s from Return to unlocked")
    lines = verify_lines(phone.clients, phone.user)[len(before):]
    assert len(lines) == 1 and f" service={SERVICE} " in lines[0] and " result=OK" in lines[0], lines
    home = phone.desk.screen()
    phone.desk.save(home, "unlocked")
    assert "Slide up to unlock" not in phone.desk.read(home)


def test_a_wrong_pattern_on_phosh_is_one_failure_for_the_daemon_and_never_reaches_pam_unix(phone):
    phone.reset(stack=phosh_stack())
    journal = phone.journal()
    assert phone.attempt(WRONG) == "refused", phone.explain()
    figure("phosh wrong pattern", f"{phone.elapsed:.2f} s from Return to 'Enter Passcode' again")
    assert phone.clients.failures(phone.user) == 1, status(phone.clients, phone.user)
    assert verify_results(phone.clients, phone.user)[-1] == "FAIL,remaining=4"
    assert phone.faillock() == [], "pam_faillock counted the wrong pattern"
    assert password_checks_failed(phone.journal(), phone.user) == password_checks_failed(journal, phone.user), \
        "pam_unix checked the wrong pattern as a password"


def test_five_wrong_patterns_lock_it_then_the_pattern_never_reaches_pam_unix_and_the_password_unlocks(phone):
    phone.reset(stack=phosh_stack())
    for _ in range(5):
        assert phone.attempt(WRONG) == "refused", phone.explain()
    assert f"{phone.user}: LOCKED since " in status(phone.clients, phone.user)
    checked = password_checks_failed(phone.journal(), phone.user)
    verified = verify_lines(phone.clients, phone.user)
    # The right pattern, once the pattern is locked: refused, and not handed
    # to pam_unix (phosh answers pam_unix's "Password:" with the same entry).
    assert phone.attempt(PATTERN) == "refused", phone.explain()
    assert verify_lines(phone.clients, phone.user) == verified, "a locked pattern was verified"
    assert phone.faillock() == [], "the pattern typed while locked reached pam_unix and faillock"
    assert password_checks_failed(phone.journal(), phone.user) == checked, \
        "the pattern typed while locked reached pam_unix"
    # What a wrong password leaves, for comparison: pam_unix checks it and
    # faillock counts it (the two checks above could see a password).
    assert phone.attempt(WRONG_PASSWORD) == "refused", phone.explain()
    assert len(phone.faillock()) == 1, "faillock did not count a wrong password typed on phosh"
    assert password_checks_failed(phone.journal(), phone.user) > checked, "pam_unix's failure left no line"
    # The account password, typed as letters straight into phosh's entry.
    assert phone.attempt(PASSWORD) == "unlocked", phone.explain()
    figure("phosh password unlock (pattern locked)", f"{phone.elapsed:.2f} s from Return to unlocked")
    assert verify_lines(phone.clients, phone.user) == verified, "the password reached the daemon"
    assert phone.faillock() == [], "faillock's authsucc clears its count"


def test_a_password_of_dots_never_unlocks_phosh_by_default_and_does_with_digit_passwords_once_the_pattern_is_locked(
        phone):
    phone.reset(password=DIGITS_PASSWORD, stack=phosh_stack())
    journal = phone.journal()
    try:
        # The pattern not locked: the entry is a (wrong) pattern.
        assert phone.attempt(DIGITS_PASSWORD) == "refused", phone.explain()
        assert verify_results(phone.clients, phone.user)[-1] == "FAIL,remaining=4"
        for _ in range(4):
            assert phone.attempt(WRONG) == "refused", phone.explain()
        assert f"{phone.user}: LOCKED since " in status(phone.clients, phone.user)
        # The pattern locked: still never the password, by default.
        verified = verify_lines(phone.clients, phone.user)
        assert phone.attempt(DIGITS_PASSWORD) == "refused", \
            "the password of dots unlocked with the default stack\n" + phone.explain()
        assert verify_lines(phone.clients, phone.user) == verified
        assert phone.faillock() == [], "the entry reached pam_unix and faillock"
        assert password_checks_failed(phone.journal(), phone.user) == password_checks_failed(journal, phone.user), \
            "the entry reached pam_unix"
        # digit_passwords=phosh: with the pattern locked, the entry is the password.
        phone.system.ok(f"cat > {PAM_FILE}", input=phosh_stack(f"digit_passwords={SERVICE}"))
        assert phone.attempt(DIGITS_PASSWORD) == "unlocked", phone.explain()
        figure("phosh digits password unlock (digit_passwords, pattern locked)",
               f"{phone.elapsed:.2f} s from Return to unlocked")
        assert verify_lines(phone.clients, phone.user) == verified, "the password reached the daemon"
    finally:
        phone.system.ok("chpasswd", input=f"{phone.user}:{PASSWORD}\n")
