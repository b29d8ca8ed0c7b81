// SPDX-License-Identifier: Apache-2.0
/// The keys a user types the dots on. The dots themselves never move: a pattern
/// is a shape on the 3×3 grid, stored and hashed as phone-layout digits.
///
/// On a phone keypad 1 2 3 is the top row; on a desktop keyboard's numeric
/// keypad 7 8 9 is. Typing the same shape on either gives the same pattern,
/// because the numeric keypad's keys are mapped to the dots they sit on:
///
///     phone      numpad         numpad key → dot
///     1 2 3      7 8 9          7→1 8→2 9→3
///     4 5 6      4 5 6          4→4 5→5 6→6
///     7 8 9      1 2 3          1→7 2→8 3→9
public enum KeypadLayout: String, CaseIterable, Sendable {
    case phone
    case numpad

    /// The grid as the keys show it, for prompts.
    public var grid: String {
        switch self {
        case .phone:
            return """
                  1 2 3
                  4 5 6
                  7 8 9
                """
        case .numpad:
            return """
                  7 8 9
                  4 5 6
                  1 2 3
                """
        }
    }

    /// The dot (1…9, phone layout) under key `key` (1…9); the mapping is its own
    /// inverse, so it also gives the key that sits on a dot.
    public func dot(forKey key: Int) -> Int {
        switch self {
        case .phone: return key
        case .numpad: return key <= 3 ? key + 6 : key >= 7 ? key - 6 : key
        }
    }

    /// Typed keys as phone-layout digits; anything that is not a key 1…9 is kept
    /// as it is (the pattern rules then refuse it).
    public func phoneDigits(_ typed: some StringProtocol) -> String {
        guard self != .phone else { return String(typed) }
        var bytes = Array(typed.utf8)
        for i in bytes.indices where bytes[i] >= 0x31 && bytes[i] <= 0x39 {
            bytes[i] = UInt8(dot(forKey: Int(bytes[i] - 0x30))) + 0x30
        }
        let mapped = String(decoding: bytes, as: UTF8.self)
        wipe(&bytes)
        return mapped
    }
}

extension Pattern {
    /// Normalizes keys typed on `layout` into a pattern; what is wrong with the
    /// input is said in that layout's keys (the mapping is its own inverse).
    public init(typed: some StringProtocol, layout: KeypadLayout) throws(PatternError) {
        do {
            try self.init(typed: layout.phoneDigits(typed))
        } catch {
            guard layout != .phone else { throw error }
            switch error {
            case .repeatedDot(let dot) where dot > 0: throw .repeatedDot(layout.dot(forKey: dot))
            case .joinedDotRepeated(let dot, let from, let to):
                throw .joinedDotRepeated(layout.dot(forKey: dot), from: layout.dot(forKey: from), to: layout.dot(forKey: to))
            case .notADot: throw .notAKey
            default: throw error
            }
        }
    }
}
