// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandLock
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
        defer { close(fd) }
        guard format == UInt32(WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue), let xkbContext else { return }
        guard let map = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else { return }
        defer { munmap(map, Int(size)) }
        let text = map.assumingMemoryBound(to: CChar.self)
        let length = strnlen(text, Int(size))
        guard let km = xkb_keymap_new_from_buffer(xkbContext, text, length, XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS),
            let st = xkb_state_new(km)
        else { return }
        if let s = xkbState { xkb_state_unref(s) }
        if let k = xkbKeymap { xkb_keymap_unref(k) }
        xkbKeymap = km
        xkbState = st
        if let k = screenKeymap { xkb_keymap_unref(k) }
        screenKeymap = xkb_keymap_ref(km)
        state.keyboard.keymap = XKBKeymap.read(km, group: 0)
        invalidateAll()
    }

    /// Before the on-screen keyboard is drawn (and so before a tap can hit it):
    /// the system's default keymap when the compositor has sent none. Not at
    /// start: a compositor with a keyboard sends its own at once, and a keymap
    /// compiled for nothing costs its memory for the locker's whole life.
    func ensureScreenKeymap() {
        guard screenKeymap == nil, state.showsKeyboard, let xkbContext,
            let km = XKBKeymap.systemDefault(xkbContext)
        else { return }
        screenKeymap = km
        state.keyboard.keymap = XKBKeymap.read(km, group: 0)
    }

    /// The on-screen keyboard shows the keymap's next group (the hardware
    /// keyboard's group is the compositor's and stays).
    func nextKeyboardGroup() {
        guard let km = screenKeymap else { return }
        let n = max(1, Int(xkb_keymap_num_layouts(km)))
        state.keyboard.keymap = XKBKeymap.read(km, group: (state.keyboard.keymap.group + 1) % n)
        invalidateAll()
    }

    func modifiers(_ depressed: UInt32, _ latched: UInt32, _ locked: UInt32, _ group: UInt32) {
        guard let xkbState else { return }
        xkb_state_update_mask(xkbState, depressed, latched, locked, 0, 0, group)
        // The on-screen keyboard follows a group switched on the hardware keyboard.
        if let km = screenKeymap, Int(group) != state.keyboard.keymap.group, Int(group) < Int(xkb_keymap_num_layouts(km)) {
            state.keyboard.keymap = XKBKeymap.read(km, group: Int(group))
            invalidateAll()
        }
    }

    func key(_ code: UInt32) {
        guard let xkbState else { return }
        let keycode = code + 8
        let sym = xkb_state_key_get_one_sym(xkbState, keycode)
        var k: Key?
        switch sym {
        case 0xFF0D, 0xFF8D: k = .enter  // Return, KP_Enter
        case 0xFF08: k = .backspace
        case 0xFF1B: k = .escape
        case 0xFFB1...0xFFB9: k = .digit(Int(sym - 0xFFB0), text: [UInt8(sym - 0xFFB0) + 0x30])  // KP_1…KP_9
        // The keypad without NumLock: KP_End, KP_Down, KP_Next, KP_Left, KP_Begin,
        // KP_Right, KP_Home, KP_Up, KP_Prior are the keys 1…9.
        case 0xFF9C: k = .digit(1, text: [0x31])
        case 0xFF99: k = .digit(2, text: [0x32])
        case 0xFF9B: k = .digit(3, text: [0x33])
        case 0xFF96: k = .digit(4, text: [0x34])
        case 0xFF9D: k = .digit(5, text: [0x35])
        case 0xFF98: k = .digit(6, text: [0x36])
        case 0xFF95: k = .digit(7, text: [0x37])
        case 0xFF97: k = .digit(8, text: [0x38])
        case 0xFF9A: k = .digit(9, text: [0x39])
        default:
            let text = XKBKeymap.text(xkbState, keycode)
            guard let first = text.first else { break }
            k = text.count == 1 && first >= 0x31 && first <= 0x39 ? .digit(Int(first - 0x30), text: text) : .text(text)
        }
        guard let k else { return }
        ensureAttempt()
        let effects = state.key(k)
        invalidateAll()
        run(effects)
    }
}
