// SPDX-License-Identifier: Apache-2.0
/// Numbers every valid pattern 0…389,111 in dictionary order of its dots, a
/// pattern before its extensions (1235, 12354, 123547, …, 1236, …). The number is
/// computed from a table of 10,240 subtree sizes, so the guessing tables are flat
/// arrays indexed by it (4 bytes a pattern) and no table of the patterns is kept.
public enum PatternIndex {
    public static let count = 389_112

    /// The dot a straight move passes over, or 0: [from * 10 + to].
    static let middle: [UInt8] = (0..<100).map { i in
        let (a, b) = (i / 10, i % 10)
        guard (1...9).contains(a), (1...9).contains(b), a != b else { return 0 }
        return UInt8(Pattern.dotPassedOver(from: a, to: b) ?? 0)
    }

    /// How many patterns of 4 dots or more start with a given prefix (itself
    /// included): [used << 4 | last], `used` a mask with bit d for dot d.
    static let subtree: [Int32] = {
        var table = [Int32](repeating: -1, count: 1024 << 4)
        func size(_ used: Int, _ last: Int, _ length: Int) -> Int32 {
            let slot = used << 4 | last
            if table[slot] >= 0 { return table[slot] }
            var n: Int32 = length >= 4 ? 1 : 0
            for next in 1...9 where allowed(used, last, next) {
                n += size(used | 1 << next, next, length + 1)
            }
            table[slot] = n
            return n
        }
        for first in 1...9 { _ = size(1 << first, first, 1) }
        return table
    }()

    /// May a pattern that has used `used` and ends at `last` go on to `next`?
    @inline(__always)
    static func allowed(_ used: Int, _ last: Int, _ next: Int) -> Bool {
        if used & (1 << next) != 0 { return false }
        let m = Int(middle[last * 10 + next])
        return m == 0 || used & (1 << m) != 0
    }

    /// The number of a valid pattern's dots; nil when they are not a valid pattern
    /// of 4 dots or more.
    public static func index(of dots: some Collection<Int>) -> Int? {
        let array = Array(dots)
        return array.withUnsafeBufferPointer { d in index(count: d.count) { d[$0] } }
    }

    public static func index(of dots: [Int]) -> Int? {
        dots.withUnsafeBufferPointer { d in index(count: d.count) { d[$0] } }
    }

    /// The same from the dots given one by one: `dot(i)` for i in 0..<count.
    @inline(__always)
    static func index(count: Int, _ dot: (Int) -> Int) -> Int? {
        guard count >= 4 && count <= 9 else { return nil }
        return subtree.withUnsafeBufferPointer { subtree in
            middle.withUnsafeBufferPointer { middle in
                @inline(__always) func allowed(_ used: Int, _ last: Int, _ next: Int) -> Bool {
                    if used & (1 << next) != 0 { return false }
                    let m = Int(middle[last * 10 + next])
                    return m == 0 || used & (1 << m) != 0
                }
                var index = 0
                var used = 0
                var last = 0
                for position in 0..<count {
                    let d = dot(position)
                    guard d >= 1 && d <= 9 else { return nil }
                    if position == 0 {
                        for smaller in 1..<d { index += Int(subtree[(1 << smaller) << 4 | smaller]) }
                    } else {
                        guard allowed(used, last, d) else { return nil }
                        if position >= 4 { index += 1 }  // the prefix itself comes first
                        for smaller in 1..<d where allowed(used, last, smaller) {
                            index += Int(subtree[(used | 1 << smaller) << 4 | smaller])
                        }
                    }
                    used |= 1 << d
                    last = d
                }
                return index
            }
        }
    }

    /// Where each symmetry sends each dot: [symmetry * 10 + dot].
    static let symmetryTable: [Int] = GridSymmetry.allCases.flatMap { s in (0...9).map { $0 == 0 ? 0 : s.map($0) } }

    /// Calls `body(index)` for the pattern's images under the 8 symmetries, without
    /// allocating (the dots must be a valid pattern).
    /// The dots are given one by one (`dot(i)` for i in 0..<count): each image is
    /// numbered as it is mapped, and never written down.
    @inline(__always)
    static func forEachImage(count: Int, _ dot: (Int) -> Int, _ body: (Int) -> Void) {
        symmetryTable.withUnsafeBufferPointer { table in
            for s in 0..<8 {
                if let i = index(count: count, { table[s * 10 + dot($0)] }) { body(i) }
            }
        }
    }

    /// The number of a pattern written as its dots read as a decimal number (14789).
    public static func index(ofKey key: UInt32) -> Int? {
        index(of: dots(ofKey: key))
    }

    public static func dots(ofKey key: UInt32) -> [Int] {
        var k = key
        var out: [Int] = []
        while k > 0 { out.append(Int(k % 10)); k /= 10 }
        return out.reversed()
    }

    public static func key(of dots: some Sequence<Int>) -> UInt32 { dots.reduce(0) { $0 * 10 + UInt32($1) } }

    /// The dots of pattern number `index` (0…389,111).
    public static func dots(at index: Int) -> [Int] {
        precondition((0..<count).contains(index))
        var rest = index
        var dots: [Int] = []
        var used = 0
        while true {
            if dots.count >= 4 {
                if rest == 0 { return dots }
                rest -= 1
            }
            let last = dots.last ?? 0
            for next in 1...9 where dots.isEmpty ? true : allowed(used, last, next) {
                let size = Int(subtree[(used | 1 << next) << 4 | next])
                if rest < size {
                    dots.append(next)
                    used |= 1 << next
                    break
                }
                rest -= size
            }
        }
    }

    /// The numbers of a pattern's images under the 8 symmetries of the grid
    /// (`GridSymmetry.allCases` order; the first is the pattern itself).
    public static func images(of dots: [Int]) -> [Int] {
        GridSymmetry.allCases.compactMap { s in index(of: dots.lazy.map { s.map($0) }) }
    }

    /// Calls `body(index, dots, length)` for every pattern in order, with the
    /// dots in a buffer of which the first `length` are the pattern's. `step(prefix
    /// weight, used, previous, last, next)` gives the factor a move multiplies the
    /// weight by; a pattern's weight is the product along its moves times
    /// `first(dot)`, handed to `body` as well.
    static func forEach(
        first: (Int) -> Double,
        moves: (_ used: Int, _ previous: Int, _ last: Int, _ out: inout [Double]) -> Void,
        _ body: (_ index: Int, _ weight: Double, _ length: Int, _ dots: UnsafeMutablePointer<Int>) -> Void
    ) {
        var index = 0
        var factors = [[Double]](repeating: [Double](repeating: 0, count: 10), count: 10)
        let buffer = UnsafeMutablePointer<Int>.allocate(capacity: 9)
        defer { buffer.deallocate() }
        func visit(_ length: Int, _ used: Int, _ previous: Int, _ last: Int, _ weight: Double) {
            if length >= 4 {
                body(index, weight, length, buffer)
                index += 1
            }
            if length == 9 { return }
            moves(used, previous, last, &factors[length])
            for next in 1...9 where allowed(used, last, next) {
                buffer[length] = next
                visit(length + 1, used | 1 << next, last, next, weight * factors[length][next])
            }
        }
        for dot in 1...9 {
            buffer[0] = dot
            visit(1, 1 << dot, 0, dot, first(dot))
        }
    }
}
