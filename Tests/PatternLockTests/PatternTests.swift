// SPDX-License-Identifier: Apache-2.0
import Testing
import PatternLock
import PatternLockWire

@Suite("Pattern rules")
struct PatternTests {
    @Test(
        "A straight move over an unused dot takes it",
        arguments: [
            ("1397", "1236987"), ("13", "123"), ("19", "159"), ("28", "258"), ("73", "753"),
            ("1234", "1234"), ("16", "16"), ("18", "18"), ("5137", "51237"), ("2173", "214753"),
            ("4612", "45612"), ("123789", "1235789"), ("1379", "1235789"),
        ])
    func passOver(typed: String, normalized: String) throws {
        let dots = try? Pattern(typed: typed).digits
        if normalized.count >= 4 {
            #expect(dots == normalized)
        } else {
            #expect(throws: PatternError.tooShort(normalized.count)) { try Pattern(typed: typed) }
        }
    }

    @Test("A dot already used may be passed over")
    func usedDotPassedOver() throws {
        // 2, 1, then 3 passes over 2 (used): not taken again.
        #expect(try Pattern(typed: "2137").digits == "21357")
        #expect(try Pattern(typed: "5193").digits == "51963")
    }

    @Test("Clear errors for bad entries")
    func errors() {
        #expect(throws: PatternError.empty) { try Pattern(typed: "") }
        #expect(throws: PatternError.notADot) { try Pattern(typed: "1230") }
        #expect(throws: PatternError.notADot) { try Pattern(typed: "12a4") }
        #expect(throws: PatternError.notADot) { try Pattern(typed: "１２３４") }
        #expect(throws: PatternError.repeatedDot(1)) { try Pattern(typed: "12341") }
        // 1→3 takes 2, so typing 2 afterwards repeats it.
        #expect(throws: PatternError.joinedDotRepeated(2, from: 1, to: 3)) { try Pattern(typed: "1325") }
        #expect(throws: PatternError.joinedDotRepeated(5, from: 1, to: 9)) { try Pattern(typed: "1954") }
        #expect(InvalidReason(PatternError.joinedDotRepeated(2, from: 1, to: 3)) == .repeatedDot)
        #expect(
            PatternError.joinedDotRepeated(2, from: 1, to: 3).description
                == "Dot 2 is used twice: the move from 1 to 3 passed over it and already joined it. Each dot can be used only once; leave 2 out or type it before that move."
        )
        // A dot typed twice by hand is told as such.
        #expect(PatternError.repeatedDot(1).description == "Dot 1 is used twice; each dot can be used only once.")
        #expect(throws: PatternError.tooShort(3)) { try Pattern(typed: "126") }
        #expect(PatternError.tooShort(3).description == "Connect at least 4 dots (this pattern has 3).")
        #expect(InvalidReason(PatternError.notADot).word == "not_a_dot")
    }

    /// Android's rule: from a dot, any unused dot may follow unless the straight move
    /// passes over an unused dot. Counting every such sequence of 4–9 dots.
    @Test("The rule allows 389,112 patterns of 4–9 dots")
    func enumerate() throws {
        var counts = [Int](repeating: 0, count: 10)
        var canonical = Set<String>()
        func extend(_ path: [Int], _ used: [Bool]) {
            if path.count >= 4 {
                counts[path.count] += 1
                canonical.insert(path.map(String.init).joined())
            }
            guard path.count < 9 else { return }
            for next in 1...9 where !used[next] {
                if let last = path.last, let middle = Pattern.dotPassedOver(from: last, to: next), !used[middle] { continue }
                var u = used
                u[next] = true
                extend(path + [next], u)
            }
        }
        extend([], [Bool](repeating: false, count: 10))
        #expect(Array(counts[4...9]) == [1624, 7152, 26016, 72912, 140_704, 140_704])
        #expect(counts.reduce(0, +) == 389_112)

        // Every canonical pattern is its own normalization, and normalizing every
        // typed sequence of distinct dots lands in exactly that set.
        for p in canonical { #expect(try Pattern(typed: p).digits == p) }
        var reached = Set<String>()
        func typeAll(_ typed: String, _ used: [Bool]) {
            if let p = try? Pattern(typed: typed) { reached.insert(p.digits) }
            guard typed.count < 9 else { return }
            for d in 1...9 where !used[d] {
                var u = used
                u[d] = true
                typeAll(typed + String(d), u)
            }
        }
        typeAll("", [Bool](repeating: false, count: 10))
        #expect(reached == canonical)
    }

    @Test("The picture numbers the dots in order")
    func picture() throws {
        let p = try Pattern(typed: "1397")
        #expect(
            p.picture == """
                  ┌─────────┐
                  │ 1  2  3 │
                  │ ·  ·  4 │
                  │ 7  6  5 │
                  └─────────┘
                """)
        #expect(p.description == "1-2-3-6-9-8-7")
    }
}
