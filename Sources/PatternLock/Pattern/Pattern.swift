// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims

/// A pattern on the 3×3 grid, phone-keypad layout (1 top-left):
///
///     1 2 3
///     4 5 6
///     7 8 9
///
/// Typed input is normalized as Android's lock screen draws it: a straight move
/// that passes over an unused dot takes that dot too ("13" is 1-2-3, "1397" is
/// 1-2-3-6-9-8-7). Each dot is used once; at least 4 dots after normalization.
public struct Pattern: Hashable, Sendable, CustomStringConvertible {
    public static let minimumDots = 4

    /// The dots in order, each 1…9, wiped when the pattern goes.
    private let storage: SecretBytes

    /// The dots in order, each 1…9 (for clients and tests: an array the daemon never makes).
    public var dots: [Int] { storage.withUnsafeBytes { $0.map(Int.init) } }

    /// Normalizes typed digits into a pattern, or says in a sentence what is wrong.
    public init(typed: some StringProtocol) throws(PatternError) {
        var bytes = Array(typed.utf8)
        defer { wipe(&bytes) }
        try self.init(typedBytes: bytes)
    }

    /// Normalizes typed digits kept as secret bytes (the daemon's way: no `String`
    /// and no array that outlives this call ever holds them).
    public init(typed: SecretBytes) throws(PatternError) {
        try self = typed.withUnsafeBytes { (b) throws(PatternError) -> Pattern in try Pattern(typedBytes: b) }
    }

    private init(typedBytes typed: some Collection<UInt8>) throws(PatternError) {
        if typed.isEmpty { throw .empty }
        var used: UInt16 = 0
        // Which move joined each dot passed over, to explain a repeat of it.
        var joinedBy = [(from: Int, to: Int)?](repeating: nil, count: 10)
        // The moves that joined a dot are part of the pattern: wiped, not freed as they are.
        defer { joinedBy.withUnsafeMutableBytes { if let base = $0.baseAddress { pl_wipe(base, $0.count) } } }
        var failure: PatternError?
        let made = SecretBytes(capacity: 9) { dots in
            var n = 0
            for byte in typed {
                // Any other byte (or the first byte of any other character) is not a dot.
                guard byte >= 0x31, byte <= 0x39 else { failure = .notADot; return nil }
                let dot = Int(byte - 0x30)
                if used & (1 << dot) != 0 {
                    if let move = joinedBy[dot] {
                        failure = .joinedDotRepeated(dot, from: move.from, to: move.to)
                    } else {
                        failure = .repeatedDot(dot)
                    }
                    return nil
                }
                if n > 0, let middle = Pattern.dotPassedOver(from: Int(dots[n - 1]), to: dot), used & (1 << middle) == 0 {
                    joinedBy[middle] = (Int(dots[n - 1]), dot)
                    used |= 1 << middle
                    dots[n] = UInt8(middle)
                    n += 1
                }
                used |= 1 << dot
                dots[n] = UInt8(dot)
                n += 1
            }
            guard n >= Pattern.minimumDots else { failure = .tooShort(n); return nil }
            return n
        }
        guard let made else { throw failure ?? .empty }
        storage = made
    }

    /// The dot a straight move from `a` to `b` passes over, if any (1→3 over 2,
    /// 1→9 over 5, 2→8 over 5). Knight moves such as 1→6 pass over nothing.
    public static func dotPassedOver(from a: Int, to b: Int) -> Int? {
        let (ra, ca) = ((a - 1) / 3, (a - 1) % 3)
        let (rb, cb) = ((b - 1) / 3, (b - 1) % 3)
        guard (ra + rb) % 2 == 0, (ca + cb) % 2 == 0 else { return nil }
        let middle = (ra + rb) / 2 * 3 + (ca + cb) / 2 + 1
        return middle == a || middle == b ? nil : middle
    }

    /// The dots in order (each 1…9), for the duration of `body` only: the pattern's
    /// own wiped storage, never copied. What the daemon judges a pattern by.
    public func withDots<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        storage.withUnsafeBytes(body)
    }

    /// How many dots.
    public var count: Int { storage.count }

    /// The normalized digits, e.g. "1236987" (for clients and tests).
    public var digits: String { String(dots.map { Character(String($0)) }) }

    /// The normalized digits as ASCII, for the duration of `body` only: what is
    /// hashed. They live on the stack and are wiped afterwards.
    public func withDigits<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        storage.withUnsafeBytes { dots in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 9) { ascii in
                for (i, dot) in dots.enumerated() { ascii[i] = dot + 0x30 }
                defer { if let base = ascii.baseAddress { pl_wipe(base, ascii.count) } }
                return body(UnsafeBufferPointer(rebasing: ascii[..<dots.count]))
            }
        }
    }

    public static func == (a: Pattern, b: Pattern) -> Bool { a.storage == b.storage }

    public func hash(into hasher: inout Hasher) { storage.withUnsafeBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) } }

    /// "1-2-3-6-9-8-7".
    public var description: String { dots.map(String.init).joined(separator: "-") }

    /// The grid a user types on, for prompts (phone layout; see `KeypadLayout`).
    public static let grid = KeypadLayout.phone.grid

    /// A picture of this pattern: each dot shows its place in the order, unused dots a ·.
    ///
    ///     ┌─────────┐
    ///     │ 1  2  3 │
    ///     │ ·  ·  4 │
    ///     │ 7  6  5 │
    ///     └─────────┘
    public var picture: String {
        var order = [Int](repeating: 0, count: 10)
        for (i, dot) in dots.enumerated() { order[dot] = i + 1 }
        var lines = ["  ┌─────────┐"]
        for row in 0..<3 {
            let cells = (1...3).map { col -> String in
                let n = order[row * 3 + col]
                return n == 0 ? "·" : String(n)
            }
            lines.append("  │ \(cells.joined(separator: "  ")) │")
        }
        lines.append("  └─────────┘")
        return lines.joined(separator: "\n")
    }
}

/// Why typed input is not a pattern. None of these counts as a failed attempt.
public enum PatternError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case notADot
    /// `notADot` for keys typed on the numeric keypad (`KeypadLayout.numpad`).
    case notAKey
    case repeatedDot(Int)
    /// A dot typed after a straight move over it had already joined it (`1327`:
    /// 1→3 took 2).
    case joinedDotRepeated(Int, from: Int, to: Int)
    case tooShort(Int)

    public var description: String {
        switch self {
        case .empty: return "No dots were entered."
        case .notADot: return "Type the dots as the digits 1 to 9 (1 is top left, 9 bottom right)."
        case .notAKey: return "Type the dots on the numeric keypad's keys 1 to 9 (7 is top left, 3 bottom right)."
        case .repeatedDot(let d) where d > 0: return "Dot \(d) is used twice; each dot can be used only once."
        case .repeatedDot: return "Each dot can be used only once."
        case .joinedDotRepeated(let d, let from, let to):
            return
                "Dot \(d) is used twice: the move from \(from) to \(to) passed over it and already joined it. Each dot can be used only once; leave \(d) out or type it before that move."
        case .tooShort(let n) where n > 0: return "Connect at least 4 dots (this pattern has \(n))."
        case .tooShort: return "Connect at least 4 dots."
        }
    }
}
