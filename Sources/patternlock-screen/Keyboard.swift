// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen
import PatternLockScreenKeymap

/// The hardware keyboard, read through xkbcommon.
extension App {
    // MARK: Keyboard (xkbcommon, with whatever keymap the compositor sends, at any time)

    func keymap(format: UInt32, fd: Int32, size: UInt32) {
        guard let xkbContext else {
            close(fd)
            return
        }
        guard let (km, st) = XKBKeymap.compile(xkbContext, format: format, fd: fd, size: size) else { return }
        if let s = xkbState { xkb_state_unref(s) }
        if let k = xkbKeymap { xkb_keymap_unref(k) }
        xkbKeymap = km
        xkbState = st
        state.keyboard.keymap = screenKeymap.use(km)
        invalidateAll()
    }

    /// Before the on-screen keyboard is drawn (and so before a tap can hit it):
    /// the system's default keymap when the compositor has sent none. Not at
    /// start: a compositor with a keyboard sends its own at once, and a keymap
    /// compiled for nothing costs its memory for the locker's whole life.
    func ensureScreenKeymap() {
        guard state.showsKeyboard, let xkbContext, let shown = screenKeymap.fallback(xkbContext) else { return }
        state.keyboard.keymap = shown
    }

    /// The on-screen keyboard shows the keymap's next group (the hardware
    /// keyboard's group is the compositor's and stays).
    func nextKeyboardGroup() {
        guard let shown = screenKeymap.next(after: state.keyboard.keymap.group) else { return }
        state.keyboard.keymap = shown
        invalidateAll()
    }

    func modifiers(_ depressed: UInt32, _ latched: UInt32, _ locked: UInt32, _ group: UInt32) {
        guard let xkbState else { return }
        xkb_state_update_mask(xkbState, depressed, latched, locked, 0, 0, group)
        // The on-screen keyboard follows a group switched on the hardware keyboard.
        if let shown = screenKeymap.following(group, shown: state.keyboard.keymap.group) {
            state.keyboard.keymap = shown
            invalidateAll()
        }
    }

    func key(_ code: UInt32) {
        guard let xkbState else { return }
        guard let k = XKBKeymap.key(xkbState, code + 8) else { return }
        ensureAttempt()
        let effects = state.key(k)
        invalidateAll()
        run(effects)
    }
}
