// SPDX-License-Identifier: Apache-2.0
import PatternLockScreen
import PatternLockWayland

/// The hardware keyboard's keys and the on-screen keyboard's keymap (the seat
/// reads them through xkbcommon, with whatever keymap the compositor sends).
extension App {
    func screenKeymapChanged(_ keymap: KeyboardKeymap) {
        state.keyboard.keymap = keymap
        invalidateAll()
    }

    var shownKeyboardGroup: Int { state.keyboard.keymap.group }

    /// Before the on-screen keyboard is drawn (and so before a tap can hit it):
    /// the system's default keymap when the compositor has sent none. Not at
    /// start: a compositor with a keyboard sends its own at once, and a keymap
    /// compiled for nothing costs its memory for the locker's whole life.
    func ensureScreenKeymap() {
        guard state.showsKeyboard, let shown = seat.fallbackKeymap() else { return }
        state.keyboard.keymap = shown
    }

    /// The on-screen keyboard shows the keymap's next group (the hardware
    /// keyboard's group is the compositor's and stays).
    func nextKeyboardGroup() {
        guard let shown = seat.nextScreenGroup() else { return }
        state.keyboard.keymap = shown
        invalidateAll()
    }

    func keyPressed(_ k: Key) {
        ensureAttempt()
        let effects = state.key(k)
        invalidateAll()
        run(effects)
    }
}
