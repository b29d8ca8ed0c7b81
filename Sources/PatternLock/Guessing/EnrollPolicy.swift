// SPDX-License-Identifier: Apache-2.0
/// Which new patterns the daemon accepts: not one of the `threshold` patterns an
/// informed attacker tries first (in any of its 8 orientations), at least
/// `minimumDots` dots, and not on the administrator's denylist. Verifying is never
/// affected; a pattern this policy refuses still unlocks (the PAM module then
/// advises a change).
public struct EnrollPolicy: Sendable {
    /// The default threshold, chosen in docs/GUESSING.md from the cross-validated
    /// trade-off: an attacker who knows the policy and the public data then reaches
    /// under 1 % of people within 5 guesses (renormalized), refusing as few people as
    /// that allows (checked by the unit tests).
    public static let defaultThreshold = 700
    public static let defaultMinimumDots = 4

    /// Refuse a pattern whose best orientation ranks at or above this; 0 turns the
    /// guessing check off.
    public var threshold: Int
    /// 4…9.
    public var minimumDots: Int
    /// Normalized patterns the administrator refuses, as listed (not turned or mirrored).
    public var denylist: Set<[Int]> {
        didSet { denylistIndices = Set(denylist.compactMap { PatternIndex.index(of: $0) }) }
    }
    /// The denylist by pattern number (`PatternIndex`), which is what a pattern is
    /// looked up by: a number, never an array of its dots.
    private var denylistIndices: Set<Int>
    public let ranking: GuessRanking

    public init(
        threshold: Int = EnrollPolicy.defaultThreshold, minimumDots: Int = EnrollPolicy.defaultMinimumDots,
        denylist: Set<[Int]> = [], ranking: GuessRanking = .published
    ) {
        self.threshold = threshold
        self.minimumDots = minimumDots
        self.denylist = denylist
        self.denylistIndices = Set(denylist.compactMap { PatternIndex.index(of: $0) })
        self.ranking = ranking
    }

    /// Why a pattern is refused.
    public enum Refusal: Equatable, Sendable {
        /// Among the `top` most likely patterns in some orientation: `rank` is the best
        /// orientation's rank; `shape` the family id, when it draws one.
        case common(rank: Int, top: Int, shape: String?)
        case tooFewDots(minimum: Int)
        case denylisted
    }

    /// nil when the pattern may be enrolled. Judged on the pattern's own wiped
    /// storage: no array of its dots is made (the daemon asks this for every
    /// CHECK, and freed memory keeps what it held).
    public func refusal(for pattern: Pattern) -> Refusal? {
        if pattern.count < minimumDots { return .tooFewDots(minimum: minimumDots) }
        return pattern.withDots { dots -> Refusal? in
            guard let index = PatternIndex.index(count: dots.count, { Int(dots[$0]) }) else { return nil }
            if denylistIndices.contains(index) { return .denylisted }
            if threshold > 0 {
                let rank = ranking.orientationRank(of: dots)
                if rank <= threshold {
                    return .common(rank: rank, top: threshold, shape: ranking.family(atIndex: index)?.id)
                }
            }
            return nil
        }
    }

    /// About how many guesses an attacker trying the likeliest patterns first needs.
    public func guesses(for pattern: Pattern) -> Int { ranking.rank(of: pattern) }

    /// Does the policy refuse these dots (a valid pattern) under a ranking? The
    /// cross-validation asks with each fold's ranking.
    public func refuses(_ dots: [Int], ranking: GuessRanking) -> Bool {
        dots.count < minimumDots || denylist.contains(dots)
            || (threshold > 0 && ranking.orientationRank(of: dots) <= threshold)
    }

    // MARK: - Figures for administrators

    /// How many of the 389,112 patterns the policy refuses under its ranking.
    public func refusedPatternCount() -> Int {
        var refused = Set<Int>()
        if threshold > 0 {
            for i in ranking.order().prefix(threshold) {
                for j in PatternIndex.images(of: PatternIndex.dots(at: Int(i))) { refused.insert(j) }
            }
        }
        for dots in denylist { if let i = PatternIndex.index(of: dots) { refused.insert(i) } }
        let longEnough = refused.filter { PatternIndex.dots(at: $0).count >= minimumDots }.count
        // Patterns of n dots: 1,624, 7,152, 26,016, 72,912, 140,704, 140,704 for n = 4…9.
        let byLength = [4: 1624, 5: 7152, 6: 26016, 7: 72912, 8: 140_704, 9: 140_704]
        return longEnough + (4..<minimumDots).reduce(0) { $0 + byLength[$1, default: 0] }
    }

    /// The policy's figures on real people: k-fold cross-validation on the public
    /// data (`CrossValidation`), each fold's model fitted to the other folds.
    public func crossValidated(
        guesses: [Int] = [5, 10, 20],
        on validation: CrossValidation = .published
    ) -> CrossValidation.Result {
        validation.evaluate(self, guesses: guesses)
    }

    // MARK: - The denylist file

    /// A denylist line that is not a pattern.
    public struct DenylistError: Error, CustomStringConvertible, Sendable {
        public let line: Int
        public let problem: String
        public var description: String {
            "Line \(line) of the denylist is not a pattern: \(problem) Write one pattern a line as its dots (e.g. 14789); # starts a comment."
        }
    }

    /// Parses a denylist: one pattern a line as typed digits (normalized like any
    /// entry), blank lines and `#` comments ignored.
    public static func parseDenylist(_ text: String) throws(DenylistError) -> Set<[Int]> {
        var out = Set<[Int]>()
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingCharacters(in: " \t\r")
            if trimmed.isEmpty { continue }
            do { out.insert(try Pattern(typed: trimmed).dots) } catch {
                throw DenylistError(line: n + 1, problem: error.description)
            }
        }
        return out
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        let chars = Set(set)
        var s = self[...]
        while let f = s.first, chars.contains(f) { s = s.dropFirst() }
        while let l = s.last, chars.contains(l) { s = s.dropLast() }
        return s
    }
}
