// SPDX-License-Identifier: Apache-2.0
import CXKBCommon
import PatternLockScreenKeymap
import Testing

@testable import PatternLockScreen

/// A keymap compiled by xkbcommon from xkb-data, as a compositor compiles it.
func compiledKeymap(_ layout: String) -> OpaquePointer? {
    guard let context = xkb_context_new(XKB_CONTEXT_NO_FLAGS) else { return nil }
    defer { xkb_context_unref(context) }
    return layout.withCString { name in
        var names = xkb_rule_names(rules: nil, model: nil, layout: name, variant: nil, options: nil)
        return xkb_keymap_new_from_names(context, &names, XKB_KEYMAP_COMPILE_NO_FLAGS)
    }
}

func string(_ t: KeyText) -> String { t.withBytes { String(decoding: $0, as: UTF8.self) } }

@Suite("The on-screen keyboard: its keys against xkbcommon, its modifiers, where its keys go")
struct OnScreenKeyboardTests {
    /// What xkbcommon's own tables say a key types at a level: the keysym of that
    /// level, as UTF-8 (nothing for a dead key or a control character).
    static func expected(_ km: OpaquePointer, _ code: UInt32, level: UInt32, upper: Bool = false) -> String {
        var syms: UnsafePointer<xkb_keysym_t>?
        guard xkb_keymap_key_get_syms_by_level(km, code, 0, level, &syms) == 1, var sym = syms?[0] else { return "" }
        if upper { sym = xkb_keysym_to_upper(sym) }
        var buf = [CChar](repeating: 0, count: 16)
        let n = xkb_keysym_to_utf8(sym, &buf, 16)
        guard n > 1, let first = buf.first, UInt8(bitPattern: first) >= 0x20, UInt8(bitPattern: first) != 0x7F else {
            return ""
        }
        return String(decoding: buf[..<Int(n - 1)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test(
        "every key shows and types at each level exactly what xkbcommon's tables give that keycode",
        arguments: ["us", "de", "fr"])
    func everyKeyMatchesXKB(layout: String) throws {
        let km = try #require(compiledKeymap(layout))
        defer { xkb_keymap_unref(km) }
        let keymap = XKBKeymap.read(km, group: 0)
        let shift = XKBKeymap.modifierMask(km, XKB_MOD_NAME_SHIFT)
        let caps = XKBKeymap.modifierMask(km, XKB_MOD_NAME_CAPS)
        let altGr = XKBKeymap.modifierMask(km, XKBKeymap.levelThreeModifier)
        var checked = 0
        for code in KeyboardKeymap.Code.all {
            for level in 0..<xkb_keymap_num_levels_for_key(km, code, 0) {
                var masks = [xkb_mod_mask_t](repeating: 0, count: 16)
                let n = xkb_keymap_key_get_mods_for_level(km, code, 0, level, &masks, 16)
                for mask in masks.prefix(n) {
                    // The combinations the on-screen keyboard can hold: Shift and
                    // Caps Lock are one key's states, never both; Caps Lock is for
                    // letters, so with AltGr the third level is typed as it is.
                    guard mask & ~(shift | caps | altGr) == 0, mask & caps == 0 || mask & (shift | altGr) == 0 else {
                        continue
                    }
                    var kb = OnScreenKeyboard(keymap: keymap)
                    if mask & shift != 0 { _ = kb.tap(.shift) }
                    if mask & caps != 0 { _ = kb.tap(.shift); _ = kb.tap(.shift) }
                    if mask & altGr != 0 { _ = kb.tap(.altGr) }
                    // Under Caps Lock xkbcommon capitalises what a key whose type
                    // does not use Lock types: either spelling is xkbcommon's.
                    var wants = [Self.expected(km, code, level: level)]
                    if mask & caps != 0 { wants.append(Self.expected(km, code, level: level, upper: true)) }
                    let where_ = "\(layout) keycode \(code) level \(level) mask \(mask)"
                    if code != KeyboardKeymap.Code.space {
                        #expect(wants.contains(kb.label(.character(code))), "\(where_): \(wants)")
                    }
                    let typed = kb.tap(.character(code))
                    #expect(
                        wants.contains { typed == ($0.isEmpty ? nil : .text(KeyText(Array($0.utf8)))) }, "\(where_): \(wants)")
                    checked += 1
                }
            }
        }
        #expect(checked > 100)
    }

    @Test("the German and French keymaps: the characters their users type where they type them")
    func germanAndFrenchKeys() throws {
        let de = try #require(compiledKeymap("de"))
        defer { xkb_keymap_unref(de) }
        var kb = OnScreenKeyboard(keymap: XKBKeymap.read(de, group: 0))
        #expect(kb.keymap.hasAltGr)
        #expect(kb.tap(.character(29)) == .text(KeyText(Array("z".utf8))))  // AD06: z on QWERTZ
        #expect(kb.tap(.character(48)) == .text(KeyText(Array("ä".utf8))))  // AC11
        _ = kb.tap(.altGr)
        #expect(kb.tap(.character(24)) == .text(KeyText(Array("@".utf8))))  // AltGr+Q
        let fr = try #require(compiledKeymap("fr"))
        defer { xkb_keymap_unref(fr) }
        kb = OnScreenKeyboard(keymap: XKBKeymap.read(fr, group: 0))
        #expect(kb.tap(.character(11)) == .text(KeyText(Array("é".utf8))))  // AE02
        _ = kb.tap(.shift)
        #expect(kb.tap(.character(11)) == .text(KeyText(Array("2".utf8))))
        _ = kb.tap(.shift)
        #expect(kb.tap(.character(58)) == .text(KeyText(Array("?".utf8))))  // AB07: , ?
    }

    static func keymap() -> KeyboardKeymap {
        var texts: [UInt32: [KeyText]] = [:]
        for code in KeyboardKeymap.Code.all {
            texts[code] = KeyLevel.combinations.map { level in
                let base = UInt8(0x61 + Int(code % 26))
                if level.contains(.altGr) { return KeyText([UInt8(0x30 + Int(code % 10))]) }
                return KeyText([level.contains(.shift) || level.contains(.caps) ? base - 0x20 : base])
            }
        }
        return KeyboardKeymap(texts: texts, hasAltGr: true, groupNames: ["A", "B"])
    }

    @Test("Shift and AltGr let go after one key; Caps stays until tapped again")
    func shiftReleasesAfterOneKey() {
        var kb = OnScreenKeyboard(keymap: Self.keymap())
        #expect(kb.tap(.shift) == nil)
        #expect(kb.level == .shift && kb.isHeld(.shift))
        #expect(kb.tap(.character(24)) == .text([0x61 + 24 - 0x20]))
        #expect(kb.level == [] && !kb.isHeld(.shift))
        #expect(kb.tap(.character(24)) == .text([0x61 + 24]))
        _ = kb.tap(.shift)
        _ = kb.tap(.shift)
        #expect(kb.label(.shift) == "Caps" && kb.level == .caps)
        #expect(kb.tap(.character(24)) == .text([0x61 + 24 - 0x20]))
        #expect(kb.tap(.character(25)) == .text([0x61 + 25 - 0x20]))
        _ = kb.tap(.shift)
        #expect(kb.level == [])
        _ = kb.tap(.altGr)
        #expect(kb.tap(.character(24)) == .text([0x30 + 4]))
        #expect(kb.level == [])
        #expect(kb.tap(.nextGroup) == .nextGroup)
        #expect(kb.tap(.enter) == .enter && kb.tap(.backspace) == .backspace && kb.tap(.escape) == .escape)
    }

    @Test("the symbols page holds the digit row; its page key goes back to letters")
    func pages() {
        var kb = OnScreenKeyboard(keymap: Self.keymap())
        #expect(kb.rows()[0].first == .character(24))
        #expect(kb.label(.page) == "?123")
        _ = kb.tap(.page)
        #expect(kb.rows()[0] == KeyboardKeymap.Code.digitRow.map { .character($0) })
        #expect(kb.label(.page) == "ABC")
        _ = kb.tap(.page)
        #expect(kb.page == .letters)
    }

    @Test("a point on the keyboard hits exactly one key, up to but not on its right and bottom edges")
    func hitTestingAtTheEdges() {
        let kb = OnScreenKeyboard(keymap: Self.keymap())
        let keys = kb.layout(origin: Point(x: 8, y: 300), width: 784, minimumKey: 30)
        #expect(keys.count > 40)
        for k in keys {
            let r = k.rect
            #expect(OnScreenKeyboard.key(at: Point(x: r.x, y: r.y), in: keys) == k.slot)
            #expect(OnScreenKeyboard.key(at: Point(x: r.x + r.width - 0.001, y: r.y + r.height - 0.001), in: keys) == k.slot)
            let right = OnScreenKeyboard.key(at: Point(x: r.x + r.width, y: r.y + 1), in: keys)
            #expect(right != k.slot)
            let below = OnScreenKeyboard.key(at: Point(x: r.x + 1, y: r.y + r.height), in: keys)
            #expect(below != k.slot)
        }
        let top = keys.map(\.rect.y).min() ?? 0
        #expect(OnScreenKeyboard.key(at: Point(x: 400, y: top - 0.5), in: keys) == nil)
        #expect(OnScreenKeyboard.key(at: Point(x: 7.9, y: top + 5), in: keys) == nil)
    }

    @Test("docked in a band, as both programs show it: 8 pixels in from its sides, the last row on its bottom")
    func dockedAtTheBottomOfABand() {
        let kb = OnScreenKeyboard(keymap: Self.keymap())
        let band = Rect(x: 100, y: 0, width: 600, height: 512)
        let (top, keys) = kb.docked(in: band, minimumKey: 30)
        #expect(!keys.isEmpty)
        #expect(keys == kb.layout(origin: Point(x: 108, y: top), width: 584, minimumKey: 30))
        #expect(abs(top + kb.height(width: 584, minimumKey: 30) - 512) < 0.001)
        #expect(abs((keys.map { $0.rect.y + $0.rect.height }.max() ?? 0) - 512) < 0.001)
        #expect((keys.map(\.rect.x).min() ?? 0) >= 108 - 0.001)
        #expect((keys.map { $0.rect.x + $0.rect.width }.max() ?? 0) <= 692 + 0.001)
        let grid = GridGeometry(centredAcross: 800, top: 40, side: 300)
        #expect(grid == GridGeometry(origin: Point(x: 250, y: 40), side: 300))
    }

    @Test(
        "it fits a portrait phone, a tablet and a 1080p screen with keys of at least the smallest size",
        arguments: [(344.0, 37.0), (784.0, 26.0), (784.0, 30.0), (200.0, 37.0)])
    func fits(width: Double, minimumKey: Double) {
        let kb = OnScreenKeyboard(keymap: Self.keymap())
        let keys = kb.layout(origin: Point(x: 0, y: 0), width: width, minimumKey: minimumKey)
        let height = kb.height(width: width, minimumKey: minimumKey)
        let phone = kb.isPhone(width: width, minimumKey: minimumKey)
        #expect(phone == (width < 12 * minimumKey), "the hardware's top row of 12 keys does not fit: a phone's rows")
        for k in keys {
            #expect(k.rect.x >= -0.001 && k.rect.x + k.rect.width <= width + 0.001, "\(k)")
            #expect(k.rect.y + k.rect.height <= height + 0.001)
            #expect(k.rect.height >= minimumKey)
            // A phone's rows of letters are whole: its keys as wide as its widest row allows.
            if case .character = k.slot {
                let widest = kb.rows(phone: true).map { OnScreenKeyboard.rowUnits($0) }.max() ?? 1
                #expect(k.rect.width >= (phone ? width / widest : minimumKey) - 0.001, "\(k) at \(width)")
            }
        }
        // Every key of the page is there once.
        #expect(keys.count == kb.rows(phone: phone).joined().count)
    }

    @Test(
        "on a phone the letters are a row each, in the keymap's own places; the symbols page has the rest",
        arguments: [
            ("us", ["qwertyuiop", "asdfghjkl", "zxcvbnm"]),
            ("de", ["qwertzuiopü", "asdfghjklöä", "yxcvbnm"]),
            ("fr", ["azertyuiop", "qsdfghjklmù", "wxcvbn"]),
        ])
    func phoneRows(layout: String, letters: [String]) throws {
        let km = try #require(compiledKeymap(layout))
        defer { xkb_keymap_unref(km) }
        var kb = OnScreenKeyboard(keymap: XKBKeymap.read(km, group: 0))
        #expect(kb.isPhone(width: 360, minimumKey: 37))
        let rows = kb.rows(phone: true)
        #expect(rows.count == 4)
        let labels = rows[0...2].map { row in
            row.compactMap { slot -> String? in if case .character = slot { kb.label(slot) } else { nil } }.joined()
        }
        #expect(labels == letters)
        #expect(rows[2].first == .shift && rows[2].last == .backspace)
        // Laid out at a phone's width: the rows of letters are not split.
        let placed = kb.layout(origin: Point(x: 0, y: 0), width: 360, minimumKey: 37)
        #expect(Set(placed.map { $0.rect.y }).count == 4)
        // Every key the hardware's rows type is on one page or the other, once.
        let code = KeyboardKeymap.Code.self
        let letterKeys = rows.joined().filter { if case .character = $0 { true } else { false } }
        _ = kb.tap(.page)
        let symbolKeys = kb.rows(phone: true).joined().filter { if case .character = $0 { true } else { false } }
        let typing = (code.topRow + code.homeRow + code.bottomRow + code.digitRow + code.digitRowRest + [code.space])
            .filter { kb.keymap.typesSomething($0) }.map { KeySlot.character($0) }
        #expect(Set(letterKeys).union(symbolKeys) == Set(typing))
        #expect(Set(letterKeys).intersection(symbolKeys) == [.character(code.space)])
    }

    @Test("a keymap of two groups: the keyboard shows the first, its group key names the second, which reads the second's keys")
    func twoGroups() throws {
        let km = try #require(compiledKeymap("us,de"))
        defer { xkb_keymap_unref(km) }
        var kb = OnScreenKeyboard(keymap: XKBKeymap.read(km, group: 0))
        #expect(kb.keymap.groupNames.count == 2)
        #expect(kb.rows().last?.contains(.nextGroup) == true)
        #expect(kb.label(.nextGroup) == kb.keymap.groupNames[1])
        #expect(kb.label(.character(29)) == "y")  // AD06 on us
        #expect(kb.tap(.nextGroup) == .nextGroup)
        kb.keymap = XKBKeymap.read(km, group: 1)
        #expect(kb.label(.character(29)) == "z" && kb.label(.character(48)) == "ä")
        #expect(kb.label(.nextGroup) == kb.keymap.groupNames[0])
        // One group: no group key.
        let us = try #require(compiledKeymap("us"))
        defer { xkb_keymap_unref(us) }
        #expect(OnScreenKeyboard(keymap: XKBKeymap.read(us, group: 0)).rows().last?.contains(.nextGroup) == false)
    }
}
