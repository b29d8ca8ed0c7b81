import Testing
#if canImport(Glibc)
import Glibc
#endif
import PatternLock

/// The guessing model and the enroll policy built on it (docs/GUESSING.md).
@Suite("Guessing model and enroll policy")
struct GuessingTests {
    static let ranking = GuessRanking.published

    func pattern(_ digits: String) throws -> Pattern { try Pattern(typed: digits) }

    @Test("Every valid pattern gets exactly one rank, and the ranks are 1…389,112")
    func everyPatternOneRank() {
        let r = Self.ranking
        #expect(r.keys.count == GuessRanking.patternCount)
        #expect(Set(r.keys).count == GuessRanking.patternCount)
        var seen = [Bool](repeating: false, count: GuessRanking.patternCount + 1)
        for rank in r.ranks {
            #expect(rank >= 1 && Int(rank) <= GuessRanking.patternCount && !seen[Int(rank)])
            seen[Int(rank)] = true
        }
        // Every key is a valid, normalized pattern.
        for k in r.keys.prefix(1000) + r.keys.suffix(1000) {
            let dots = GuessRanking.dots(k)
            #expect((try? Pattern(typed: String(dots.map { Character(String($0)) })))?.dots == dots)
        }
        // Probabilities are a distribution and fall with the rank.
        let total = r.probabilities.reduce(0, +)
        #expect(abs(total - 1) < 1e-9)
        var previous = Double.infinity
        r.forEachByRank { _, _, p, _ in
            #expect(p <= previous)
            previous = p
        }
    }

    @Test("The ranking is deterministic and builds well under a second")
    func deterministicAndFast() {
        let clock = ContinuousClock()
        var built: GuessRanking?
        let elapsed = clock.measure { built = GuessRanking(model: GuessingModel()) }
        print("ranking build: \(elapsed)")
        #expect(elapsed < .milliseconds(1000))
        guard let again = built else { Issue.record("not built"); return }
        #expect(again.keys == Self.ranking.keys)
        #expect(again.ranks == Self.ranking.ranks)
        #expect(again.orientationRanks == Self.ranking.orientationRanks)
    }

    @Test("Rotations and mirror images of the common shapes rank near each other", arguments: [
        "14789", "1235789", "7415963", "7415369", "3214789", "1478963", "12357", "12369874", "321456987",
    ])
    func orientationsRankNear(digits: String) throws {
        let base = try pattern(digits)
        let ranks = GridSymmetry.allCases.map { Self.ranking.rank(of: Pattern(unchecked: $0.map(base.dots))) }
        // Every orientation within the 1,000 patterns people choose most, and the
        // orientation's own rank orders the orientations as the start-dot figures do.
        #expect(ranks.allSatisfy { $0 <= 1000 }, "\(digits): \(ranks)")
        #expect((ranks.max() ?? 0) - (ranks.min() ?? 0) < 1000, "\(digits): \(ranks)")
    }

    @Test("The model follows the published figures: top-left start and short patterns come first")
    func followsFigures() {
        let r = Self.ranking
        var topLeft = 0.0, corners = 0.0, fourOrFive = 0.0
        r.forEachByRank { _, _, p, key in
            let dots = GuessRanking.dots(key)
            if dots[0] == 1 { topLeft += p }
            if [1, 3, 7, 9].contains(dots[0]) { corners += p }
            if dots.count <= 5 { fourOrFive += p }
        }
        // Løge 2015: 44 % top-left, 77 % corners. The shapes shift these a little.
        #expect(abs(topLeft - 0.44) < 0.05, "top-left \(topLeft)")
        #expect(abs(corners - 0.77) < 0.05, "corners \(corners)")
        #expect(fourOrFive > 0.4)
    }

    @Test("The default policy: top-5 allowed patterns reach under 1 % of users, under 1 % of patterns refused")
    func defaultPolicyFigures() {
        let policy = EnrollPolicy()
        let clock = ContinuousClock()
        var f: EnrollPolicy.Figures?
        let elapsed = clock.measure { f = policy.figures(guesses: [5, 10, 16, 20]) }
        guard let f else { return }
        print("figures \(elapsed): refused \(f.refusedCount) (\(f.refusedShare)); without \(f.successWithout); with \(f.successWith)")
        #expect(f.refusedCount < GuessRanking.patternCount / 100)
        #expect(f.successWith[0] < 0.01)
        // Without a policy the model agrees with the studies: a few percent within
        // 5 guesses; Song 2015 ~10 % within 16, Aviv 2015 15 % within 20.
        #expect(f.successWithout[0] > 0.02)
        #expect(f.successWithout[2] > 0.07 && f.successWithout[2] < 0.2)
        #expect(f.successWithout[3] > 0.08 && f.successWithout[3] < 0.25)
    }

    @Test("The figures are computed from the model, not constants")
    func figuresFollowTheModel() {
        let flat = GuessRanking(model: GuessingModel(parameters: .flat))
        let published = EnrollPolicy().figures()
        let policy = EnrollPolicy(ranking: flat)
        let f = policy.figures()
        #expect(f != published)
        // Recomputed here by brute force from the flat ranking's probabilities.
        let sorted = flat.probabilities.sorted(by: >)
        #expect(abs(f.successWithout[0] - sorted.prefix(5).reduce(0, +)) < 1e-12)
        var refused = 0, allowed: [Double] = [], refusedShare = 0.0
        flat.forEachByRank { _, orientationRank, p, _ in
            if orientationRank <= EnrollPolicy.defaultThreshold { refused += 1; refusedShare += p }
            else if allowed.count < 5 { allowed.append(p) }
        }
        #expect(f.refusedCount == refused)
        #expect(abs(f.successWith[0] - allowed.reduce(0, +) / (1 - refusedShare)) < 1e-12)
        // Threshold 0 and 4 dots: nothing refused, the same figures with and without.
        let off = EnrollPolicy(threshold: 0, ranking: flat).figures()
        #expect(off.refusedCount == 0 && off.successWith == off.successWithout)
    }

    @Test("Well-known shapes and their mirror images are refused", arguments: [
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
        #expect(GuessFeedback.strength(guesses: 123_456) .hasPrefix("Strong: "))
        #expect(GuessFeedback.strength(guesses: 123_456).contains("about 120,000 guesses"))
    }
}

extension Pattern {
    /// A pattern from dots known to be valid (symmetries of valid patterns).
    init(unchecked dots: [Int]) {
        // Test-only: a valid pattern stays valid under the grid's symmetries.
        self = try! Pattern(typed: String(dots.map { Character(String($0)) }))
    }
}
