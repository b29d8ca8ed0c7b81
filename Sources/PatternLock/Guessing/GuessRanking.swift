/// Every one of the 389,112 patterns with its probability under a guessing model
/// and its guess rank: 1 is the pattern an informed attacker tries first. Built
/// once (well under a second in release), deterministic (ties go to the smaller
/// digits), and then looked up in microseconds.
public struct GuessRanking: Sendable {
    public static let patternCount = 389_112

    /// Every pattern's digits read as a decimal number, in increasing order.
    public let keys: [UInt32]
    /// Probability of `keys[i]`.
    public let probabilities: [Double]
    /// Guess rank of `keys[i]` (1-based).
    public let ranks: [Int32]
    /// The best rank among the 8 orientations of `keys[i]`.
    public let orientationRanks: [Int32]
    /// Indices into `keys` from rank 1 down.
    let order: [Int32]
    /// The shape family each shape pattern belongs to (the heaviest one).
    let families: [UInt32: Int]
    public let model: GuessingModel

    /// The ranking the daemon uses, built at first use.
    public static let published = GuessRanking(model: GuessingModel())

    public init(model: GuessingModel) {
        self.model = model
        var keys: [UInt32] = []
        var chain: [Double] = []
        keys.reserveCapacity(GuessRanking.patternCount)
        chain.reserveCapacity(GuessRanking.patternCount)
        model.forEachChainProbability { key, p in
            keys.append(key)
            chain.append(p)
        }
        let p = model.parameters
        var probabilities = chain.map { $0 * (1 - p.shapeShare) }

        // Shapes: each family's weight split among its drawings, then among the
        // drawing's orientations and directions, partly evenly, partly as the chain.
        // A pattern drawn as listed or mirrored (forwards or backwards) is named after that family
        // (7415963 is an N, though it is also a Z turned); otherwise the heaviest.
        var families: [UInt32: (family: Int, asListed: Bool, weight: Double)] = [:]
        let familyTotal = p.families.reduce(0) { $0 + $1.weight }
        for (f, family) in p.families.enumerated() where familyTotal > 0 {
            for drawing in family.drawings {
                let variants = GuessRanking.variants(of: drawing).compactMap { v -> (UInt32, Int, Bool)? in
                    let k = GuessRanking.key(v.dots)
                    guard let i = GuessRanking.index(of: k, in: keys) else { return nil }
                    return (k, i, v.symmetry == .identity || v.symmetry == .mirrorLeftRight)
                }
                guard !variants.isEmpty else { continue }
                let share = p.shapeShare * family.weight / familyTotal / Double(family.drawings.count)
                let chainSum = variants.reduce(0.0) { $0 + chain[$1.1] }
                for (k, i, asListed) in variants {
                    let even = p.shapeEvenShare / Double(variants.count)
                    let followed = chainSum > 0 ? (1 - p.shapeEvenShare) * chain[i] / chainSum : 0
                    let w = share * (even + followed)
                    probabilities[i] += w
                    let old = families[k]
                    if old == nil || (asListed && !(old?.asListed ?? false))
                        || (asListed == old?.asListed && w > old?.weight ?? 0) {
                        families[k] = (f, asListed, w)
                    }
                }
            }
        }

        var byProbability = probabilities.enumerated().map { (p: $0.element, i: Int32($0.offset)) }
        // Ties go to the smaller index, which is the smaller digits: keys are sorted.
        byProbability.sort { $0.p != $1.p ? $0.p > $1.p : $0.i < $1.i }
        let order = byProbability.map(\.i)
        var ranks = [Int32](repeating: 0, count: keys.count)
        for (r, i) in order.enumerated() { ranks[Int(i)] = Int32(r + 1) }
        // Each orbit (a pattern and its images under the 8 symmetries) once: its
        // members all get the orbit's best rank.
        var orientationRanks = [Int32](repeating: 0, count: keys.count)
        // Where each symmetry sends each dot, flat: [symmetry][dot].
        let images = GridSymmetry.allCases.flatMap { s in (0...9).map { $0 == 0 ? UInt32(0) : UInt32(s.map($0)) } }
        keys.withUnsafeBufferPointer { kp in
            images.withUnsafeBufferPointer { image in
                var members = [Int](repeating: 0, count: GridSymmetry.allCases.count)
                for i in 0..<kp.count where orientationRanks[i] == 0 {
                    var best = ranks[i]
                    members[0] = i
                    for s in 1..<GridSymmetry.allCases.count {
                        // The image's key, digit by digit from the last.
                        var k = kp[i], out: UInt32 = 0, place: UInt32 = 1
                        while k > 0 {
                            out += image[s * 10 + Int(k % 10)] * place
                            place *= 10
                            k /= 10
                        }
                        let j = GuessRanking.index(of: out, in: kp) ?? i  // always found: images are valid
                        members[s] = j
                        best = min(best, ranks[j])
                    }
                    for j in members { orientationRanks[j] = best }
                }
            }
        }
        self.keys = keys
        self.probabilities = probabilities
        self.ranks = ranks
        self.orientationRanks = orientationRanks
        self.order = order
        self.families = families.mapValues(\.family)
    }

    // MARK: - Lookups

    /// The guess rank of a pattern (1 = tried first).
    public func rank(of pattern: Pattern) -> Int {
        GuessRanking.index(of: GuessRanking.key(pattern.dots), in: keys).map { Int(ranks[$0]) } ?? GuessRanking.patternCount
    }

    /// The best rank among the pattern's 8 rotations and mirror images.
    public func orientationRank(of pattern: Pattern) -> Int {
        GuessRanking.index(of: GuessRanking.key(pattern.dots), in: keys).map { Int(orientationRanks[$0]) }
            ?? GuessRanking.patternCount
    }

    public func probability(of pattern: Pattern) -> Double {
        GuessRanking.index(of: GuessRanking.key(pattern.dots), in: keys).map { probabilities[$0] } ?? 0
    }

    /// The shape family the pattern draws, if it is one of the model's shapes.
    public func family(of pattern: Pattern) -> ShapeFamily? {
        families[GuessRanking.key(pattern.dots)].map { model.parameters.families[$0] }
    }

    /// The pattern at a rank (1…389,112).
    public func pattern(atRank rank: Int) -> [Int] {
        GuessRanking.dots(keys[Int(order[rank - 1])])
    }

    /// Calls `body(rank, orientationRank, probability, dots-key)` for each pattern from rank 1 down.
    public func forEachByRank(_ body: (Int, Int, Double, UInt32) -> Void) {
        for (r, i) in order.enumerated() {
            body(r + 1, Int(orientationRanks[Int(i)]), probabilities[Int(i)], keys[Int(i)])
        }
    }

    // MARK: - Keys

    static func key(_ dots: [Int]) -> UInt32 { dots.reduce(0) { $0 * 10 + UInt32($1) } }

    static func key(_ digits: String) -> UInt32 { key(digits.unicodeScalars.map { Int($0.value) - 0x30 }) }

    public static func dots(_ key: UInt32) -> [Int] {
        var k = key
        var out: [Int] = []
        while k > 0 { out.append(Int(k % 10)); k /= 10 }
        return out.reversed()
    }

    static func index(of key: UInt32, in keys: UnsafeBufferPointer<UInt32>) -> Int? {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo < keys.count && keys[lo] == key ? lo : nil
    }

    static func index(of key: UInt32, in keys: [UInt32]) -> Int? {
        keys.withUnsafeBufferPointer { index(of: key, in: $0) }
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
                guard let p = try? Pattern(typed: String(candidate.map { Character(String($0)) })), p.dots == candidate,
                      seen.insert(candidate).inserted else { continue }
                out.append((candidate, s))
            }
        }
        return out
    }
}
