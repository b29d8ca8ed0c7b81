// SPDX-License-Identifier: Apache-2.0
/// Every one of the 389,112 patterns with its guess rank under a guessing model: 1
/// is the pattern an informed attacker tries first. Built once (a fraction of a
/// second in release), deterministic (ties go to the smaller pattern index, which
/// is dictionary order), and then looked up in microseconds. Holds one 4-byte rank
/// a pattern (1.5 MB), indexed by `PatternIndex`; probabilities and the order are
/// recomputed when a report needs them.
public struct GuessRanking: Sendable {
    public static let patternCount = PatternIndex.count

    /// Guess rank (1-based) by pattern index.
    let rankTable: [UInt32]
    /// The shape family each shape pattern draws, by pattern index (a few hundred).
    let families: [Int32: Int]
    public let model: GuessingModel

    /// The ranking the daemon uses, built at first use.
    public static let published = GuessRanking(model: GuessingModel())

    public init(model: GuessingModel) {
        self.model = model
        self.rankTable = GuessRanking.ranks(of: model.probabilities())
        self.families = GuessRanking.shapeFamilies(ShapeFamily.published)
    }

    /// Ranks from probabilities: sorted by probability, ties by index.
    static func ranks(of probabilities: [Double]) -> [UInt32] {
        var order = [UInt32](unsafeUninitializedCapacity: probabilities.count) { buffer, n in
            for i in 0..<probabilities.count { buffer[i] = UInt32(i) }
            n = probabilities.count
        }
        probabilities.withUnsafeBufferPointer { p in
            order.sort { p[Int($0)] != p[Int($1)] ? p[Int($0)] > p[Int($1)] : $0 < $1 }
        }
        var ranks = [UInt32](repeating: 0, count: probabilities.count)
        for (r, i) in order.enumerated() { ranks[Int(i)] = UInt32(r + 1) }
        return ranks
    }

    /// Pattern indices from rank 1 down (1.5 MB; built on each call).
    public func order() -> [UInt32] {
        var order = [UInt32](repeating: 0, count: rankTable.count)
        for (i, r) in rankTable.enumerated() { order[Int(r) - 1] = UInt32(i) }
        return order
    }

    /// The table of ranks, by pattern index (for reports and tests).
    public var ranks: [UInt32] { rankTable }

    /// The number of patterns ranked (389,112); kept for callers that touch it to
    /// have the ranking built before they time anything.
    public var keys: CountOnly { CountOnly(count: rankTable.count) }
    public struct CountOnly: Sendable { public let count: Int }

    // MARK: - Lookups

    /// The guess rank of a pattern (1 = tried first).
    public func rank(of pattern: Pattern) -> Int {
        PatternIndex.index(of: pattern.dots).map { Int(rankTable[$0]) } ?? GuessRanking.patternCount
    }

    public func rank(atIndex index: Int) -> Int { Int(rankTable[index]) }

    /// The best rank among the pattern's 8 rotations and mirror images.
    public func orientationRank(of pattern: Pattern) -> Int {
        pattern.withDots { orientationRank(of: $0) }
    }

    /// The same for dots in a buffer (a pattern's wiped storage), without copying them.
    public func orientationRank(of dots: UnsafeBufferPointer<UInt8>) -> Int {
        orientationRank(count: dots.count) { Int(dots[$0]) }
    }

    public func orientationRank(of dots: [Int]) -> Int {
        dots.withUnsafeBufferPointer { d in orientationRank(count: d.count) { d[$0] } }
    }

    /// The best rank among the images of the dots given one by one (`dot(i)` for
    /// i in 0..<count); a pattern's count when they are not a valid pattern.
    private func orientationRank(count: Int, _ dot: (Int) -> Int) -> Int {
        guard PatternIndex.index(count: count, dot) != nil else { return GuessRanking.patternCount }
        var best = GuessRanking.patternCount
        rankTable.withUnsafeBufferPointer { ranks in
            PatternIndex.forEachImage(count: count, dot) { best = min(best, Int(ranks[$0])) }
        }
        return best
    }

    public func probability(of pattern: Pattern) -> Double { model.probability(of: pattern.dots) }

    /// The shape family the pattern draws, if it is one of the named shapes.
    public func family(of pattern: Pattern) -> ShapeFamily? {
        pattern.withDots { d in PatternIndex.index(count: d.count) { Int(d[$0]) } }.flatMap { family(atIndex: $0) }
    }

    /// The shape family pattern number `index` draws, if any.
    public func family(atIndex index: Int) -> ShapeFamily? {
        families[Int32(index)].map { ShapeFamily.published[$0] }
    }

    /// The pattern at a rank (1…389,112).
    public func pattern(atRank rank: Int) -> [Int] {
        PatternIndex.dots(at: Int(order()[rank - 1]))
    }

    // MARK: - Keys

    static func key(_ dots: [Int]) -> UInt32 { PatternIndex.key(of: dots) }

    public static func dots(_ key: UInt32) -> [Int] { PatternIndex.dots(ofKey: key) }

    /// Which named shape each drawing's variants draw. A pattern drawn as listed or
    /// mirrored left to right (forwards or backwards) is named after that family
    /// (7415963 is an N, though it is also a Z turned); otherwise the first listed.
    static func shapeFamilies(_ list: [ShapeFamily]) -> [Int32: Int] {
        var out: [Int32: (family: Int, asListed: Bool)] = [:]
        for (f, family) in list.enumerated() {
            for drawing in family.drawings {
                for v in variants(of: drawing) {
                    guard let i = PatternIndex.index(of: v.dots) else { continue }
                    let asListed = v.symmetry == .identity || v.symmetry == .mirrorLeftRight
                    if let old = out[Int32(i)], old.asListed || !asListed { continue }
                    out[Int32(i)] = (f, asListed)
                }
            }
        }
        return out.mapValues(\.family)
    }

    /// A drawing in its 8 orientations, forwards and backwards, valid and distinct.
    static func variants(of digits: String) -> [(dots: [Int], symmetry: GridSymmetry)] {
        guard let pattern = try? Pattern(typed: digits) else { return [] }
        var seen = Set<[Int]>()
        var out: [(dots: [Int], symmetry: GridSymmetry)] = []
        for s in GridSymmetry.allCases {
            let image = s.map(pattern.dots)
            for candidate in [image, Array(image.reversed())] {
                // Backwards may pass over a dot not yet drawn: then it is another pattern.
                guard PatternIndex.index(of: candidate) != nil, seen.insert(candidate).inserted else { continue }
                out.append((candidate, s))
            }
        }
        return out
    }
}
