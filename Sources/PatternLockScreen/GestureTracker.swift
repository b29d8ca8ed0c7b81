// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// What lifting the finger (or Enter after typed dots) gave.
public enum GestureResult: Equatable, Sendable {
    /// Nothing was drawn (the press was off every dot).
    case none
    /// Fewer than 4 dots: not sent, not counted.
    case tooShort
    /// A pattern, as the core's rule reads the dots.
    case pattern(Pattern)
}

/// One drawn path over the grid, as Android's LockPatternView follows a finger.
/// Pointer, touch and typed dots all come here: a press on a dot starts the path,
/// every motion tests the segment from the last sample to the new point against
/// every unused dot (a fast finger may cross several in one event), a dot passed
/// over by a straight move is taken first (`Pattern.dotPassedOver`, the core's
/// rule), a used dot is never taken twice, and the line end follows the finger.
public struct GestureTracker: Sendable {
    public var geometry: GridGeometry
    /// The dots so far, in order (phone layout, 1…9).
    public private(set) var dots: [Int] = []
    /// Where the line from the last dot ends (the finger), while a press lasts.
    public private(set) var lineEnd: Point?
    /// Whether a press (pointer button or finger) is in progress.
    public private(set) var active = false
    /// The touch point that started the path; other fingers are ignored.
    public private(set) var touchID: Int32?
    private var used: UInt16 = 0

    public init(geometry: GridGeometry) {
        self.geometry = geometry
        // Room for every dot at once: appending never reallocates and leaves a
        // copy of the path in freed memory.
        dots.reserveCapacity(9)
    }

    public var isEmpty: Bool { dots.isEmpty }

    /// A press (pointer button or the first finger). Off every dot it starts
    /// nothing; returns whether a path started.
    @discardableResult
    public mutating func press(at p: Point, touch: Int32? = nil) -> Bool {
        if active { return false }
        clear()
        guard let dot = geometry.dot(at: p) else { return false }
        active = true
        touchID = touch
        add(dot)
        lineEnd = p
        return true
    }

    /// The finger or pointer moved to `p` (a touch motion of another finger is
    /// ignored). Returns the dots this motion added, in order.
    @discardableResult
    public mutating func move(to p: Point, touch: Int32? = nil) -> [Int] {
        guard active, touch == touchID, let from = lineEnd else { return [] }
        var hits: [(t: Double, dot: Int)] = []
        for dot in 1...9 where used & (1 << dot) == 0 {
            if let t = geometry.entry(of: dot, from: from, to: p) { hits.append((t, dot)) }
        }
        hits.sort { $0.t < $1.t }
        var added: [Int] = []
        for hit in hits where used & (1 << hit.dot) == 0 {
            added += add(hit.dot)
        }
        lineEnd = p
        return added
    }

    /// A typed dot (keys 1–9 through the layout): taken as a drawn move to it would.
    @discardableResult
    public mutating func type(dot: Int) -> [Int] {
        guard !active, (1...9).contains(dot), used & (1 << dot) == 0 else { return [] }
        return add(dot)
    }

    /// Lifts the finger: the path ends (a touch up of another finger is ignored).
    public mutating func release(touch: Int32? = nil) -> GestureResult {
        guard active, touch == touchID else { return .none }
        return finish()
    }

    /// Ends the path as it is (Enter after typed dots, or a release).
    public mutating func finish() -> GestureResult {
        active = false
        lineEnd = nil
        touchID = nil
        if dots.isEmpty { return .none }
        if dots.count < Pattern.minimumDots { return .tooShort }
        // The core's rule reads the dots; a path made here is always one.
        var typed = dots.map { UInt8($0) + 0x30 }
        defer { wipe(&typed) }
        guard let pattern = try? Pattern(typed: SecretBytes(typed)) else { return .tooShort }
        return .pattern(pattern)
    }

    /// Clears the path (touch cancel, Backspace, a new press); the dots are wiped.
    public mutating func clear() {
        for i in dots.indices { dots[i] = 0 }
        dots.removeAll(keepingCapacity: true)
        used = 0
        active = false
        lineEnd = nil
        touchID = nil
    }

    /// Adds `dot`, and first the unused dot a straight move to it passes over.
    @discardableResult
    private mutating func add(_ dot: Int) -> [Int] {
        var added: [Int] = []
        if let last = dots.last, let middle = Pattern.dotPassedOver(from: last, to: dot), used & (1 << middle) == 0 {
            dots.append(middle)
            used |= 1 << middle
            added.append(middle)
        }
        dots.append(dot)
        used |= 1 << dot
        added.append(dot)
        return added
    }
}
