// SPDX-License-Identifier: Apache-2.0
/// What an enroll policy does to real people, measured by k-fold cross-validation
/// on the committed counts of the public data (docs/GUESSING.md): for each fold,
/// the model is fitted to the other folds, and the fold's people are the test.
/// Each figure is summed over the folds.
///
/// The attacker is trained on the same training folds and knows the policy: it
/// guesses the allowed patterns either in order of their frequency in the training
/// folds (then, when those run out, in the model's order), or in the model's order.
/// "Raw" counts a person whose first choice is refused as not unlocked; "renormalized"
/// assumes such a person chooses again like the people whose choice was allowed, so
/// the hits are divided by the people allowed instead of all people.
public struct CrossValidation: Sendable {
    struct Fold: Sendable {
        let ranking: GuessRanking
        /// Pattern indices from rank 1 down.
        let order: [UInt32]
        /// The fold's people: pattern index → people.
        let test: [Int: Int]
        /// The training folds' patterns, most frequent first (ties: the model's rank).
        let byFrequency: [Int]
    }

    let folds: [Fold]
    public let parameters: GuessingModel.Parameters
    /// People in all folds.
    public let people: Int
    public var foldCount: Int { folds.count }

    /// The public data's folds with the published parameters, built at first use.
    public static let published = CrossValidation(parameters: .published)

    /// `data[f]` is fold f's counts; with none given, the committed public folds.
    public init(parameters: GuessingModel.Parameters = .published, data: [PatternCounts]? = nil) {
        let data = data ?? (0..<PublicPatternCounts.foldCount).map { PatternCounts.publicData(folds: [$0]) }
        self.parameters = parameters
        var folds: [Fold] = []
        for f in data.indices {
            var training: [Int: Int] = [:]
            for g in data.indices where g != f {
                for (i, c) in data[g].entries { training[i, default: 0] += c }
            }
            let ranking = GuessRanking(model: GuessingModel(counts: PatternCounts(training), parameters: parameters))
            let byFrequency = training.sorted {
                $0.value != $1.value ? $0.value > $1.value : ranking.rank(atIndex: $0.key) < ranking.rank(atIndex: $1.key)
            }.map(\.key)
            var test: [Int: Int] = [:]
            for (i, c) in data[f].entries { test[i, default: 0] += c }
            folds.append(Fold(ranking: ranking, order: ranking.order(), test: test, byFrequency: byFrequency))
        }
        self.folds = folds
        self.people = data.reduce(0) { $0 + $1.people }
    }

    /// The figures for one policy. `policy.ranking` is not used: each fold has its own.
    public struct Result: Equatable, Sendable {
        public var threshold: Int
        public var people: Int
        /// People whose first choice the policy refuses.
        public var refused: Int
        public var guesses: [Int]
        /// People unlocked within `guesses[i]` guesses, by each attacker, summed over folds.
        public var withoutPolicyByFrequency: [Int]
        public var withoutPolicyByModel: [Int]
        public var withPolicyByFrequency: [Int]
        public var withPolicyByModel: [Int]

        public var refusedShare: Double { people > 0 ? Double(refused) / Double(people) : 0 }
        public func raw(_ hits: Int) -> Double { people > 0 ? Double(hits) / Double(people) : 0 }
        /// Refused people choose again like the others.
        public func renormalized(_ hits: Int) -> Double {
            people > refused ? Double(hits) / Double(people - refused) : 0
        }
    }

    public func evaluate(_ policy: EnrollPolicy, guesses: [Int] = [5, 10, 20]) -> Result {
        let limit = guesses.max() ?? 0
        var result = Result(
            threshold: policy.threshold, people: people, refused: 0, guesses: guesses,
            withoutPolicyByFrequency: guesses.map { _ in 0 }, withoutPolicyByModel: guesses.map { _ in 0 },
            withPolicyByFrequency: guesses.map { _ in 0 }, withPolicyByModel: guesses.map { _ in 0 })
        for fold in folds {
            let refuses = { (index: Int) -> Bool in policy.refuses(PatternIndex.dots(at: index), ranking: fold.ranking) }
            for (i, c) in fold.test where refuses(i) { result.refused += c }
            func hits(_ list: [Int]) -> [Int] {
                var cumulative: [Int] = []
                var total = 0
                for i in list {
                    total += fold.test[i] ?? 0
                    cumulative.append(total)
                }
                return guesses.map { k in k == 0 || cumulative.isEmpty ? 0 : cumulative[min(k, cumulative.count) - 1] }
            }
            func attack(byFrequency: Bool, policyApplies: Bool, allowed: (Int) -> Bool) -> [Int] {
                var list: [Int] = []
                var taken = Set<Int>()
                if byFrequency {
                    for i in fold.byFrequency where list.count < limit && allowed(i) {
                        list.append(i)
                        taken.insert(i)
                    }
                }
                // The first `threshold` patterns in the model's order are refused by it: skip them.
                let skip = policyApplies && policy.threshold > 0 ? min(policy.threshold, fold.order.count) : 0
                for i in fold.order[skip...] where list.count < limit {
                    let i = Int(i)
                    if !taken.contains(i) && allowed(i) { list.append(i) }
                }
                return hits(list)
            }
            let add = { (a: inout [Int], b: [Int]) in for j in a.indices { a[j] += b[j] } }
            add(&result.withoutPolicyByFrequency, attack(byFrequency: true, policyApplies: false) { _ in true })
            add(&result.withoutPolicyByModel, attack(byFrequency: false, policyApplies: false) { _ in true })
            add(&result.withPolicyByFrequency, attack(byFrequency: true, policyApplies: true) { !refuses($0) })
            add(&result.withPolicyByModel, attack(byFrequency: false, policyApplies: true) { !refuses($0) })
        }
        return result
    }

    /// The thresholds the trade-off table shows (docs/GUESSING.md).
    public static let tradeOffThresholds = [0, 50, 100, 200, 300, 400, 500, 700, 1000, 2000]
}
