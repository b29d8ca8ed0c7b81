// SPDX-License-Identifier: Apache-2.0
/// An estimate of how likely a person is to choose each pattern, fitted to counts
/// of real people's patterns (docs/GUESSING.md). A mixture of three parts:
///
/// - a chain: start dot, length, then each next dot given the last move (second
///   order, backed off to first order), all counted from the data with smoothing,
///   the move counts pooled in part over the 8 symmetries of the grid;
/// - shapes: each pattern seen in the data lends its count to its whole symmetry
///   class (8 rotations and mirror images, forwards and backwards), spread partly
///   evenly and partly as the chain would, so a diamond seen from one corner makes
///   every diamond likely;
/// - the patterns seen, as seen (discounted counts).
///
/// No I/O: the daemon and the tests build it the same way from the committed counts.
public struct GuessingModel: Sendable {
    /// How the model is fitted. `published` is the default; tests build others to
    /// check that every figure is computed from them.
    public struct Parameters: Sendable, Equatable {
        /// Added to each start dot's and each length's count.
        public var startSmoothing: Double
        public var lengthSmoothing: Double
        /// Share of the move counts pooled over the 8 symmetries (0: as seen, 1: fully).
        public var symmetryPooling: Double
        /// Added to each first-order move count (from → to).
        public var moveSmoothing: Double
        /// Weight of the first-order estimate in each second-order one.
        public var backoff: Double
        /// Subtracted from each count of the seen-patterns and shape parts.
        public var discount: Double
        /// Within a symmetry class, the share spread evenly (the rest as the chain).
        public var classEvenShare: Double
        /// Weights of the chain, shape and seen-pattern parts (they are normalized).
        public var chainWeight: Double
        public var classWeight: Double
        public var seenWeight: Double

        public init(
            startSmoothing: Double, lengthSmoothing: Double, symmetryPooling: Double, moveSmoothing: Double,
            backoff: Double, discount: Double, classEvenShare: Double, chainWeight: Double,
            classWeight: Double, seenWeight: Double
        ) {
            self.startSmoothing = startSmoothing
            self.lengthSmoothing = lengthSmoothing
            self.symmetryPooling = symmetryPooling
            self.moveSmoothing = moveSmoothing
            self.backoff = backoff
            self.discount = discount
            self.classEvenShare = classEvenShare
            self.chainWeight = chainWeight
            self.classWeight = classWeight
            self.seenWeight = seenWeight
        }

        /// Chosen by cross-validation on the public data (docs/GUESSING.md).
        public static let published = Parameters(
            startSmoothing: 1, lengthSmoothing: 1, symmetryPooling: 0.5, moveSmoothing: 1, backoff: 5,
            discount: 0.5, classEvenShare: 0.3, chainWeight: 0.4, classWeight: 0.25, seenWeight: 0.35)

        /// The chain alone, no symmetry pooling: tests use it to check that figures follow the parameters.
        public static let chainOnly = Parameters(
            startSmoothing: 1, lengthSmoothing: 1, symmetryPooling: 0, moveSmoothing: 1, backoff: 5,
            discount: 0.5, classEvenShare: 0.3, chainWeight: 1, classWeight: 0, seenWeight: 0)
    }

    public let parameters: Parameters
    /// How many people the model was fitted to.
    public let people: Int
    /// P(first dot = d), index 1…9.
    let start: [Double]
    /// P(length = n), index 4…9.
    let length: [Double]
    /// Unnormalized weight of a move: [(previous * 10 + from) * 10 + to], previous 0 for the first move.
    let moves: [Double]
    /// Seen patterns: index → share of the seen-pattern part.
    let seen: [Int32: Double]
    /// Symmetry classes seen: the class's smallest index → its share of the shape part,
    /// and the sum of its members' chain probabilities.
    let classes: [Int32: (share: Double, chainSum: Double, size: Int)]

    /// The model fitted to all the public data with the published parameters.
    public init() { self.init(counts: .publicData(), parameters: .published) }

    public init(counts: PatternCounts, parameters: Parameters = .published) {
        self.parameters = parameters
        let p = parameters
        var start = [Double](repeating: p.startSmoothing, count: 10)
        start[0] = 0
        var length = [Double](repeating: p.lengthSmoothing, count: 10)
        for i in 0..<4 { length[i] = 0 }
        var first = [Double](repeating: 0, count: 100)  // from * 10 + to
        var second = [Double](repeating: 0, count: 1000)
        var people = 0
        for (index, count) in counts.entries {
            let dots = PatternIndex.dots(at: index)
            let c = Double(count)
            people += count
            start[dots[0]] += c
            length[dots.count] += c
            for i in 1..<dots.count {
                let previous = i >= 2 ? dots[i - 2] : 0
                for s in GridSymmetry.allCases {
                    let w = c * (s == .identity ? 1 - p.symmetryPooling : 0) + c * p.symmetryPooling / 8
                    let (a, b) = (s.map(dots[i - 1]), s.map(dots[i]))
                    let pr = previous == 0 ? 0 : s.map(previous)
                    first[a * 10 + b] += w
                    second[(pr * 10 + a) * 10 + b] += w
                }
            }
        }
        self.people = people
        let startTotal = start.reduce(0, +), lengthTotal = length.reduce(0, +)
        self.start = start.map { startTotal > 0 ? $0 / startTotal : 0 }
        self.length = length.map { lengthTotal > 0 ? $0 / lengthTotal : 0 }
        var firstOrder = [Double](repeating: 0, count: 100)
        for from in 1...9 {
            var total = 0.0
            for to in 1...9 where to != from { total += first[from * 10 + to] + p.moveSmoothing }
            for to in 1...9 where to != from {
                firstOrder[from * 10 + to] = total > 0 ? (first[from * 10 + to] + p.moveSmoothing) / total : 0
            }
        }
        var moves = [Double](repeating: 0, count: 1000)
        for previous in 0...9 {
            for from in 1...9 where from != previous {
                for to in 1...9 where to != from && to != previous {
                    moves[(previous * 10 + from) * 10 + to] =
                        second[(previous * 10 + from) * 10 + to]
                        + p.backoff * firstOrder[from * 10 + to]
                }
            }
        }
        self.moves = moves

        // Seen patterns and their symmetry classes, discounted.
        var seen: [Int32: Double] = [:]
        var classCounts: [Int32: Double] = [:]
        var classMembers: [Int32: [Int]] = [:]
        for (index, count) in counts.entries {
            let kept = max(Double(count) - p.discount, 0)
            if kept > 0 { seen[Int32(index), default: 0] += kept }
            let members = GuessingModel.symmetryClass(of: PatternIndex.dots(at: index))
            let id = Int32(members[0])
            classCounts[id, default: 0] += Double(count)
            classMembers[id] = members
        }
        // Sums in index order: a dictionary's order changes from process to process,
        // and a sum's last bit with it, which could swap two nearly tied ranks.
        let seenTotal = seen.sorted { $0.key < $1.key }.reduce(0.0) { $0 + $1.value }
        self.seen = seen.mapValues { $0 / seenTotal }
        let start0 = self.start, length0 = self.length
        var classes: [Int32: (share: Double, chainSum: Double, size: Int)] = [:]
        var classTotal = 0.0
        for (id, c) in classCounts.sorted(by: { $0.key < $1.key }) {
            guard c - p.discount > 0 else { continue }
            classTotal += c - p.discount
            let chainSum = classMembers[id, default: []].reduce(0.0) {
                $0 + GuessingModel.chain(PatternIndex.dots(at: $1), start: start0, length: length0, moves: moves)
            }
            classes[id] = (c - p.discount, chainSum, classMembers[id, default: []].count)
        }
        self.classes = classes.mapValues { ($0.share / classTotal, $0.chainSum, $0.size) }
    }

    /// The members of a pattern's symmetry class: its images under the 8 symmetries,
    /// forwards and (where valid) backwards, distinct, smallest index first.
    static func symmetryClass(of dots: [Int]) -> [Int] {
        var members = Set<Int>()
        for s in GridSymmetry.allCases {
            let image = s.map(dots)
            if let i = PatternIndex.index(of: image) { members.insert(i) }
            if let i = PatternIndex.index(of: image.reversed()) { members.insert(i) }
        }
        return members.sorted()
    }

    /// The chain's probability of a pattern.
    static func chain(_ dots: [Int], start: [Double], length: [Double], moves: [Double]) -> Double {
        var p = start[dots[0]] * length[dots.count]
        var used = 1 << dots[0]
        for i in 1..<dots.count {
            let previous = i >= 2 ? dots[i - 2] : 0
            let row = (previous * 10 + dots[i - 1]) * 10
            var total = 0.0
            for next in 1...9 where PatternIndex.allowed(used, dots[i - 1], next) { total += moves[row + next] }
            p *= total > 0 ? moves[row + dots[i]] / total : 0
            used |= 1 << dots[i]
        }
        return p
    }

    var mixture: (chain: Double, classes: Double, seen: Double) {
        let p = parameters
        let total = p.chainWeight + (classes.isEmpty ? 0 : p.classWeight) + (seen.isEmpty ? 0 : p.seenWeight)
        return (p.chainWeight / total, classes.isEmpty ? 0 : p.classWeight / total, seen.isEmpty ? 0 : p.seenWeight / total)
    }

    /// The probability of one pattern (its dots valid).
    public func probability(of dots: [Int]) -> Double {
        guard let index = PatternIndex.index(of: dots) else { return 0 }
        let w = mixture
        let chain = GuessingModel.chain(dots, start: start, length: length, moves: moves)
        var p = w.chain * chain + w.seen * (seen[Int32(index)] ?? 0)
        let members = GuessingModel.symmetryClass(of: dots)
        if let c = classes[Int32(members[0])] {
            let e = parameters.classEvenShare
            p += w.classes * c.share * (e / Double(c.size) + (1 - e) * (c.chainSum > 0 ? chain / c.chainSum : 0))
        }
        return p
    }

    /// Every pattern's probability, by index.
    public func probabilities() -> [Double] {
        var out = [Double](repeating: 0, count: PatternIndex.count)
        let w = mixture
        let start = self.start, length = self.length
        moves.withUnsafeBufferPointer { moves in
            out.withUnsafeMutableBufferPointer { out in
                PatternIndex.forEach(
                    first: { start[$0] },
                    moves: { used, previous, last, factors in
                        let row = (previous * 10 + last) * 10
                        var total = 0.0
                        for next in 1...9 where PatternIndex.allowed(used, last, next) { total += moves[row + next] }
                        for next in 1...9 { factors[next] = total > 0 ? moves[row + next] / total : 0 }
                    }
                ) { index, weight, n, _ in
                    out[index] = w.chain * weight * length[n]
                }
            }
        }
        for (index, share) in seen { out[Int(index)] += w.seen * share }
        let e = parameters.classEvenShare
        for (id, c) in classes {
            for member in GuessingModel.symmetryClass(of: PatternIndex.dots(at: Int(id))) {
                let chain = GuessingModel.chain(PatternIndex.dots(at: member), start: start, length: length, moves: moves)
                out[member] += w.classes * c.share * (e / Double(c.size) + (1 - e) * (c.chainSum > 0 ? chain / c.chainSum : 0))
            }
        }
        return out
    }
}

/// How many people chose each pattern: the data a model is fitted to.
public struct PatternCounts: Sendable {
    /// (pattern index, people), increasing index, counts above 0.
    public let entries: [(index: Int, count: Int)]

    public init(_ counts: [Int: Int]) {
        entries = counts.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public var people: Int { entries.reduce(0) { $0 + $1.count } }

    /// The committed counts of the public data (PublicPatternCounts), all folds or
    /// only the given ones.
    public static func publicData(folds: Set<Int>? = nil) -> PatternCounts {
        let k = PublicPatternCounts.foldCount
        var counts: [Int: Int] = [:]
        for (i, key) in PublicPatternCounts.keys.enumerated() {
            guard let index = PatternIndex.index(ofKey: key) else { continue }
            var n = 0
            for f in 0..<k where folds?.contains(f) ?? true { n += Int(PublicPatternCounts.counts[i * k + f]) }
            if n > 0 { counts[index, default: 0] += n }
        }
        return PatternCounts(counts)
    }
}

/// The derived counts of public patterns the model is fitted to; the numbers are in
/// Data/PublicPatternCounts.swift, written by scripts/guessing-counts.py.
public enum PublicPatternCounts {
    public static let source =
        "all_related.txt of github.com/gwusec/2020-ACSAC-Double-Pattern-Artifacts (commit \(sourceCommit))"
    public static var folds: Int { foldCount }
}
