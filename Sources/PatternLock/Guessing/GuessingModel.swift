/// An estimate of how likely a person is to choose each pattern: a Markov chain
/// over dots (start dot, then each next dot given the last move) stopped at a
/// length drawn from a length distribution, mixed with shape families (letters,
/// digits, squares, lines) in all 8 orientations. The shape of Uellenbeck et al.
/// (CCS 2013) and Golla et al. (2019); every figure and its source is in
/// docs/GUESSING.md. No I/O: the daemon and the tests build it the same way.
public struct GuessingModel: Sendable {
    /// The model's numbers. `published` is the default; tests build others to check
    /// that every figure is computed from them.
    public struct Parameters: Sendable {
        /// P(first dot = d), index 1…9 (index 0 unused).
        public var start: [Double]
        /// P(length = n), index 4…9 (0…3 unused).
        public var length: [Double]
        /// Weight of a move to a neighbour along a row or column.
        public var orthogonal: Double
        /// Weight of a move to a diagonal neighbour.
        public var diagonal: Double
        /// Weight of a straight move over an already used dot (1→3 over a used 2).
        public var long: Double
        /// Weight of a knight move (1→6, 1→8, …).
        public var knight: Double
        /// Factor for a move with a rightward / downward component.
        public var rightward: Double
        public var downward: Double
        /// Factors by the angle to the previous move: straight on, a small turn
        /// (under 60°), a right-angle turn (60°–120°), a sharp turn back.
        public var straightOn: Double
        public var smallTurn: Double
        public var rightAngle: Double
        public var sharpTurn: Double
        /// The share of people who draw a recognizable shape (letter, digit, square,
        /// line); the rest follow the chain.
        public var shapeShare: Double
        /// Within a shape's orientations and directions, the share spread evenly; the
        /// rest follows the chain (a top-left start is likelier than a bottom-right one).
        public var shapeEvenShare: Double
        public var families: [ShapeFamily]

        public init(start: [Double], length: [Double], orthogonal: Double, diagonal: Double, long: Double,
                    knight: Double, rightward: Double, downward: Double, straightOn: Double, smallTurn: Double,
                    rightAngle: Double, sharpTurn: Double, shapeShare: Double, shapeEvenShare: Double,
                    families: [ShapeFamily]) {
            self.start = start
            self.length = length
            self.orthogonal = orthogonal
            self.diagonal = diagonal
            self.long = long
            self.knight = knight
            self.rightward = rightward
            self.downward = downward
            self.straightOn = straightOn
            self.smallTurn = smallTurn
            self.rightAngle = rightAngle
            self.sharpTurn = sharpTurn
            self.shapeShare = shapeShare
            self.shapeEvenShare = shapeEvenShare
            self.families = families
        }

        /// The figures of docs/GUESSING.md.
        public static let published = Parameters(
            // Løge 2015: 44 % start top-left, 77 % in a corner. The split of the other
            // corners and of the 23 % elsewhere is our estimate (docs/GUESSING.md).
            start: [0, 0.44, 0.06, 0.13, 0.05, 0.05, 0.03, 0.12, 0.04, 0.08],
            // Løge 2015: 4 and 5 dots most common; the shares are our estimate.
            length: [0, 0, 0, 0, 0.22, 0.24, 0.18, 0.14, 0.10, 0.12],
            // Uellenbeck 2013, Løge 2015: short moves to neighbours dominate, knight
            // moves and moves over used dots are rare; weights are our estimate.
            orthogonal: 1.0, diagonal: 0.45, long: 0.2, knight: 0.06,
            // Left to right and top to bottom (Løge 2015, von Zezschwitz 2015).
            rightward: 1.4, downward: 1.3,
            // Straight strokes and few direction changes (Uellenbeck 2013).
            straightOn: 2.0, smallTurn: 0.6, rightAngle: 1.0, sharpTurn: 0.45,
            shapeShare: 0.25, shapeEvenShare: 0.5,
            families: ShapeFamily.published)

        /// No preference at all: every start dot, length and move alike, no shapes.
        /// Tests use it to check that the figures follow the parameters.
        public static let flat = Parameters(
            start: [0] + [Double](repeating: 1.0 / 9, count: 9),
            length: [0, 0, 0, 0] + [Double](repeating: 1.0 / 6, count: 6),
            orthogonal: 1, diagonal: 1, long: 1, knight: 1, rightward: 1, downward: 1,
            straightOn: 1, smallTurn: 1, rightAngle: 1, sharpTurn: 1,
            shapeShare: 0, shapeEvenShare: 1, families: [])
    }

    public let parameters: Parameters

    public init(parameters: Parameters = .published) {
        self.parameters = parameters
    }

    /// The weight of moving from `from` to `to` after the move `previous → from`
    /// (nil for the first move). Valid moves only.
    @inline(__always)
    func weight(previous: Int?, from: Int, to: Int) -> Double {
        let p = parameters
        let dr = (to - 1) / 3 - (from - 1) / 3
        let dc = (to - 1) % 3 - (from - 1) % 3
        let adr = abs(dr), adc = abs(dc)
        var w: Double
        if adr + adc == 1 { w = p.orthogonal }
        else if adr == 1 && adc == 1 { w = p.diagonal }
        else if adr + adc == 3 { w = p.knight }
        else { w = p.long }
        if dc > 0 { w *= p.rightward }
        if dr > 0 { w *= p.downward }
        if let previous {
            let pr = (from - 1) / 3 - (previous - 1) / 3
            let pc = (from - 1) % 3 - (previous - 1) % 3
            let dot = Double(pr * dr + pc * dc)
            let cosine = dot / (Double(pr * pr + pc * pc).squareRoot() * Double(dr * dr + dc * dc).squareRoot())
            if cosine > 0.999 { w *= p.straightOn }
            else if cosine > 0.5 { w *= p.smallTurn }
            else if cosine >= -0.5 { w *= p.rightAngle }
            else { w *= p.sharpTurn }
        }
        return w
    }

    /// Calls `body(key, probability)` for every valid pattern under the chain alone,
    /// lengths 4…9 in turn and each length in increasing order of its digits, so the
    /// keys come out sorted. A key is the digits read as a decimal number.
    func forEachChainProbability(_ body: (UInt32, Double) -> Void) {
        // Every move's weight once: [previous (0 = none)][from][to].
        var table = [Double](repeating: 0, count: 1000)
        var middles = [Int](repeating: 0, count: 100)
        for from in 1...9 {
            for to in 1...9 where to != from {
                middles[from * 10 + to] = Pattern.dotPassedOver(from: from, to: to) ?? 0
                for previous in 0...9 where previous != from && previous != to {
                    table[(previous * 10 + from) * 10 + to] = weight(previous: previous == 0 ? nil : previous, from: from, to: to)
                }
            }
        }
        let p = parameters
        let startTotal = p.start[1...9].reduce(0, +)
        table.withUnsafeBufferPointer { weights in
            middles.withUnsafeBufferPointer { middle in
                func extend(_ length: Int, _ depth: Int, _ previous: Int, _ last: Int, _ used: Int, _ key: UInt32,
                            _ probability: Double) {
                    if depth == length { body(key, probability); return }
                    let row = (previous * 10 + last) * 10
                    var total = 0.0
                    for next in 1...9 where used & (1 << next) == 0 {
                        let m = middle[last * 10 + next]
                        if m != 0 && used & (1 << m) == 0 { continue }
                        total += weights[row + next]
                    }
                    for next in 1...9 where used & (1 << next) == 0 {
                        let m = middle[last * 10 + next]
                        if m != 0 && used & (1 << m) == 0 { continue }
                        extend(length, depth + 1, last, next, used | (1 << next), key * 10 + UInt32(next),
                               probability * weights[row + next] / total)
                    }
                }
                for length in 4...9 where p.length[length] > 0 {
                    for first in 1...9 where p.start[first] > 0 {
                        extend(length, 1, 0, first, 1 << first, UInt32(first), p.length[length] * p.start[first] / startTotal)
                    }
                }
            }
        }
    }
}
