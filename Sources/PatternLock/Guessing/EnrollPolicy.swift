/// Which new patterns the daemon accepts: not one of the `threshold` patterns an
/// informed attacker tries first (in any of its 8 orientations), at least
/// `minimumDots` dots, and not on the administrator's denylist. Verifying is never
/// affected; a pattern this policy refuses still unlocks (the PAM module then
/// advises a change).
public struct EnrollPolicy: Sendable {
    /// The default threshold, chosen in docs/GUESSING.md: the model's top-5
    /// allowed patterns then reach under 1 % of users while under 1 % of all
    /// patterns are refused (both checked by the unit tests).
    public static let defaultThreshold = 1000
    public static let defaultMinimumDots = 4

    /// Refuse a pattern whose best orientation ranks at or above this; 0 turns the
    /// guessing check off.
    public var threshold: Int
    /// 4…9.
    public var minimumDots: Int
    /// Normalized patterns the administrator refuses, as listed (not turned or mirrored).
    public var denylist: Set<[Int]>
    public let ranking: GuessRanking

    public init(threshold: Int = EnrollPolicy.defaultThreshold, minimumDots: Int = EnrollPolicy.defaultMinimumDots,
                denylist: Set<[Int]> = [], ranking: GuessRanking = .published) {
        self.threshold = threshold
        self.minimumDots = minimumDots
        self.denylist = denylist
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

    /// nil when the pattern may be enrolled.
    public func refusal(for pattern: Pattern) -> Refusal? {
        if pattern.dots.count < minimumDots { return .tooFewDots(minimum: minimumDots) }
        if denylist.contains(pattern.dots) { return .denylisted }
        if threshold > 0 {
            let rank = ranking.orientationRank(of: pattern)
            if rank <= threshold { return .common(rank: rank, top: threshold, shape: ranking.family(of: pattern)?.id) }
        }
        return nil
    }

    /// About how many guesses an attacker trying the likeliest patterns first needs.
    public func guesses(for pattern: Pattern) -> Int { ranking.rank(of: pattern) }

    // MARK: - Figures for administrators

    /// What the policy does under the model: how many patterns it refuses, how much
    /// of the model's probability they hold, and an attacker's success within k
    /// guesses without and with the policy. With the policy, people whose first
    /// choice is refused are assumed to choose again as the model says, so the
    /// allowed patterns' probabilities are scaled up by 1 / (1 − refused share).
    public struct Figures: Equatable, Sendable {
        public var refusedCount: Int
        public var refusedShare: Double
        public var guesses: [Int]
        public var successWithout: [Double]
        public var successWith: [Double]
    }

    public func figures(guesses: [Int] = [5, 10, 20]) -> Figures {
        let limit = guesses.max() ?? 0
        var refusedCount = 0
        var refusedShare = 0.0
        var byRankWithout: [Double] = []
        var allowedProbabilities: [Double] = []
        ranking.forEachByRank { rank, orientationRank, probability, key in
            let dots = GuessRanking.dots(key)
            let refused = dots.count < minimumDots || (threshold > 0 && orientationRank <= threshold)
                || denylist.contains(dots)
            if refused {
                refusedCount += 1
                refusedShare += probability
            } else if allowedProbabilities.count < limit {
                allowedProbabilities.append(probability)
            }
            if rank <= limit { byRankWithout.append(probability) }
        }
        func cumulative(_ ps: [Double], _ k: Int) -> Double { ps.prefix(k).reduce(0, +) }
        let scale = refusedShare < 1 ? 1 / (1 - refusedShare) : 0
        return Figures(refusedCount: refusedCount, refusedShare: refusedShare, guesses: guesses,
                       successWithout: guesses.map { cumulative(byRankWithout, $0) },
                       successWith: guesses.map { cumulative(allowedProbabilities, $0) * scale })
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
