// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import CXKBCommon
import Glibc
import PatternLockScreen

/// The on-screen keyboard's edge to xkbcommon: what each key it draws types in a
/// keymap, read as the hardware keyboard types it (an xkb_state with Shift,
/// AltGr and Caps Lock set), so that a password typed on the hardware can be
/// tapped on the screen.
public enum XKBKeymap {
    /// What the keys of `OnScreenKeyboard` type in `group` of `keymap`.
    public static func read(_ keymap: OpaquePointer, group: Int) -> KeyboardKeymap {
        let groups = Int(xkb_keymap_num_layouts(keymap))
        let names = (0..<groups).map { i -> String in
            guard let n = xkb_keymap_layout_get_name(keymap, xkb_layout_index_t(i)) else { return "\(i + 1)" }
            return String(cString: n)
        }
        let active = groups > 0 ? min(max(0, group), groups - 1) : 0
        guard let state = xkb_state_new(keymap) else {
            return KeyboardKeymap(texts: [:], hasAltGr: false, groupNames: names, group: active)
        }
        defer { xkb_state_unref(state) }
        let shift = modifierMask(keymap, XKB_MOD_NAME_SHIFT)
        let caps = modifierMask(keymap, XKB_MOD_NAME_CAPS)
        let altGr = modifierMask(keymap, levelThreeModifier)
        var texts: [UInt32: [KeyText]] = [:]
        for code in KeyboardKeymap.Code.all { texts[code] = [] }
        for level in KeyLevel.combinations {
            var depressed: UInt32 = 0
            if level.contains(.shift) { depressed |= shift }
            if level.contains(.altGr) { depressed |= altGr }
            let locked: UInt32 = level.contains(.caps) ? caps : 0
            xkb_state_update_mask(state, depressed, 0, locked, 0, 0, xkb_layout_index_t(active))
            for code in KeyboardKeymap.Code.all {
                texts[code, default: []].append(text(state, code))
            }
        }
        let hasAltGr =
            altGr != 0
            && KeyboardKeymap.Code.all.contains { code in
                guard let t = texts[code] else { return false }
                let third = t[KeyLevel.altGr.rawValue]
                return third.count > 0 && third != t[0] && third != t[KeyLevel.shift.rawValue]
            }
        return KeyboardKeymap(texts: texts, hasAltGr: hasAltGr, groupNames: names, group: active)
    }

    /// The real modifier xkeyboard-config's ISO_Level3_Shift (AltGr) sets.
    public static let levelThreeModifier = "Mod5"

    /// The mask of the modifier named `name` in `keymap`, 0 when it has none.
    public static func modifierMask(_ keymap: OpaquePointer, _ name: String) -> UInt32 {
        let i = xkb_keymap_mod_get_index(keymap, name)
        return i == XKB_MOD_INVALID || i >= 32 ? 0 : 1 << i
    }

    /// The keymap a compositor sent (wl_keyboard.keymap: its fd, which is
    /// closed, and size) compiled, with a fresh state; nil for a format other
    /// than XKB v1 or a keymap xkbcommon refuses.
    public static func compile(
        _ context: OpaquePointer, format: UInt32, fd: Int32, size: UInt32
    ) -> (keymap: OpaquePointer, state: OpaquePointer)? {
        defer { close(fd) }
        guard format == 1 else { return nil }  // WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1
        guard let map = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else { return nil }
        defer { munmap(map, Int(size)) }
        let text = map.assumingMemoryBound(to: CChar.self)
        guard
            let km = xkb_keymap_new_from_buffer(
                context, text, strnlen(text, Int(size)), XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS)
        else { return nil }
        guard let st = xkb_state_new(km) else {
            xkb_keymap_unref(km)
            return nil
        }
        return (km, st)
    }

    /// What a press of the hardware key `keycode` is, as the lock screen and the
    /// setup window read it: Enter, Backspace, Escape, a digit 1–9 (the top row,
    /// or the numeric keypad with or without NumLock), or the text it types.
    public static func key(_ state: OpaquePointer, _ keycode: UInt32) -> Key? {
        let sym = xkb_state_key_get_one_sym(state, keycode)
        switch sym {
        case 0xFF0D, 0xFF8D: return .enter  // Return, KP_Enter
        case 0xFF08: return .backspace
        case 0xFF1B: return .escape
        case 0xFFB1...0xFFB9: return .digit(Int(sym - 0xFFB0), text: [UInt8(sym - 0xFFB0) + 0x30])  // KP_1…KP_9
        // The keypad without NumLock: KP_End, KP_Down, KP_Next, KP_Left, KP_Begin,
        // KP_Right, KP_Home, KP_Up, KP_Prior are the keys 1…9.
        case 0xFF9C: return .digit(1, text: [0x31])
        case 0xFF99: return .digit(2, text: [0x32])
        case 0xFF9B: return .digit(3, text: [0x33])
        case 0xFF96: return .digit(4, text: [0x34])
        case 0xFF9D: return .digit(5, text: [0x35])
        case 0xFF98: return .digit(6, text: [0x36])
        case 0xFF95: return .digit(7, text: [0x37])
        case 0xFF97: return .digit(8, text: [0x38])
        case 0xFF9A: return .digit(9, text: [0x39])
        default:
            let text = Self.text(state, keycode)
            guard let first = text.first else { return nil }
            return text.count == 1 && first >= 0x31 && first <= 0x39 ? .digit(Int(first - 0x30), text: text) : .text(text)
        }
    }

    /// The UTF-8 one key types in `state`: for the on-screen keyboard's labels
    /// and for the hardware keyboard's keys alike; empty for nothing, a dead key
    /// or a control character. It goes from a stack buffer, wiped, into an
    /// inline KeyText: no heap copy of a password's character.
    public static func text(_ state: OpaquePointer, _ code: UInt32) -> KeyText {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buf -> KeyText in
            guard let base = buf.baseAddress else { return [] }
            buf.initialize(repeating: 0)
            defer { pl_wipe(base, buf.count) }
            let n = Int(xkb_state_key_get_utf8(state, code, base, buf.count))
            guard n > 0 && n <= KeyText.capacity else { return [] }
            let text = KeyText(buf[..<n].lazy.map { UInt8(bitPattern: $0) })
            guard let first = text.first, first >= 0x20, first != 0x7F else { return [] }
            return text
        }
    }

    /// A keymap compiled from the system's defaults (XKB_DEFAULT_LAYOUT and the
    /// rest, else us): what the on-screen keyboard shows on a seat with no
    /// hardware keyboard, whose compositor sends no keymap.
    public static func systemDefault(_ context: OpaquePointer) -> OpaquePointer? {
        xkb_keymap_new_from_names(context, nil, XKB_KEYMAP_COMPILE_NO_FLAGS)
    }
}
