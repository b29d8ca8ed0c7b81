// SPDX-License-Identifier: Apache-2.0
/// A point in surface coordinates (logical pixels, y down).
public struct Point: Equatable, Sendable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// An axis-aligned rectangle (logical pixels).
public struct Rect: Equatable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The smallest rectangle holding both (an empty one holds nothing).
    public func union(_ other: Rect) -> Rect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let x0 = min(x, other.x)
        let y0 = min(y, other.y)
        let x1 = max(x + width, other.x + other.width)
        let y1 = max(y + height, other.y + other.height)
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// The part both cover (empty when they do not meet).
    public func intersection(_ other: Rect) -> Rect {
        let x0 = max(x, other.x)
        let y0 = max(y, other.y)
        let x1 = min(x + width, other.x + other.width)
        let y1 = min(y + height, other.y + other.height)
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    /// Whether `other` lies wholly inside this rectangle.
    /// Whether `p` lies within, the right and bottom edges excluded: rects that
    /// touch share no point.
    public func contains(_ p: Point) -> Bool {
        p.x >= x && p.x < x + width && p.y >= y && p.y < y + height
    }

    public func contains(_ other: Rect) -> Bool {
        other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
    }

    /// The box around some points, grown by `margin` on every side.
    public static func around(_ points: [Point], margin: Double) -> Rect {
        guard let first = points.first else { return Rect(x: 0, y: 0, width: 0, height: 0) }
        var (x0, y0, x1, y1) = (first.x, first.y, first.x, first.y)
        for p in points.dropFirst() {
            x0 = min(x0, p.x)
            y0 = min(y0, p.y)
            x1 = max(x1, p.x)
            y1 = max(y1, p.y)
        }
        return Rect(x: x0 - margin, y: y0 - margin, width: x1 - x0 + 2 * margin, height: y1 - y0 + 2 * margin)
    }
}

/// The 3×3 dots in a square area: dot 1 top left, 9 bottom right (phone layout;
/// the dots never move, whatever keys are used to type them).
public struct GridGeometry: Equatable, Sendable {
    /// The square's top-left corner and side.
    public let origin: Point
    public let side: Double

    /// The hit radius as a share of the spacing. A knight move (1→6) passes
    /// 1/√5 ≈ 0.447 spacings from dots 2 and 5: a radius below that never takes them.
    public static let hitShare = 0.3

    public init(origin: Point, side: Double) {
        self.origin = origin
        self.side = side
    }

    /// A phone held upright (logical pixels): narrow, and at least half again as
    /// tall as wide. There a screen puts the grid across most of the width and
    /// low, where a thumb reaches. js/PatternRule.js holds the same rule for the
    /// JavaScript screens (PlasmaRuleTests compares the two).
    public static func isPortraitPhone(width: Double, height: Double) -> Bool {
        width < 600 && height >= 1.5 * width
    }

    /// A grid of `side` centred across a surface `width` wide, its top at `top`.
    public init(centredAcross width: Double, top: Double, side: Double) {
        self.init(origin: Point(x: (width - side) / 2, y: top), side: side)
    }

    /// Distance between neighbouring dot centres.
    public var spacing: Double { side / 3 }
    public var hitRadius: Double { Self.hitShare * spacing }

    /// Centre of `dot` (1…9).
    public func center(of dot: Int) -> Point {
        let row = Double((dot - 1) / 3)
        let col = Double((dot - 1) % 3)
        return Point(x: origin.x + (col + 0.5) * spacing, y: origin.y + (row + 0.5) * spacing)
    }

    /// The dot whose hit circle holds `p`, if any.
    public func dot(at p: Point) -> Int? {
        let r2 = hitRadius * hitRadius
        for dot in 1...9 {
            let c = center(of: dot)
            let dx = p.x - c.x
            let dy = p.y - c.y
            if dx * dx + dy * dy <= r2 { return dot }
        }
        return nil
    }

    /// Where along the segment a→b (0…1) it first enters `dot`'s hit circle, or
    /// nil when it misses it.
    public func entry(of dot: Int, from a: Point, to b: Point) -> Double? {
        let c = center(of: dot)
        let r = hitRadius
        let dx = b.x - a.x
        let dy = b.y - a.y
        let fx = a.x - c.x
        let fy = a.y - c.y
        let len2 = dx * dx + dy * dy
        let inside = fx * fx + fy * fy <= r * r
        if inside { return 0 }
        guard len2 > 0 else { return nil }
        // |a + t(b-a) - c|² = r²
        let bq = 2 * (fx * dx + fy * dy)
        let cq = fx * fx + fy * fy - r * r
        let disc = bq * bq - 4 * len2 * cq
        guard disc >= 0 else { return nil }
        let t = (-bq - disc.squareRoot()) / (2 * len2)
        return t >= 0 && t <= 1 ? t : nil
    }
}
