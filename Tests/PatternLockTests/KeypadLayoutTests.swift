// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import PatternLock
import PatternLockWire

@Suite("Keypad layouts")
struct KeypadLayoutTests {
    @Test("An L typed on a numeric keypad is the L typed on a phone")
    func sameShape() throws {
        #expect(try Pattern(typed: "74123", layout: .numpad) == Pattern(typed: "14789"))
        // A move over an unused dot is joined on the numpad too: 7→1 passes over 4.
        #expect(try Pattern(typed: "713", layout: .numpad) == Pattern(typed: "14789"))
    }

    @Test("Every numpad key stands for the dot it sits on, and the mapping is its own inverse")
    func keys() {
        #expect((1...9).map { KeypadLayout.numpad.dot(forKey: $0) } == [7, 8, 9, 4, 5, 6, 1, 2, 3])
        #expect((1...9).map { KeypadLayout.phone.dot(forKey: $0) } == Array(1...9))
        for key in 1...9 { #expect(KeypadLayout.numpad.dot(forKey: KeypadLayout.numpad.dot(forKey: key)) == key) }
    }

    @Test("The top and bottom rows swap; the middle row stays")
    func rowsSwap() throws {
        #expect(try Pattern(typed: "1236", layout: .numpad) == Pattern(typed: "7896"))
        #expect(KeypadLayout.numpad.phoneDigits("2486") == "8426")
    }

    @Test("A repeated dot is named by the key the user pressed")
    func repeatedKey() {
        // Keys 7 4 1 7: the dot under key 7 (dot 1) twice.
        #expect(throws: PatternError.repeatedDot(7)) { try Pattern(typed: "7417", layout: .numpad) }
        #expect(throws: PatternError.notAKey) { try Pattern(typed: "7412x", layout: .numpad) }
        #expect(PatternError.notAKey.description.contains("7 is top left"))
        #expect(InvalidReason(PatternError.notAKey) == InvalidReason(PatternError.notADot))
        #expect(throws: PatternError.notADot) { try Pattern(typed: "1230", layout: .phone) }
    }

    @Test("A dot joined by a move is named by the keys the user pressed")
    func joinedKey() {
        // Keys 7 9 8 7: 7→9 passes over key 8 (dot 2), which is typed again.
        #expect(throws: PatternError.joinedDotRepeated(8, from: 7, to: 9)) { try Pattern(typed: "7984", layout: .numpad) }
        #expect(throws: PatternError.joinedDotRepeated(2, from: 1, to: 3)) { try Pattern(typed: "1325", layout: .phone) }
    }

    @Test("The grid is drawn as the keys are laid out")
    func grids() {
        #expect(KeypadLayout.phone.grid == "  1 2 3\n  4 5 6\n  7 8 9")
        #expect(KeypadLayout.numpad.grid == "  7 8 9\n  4 5 6\n  1 2 3")
        #expect(Pattern.grid == KeypadLayout.phone.grid)
    }
}
