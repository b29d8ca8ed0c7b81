# SPDX-License-Identifier: Apache-2.0
"""The lock screen, patternlock-screen, driven by touch. No compositor on these
machines can inject touch (no /dev/uinput, no DRM: docs in
Tests/wayland-server/README.md), so the REAL locker runs on
build/pl-test-compositor, a minimal Wayland server of our own that implements
ext-session-lock-v1 and sends wl_touch events from its control channel. The
locker runs as a throwaway user with the real module and the real daemon, in a
private mount namespace whose /etc/pam.d holds only its service (the
documented common-auth with the test daemon's socket). The dots are found on
the locker's first screenshot, never assumed.

Screenshots land in build/screen-touch/."""
import os
import pathlib
import pwd
import re
import shutil
import signal
import subprocess
import time

import pytest


from harness.pam_support import RIGHT, failures  # noqa: E402
from harness.screen_support import (LOCKER, ROOT, SERVICE, Locker,  # noqa: E402
                            build_pam_module, find_grid, ocr, processes_of, write_pam_d)
from harness.screen_touch import (RIGHT_DRAG, SHOTS, STEPS, WRONG_DRAG, drag_on, locked_by,  # noqa: E402
                                  private_binaries, unlocked, verify_results)




def test_a_touch_drag_through_the_right_pattern_unlocks(screens, live, enrolled):
    s = screens("right")
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


@pytest.mark.parametrize("one_prompt", [True, False], ids=["one_prompt", "two_prompts"])
@pytest.mark.parametrize("form", ["nogrid", "grid=full quiet", "grid=full", ""],
                         ids=["nogrid", "full-quiet", "full", "default"])
def test_under_a_numpad_module_a_drawn_pattern_unlocks_whatever_its_prompt_form(
        screens, live, enrolled, form, one_prompt):
    # The module reads its answer in its layout's keys: the screen must write the
    # drawn dots as the keys they sit on, or every pattern is wrong and counted.
    # It learns the layout from the prompt, whatever grid the module shows or
    # leaves out (nogrid, quiet: no grid picture to read it from).
    name = f"numpad-{form.replace(' ', '-').replace('=', '-') or 'default'}-{'one' if one_prompt else 'two'}"
    s = screens(name, module_options=f"layout=numpad {form}".rstrip(), one_prompt=one_prompt)
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]
    assert failures(live, enrolled) == 0


def locker_processes(user, pam_child):
    """The pids of the lockers (`pam_child` False) or of their PAM children
    (True) running as `user`."""
    found = []
    for pid in processes_of(pwd.getpwnam(user).pw_uid):
        try:
            argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError):
            continue
        if argv[0].endswith(LOCKER.name.encode()) and (b"--pam-child" in argv) == pam_child:
            found.append(pid)
    return found


def pam_children(user):
    """The pids of the locker's PAM children running as `user`."""
    return locker_processes(user, pam_child=True)


def test_the_pam_childs_conversation_socket_is_not_inherited_by_what_pam_runs(screens, live, enrolled):
    # fd 3 is the conversation: a program a PAM module runs (pam_exec, a
    # helper) must not get it across exec, or it could write a result.
    s = screens("cloexec")
    children = pam_children(enrolled)
    assert len(children) == 1, children
    fdinfo = pathlib.Path(f"/proc/{children[0]}/fdinfo/3").read_text()
    flags = int(re.search(r"^flags:\s+(\d+)", fdinfo, re.M).group(1), 8)
    assert "socket:" in os.readlink(f"/proc/{children[0]}/fd/3")
    assert flags & os.O_CLOEXEC, fdinfo
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)


def test_neither_the_locker_nor_its_pam_child_waiting_at_its_prompt_is_dumpable(screens, live, enrolled):
    # With a pipe core_pattern (systemd-coredump, apport) the kernel ignores
    # RLIMIT_CORE: only PR_SET_DUMPABLE 0 keeps the password in libpam's and
    # pam_unix's copies out of a core dump, and the user's other processes from
    # ptrace and /proc/PID/mem. The kernel shows it (proc(5)): the files in
    # /proc/PID of a process that is not dumpable belong to root, whatever its
    # uid (/proc/PID itself keeps the process's uid).
    s = screens("dumpable")
    uid = pwd.getpwnam(enrolled).pw_uid
    lockers = locker_processes(enrolled, pam_child=False)
    children = pam_children(enrolled)
    assert len(lockers) == 1 and len(children) == 1, (lockers, children)
    assert s.compositor.state()["state"] == "locked"
    for pid in lockers + children:
        assert re.search(rf"^Uid:\s+{uid}\s", pathlib.Path(f"/proc/{pid}/status").read_text(), re.M)
        assert os.stat(f"/proc/{pid}/status").st_uid == 0, f"process {pid} ({'PAM child' if pid in children else 'locker'}) is dumpable"
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)


def test_a_wrong_touch_drag_turns_the_path_red_and_shows_the_attempts_left(screens, live, enrolled):
    s = screens("wrong")
    mark = len(s.locker.lines)
    commits = s.drag(WRONG_DRAG)
    # The module's message; the attempt ends there.
    s.locker.debug(r"^message Wrong pattern .* 4 attempts left\.$", start=mark)
    # Every frame for the next seconds: the red lasts about one.
    frames = []
    deadline = time.monotonic() + 3
    while (left := deadline - time.monotonic()) > 0:
        more = s.compositor.wait_frame(commits, int(left * 1000) + 1)
        if more is None:
            break
        commits = more
        frames.append(s.shot(f"after-{len(frames)}")[0])
    reds = [s.grid.red(image) for image in frames]
    assert set(WRONG_DRAG) in reds, f"no frame shows exactly the drawn dots red: {reds}"
    red_frame = frames[reds.index(set(WRONG_DRAG))]
    shutil.copy(red_frame.path, SHOTS / "wrong-red.png")
    texts = []
    for image in frames:  # OCR takes seconds a frame: stop at the first that says it
        texts.append(ocr(image.path))
        if re.search(r"\b4 attempts left\b", texts[-1]):
            break
    else:
        raise AssertionError(f"no frame says '4 attempts left' to OCR: {texts}")
    assert s.locker.proc.poll() is None
    assert s.compositor.state()["state"] == "locked"
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "FAIL,remaining=4")]


def test_a_touch_cancel_clears_the_path(screens, live, enrolled):
    s = screens("cancel")
    mark = len(s.locker.lines)
    s.drag([1, 2], lift=False)
    commits = s.glide(0, s.grid.at(2), s.grid.between(2, 3, 0.3))
    drawing = s.settled_shot(commits, "drawing")
    assert s.grid.lit(drawing, s.idle) == {1, 2}
    commits = s.touch("cancel")
    cleared = s.settled_shot(commits, "cancelled")
    assert s.grid.lit(cleared, s.idle) == set()
    assert s.locker.said(r"^(attempt|too short)", start=mark) == []
    assert verify_results(live, enrolled) == []
    # Nothing was counted or left behind: the right pattern still unlocks.
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


def test_a_second_finger_neither_lights_dots_nor_ends_the_path(screens, live, enrolled):
    s = screens("fingers")
    mark = len(s.locker.lines)
    x, y = s.grid.at(1)
    s.touch(f"down 0 {x:.2f} {y:.2f}")
    commits = s.glide(0, s.grid.at(1), s.grid.between(1, 2, 0.4))
    assert s.grid.lit(s.settled_shot(commits, "one-finger"), s.idle) == {1}
    s.drag([5, 6, 9, 8], finger=1)  # down, motion over three dots, up
    # A small move of the first finger: the frame drawn after it comes after
    # every event of the second.
    commits = s.glide(0, s.grid.between(1, 2, 0.4), s.grid.between(1, 2, 0.45))
    assert s.grid.lit(s.settled_shot(commits, "second-finger"), s.idle) == {1}
    assert s.locker.said(r"^(attempt|too short)", start=mark) == []
    # The first finger's path goes on through the right pattern and unlocks.
    s.glide(0, s.grid.between(1, 2, 0.45), s.grid.at(2))
    for a, b in zip(RIGHT_DRAG[1:], RIGHT_DRAG[2:]):
        s.glide(0, s.grid.at(a), s.grid.at(b))
    s.touch("up 0")
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


@pytest.mark.parametrize("scale", [1, 2])
def test_the_buffer_follows_the_output_scale_and_touch_lands_on_the_dots(screens, live, enrolled, scale):
    # The same 800x600 of surface at either scale: a scale-2 output has twice
    # the pixels each way, and so must the locker's buffer.
    s = screens(f"scale{scale}", mode=f"{800 * scale}x{600 * scale}", scale=scale)
    assert (s.fields["width"], s.fields["height"], s.fields["scale"]) == \
        (str(800 * scale), str(600 * scale), str(scale))
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


def test_a_killed_locker_leaves_the_session_locked_until_a_new_one_unlocks(screens, live, enrolled):
    s = screens("killed")
    x, y = s.grid.at(1)
    s.touch(f"down 0 {x:.2f} {y:.2f}")  # killed mid-gesture
    s.locker.proc.send_signal(signal.SIGKILL)
    s.locker.proc.wait(10)
    deadline = time.monotonic() + 10
    while (state := s.compositor.state())["state"] == "locked" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state["state"] == "abandoned" and state["unlocks"] == "0", state
    time.sleep(1)
    assert s.compositor.state()["state"] == "abandoned"
    # A new locker takes over the abandoned lock and unlocks it with the pattern.
    s.locker = s.start_locker()
    s.idle = s.shot("new-idle")[0]
    s.grid = find_grid(s.idle, 1)
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


def test_a_second_locker_is_refused_and_the_first_keeps_the_lock(screens, live, enrolled):
    s = screens("second")
    second = Locker(s.user, s.compositor, s.pam_d, s.binary)
    s.lockers.append(second)
    assert second.wait(30) != 0, "a second locker exited 0 while the first held the lock"
    state = s.compositor.state()
    assert state["state"] == "locked" and state["finished"] == "1", state
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)


def test_a_touch_drag_of_three_dots_is_too_short_and_not_counted(screens, live, enrolled):
    s = screens("short")
    mark = len(s.locker.lines)
    commits = s.drag([1, 2, 3])
    s.locker.debug(r"^too short$", start=mark)
    shown = s.settled_shot(commits, "too-short")
    assert "Connect at least 4 dots" in ocr(shown.path)
    assert s.locker.said(r"^attempt", start=mark) == []
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


def test_after_a_wrong_pattern_the_grid_comes_back_at_once_and_the_right_pattern_unlocks(screens, live, enrolled):
    # A wrong pattern ends the attempt (the profile's auth_err=die): no
    # password prompt follows, the next attempt asks the pattern again, so a
    # touch screen with no keyboard is never left in front of a password field.
    s = screens("grid-again")
    mark = len(s.locker.lines)
    s.drag(WRONG_DRAG)
    failed = s.locker.debug(r"^attempt result=failure$", start=mark)
    s.locker.debug(r"^prompt kind=pattern$", start=failed)
    assert not s.locker.said(r"^prompt kind=password$", start=mark), "\n".join(s.locker.lines[mark:])
    s.quiet(1500)  # the red clears after about a second
    again = s.shot("grid-again")[0]
    assert s.grid.lit(again, s.idle) == set(), "the grid, clear, for the next pattern"
    assert "Password" not in ocr(again.path)
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 2) == [("patternlock-screen", "FAIL,remaining=4"),
                                                 ("patternlock-screen", "OK")]


def test_an_attempt_that_fails_asking_nothing_waits_for_the_user_before_the_next(
        compositor_built, user, shared_tmp, tmp_path):
    # A stack that refuses before any prompt (as pam_faillock's preauth does for
    # a locked user): the locker must not spawn PAM children in a tight loop.
    binaries = shared_tmp / "bin"
    binaries.mkdir(mode=0o755)
    binary = shutil.copy2(LOCKER, binaries / LOCKER.name)
    pam_d = shared_tmp / "pam.d-deny"
    pam_d.mkdir(mode=0o755)
    (pam_d / SERVICE).write_text("auth required pam_deny.so\naccount required pam_permit.so\n")
    with locked_by(user, pam_d, binary, log=tmp_path / "deny-compositor.log") as (compositor, locker):
        locker.debug(r"^attempt result=failure$")
        time.sleep(2)
        assert len(locker.said(r"^attempt result=failure$")) == 1, "\n".join(locker.lines)
        # A tap is the user: one more attempt, and again only one.
        mark = len(locker.lines)
        compositor.ok("touch down 0 5 5")
        compositor.ok("touch up 0")
        locker.debug(r"^attempt result=failure$", start=mark)
        time.sleep(1)
        assert len(locker.said(r"^attempt result=failure$")) == 2, "\n".join(locker.lines)
        assert locker.proc.poll() is None
        assert compositor.state()["state"] == "locked"


def test_a_pam_module_that_hangs_can_be_left_with_a_tap_and_the_pattern_then_unlocks(
        compositor_built, pam_module, live, enrolled, shared_tmp, tmp_path):
    # A module before ours that hangs the first time it runs (pam_exec of a
    # script that sleeps): the drawn pattern waits for a prompt that never comes.
    # After LockScreen.stuckSeconds the screen says so, a tap starts a new
    # attempt, and the pattern drawn then unlocks.
    binaries, binary, module, marks = private_binaries(shared_tmp, pam_module, enrolled)
    hang = binaries / "hang-once"
    hang.write_text(f"#!/bin/sh\nmkdir {marks}/hung 2>/dev/null && exec sleep 600\nexit 0\n")
    hang.chmod(0o755)
    pam_d = write_pam_d(shared_tmp, module, live)
    service = pam_d / SERVICE
    service.write_text(f"auth optional pam_exec.so quiet {hang}\n" + service.read_text())
    with locked_by(enrolled, pam_d, binary, log=tmp_path / "hang-compositor.log") as (compositor, locker):
        compositor.settle(0)
        grid = find_grid(compositor.screenshot(SHOTS / "hang-idle.png")[0], 1)
        drag_on(compositor, grid, RIGHT_DRAG)
        locker.debug(r"^no answer from PAM for \d+ s$", timeout=20)
        time.sleep(0.3)
        assert "Tap or press Escape to start again" in ocr(compositor.screenshot(SHOTS / "hang-stuck.png")[0].path)
        mark = len(locker.lines)
        x, y = grid.at(5)
        compositor.ok(f"touch down 0 {x:.2f} {y:.2f}")
        compositor.ok("touch up 0")
        locker.debug(r"^attempt abandoned$", start=mark)
        locker.debug(r"^prompt kind=pattern$", start=mark)
        drag_on(compositor, grid, RIGHT_DRAG)
        assert locker.wait(30) == 0, "\n".join(locker.lines)
        assert compositor.state()["state"] == "unlocked"
        assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


def test_the_pattern_typed_on_the_keyboard_unlocks(screens, live, enrolled):
    # The keyboard edge: xkbcommon's text for each key, into the screen's state.
    s = screens("typed")
    s.compositor.ok("type " + RIGHT)
    s.compositor.ok("key Return")
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


def test_a_stack_that_says_yes_without_asking_unlocks_only_at_the_users_tap(
        compositor_built, user, shared_tmp, tmp_path):
    # As an empty password under pam_unix nullok: PAM succeeds at lock time with
    # nobody at the machine. The session stays locked until a person acts.
    binaries = shared_tmp / "bin"
    binaries.mkdir(mode=0o755)
    binary = shutil.copy2(LOCKER, binaries / LOCKER.name)
    pam_d = shared_tmp / "pam.d-permit"
    pam_d.mkdir(mode=0o755)
    (pam_d / SERVICE).write_text("auth required pam_permit.so\naccount required pam_permit.so\n")
    with locked_by(user, pam_d, binary, log=tmp_path / "permit-compositor.log") as (compositor, locker):
        locker.debug(r"^success held until the user acts$")
        time.sleep(2)
        assert locker.proc.poll() is None and compositor.state()["state"] == "locked"
        assert "Tap or press a key to unlock" in ocr(compositor.screenshot(SHOTS / "held.png")[0].path)
        compositor.ok("touch down 0 5 5")
        assert locker.wait(10) == 0, "\n".join(locker.lines)
        assert compositor.state()["state"] == "unlocked"


def exit_once_stack(shared_tmp, pam_module, enrolled, live, *options):
    """The documented stack behind a first module, the tests' pam_exit_once,
    that says yes without asking the first time and leaves an exit handler
    (exit 3; with `hang`, never returning): the locker binary and the pam.d."""
    binaries, binary, module, marks = private_binaries(shared_tmp, pam_module, enrolled)
    exit_once = build_pam_module("pam_exit_once", binaries)
    pam_d = write_pam_d(shared_tmp, module, live)
    service = pam_d / SERVICE
    line = " ".join(["auth [success=done default=ignore]", str(exit_once), f"mark={marks}/ran", *options])
    service.write_text(line + "\n" + service.read_text())
    return binary, pam_d


def test_a_child_that_says_yes_but_exits_non_zero_never_unlocks_and_the_pattern_then_does(
        compositor_built, pam_module, live, enrolled, shared_tmp, tmp_path):
    # A module before ours says yes without asking and makes the PAM child exit
    # 3 after it sent that success (an exit handler: as a module that calls
    # exit() would). The user's tap must not unlock; and the screen must not
    # wedge on that held success: the right pattern drawn next unlocks.
    binary, pam_d = exit_once_stack(shared_tmp, pam_module, enrolled, live)
    with locked_by(enrolled, pam_d, binary, log=tmp_path / "exit-compositor.log") as (compositor, locker):
        locker.debug(r"^success held until the user acts$")
        mark = len(locker.lines)
        compositor.ok("touch down 0 5 5")
        compositor.ok("touch up 0")
        locker.debug(r"^the PAM child said success but did not exit 0; not unlocking$", start=mark)
        assert locker.proc.poll() is None and compositor.state()["state"] == "locked"
        # The screen takes the pattern again: a new attempt asks for it at once.
        locker.debug(r"^prompt kind=pattern$", start=mark)
        compositor.settle(0)
        time.sleep(0.3)
        again = compositor.screenshot(SHOTS / "exit-nonzero-again.png")[0]
        assert "Not unlocked" in ocr(again.path)
        grid = find_grid(again, 1)
        drag_on(compositor, grid, RIGHT_DRAG)
        assert locker.wait(30) == 0, "\n".join(locker.lines)
        state = compositor.state()
        assert state["state"] == "unlocked" and state["unlocks"] == "1", state
        assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]


def test_an_expired_account_stays_locked_saying_who_can_renew_it_and_unlocks_once_renewed(screens, live, enrolled):
    # usermod -L -e 1: the password locked, the account expired. The pattern is
    # right (the daemon answers OK) but the account stage, pam_unix's as a login
    # runs it, refuses: the screen stays locked, without red, and says in a
    # whole sentence who can fix it and how. Once an administrator renews the
    # account, the same pattern unlocks: nobody is left behind the lock for good.
    subprocess.run(["usermod", "-L", "-e", "1", enrolled], check=True)
    s = screens("expired", account="pam_unix.so")
    mark = len(s.locker.lines)
    s.drag(RIGHT_DRAG)
    refused = s.locker.debug(r"^attempt result=account refused$", start=mark)
    s.locker.debug(r"^prompt kind=pattern$", start=refused)
    assert not s.locker.said(r"^(attempt result=success|unlocked)$", start=mark)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]
    s.quiet(500)
    shown = s.shot("expired-refused")[0]
    assert s.grid.red(shown) == set()
    text = ocr(shown.path)
    # "renew it" has read as "renew vit" (the wrapped line's edge): the words before it are enough.
    assert "has expired" in text and "administrator can renew" in text, text
    assert s.locker.proc.poll() is None and s.compositor.state()["state"] == "locked"
    subprocess.run(["chage", "-E", "-1", enrolled], check=True)
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 2) == [("patternlock-screen", "OK"), ("patternlock-screen", "OK")]


def test_a_child_that_says_yes_and_never_exits_cannot_hold_the_screen_a_second_tap_starts_again(
        compositor_built, pam_module, live, enrolled, shared_tmp, tmp_path):
    # A module before ours says yes without asking and leaves an exit handler
    # that never returns: the PAM child sends its success and then hangs. The
    # first tap waits for its exit; a second tap gives up on it, and the right
    # pattern drawn next unlocks.
    binary, pam_d = exit_once_stack(shared_tmp, pam_module, enrolled, live, "hang")
    with locked_by(enrolled, pam_d, binary, log=tmp_path / "never-exits-compositor.log") as (compositor, locker):
        locker.debug(r"^success held until the user acts$")
        mark = len(locker.lines)
        compositor.ok("touch down 0 5 5")
        compositor.ok("touch up 0")
        locker.debug(r"^the PAM child said success; unlocking once it exits 0$", start=mark)
        assert locker.proc.poll() is None and compositor.state()["state"] == "locked"
        compositor.ok("touch down 0 5 5")
        compositor.ok("touch up 0")
        locker.debug(r"^the PAM child said success but did not exit 0; not unlocking$", start=mark)
        locker.debug(r"^prompt kind=pattern$", start=mark)
        assert compositor.state()["state"] == "locked"
        compositor.settle(0)
        grid = find_grid(compositor.screenshot(SHOTS / "hang-again.png")[0], 1)
        drag_on(compositor, grid, RIGHT_DRAG)
        assert locker.wait(30) == 0
        assert compositor.state()["state"] == "unlocked"


def test_a_touchscreen_unplugged_mid_path_ends_the_path_and_one_plugged_back_in_unlocks(screens, live, enrolled):
    """The seat stops offering touch while a finger draws (the test
    compositor's `seat` command): the locker releases its wl_touch and the path
    ends there, unsent; the session stays locked. Plugged back in, the right
    pattern drawn with the new touchscreen unlocks (a path left open would
    have ignored every new finger)."""
    s = screens("seat")
    s.drag([7, 8, 9], lift=False)
    s.quiet()
    assert s.compositor.ok("seat pointer keyboard") == {"caps": "pk"}
    s.quiet()  # the path's end drawn, after the release on the same connection
    assert s.compositor.cmd("touch up 0").startswith("error"), "the locker kept its wl_touch"
    assert s.compositor.state()["state"] == "locked"
    assert s.compositor.ok("seat pointer keyboard touch") == {"caps": "pkt"}
    s.quiet()  # time for the locker to ask for the new wl_touch
    s.drag(RIGHT_DRAG)
    unlocked(s, s.locker)
    assert verify_results(live, enrolled, 1) == [("patternlock-screen", "OK")]
