// SPDX-License-Identifier: Apache-2.0
import Testing
#if canImport(Glibc)
import Glibc
#endif
import PatternLock

/// The guessing model, fitted to the public data, and the enroll policy built on
/// it (docs/GUESSING.md).
@Suite("Guessing model and enroll policy")
struct GuessingTests {
    static let ranking = GuessRanking.published

    func pattern(_ digits: String) throws -> Pattern { try Pattern(typed: digits) }

    @Test("Pattern indices number the 389,112 valid patterns one to one, in dictionary order")
    func patternIndex() {
        var previous: [Int] = []
        var byLength = [Int](repeating: 0, count: 10)
        for i in 0..<PatternIndex.count {
            let dots = PatternIndex.dots(at: i)
            if PatternIndex.index(of: dots) != i { Issue.record("\(dots) is not \(i)"); return }
            if i > 0 && !previous.lexicographicallyPrecedes(dots) { Issue.record("\(previous) before \(dots)"); return }
            byLength[dots.count] += 1
            previous = dots
        }
        #expect(byLength[4...] == [1624, 7152, 26016, 72912, 140_704, 140_704])
        // Not patterns: too short, a dot twice, over an unused dot.
        #expect(PatternIndex.index(of: [1, 2, 3]) == nil)
        #expect(PatternIndex.index(of: [1, 2, 1, 4]) == nil)
        #expect(PatternIndex.index(of: [1, 3, 6, 9]) == nil)
        #expect(PatternIndex.index(of: [2, 1, 3, 6]) != nil)
    }

    @Test("Every valid pattern gets exactly one rank, and the ranks are 1…389,112")
    func everyPatternOneRank() {
        let r = Self.ranking
        #expect(r.ranks.count == GuessRanking.patternCount)
        var seen = [Bool](repeating: false, count: GuessRanking.patternCount + 1)
        for rank in r.ranks {
            if !(rank >= 1 && Int(rank) <= GuessRanking.patternCount && !seen[Int(rank)]) {
                Issue.record("rank \(rank) twice or out of range"); return
            }
            seen[Int(rank)] = true
        }
        // Probabilities are a distribution and fall with the rank.
        let p = r.model.probabilities()
        #expect(abs(p.reduce(0, +) - 1) < 1e-9)
        let order = r.order()
        for k in 1..<order.count where p[Int(order[k])] > p[Int(order[k - 1])] {
            Issue.record("rank \(k + 1) likelier than rank \(k)"); return
        }
        // One pattern's probability alone is the same as in the whole table.
        for i in stride(from: 0, to: PatternIndex.count, by: 997) {
            let one = r.model.probability(of: PatternIndex.dots(at: i))
            #expect(abs(one - p[i]) <= 1e-9 * p[i] + 1e-18, "\(i)")
        }
    }

    @Test("Fitting is deterministic and the ranking builds in well under a second")
    func deterministicAndFast() {
        let clock = ContinuousClock()
        var built: GuessRanking?
        let elapsed = clock.measure { built = GuessRanking(model: GuessingModel()) }
        print("fit and ranking build: \(elapsed)")
        #expect(elapsed < .milliseconds(1000))
        guard let again = built else { Issue.record("not built"); return }
        #expect(again.ranks == Self.ranking.ranks)
        #expect(again.model.probabilities() == Self.ranking.model.probabilities())
        // The folds too: built twice, the same figures.
        let a = CrossValidation(data: (0..<PublicPatternCounts.folds).map { PatternCounts.publicData(folds: [$0]) })
        #expect(a.evaluate(EnrollPolicy()) == CrossValidation.published.evaluate(EnrollPolicy()))
    }

    @Test("The model follows the public data: starts, lengths, the most common patterns")
    func followsTheData() throws {
        let data = PatternCounts.publicData()
        #expect(data.people == 4637)
        let p = Self.ranking.model.probabilities()
        var start = [Double](repeating: 0, count: 10), length = [Double](repeating: 0, count: 10)
        var realStart = [Double](repeating: 0, count: 10), realLength = [Double](repeating: 0, count: 10)
        for i in 0..<PatternIndex.count {
            let dots = PatternIndex.dots(at: i)
            start[dots[0]] += p[i]
            length[dots.count] += p[i]
        }
        for (i, c) in data.entries {
            let dots = PatternIndex.dots(at: i)
            realStart[dots[0]] += Double(c) / 4637
            realLength[dots.count] += Double(c) / 4637
        }
        for d in 1...9 { #expect(abs(start[d] - realStart[d]) < 0.03, "start \(d): \(start[d]) vs \(realStart[d])") }
        for n in 4...9 { #expect(abs(length[n] - realLength[n]) < 0.03, "length \(n): \(length[n]) vs \(realLength[n])") }
        // The public data's most common patterns are near the top of the ranking.
        for digits in ["12369", "1235789", "14789", "1478", "1236"] {
            #expect(Self.ranking.rank(of: try pattern(digits)) <= 20, "\(digits)")
        }
    }

    @Test(
        "Common shapes of the public data and the published ones, in every rotation and mirror image, are refused",
        arguments: [
            "12369", "1235789", "14789", "1478", "1236", "2589", "123654789", "1596", "7415963", "14753",
            "2486", "24865", "2586", "2584", "4753", "2357", "12369874", "1254", "12357", "3214789",
            "1478963", "7415369", "321456987",
        ])
    func commonShapesRefused(digits: String) throws {
        let policy = EnrollPolicy()
        let base = try pattern(digits)
        for s in GridSymmetry.allCases {
            let image = Pattern(unchecked: s.map(base.dots))
            guard case .common = policy.refusal(for: image) else {
                Issue.record(
                    "\(image.digits) (\(digits) under \(s)) allowed: rank \(Self.ranking.rank(of: image)), best orientation \(Self.ranking.orientationRank(of: image))"
                )
                continue
            }
        }
    }

    @Test("The cross-validated figures are computed from the data, not constants")
    func crossValidationIsComputed() throws {
        // Two small folds, worked by hand. Fold 0: A×3, B×1; fold 1: A×2, C×1.
        let a = PatternIndex.index(of: [1, 4, 7, 8, 9])!, b = PatternIndex.index(of: [2, 9, 4, 7, 1, 6])!
        let c = PatternIndex.index(of: [5, 1, 8, 3])!
        let folds = [PatternCounts([a: 3, b: 1]), PatternCounts([a: 2, c: 1])]
        let cv = CrossValidation(data: folds)
        #expect(cv.people == 7 && cv.foldCount == 2)
        // No policy: the frequency attacker's first guess is A in both folds (3 + 2 of 7).
        let off = cv.evaluate(EnrollPolicy(threshold: 0), guesses: [1])
        #expect(off.refused == 0 && off.withoutPolicyByFrequency == [5] && off.withPolicyByFrequency == [5])
        // Refusing A (and its images) by the denylist: 5 of 7 refused; the attacker's first
        // allowed guess is the other fold's B or C, which the test fold does not hold.
        let deny = EnrollPolicy(threshold: 0, denylist: [[1, 4, 7, 8, 9]])
        let r = deny.crossValidated(guesses: [1, 2], on: cv)
        #expect(r.refused == 5 && r.withoutPolicyByFrequency == [5, 5])
        #expect(r.withPolicyByFrequency == [0, 0])
        #expect(r.renormalized(1) == 0.5 && r.raw(1) == 1.0 / 7)

        // On the public data: other parameters give other figures, and the refused
        // share is the refused people over all people.
        let published = EnrollPolicy().crossValidated()
        let chainOnly = EnrollPolicy().crossValidated(on: CrossValidation(parameters: .chainOnly))
        #expect(published != chainOnly)
        #expect(published.people == 4637 && abs(published.refusedShare - Double(published.refused) / 4637) < 1e-12)
        // Without a policy the real figures: the 5 most common patterns reach about 9 %.
        #expect(published.withoutPolicyByFrequency[0] > 300 && published.withoutPolicyByFrequency[0] < 550)
    }

    @Test("The default policy: within 5 guesses an informed attacker reaches under 1 % of people (cross-validated)")
    func defaultPolicyGoal() {
        let clock = ContinuousClock()
        var result: CrossValidation.Result?
        let elapsed = clock.measure { result = EnrollPolicy().crossValidated(guesses: [5, 10, 20]) }
        guard let r = result else { return }
        print(
            "cross-validation \(elapsed): refused \(r.refused) of \(r.people); by frequency \(r.withPolicyByFrequency), by model \(r.withPolicyByModel); without \(r.withoutPolicyByFrequency)"
        )
        #expect(r.renormalized(r.withPolicyByFrequency[0]) < 0.01)
        #expect(r.renormalized(r.withPolicyByModel[0]) < 0.01)
        #expect(r.refusedShare < 0.9)
        #expect(EnrollPolicy().refusedPatternCount() < GuessRanking.patternCount / 100)
    }

    @Test("The patterns the public data's frequency attacker tries first are refused")
    func frequentPatternsRefused() {
        // An attacker with the whole public data guesses its most frequent allowed
        // patterns first: under the default they are ones few people chose.
        let policy = EnrollPolicy()
        let data = PatternCounts.publicData()
        let allowed = data.entries.filter { !policy.refuses(PatternIndex.dots(at: $0.index), ranking: Self.ranking) }
            .sorted { $0.count > $1.count }
        let top = allowed.prefix(5).map { (PatternIndex.key(of: PatternIndex.dots(at: $0.index)), $0.count) }
        let refusedPeople = data.people - allowed.reduce(0) { $0 + $1.count }
        print("public data under the default: \(refusedPeople) of \(data.people) refused; most frequent allowed: \(top)")
        #expect(allowed.prefix(5).reduce(0) { $0 + $1.count } <= 15)
    }

    @Test("The default holds on other random splits of the same people into 5 folds, on average")
    func otherSplits() {
        // People with the same pattern are interchangeable, so dealing the people out
        // again (each pattern repeated by its count, shuffled) is a new random split.
        var people: [Int] = []
        for (i, c) in PatternCounts.publicData().entries { people += Array(repeating: i, count: c) }
        var rng = SplitMix(seed: 21)
        var lines: [String] = []
        var sums = (refused: 0.0, frequency: 0.0, model: 0.0)
        let thresholds = [300, 400, 500, EnrollPolicy.defaultThreshold, 1000]
        var byThreshold = [Int: [Double]]()
        let splits = 4
        for _ in 0..<splits {
            people.shuffle(using: &rng)
            var folds = [[Int: Int]](repeating: [:], count: 5)
            for (n, i) in people.enumerated() { folds[n % 5][i, default: 0] += 1 }
            let cv = CrossValidation(data: folds.map { PatternCounts($0) })
            for t in thresholds {
                let r = EnrollPolicy(threshold: t).crossValidated(guesses: [5], on: cv)
                byThreshold[t, default: []].append(r.renormalized(r.withPolicyByFrequency[0]))
                if t == EnrollPolicy.defaultThreshold {
                    sums.refused += r.refusedShare / Double(splits)
                    sums.frequency += r.renormalized(r.withPolicyByFrequency[0]) / Double(splits)
                    sums.model += r.renormalized(r.withPolicyByModel[0]) / Double(splits)
                    lines.append(
                        "refused \(r.refusedShare), 5 guesses \(r.renormalized(r.withPolicyByFrequency[0])) / \(r.renormalized(r.withPolicyByModel[0]))"
                    )
                }
            }
        }
        print("other splits, default: \(lines); mean \(sums); by threshold (frequency): \(byThreshold.sorted { $0.key < $1.key })")
        #expect(sums.frequency < 0.01 && sums.model < 0.01)
    }

    @Test("Rotations and mirror images of a pattern share its orientation rank")
    func orientationRank() throws {
        let base = try pattern("2486")
        let ranks = GridSymmetry.allCases.map { Self.ranking.orientationRank(of: Pattern(unchecked: $0.map(base.dots))) }
        #expect(Set(ranks).count == 1)
        #expect(ranks[0] == GridSymmetry.allCases.map { Self.ranking.rank(of: Pattern(unchecked: $0.map(base.dots))) }.min())
    }

    @Test(
        "Well-known shapes and their mirror images are refused",
        arguments: [
            "14789", "36987", "74123", "96321",  // L
            "1235789", "3215987",  // Z
            "7415963", "9635741",  // N
            "12369874", "1254", "5698",  // squares
            "123654789", "12357", "32159",  // lines, 7
        ])
    func wellKnownRefused(digits: String) throws {
        let policy = EnrollPolicy()
        let refusal = policy.refusal(for: try pattern(digits))
        guard case .common = refusal else { Issue.record("\(digits) allowed: rank \(Self.ranking.rank(of: try pattern(digits)))"); return }
    }

    @Test("Most random patterns of 6 dots or more are accepted")
    func randomAccepted() {
        let policy = EnrollPolicy()
        var rng = SystemRandomNumberGenerator()
        var refused = 0
        var tried = 0
        while tried < 2000 {
            let dots = Array((1...9).shuffled(using: &rng).prefix(Int.random(in: 6...9, using: &rng)))
            guard let p = try? Pattern(typed: String(dots.map { Character(String($0)) })), p.dots.count >= 6 else { continue }
            tried += 1
            if policy.refusal(for: p) != nil { refused += 1 }
        }
        #expect(refused < 50, "\(refused) of 2000 refused")
    }

    @Test("Minimum dots and the denylist")
    func minimumAndDenylist() throws {
        let deny = try EnrollPolicy.parseDenylist("# site list\n294716\n\n  529637  # a comment\n")
        #expect(deny == [[2, 9, 4, 7, 1, 6], [5, 2, 9, 6, 3, 7]])
        let policy = EnrollPolicy(minimumDots: 6, denylist: deny)
        #expect(policy.refusal(for: try pattern("294716")) == .denylisted)
        #expect(policy.refusal(for: try pattern("29471")) == .tooFewDots(minimum: 6))
        #expect(policy.refusal(for: try pattern("294761")) == nil)
        #expect(throws: EnrollPolicy.DenylistError.self) { try EnrollPolicy.parseDenylist("1234\n12a4\n") }
        do { _ = try EnrollPolicy.parseDenylist("1234\n121\n") } catch {
            #expect(error.line == 2)
        }
        // Refused patterns counted: 4- and 5-dot patterns all refused at a minimum of 6.
        let six = EnrollPolicy(threshold: 0, minimumDots: 6)
        #expect(six.refusedPatternCount() == 1624 + 7152)
    }

    @Test("The policy judged on a pattern's own storage agrees with the dots as an array, for every pattern")
    func refusalOnTheStorageAgreesWithTheArray() throws {
        let deny: Set<[Int]> = [[2, 9, 4, 7, 1, 6], [5, 2, 9, 6, 3, 7], [1, 2, 3, 6, 9]]
        for policy in [EnrollPolicy(), EnrollPolicy(minimumDots: 6, denylist: deny)] {
            var refused = 0
            for i in 0..<PatternIndex.count {
                let dots = PatternIndex.dots(at: i)
                let p = try pattern(dots.map(String.init).joined())
                let verdict = policy.refusal(for: p)
                #expect((verdict != nil) == policy.refuses(dots, ranking: Self.ranking), "\(dots)")
                if case .common(let rank, _, _)? = verdict { #expect(rank == Self.ranking.orientationRank(of: dots)) }
                if verdict != nil { refused += 1 }
            }
            #expect(refused == policy.refusedPatternCount())
        }
    }

    @Test("The refusal sentence says why and how to do better")
    func sentences() throws {
        let policy = EnrollPolicy()
        let l = try pattern("14789")
        guard let refusal = policy.refusal(for: l) else { Issue.record("L allowed"); return }
        let s = GuessFeedback.sentence(for: refusal, pattern: l)
        #expect(s.hasPrefix("This is one of the "))
        #expect(s.contains("an L from a corner"))
        #expect(s.contains("starts in the middle of an edge"))
        let diamond = try pattern("2486")
        if let refusal = policy.refusal(for: diamond) {
            #expect(GuessFeedback.sentence(for: refusal, pattern: diamond).contains("a diamond from the middle of an edge"))
        } else {
            Issue.record("diamond allowed")
        }
        #expect(GuessFeedback.strength(guesses: 123_456).hasPrefix("Strong: "))
        #expect(GuessFeedback.strength(guesses: 123_456).contains("about 120,000 guesses"))
    }
}

/// A small seeded generator, so the test's splits are the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Pattern {
    /// A pattern from dots known to be valid (symmetries of valid patterns).
    init(unchecked dots: [Int]) {
        // Test-only: a valid pattern stays valid under the grid's symmetries.
        self = try! Pattern(typed: String(dots.map { Character(String($0)) }))
    }
}
