// SPDX-License-Identifier: Apache-2.0

/// The modifiers the on-screen keyboard holds for its next key, as a set: the
/// index into a key's texts in `KeyboardKeymap`.
public struct KeyLevel: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let shift = KeyLevel(rawValue: 1)
    public static let altGr = KeyLevel(rawValue: 2)
    /// Caps Lock (xkb's Lock modifier): capitals on letters only, as on the hardware.
    public static let caps = KeyLevel(rawValue: 4)
    /// Every combination, in index order.
    public static let combinations: [KeyLevel] = (0..<8).map { KeyLevel(rawValue: $0) }
}

/// What the compositor's keymap types, as the edge read it through xkbcommon:
/// for each key the on-screen keyboard draws (by xkb keycode), the text the
/// hardware key types under each combination of Shift, AltGr and Caps Lock in
/// the keymap's active group. A dead key (the text is empty) types nothing, on
/// the screen as on the hardware keyboard (the screen reads no compose sequence).
public struct KeyboardKeymap: Sendable {
    /// Eight texts per key, indexed by `KeyLevel.rawValue`.
    public var texts: [UInt32: [KeyText]]
    /// Some key of the keymap types something else at the third level (AltGr).
    public var hasAltGr: Bool
    /// The keymap's groups (layouts) by name, and the one shown.
    public var groupNames: [String]
    public var group: Int

    public init(texts: [UInt32: [KeyText]], hasAltGr: Bool, groupNames: [String] = [], group: Int = 0) {
        self.texts = texts
        self.hasAltGr = hasAltGr
        self.groupNames = groupNames
        self.group = group
    }

    public static let empty = KeyboardKeymap(texts: [:], hasAltGr: false)

    /// What `code` types at `level` (empty when nothing).
    public func text(_ code: UInt32, _ level: KeyLevel) -> KeyText {
        guard let t = texts[code], level.rawValue < t.count else { return [] }
        return t[level.rawValue]
    }

    /// Whether `code` types anything at any level.
    public func typesSomething(_ code: UInt32) -> Bool {
        texts[code]?.contains { $0.count > 0 } ?? false
    }

    /// The xkb keycodes of the keys the on-screen keyboard can draw (evdev + 8),
    /// by row of a pc105 keyboard: what a password may be typed with on the
    /// hardware (the rows of letters, the row of digits, the key left of 1, the
    /// ISO key left of the first letter of the bottom row, the space bar).
    public enum Code {
        /// AD01…AD12 (Q W E R T Y U I O P [ ] on us).
        public static let topRow: [UInt32] = Array(24...35)
        /// AC01…AC11 and BKSL (A … ' \ on us).
        public static let homeRow: [UInt32] = Array(38...48) + [51]
        /// LSGT and AB01…AB10 (< Z … / on us).
        public static let bottomRow: [UInt32] = [94] + Array(52...61)
        /// AE01…AE10 (1 … 0).
        public static let digitRow: [UInt32] = Array(10...19)
        /// TLDE, AE11, AE12 (` - = on us).
        public static let digitRowRest: [UInt32] = [49, 20, 21]
        public static let space: UInt32 = 65
        public static let all: [UInt32] = topRow + homeRow + bottomRow + digitRow + digitRowRest + [space]
    }
}

/// A key of the on-screen keyboard.
public enum KeySlot: Hashable, Sendable {
    /// A key that types what the hardware key of this xkb keycode types.
    case character(UInt32)
    case shift
    case altGr
    /// Letters ⇄ digits and symbols.
    case page
    /// The next group (layout) of the keymap.
    case nextGroup
    case backspace
    case enter
    /// Back to the grid (as Escape on the hardware keyboard).
    case escape
}

/// A key placed on the screen (logical pixels).
public struct PlacedKey: Equatable, Sendable {
    public let slot: KeySlot
    public let rect: Rect
}

/// The keyboard the lock screen draws for touch and pointer: its pages, the
/// modifiers it holds for the next key, where its keys go and which key a point
/// hits. Pure: the edge reads the keymap (`KeyboardKeymap`) and draws.
public struct OnScreenKeyboard: Sendable {
    public enum Page: Sendable { case letters, symbols }
    /// Shift for the next key only, or Caps Lock until tapped again.
    public enum Shift: Sendable { case off, once, caps }
    /// What a tap on a key does beyond the keyboard's own state.
    public enum Output: Equatable, Sendable {
        case text(KeyText)
        case enter
        case backspace
        case escape
        /// The edge reads the keymap's next group into `keymap`.
        case nextGroup
    }

    public var keymap: KeyboardKeymap
    public private(set) var page = Page.letters
    public private(set) var shift = Shift.off
    public private(set) var altGr = false

    public init(keymap: KeyboardKeymap = .empty) { self.keymap = keymap }

    /// The modifiers the next key is typed with. AltGr under Caps types the third
    /// level as it is (Caps Lock is for letters).
    public var level: KeyLevel {
        var l: KeyLevel = []
        switch shift {
        case .off: break
        case .once: l.insert(.shift)
        case .caps: if !altGr { l.insert(.caps) }
        }
        if altGr { l.insert(.altGr) }
        return l
    }

    /// What `slot` shows: a character key the text it types now (a key that types
    /// nothing at this level shows nothing).
    public func label(_ slot: KeySlot) -> String {
        switch slot {
        case .character(let code):
            if code == KeyboardKeymap.Code.space { return "space" }
            return keymap.text(code, level).withBytes { String(decoding: $0, as: UTF8.self) }
        case .shift: return shift == .caps ? "Caps" : "Shift"
        case .altGr: return "AltGr"
        case .page: return page == .letters ? "?123" : "ABC"
        case .nextGroup:
            let n = keymap.groupNames.count
            guard n > 1 else { return "" }
            return keymap.groupNames[(keymap.group + 1) % n]
        case .backspace: return "⌫"
        case .enter: return "Enter"
        case .escape: return "Esc"
        }
    }

    /// The levels `levelLabels` lists, in order.
    public static let describedLevels: [KeyLevel] = [[], .shift, .altGr, [.shift, .altGr], .caps]

    /// What a key types at each of `describedLevels` (a character key), or its
    /// one label (the others): the keyboard's whole map, which does not change
    /// as keys are tapped.
    public func levelLabels(_ slot: KeySlot) -> [String] {
        guard case .character(let code) = slot else { return [label(slot)] }
        return Self.describedLevels.map { level in
            keymap.text(code, level).withBytes { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// This keyboard showing `page`, nothing held.
    public func showing(_ page: Page) -> OnScreenKeyboard {
        var copy = self
        copy.reset()
        copy.page = page
        return copy
    }

    /// Whether a modifier key shows as held.
    public func isHeld(_ slot: KeySlot) -> Bool {
        switch slot {
        case .shift: shift != .off
        case .altGr: altGr
        default: false
        }
    }

    /// A tap on `slot`. Shift and AltGr hold for one character key and then let
    /// go (Caps Lock stays); nil when the tap only changed the keyboard.
    public mutating func tap(_ slot: KeySlot) -> Output? {
        switch slot {
        case .character(let code):
            let text = keymap.text(code, level)
            if shift == .once { shift = .off }
            altGr = false
            return text.count > 0 ? .text(text) : nil
        case .shift:
            switch shift {
            case .off: shift = .once
            case .once: shift = .caps
            case .caps: shift = .off
            }
            return nil
        case .altGr:
            altGr.toggle()
            return nil
        case .page:
            page = page == .letters ? .symbols : .letters
            return nil
        case .nextGroup:
            return keymap.groupNames.count > 1 ? .nextGroup : nil
        case .backspace: return .backspace
        case .enter: return .enter
        case .escape: return .escape
        }
    }

    /// Back to letters, nothing held: each time the keyboard shows anew.
    public mutating func reset() {
        page = .letters
        shift = .off
        altGr = false
    }

    // MARK: Where the keys go

    /// The rows of the page shown, keys that type nothing at any level left out:
    /// the hardware's rows, or with `phone` a phone's (`isPhone`).
    public func rows(phone: Bool = false) -> [[KeySlot]] {
        let code = KeyboardKeymap.Code.self
        var controls: [KeySlot] = [.page]
        if keymap.hasAltGr { controls.append(.altGr) }
        if keymap.groupNames.count > 1 { controls.append(.nextGroup) }
        controls += [.character(code.space), .escape, .enter]
        let rows = [code.topRow, code.homeRow, code.bottomRow]
        switch (page, phone) {
        case (.letters, false):
            return [
                keys(code.topRow), keys(code.homeRow), [.shift] + keys(code.bottomRow) + [.backspace], controls,
            ]
        case (.symbols, false):
            return [keys(code.digitRow), [.shift] + keys(code.digitRowRest) + [.backspace], controls]
        case (.letters, true):
            let letters = rows.map { keys($0).filter(typesLetter) }
            return [letters[0], letters[1], [.shift] + letters[2] + [.backspace], controls]
        case (.symbols, true):
            // What the letter rows' other keys type ([ ] ; ' \ < , . / on us).
            let others = rows.flatMap { keys($0).filter { !typesLetter($0) } }
            return [keys(code.digitRow), [.shift] + keys(code.digitRowRest) + others + [.backspace], controls]
        }
    }

    /// Whether the keyboard takes a phone's shape in `width`: the hardware's top
    /// row (12 keys on us) would not fit at `minimumKey` a key. A phone's letters
    /// page shows the letters only, a row each where the keymap has them (`q`–`p`,
    /// `a`–`l`, Shift `z`–`m` Backspace on us; `a`–`p`, `q`–`ù`, `w`–`n` on fr;
    /// `ü`, `ö` and `ä` at the ends of de's), and its symbols page the digits and
    /// everything else those rows type. Its keys are as wide as the widest row of
    /// letters allows, narrower than `minimumKey` if need be, never lower.
    public func isPhone(width: Double, minimumKey: Double) -> Bool {
        Self.rowUnits(keys(KeyboardKeymap.Code.topRow)) > Self.room(width: width, minimumKey: minimumKey)
    }

    private func keys(_ codes: [UInt32]) -> [KeySlot] {
        codes.filter { keymap.typesSomething($0) }.map { .character($0) }
    }

    /// Whether a key types a letter at its first level (a dead key does not).
    private func typesLetter(_ slot: KeySlot) -> Bool {
        guard case .character(let code) = slot else { return false }
        let text = keymap.text(code, []).withBytes { String(decoding: $0, as: UTF8.self) }
        return text.count == 1 && text.first?.isLetter == true
    }

    /// How wide a key is, in key widths (the space bar takes what its row leaves).
    static func units(_ slot: KeySlot) -> Double {
        switch slot {
        case .character(KeyboardKeymap.Code.space): 3
        case .character: 1
        case .shift, .backspace, .page: 1.5
        case .altGr, .escape: 1.25
        case .nextGroup: 1
        case .enter: 2
        }
    }

    /// The tallest a key gets (logical pixels): the keyboard stays in the lower
    /// part of a large screen.
    public static let maximumKeyHeight = 64.0

    /// The keys of the page shown, placed in `width` logical pixels from `origin`
    /// down, with keys at least `minimumKey` wide and high (7 mm where the output
    /// reports its size): a row that does not fit is split over two or more rows.
    /// Keys of a row touch: a point on the keyboard hits exactly one key.
    public func layout(origin: Point, width: Double, minimumKey: Double) -> [PlacedKey] {
        let rows = fitted(width: width, minimumKey: minimumKey)
        let widest = rows.map { Self.rowUnits($0) }.max() ?? 1
        let unit = width / widest
        let height = keyHeight(unit: unit, minimumKey: minimumKey)
        var placed: [PlacedKey] = []
        for (r, row) in rows.enumerated() {
            let units = Self.rowUnits(row)
            // The space bar widens to fill its row; other rows are centred.
            let spaceExtra = row.contains(.character(KeyboardKeymap.Code.space)) ? widest - units : 0
            var x = origin.x + (width - (units + spaceExtra) * unit) / 2
            let y = origin.y + Double(r) * height
            for slot in row {
                var w = Self.units(slot)
                if slot == .character(KeyboardKeymap.Code.space) { w += spaceExtra }
                placed.append(PlacedKey(slot: slot, rect: Rect(x: x, y: y, width: w * unit, height: height)))
                x += w * unit
            }
        }
        return placed
    }

    /// The keyboard docked at the bottom of `band` (logical pixels), as both
    /// Wayland programs show it: 8 pixels in from its sides, its last row on
    /// its bottom edge. Its top (a field goes above it) and its keys.
    public func docked(in band: Rect, minimumKey: Double) -> (top: Double, keys: [PlacedKey]) {
        let width = band.width - 16
        let top = band.y + band.height - height(width: width, minimumKey: minimumKey)
        return (top, layout(origin: Point(x: band.x + 8, y: top), width: width, minimumKey: minimumKey))
    }

    /// How tall the keyboard is in `width` (logical pixels).
    public func height(width: Double, minimumKey: Double) -> Double {
        let rows = fitted(width: width, minimumKey: minimumKey)
        let widest = rows.map { Self.rowUnits($0) }.max() ?? 1
        return Double(rows.count) * keyHeight(unit: width / widest, minimumKey: minimumKey)
    }

    /// The key under `p` in a layout, if any.
    public static func key(at p: Point, in keys: [PlacedKey]) -> KeySlot? {
        keys.first { $0.rect.contains(p) }?.slot
    }

    private func keyHeight(unit: Double, minimumKey: Double) -> Double {
        max(minimumKey, min(unit * 1.25, Self.maximumKeyHeight))
    }

    static func rowUnits(_ row: [KeySlot]) -> Double { row.reduce(0) { $0 + units($1) } }

    /// How many keys of `minimumKey` fit in `width`.
    static func room(width: Double, minimumKey: Double) -> Double {
        max(3, (width / max(minimumKey, 1)).rounded(.down))
    }

    /// The rows, each split into as few nearly even rows as keeps its keys at
    /// least `minimumKey` wide; on a phone (`isPhone`) the rows of letters whole,
    /// and the other rows split to their width.
    func fitted(width: Double, minimumKey: Double) -> [[KeySlot]] {
        guard isPhone(width: width, minimumKey: minimumKey) else {
            return rows().flatMap { Self.split($0, room: Self.room(width: width, minimumKey: minimumKey)) }
        }
        var letters = self
        letters.page = .letters
        let room = letters.rows(phone: true).map { Self.rowUnits($0) }.max() ?? 10
        return rows(phone: true).flatMap { Self.split($0, room: room) }
    }

    /// `row` in as few rows of at most `room` key widths as it takes, nearly even.
    static func split(_ row: [KeySlot], room: Double) -> [[KeySlot]] {
        let total = rowUnits(row)
        var parts = max(1, Int((total / room).rounded(.up)))
        while parts < row.count {
            let target = min(room, total / Double(parts) + 0.75)
            var out: [[KeySlot]] = [[]]
            var used = 0.0
            for slot in row {
                let w = units(slot)
                if used + w > target, let last = out.last, !last.isEmpty {
                    out.append([])
                    used = 0
                }
                out[out.count - 1].append(slot)
                used += w
            }
            if out.count <= parts && out.allSatisfy({ rowUnits($0) <= room }) { return out }
            parts += 1
        }
        return row.map { [$0] }
    }
}

extension OnScreenKeyboard {
    /// For `--debug` (and the tests, which tap keys by what they type): each page
    /// of the keyboard, one line each, `head` then `group=N page=P keys=` and each
    /// key's labels at every level with its centre, `["q","Q"]@x,y`. `place`
    /// lays a page out where the screen draws it. A program says these when the
    /// keyboard shows or its keymap or size changes, never as keys are tapped.
    public func describedPages(head: String, place: (OnScreenKeyboard) -> [PlacedKey]) -> [String] {
        [Page.letters, .symbols].map { page in
            let kb = showing(page)
            var line = "\(head)group=\(kb.keymap.group) page=\(page) keys="
            for k in place(kb) {
                let labels = kb.levelLabels(k.slot).map(Self.quoted).joined(separator: ",")
                line += "[\(labels)]@\(Int(k.rect.x + k.rect.width / 2)),\(Int(k.rect.y + k.rect.height / 2)) "
            }
            return line
        }
    }

    /// `s` in double quotes, with `"` and `\` escaped.
    public static func quoted(_ s: String) -> String {
        var out = "\""
        for ch in s.unicodeScalars {
            out += ch == "\"" || ch == "\\" ? "\\\(ch)" : String(ch)
        }
        return out + "\""
    }
}
