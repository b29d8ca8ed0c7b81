// SPDX-License-Identifier: Apache-2.0
import Testing
import PatternLock
import PatternLockWire

/// The enroll policy on the wire (docs/PROTOCOL.md) and its cost on the verify path.
@Suite("Enroll policy on the wire")
struct PolicyProtocolTests {
    @Test("New replies and the override round-trip")
    func roundTrip() throws {
        let replies: [Reply] = [
            .okWeak,
            .refused(.common(rank: 3, top: 1000, shape: "letter_L")), .refused(.common(rank: 700, top: 1000, shape: nil)),
            .refused(.tooFewDots(minimum: 6)), .refused(.denylisted),
        ]
        for r in replies { #expect(Reply(line: r.line) == r, "\(r.line)") }
        #expect(Reply.okWeak.line == "OK weak=1")
        #expect(Reply.refused(.denylisted).line == "INVALID reason=denylisted")
        #expect(Reply(line: "OK") == .ok)
        let enroll = Request.enroll(user: "a", pattern: "2947163", current: nil, iterations: nil, override: true)
        #expect(enroll.line.encoded() == "ENROLL user=a override=1 pattern=2947163")
        #expect(try Request(Line(parsing: Array(enroll.line.encoded().utf8))) == enroll)
    }

    @Test(
        "Malformed policy fields are refused",
        arguments: [
            "OK weak=2", "OK weak=", "OK weak=1 weak=1", "INVALID reason=common rank=x top=1000 shape=",
            "INVALID reason=other rank=1 top=1000 shape=", "INVALID reason=too_few_dots minimum=3",
        ])
    func strict(text: String) {
        #expect(Reply(line: text) == nil)
    }

    @Test("override takes only 1")
    func overrideValue() {
        #expect(throws: Line.ParseError.self) {
            try Request(Line(parsing: Array("ENROLL user=a pattern=1234 override=yes".utf8)))
        }
    }

    @Test("Checking a pattern against the policy costs microseconds")
    func lookupCost() throws {
        let policy = EnrollPolicy()
        _ = policy.ranking.keys.count  // built before timing, as the daemon does at start
        let patterns = try ["14789", "2947163", "46183", "12369874", "5183"].map { try Pattern(typed: $0) }
        let clock = ContinuousClock()
        var refused = 0
        let elapsed = clock.measure {
            for i in 0..<100_000 where policy.refusal(for: patterns[i % patterns.count]) != nil { refused += 1 }
        }
        print("100,000 policy checks: \(elapsed)")
        #expect(refused == 40_000)
        #expect(elapsed < .milliseconds(500))  // under 5 µs each, against a hash of ~250 ms
    }
}
