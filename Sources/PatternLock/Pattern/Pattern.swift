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

    /// The dots in order, each 1…9.
    public let dots: [Int]

    /// Normalizes typed digits into a pattern, or says in a sentence what is wrong.
    public init(typed: some StringProtocol) throws(PatternError) {
        if typed.isEmpty { throw .empty }
        var used = [Bool](repeating: false, count: 10)
        var dots: [Int] = []
        for scalar in typed.unicodeScalars {
            guard scalar.value >= 0x31, scalar.value <= 0x39 else { throw .notADot }
            let dot = Int(scalar.value - 0x30)
            if used[dot] { throw .repeatedDot(dot) }
            if let previous = dots.last, let middle = Pattern.dotPassedOver(from: previous, to: dot), !used[middle] {
                used[middle] = true
                dots.append(middle)
            }
            used[dot] = true
            dots.append(dot)
        }
        guard dots.count >= Pattern.minimumDots else { throw .tooShort(dots.count) }
        self.dots = dots
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

    /// The normalized digits, e.g. "1236987": what is hashed.
    public var digits: String { String(dots.map { Character(String($0)) }) }

    /// "1-2-3-6-9-8-7".
    public var description: String { dots.map(String.init).joined(separator: "-") }

    /// The grid a user types on, for prompts.
    public static let grid = """
          1 2 3
          4 5 6
          7 8 9
        """

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
    case repeatedDot(Int)
    case tooShort(Int)

    /// The protocol's `INVALID reason=` word.
    public var reason: String {
        switch self {
        case .empty: return "empty"
        case .notADot: return "not_a_dot"
        case .repeatedDot: return "repeated_dot"
        case .tooShort: return "too_short"
        }
    }

    public init?(reason: String) {
        switch reason {
        case "empty": self = .empty
        case "not_a_dot": self = .notADot
        case "repeated_dot": self = .repeatedDot(0)
        case "too_short": self = .tooShort(0)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .empty: return "No dots were entered."
        case .notADot: return "Type the dots as the digits 1 to 9 (1 is top left, 9 bottom right)."
        case .repeatedDot(let d) where d > 0: return "Dot \(d) is used twice; each dot can be used only once."
        case .repeatedDot: return "Each dot can be used only once."
        case .tooShort(let n) where n > 0: return "Connect at least 4 dots (this pattern has \(n))."
        case .tooShort: return "Connect at least 4 dots."
        }
    }
}
