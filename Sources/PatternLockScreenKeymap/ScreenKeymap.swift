// SPDX-License-Identifier: Apache-2.0
import CXKBCommon
import PatternLockScreen

/// The xkb keymap the on-screen keyboard shows, kept by the lock screen and the
/// setup window alike: the compositor's (with the group the hardware keyboard
/// is on, or the next one the layout key asks for), else the system's default
/// on a seat with no keyboard. Each change gives the `KeyboardKeymap` to show.
public final class ScreenKeymap {
    private var keymap: OpaquePointer?

    public init() {}

    deinit { if let keymap { xkb_keymap_unref(keymap) } }

    /// The compositor sent `keymap`: the on-screen keyboard shows its first group.
    public func use(_ keymap: OpaquePointer) -> KeyboardKeymap {
        if let old = self.keymap { xkb_keymap_unref(old) }
        self.keymap = xkb_keymap_ref(keymap)
        return XKBKeymap.read(keymap, group: 0)
    }

    /// Before the keyboard is drawn: the system's default keymap when the
    /// compositor has sent none (nil when one is there, or none compiles). Not
    /// at start: a compositor with a keyboard sends its own at once, and a
    /// keymap compiled for nothing costs its memory for the program's life.
    public func fallback(_ context: OpaquePointer) -> KeyboardKeymap? {
        guard keymap == nil, let km = XKBKeymap.systemDefault(context) else { return nil }
        keymap = km
        return XKBKeymap.read(km, group: 0)
    }

    /// The group after `group` (the on-screen layout key), nil without a keymap.
    public func next(after group: Int) -> KeyboardKeymap? {
        guard let keymap else { return nil }
        let n = max(1, Int(xkb_keymap_num_layouts(keymap)))
        return XKBKeymap.read(keymap, group: (group + 1) % n)
    }

    /// The hardware keyboard is on `group`: the keymap to show, nil when `shown`
    /// is that group already (or the keymap has no such group).
    public func following(_ group: UInt32, shown: Int) -> KeyboardKeymap? {
        guard let keymap, Int(group) != shown, Int(group) < Int(xkb_keymap_num_layouts(keymap)) else { return nil }
        return XKBKeymap.read(keymap, group: Int(group))
    }
}
