// SPDX-License-Identifier: Apache-2.0
import PatternLock
import Testing

@testable import PatternLockScreen

/// Every valid pattern, by the core's rule: each next dot unused, and a dot a
/// straight move passes over already used (otherwise the move would take it).
func allPatterns() -> [[Int]] {
    var out: [[Int]] = []
    var path: [Int] = []
    var used = [Bool](repeating: false, count: 10)
    func extend() {
        if path.count >= Pattern.minimumDots { out.append(path) }
        guard path.count < 9 else { return }
        for next in 1...9 where !used[next] {
            if let last = path.last, let middle = Pattern.dotPassedOver(from: last, to: next), !used[middle] { continue }
            used[next] = true
            path.append(next)
            extend()
            path.removeLast()
            used[next] = false
        }
    }
    extend()
    return out
}

let geometry = GridGeometry(origin: Point(x: 100, y: 50), side: 300)

func centre(_ dot: Int) -> Point { geometry.center(of: dot) }

@Suite("Drawing the pattern")
struct GestureTests {
    @Test("a path through the dots' centres gives exactly that pattern, for every one of the 389,112")
    func everyPattern() throws {
        let patterns = allPatterns()
        #expect(patterns.count == 389_112)
        var tracker = GestureTracker(geometry: geometry)
        var wrong = 0
        for dots in patterns {
            if !tracker.press(at: centre(dots[0])) { wrong += 1 }
            for d in dots.dropFirst() { tracker.move(to: centre(d)) }
            let result = tracker.release()
            let typed = try Pattern(typed: dots.map(String.init).joined())
            if result != .pattern(typed) || typed.dots != dots { wrong += 1 }
            tracker.clear()
        }
        #expect(wrong == 0)
    }

    @Test("the hit radius stays below the distance a knight move passes from dots 2 and 5")
    func hitRadius() {
        #expect(geometry.hitRadius < 0.447 * geometry.spacing)
        var t = GestureTracker(geometry: geometry)
        t.press(at: centre(1))
        t.move(to: centre(6))
        #expect(t.dots == [1, 6])
        t.move(to: centre(7))  // 6→7 is a knight move too: passes 5 and 8 at 0.447 spacing
        #expect(t.dots == [1, 6, 7])
    }

    @Test("one motion event over several dots takes them in order along the way (a fast finger)")
    func fastFinger() {
        var t = GestureTracker(geometry: geometry)
        t.press(at: centre(1))
        t.move(to: Point(x: centre(9).x + 40, y: centre(9).y + 40))
        #expect(t.dots == [1, 5, 9])
        t.move(to: centre(7))
        #expect(t.dots == [1, 5, 9, 8, 7])
    }

    @Test("a straight move over an unused dot takes it first; over a used dot, not again")
    func passedOver() {
        var t = GestureTracker(geometry: geometry)
        t.press(at: centre(2))
        t.move(to: centre(1))
        t.move(to: centre(3))  // passes over 2, used
        #expect(t.dots == [2, 1, 3])
        // Typed dots follow the same rule: 9 after 3 takes nothing, 7 after 9 takes 8.
        t.clear()
        let r2 = t.type(dot: 1)
        #expect(r2 == [1])
        let r3 = t.type(dot: 3)
        #expect(r3 == [2, 3])
        let r4 = t.type(dot: 9)
        #expect(r4 == [6, 9])
        let r5 = t.type(dot: 7)
        #expect(r5 == [8, 7])
        let r6 = t.finish()
        #expect(r6 == .pattern(try! Pattern(typed: "1397")))
    }

    @Test("re-entering a used dot takes nothing")
    func reenter() {
        var t = GestureTracker(geometry: geometry)
        t.press(at: centre(5))
        t.move(to: centre(6))
        t.move(to: centre(5))
        t.move(to: centre(6))
        #expect(t.dots == [5, 6])
        let r7 = t.type(dot: 5)
        #expect(r7.isEmpty)
    }

    @Test("the line end follows the finger outside the grid, and coming back takes dots")
    func leaveTheGrid() {
        var t = GestureTracker(geometry: geometry)
        t.press(at: centre(1))
        let outside = Point(x: 20, y: centre(1).y)
        t.move(to: outside)
        #expect(t.lineEnd == outside)
        #expect(t.dots == [1])
        t.move(to: Point(x: -500, y: 900))
        #expect(t.dots == [1])
        t.move(to: centre(8))
        #expect(t.dots == [1, 8])  // from outside straight to 8: a knight move from 1, nothing passed
        let r8 = t.release()
        #expect(r8 == .tooShort)
    }

    @Test("a press off every dot starts nothing; fewer than 4 dots is too short; cancel clears")
    func offDotShortCancel() {
        var t = GestureTracker(geometry: geometry)
        let r9 = t.press(at: Point(x: 0, y: 0))
        #expect(!r9)
        t.move(to: centre(1))
        #expect(t.dots.isEmpty)
        let r10 = t.release()
        #expect(r10 == .none)
        t.press(at: centre(1))
        t.move(to: centre(2))
        t.move(to: centre(5))
        let r11 = t.release()
        #expect(r11 == .tooShort)
        t.press(at: centre(1))
        t.move(to: centre(3))
        t.move(to: centre(9))
        t.clear()
        #expect(t.dots.isEmpty && !t.active && t.lineEnd == nil)
        let r12 = t.release()
        #expect(r12 == .none)
    }

    @Test("touch: only the first finger counts")
    func secondFinger() {
        var t = GestureTracker(geometry: geometry)
        let r13 = t.press(at: centre(1), touch: 7)
        #expect(r13)
        let r14 = t.press(at: centre(9), touch: 8)
        #expect(!r14)
        t.move(to: centre(3), touch: 8)
        #expect(t.dots == [1])
        let r15 = t.release(touch: 8)
        #expect(r15 == .none)
        t.move(to: centre(3), touch: 7)
        t.move(to: centre(9), touch: 7)
        let r16 = t.release(touch: 7)
        #expect(r16 == .pattern(try! Pattern(typed: "12369")))
    }

    @Test("the path's storage holds all nine dots from the start and is kept on clear: no copy of a path is left in freed memory")
    func storageNeverMoves() {
        var g = GestureTracker(geometry: geometry)
        let start = g.dots.withUnsafeBufferPointer { $0.baseAddress }
        #expect(start != nil && g.dots.capacity >= 9)
        for k in [1, 2, 3, 6, 9, 8, 7, 4, 5] { g.type(dot: k) }
        #expect(g.dots.count == 9)
        #expect(g.dots.withUnsafeBufferPointer { $0.baseAddress } == start)
        g.clear()
        #expect(g.dots.withUnsafeBufferPointer { $0.baseAddress } == start)
        // What the cleared path held is zeroes now.
        #expect(UnsafeBufferPointer(start: start, count: 9).allSatisfy { $0 == 0 })
    }
}
