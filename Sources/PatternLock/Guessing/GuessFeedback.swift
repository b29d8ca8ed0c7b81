// SPDX-License-Identifier: Apache-2.0
/// Turns the policy's verdict into what a person reads: why a pattern is refused
/// and what to change, or how strong an accepted one is. Apart from the model, as
/// zxcvbn keeps its feedback apart from its estimator.
public enum GuessFeedback {
    /// "This is one of the 1,000 patterns people choose most — an L from a corner.
    /// Try one that changes direction more, or starts in the middle of an edge."
    public static func sentence(for refusal: EnrollPolicy.Refusal, pattern: Pattern) -> String {
        switch refusal {
        case .tooFewDots(let minimum):
            return "This system asks for at least \(minimum) dots and this pattern has \(pattern.dots.count). Try a longer one."
        case .denylisted:
            return "This pattern is on this system's list of refused patterns. Choose a different one."
        case .common(let rank, let top, let shape):
            let phrase = shape.flatMap { id in ShapeFamily.published.first { $0.id == id }?.phrase }
            let what = describe(pattern, shape: phrase)
            let which = rank <= 100 && top > 100 ? "100" : grouped(top)
            return
                "This is one of the \(which) patterns people choose most (counting rotations and mirror images) — \(what). \(advice(for: pattern))"
        }
    }

    /// The strength line after an accepted pattern.
    public static func strength(guesses: Int) -> String {
        let about = grouped(roundedGuesses(guesses))
        let word = guesses >= 100_000 ? "Strong" : guesses >= 10_000 ? "Good" : "Fair"
        return
            "\(word): an attacker who tries the patterns people choose most first would need about \(about) guesses to reach this one; the lockout allows 5."
    }

    /// The line the PAM module shows after unlocking with a pattern the policy refuses.
    public static let changeAdvice =
        "Your pattern is one that attackers try first. Change it with: patternlockd enroll"

    // MARK: - Pieces

    static func describe(_ pattern: Pattern, shape: String?) -> String {
        let start = place(of: pattern.dots[0])
        if let shape { return "\(shape) from \(start)" }
        let n = pattern.dots.count
        let turns = directionChanges(pattern)
        let strokes = turns <= 1 ? ", in one or two straight strokes" : turns <= 2 ? ", with few changes of direction" : ""
        return "\(n) dots from \(start)\(strokes)"
    }

    static func advice(for pattern: Pattern) -> String {
        var tips: [String] = []
        if pattern.dots.count < 7 { tips.append("uses 7 dots or more") }
        if directionChanges(pattern) < 4 { tips.append("changes direction more") }
        if [1, 3, 7, 9].contains(pattern.dots[0]) { tips.append("starts in the middle of an edge") }
        if tips.isEmpty { tips.append("crosses itself and uses a knight move (like 1 to 6)") }
        let list = tips.count == 1 ? tips[0] : tips.dropLast().joined(separator: ", ") + ", or " + (tips.last ?? "")
        return "Try one that \(list)."
    }

    static func place(of dot: Int) -> String {
        switch dot {
        case 1, 3, 7, 9: return "a corner"
        case 5: return "the centre"
        default: return "the middle of an edge"
        }
    }

    /// How many times the stroke changes direction.
    static func directionChanges(_ pattern: Pattern) -> Int {
        let d = pattern.dots
        var changes = 0
        for i in 2..<d.count {
            let (r0, c0) = ((d[i - 1] - 1) / 3 - (d[i - 2] - 1) / 3, (d[i - 1] - 1) % 3 - (d[i - 2] - 1) % 3)
            let (r1, c1) = ((d[i] - 1) / 3 - (d[i - 1] - 1) / 3, (d[i] - 1) % 3 - (d[i - 1] - 1) % 3)
            if r0 * c1 != r1 * c0 || r0 * r1 + c0 * c1 < 0 { changes += 1 }
        }
        return changes
    }

    /// Two significant figures: 12,345 → 12,000.
    static func roundedGuesses(_ n: Int) -> Int {
        var scale = 1
        while n / scale >= 100 { scale *= 10 }
        return max(1, (n + scale / 2) / scale * scale)
    }

    /// 1000 → "1,000".
    public static func grouped(_ n: Int) -> String {
        let s = String(n)
        var out = ""
        for (i, ch) in s.enumerated() {
            if i > 0 && (s.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return out
    }
}
