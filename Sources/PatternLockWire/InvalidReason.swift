// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// The word of an `INVALID reason=` reply for an entry that is not a pattern, or a
/// change without the current pattern (docs/PROTOCOL.md). None of these was
/// counted. The enroll policy's refusals (`common`, `too_few_dots`, `denylisted`)
/// are `Reply.refused`, not reasons here.
public enum InvalidReason: Hashable, Sendable {
    case empty
    case notADot
    case repeatedDot
    case tooShort
    case currentRequired
    /// A reason this side does not know (a newer daemon): shown as "not a pattern".
    case other(String)

    public var word: String {
        switch self {
        case .empty: return "empty"
        case .notADot: return "not_a_dot"
        case .repeatedDot: return "repeated_dot"
        case .tooShort: return "too_short"
        case .currentRequired: return "current_required"
        case .other(let w): return w
        }
    }

    public init(word: String) {
        switch word {
        case "empty": self = .empty
        case "not_a_dot": self = .notADot
        case "repeated_dot": self = .repeatedDot
        case "too_short": self = .tooShort
        case "current_required": self = .currentRequired
        default: self = .other(word)
        }
    }

    /// The reason for an entry the pattern rules refuse.
    public init(_ error: PatternError) {
        switch error {
        case .empty: self = .empty
        case .notADot, .notAKey: self = .notADot
        case .repeatedDot, .joinedDotRepeated: self = .repeatedDot
        case .tooShort: self = .tooShort
        }
    }

    /// The pattern rule broken, without the dots (a reply says which rule, never
    /// which dots: the user typed them and the screen may be watched).
    public var patternError: PatternError? {
        switch self {
        case .empty: return .empty
        case .notADot: return .notADot
        case .repeatedDot: return .repeatedDot(0)
        case .tooShort: return .tooShort(0)
        case .currentRequired, .other: return nil
        }
    }
}
