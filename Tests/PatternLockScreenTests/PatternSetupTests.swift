// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockWire
import Testing

@testable import PatternLockScreen
@testable import PatternLockSetup

/// Drags through `dots` (press on the first, a move to each next, release
/// unless `lift` is false); every effect the setup asked for, in order.
@discardableResult
func drag(_ setup: inout PatternSetup, _ dots: [Int], lift: Bool = true) -> [PatternSetup.Effect] {
    var effects = setup.press(at: centre(dots[0]))
    for d in dots.dropFirst() { effects += setup.move(to: centre(d)) }
    if lift { effects += setup.release() }
    return effects
}

func pattern(_ dots: String) -> Pattern { try! Pattern(typed: SecretBytes(Array(dots.utf8))) }

func checked(_ effects: [PatternSetup.Effect]) -> [[Int]] {
    effects.compactMap { if case .check(let p) = $0 { return p.dots } else { return nil } }
}

func enabled(_ setup: PatternSetup) -> [PatternSetup.Button] { setup.buttons.filter(\.enabled).map(\.button) }

/// The verdict the real enroll policy gives (what the daemon's CHECK answers).
func policyVerdict(_ p: Pattern, _ policy: EnrollPolicy = EnrollPolicy()) -> PatternSetup.Verdict {
    policy.refusal(for: p).map { .refused($0) } ?? .acceptable
}

@Suite("Setting a pattern by drawing it")
struct PatternSetupTests {
    let strong = "2761834"  // accepted by the default policy
    let common = "1478"  // an L from a corner: refused by it

    @Test("the stages of a first pattern: draw, release, recorded, continue, confirm, set")
    func firstPatternStages() {
        var s = PatternSetup(geometry: geometry, changing: false)
        #expect(s.stage == .first)
        #expect(s.title == "Draw an unlock pattern")
        #expect(enabled(s) == [.cancel])
        let dots = strong.map { Int(String($0))! }
        var effects = drag(&s, dots, lift: false)
        #expect(s.title == "Release finger when done")
        // Asked at 4 dots and at every dot after that.
        #expect(checked(effects) == (4...dots.count).map { Array(dots.prefix($0)) })
        s.verdict(policyVerdict(pattern(strong)), for: pattern(strong))
        #expect(s.verdict == .acceptable)
        #expect(s.detail == PatternSetup.acceptableDetail)
        effects = s.release()
        #expect(effects.isEmpty)
        #expect(s.stage == .recorded)
        #expect(s.title == "Pattern recorded")
        #expect(enabled(s) == [.redraw, .next])
        #expect(s.tap(.next).isEmpty)
        #expect(s.stage == .confirm)
        #expect(s.title == "Draw the pattern again to confirm")
        #expect(s.gesture.isEmpty)
        effects = drag(&s, dots)
        #expect(checked(effects).isEmpty, "the confirmation is not judged again")
        #expect(effects == [.enroll(new: pattern(strong), current: nil)])
        #expect(s.stage == .saving)
        #expect(s.gesture.isEmpty, "the confirmed pattern is off the screen")
        s.saved()
        #expect(s.stage == .done)
        #expect(s.title == "Your new unlock pattern is set")
        #expect(s.tap(.done) == [.close(set: true)])
    }

    @Test("fewer than 4 dots say so and are not recorded; the next press starts again")
    func tooShort() {
        var s = PatternSetup(geometry: geometry, changing: false)
        let effects = drag(&s, [1, 2, 3])
        #expect(effects.isEmpty, "three dots are never sent to the daemon")
        #expect(s.stage == .first)
        #expect(s.detail == "Connect at least 4 dots. This was not counted; try again.")
        drag(&s, [5, 6], lift: false)
        #expect(s.gesture.dots == [5, 6])
    }

    @Test("a common pattern is refused while it is drawn, with the CLI's reason, and cannot be continued")
    func refusedWhileDrawing() {
        var s = PatternSetup(geometry: geometry, changing: false)
        let p = pattern(common)
        let effects = drag(&s, p.dots, lift: false)
        #expect(checked(effects) == [p.dots])
        guard case .refused(let refusal) = policyVerdict(p) else {
            Issue.record("the default policy accepts \(common)")
            return
        }
        s.verdict(.refused(refusal), for: p)
        #expect(s.detail == GuessFeedback.sentence(for: refusal, pattern: p))
        #expect(s.release().isEmpty)
        #expect(s.stage == .first, "a refused pattern is not recorded")
        #expect(enabled(s) == [.cancel])
        // Drawing on from there: the path starts again, the verdict with it.
        drag(&s, [2], lift: false)
        #expect(s.verdict == .none)
    }

    @Test("a verdict for a path that has changed since is dropped")
    func staleVerdict() {
        var s = PatternSetup(geometry: geometry, changing: false)
        drag(&s, [1, 4, 7, 8, 9], lift: false)
        s.verdict(.refused(.denylisted), for: pattern("1478"))
        #expect(s.verdict == .none)
        #expect(s.detail == nil)
        s.verdict(.acceptable, for: pattern("14789"))
        #expect(s.verdict == .acceptable)
    }

    @Test("released before the verdict came: recorded, Continue waits for it; a late refusal sends back to drawing")
    func lateVerdict() {
        var s = PatternSetup(geometry: geometry, changing: false)
        drag(&s, pattern(strong).dots)
        #expect(s.stage == .recorded)
        #expect(enabled(s) == [.redraw])
        s.verdict(.acceptable, for: pattern(strong))
        #expect(enabled(s) == [.redraw, .next])

        var t = PatternSetup(geometry: geometry, changing: false)
        drag(&t, pattern("1236").dots)
        t.verdict(.refused(.denylisted), for: pattern("1236"))
        #expect(t.stage == .first)
        #expect(t.detail == GuessFeedback.sentence(for: .denylisted, pattern: pattern("1236")))
    }

    @Test("without a verdict from the daemon the recorded pattern may still go on: ENROLL judges it")
    func noVerdict() {
        var s = PatternSetup(geometry: geometry, changing: false)
        drag(&s, pattern(strong).dots)
        #expect(enabled(s) == [.redraw])
        s.verdict(.unavailable, for: pattern(strong))
        #expect(enabled(s) == [.redraw, .next])
        #expect(s.detail == nil)
        #expect(s.tap(.next).isEmpty)
        #expect(drag(&s, pattern(strong).dots) == [.enroll(new: pattern(strong), current: nil)])
    }

    @Test("when nothing can be set the setup says why and who can help, and only Close is offered")
    func unavailable() {
        let why = "Pattern unlock is locked for alice. Ask an administrator to run: patternlockd reset alice"
        var s = PatternSetup.unavailable(geometry: geometry, sentence: why)
        #expect(s.stage == .ended && s.failed)
        #expect(s.title == "The pattern cannot be set now")
        #expect(s.detail == why)
        #expect(enabled(s) == [.close])
        #expect(drag(&s, pattern(strong).dots).isEmpty, "nothing is drawn")
        #expect(s.enter() == [.close(set: false)])
    }

    @Test("a confirmation that differs says so and starts over from the first drawing")
    func mismatch() {
        var s = PatternSetup(geometry: geometry, changing: false)
        drag(&s, pattern(strong).dots)
        s.verdict(.acceptable, for: pattern(strong))
        _ = s.tap(.next)
        let effects = drag(&s, [1, 2, 3, 6, 9])
        #expect(effects.isEmpty)
        #expect(s.stage == .first)
        #expect(s.detail == PatternSetup.mismatchDetail)
        // The first drawing is forgotten: the same pattern drawn now is recorded afresh.
        drag(&s, pattern(strong).dots)
        #expect(s.stage == .recorded)
        #expect(enabled(s) == [.redraw])
    }

    @Test("Enter never cancels: in the confirmation, with nothing typed, it does nothing")
    func enterNeverCancels() {
        var s = PatternSetup(geometry: geometry, changing: false)
        drag(&s, pattern(strong).dots)
        s.verdict(.acceptable, for: pattern(strong))
        _ = s.tap(.next)
        #expect(s.stage == .confirm)
        #expect(s.enter().isEmpty)
        #expect(s.stage == .confirm)
        var t = PatternSetup(geometry: geometry, changing: false)
        #expect(t.enter().isEmpty, "nothing drawn: Continue is off and Cancel is not Enter's")
        #expect(t.stage == .first)
    }

    @Test("Redraw forgets the recorded pattern")
    func redraw() {
        var s = PatternSetup(geometry: geometry, changing: false)
        drag(&s, pattern(strong).dots)
        #expect(s.tap(.redraw).isEmpty)
        #expect(s.stage == .first)
        #expect(s.gesture.isEmpty)
        #expect(s.verdict == .none)
    }

    @Test("by keys alone: digits draw, Enter ends the path and then continues, Escape cancels")
    func keysAlone() {
        var s = PatternSetup(geometry: geometry, changing: false)
        var effects: [PatternSetup.Effect] = []
        for d in pattern(strong).dots { effects += s.type(dot: d) }
        #expect(checked(effects).last == pattern(strong).dots)
        s.verdict(.acceptable, for: pattern(strong))
        #expect(s.enter().isEmpty)
        #expect(s.stage == .recorded)
        #expect(s.enter().isEmpty)  // Continue
        #expect(s.stage == .confirm)
        // A typed dot passed over is taken, as a drawn move takes it: 1 then 3 is 1-2-3.
        _ = s.type(dot: 1)
        _ = s.type(dot: 3)
        #expect(s.gesture.dots == [1, 2, 3])
        s.backspace()
        #expect(s.gesture.isEmpty)
        for d in pattern(strong).dots { _ = s.type(dot: d) }
        #expect(s.enter() == [.enroll(new: pattern(strong), current: nil)])

        var t = PatternSetup(geometry: geometry, changing: false)
        #expect(t.escape() == [.close(set: false)])
        #expect(t.stage == .ended)
        #expect(t.detail == "Nothing was changed.")
    }

    @Test("a change: the current pattern drawn first goes with the new one; a wrong one is drawn again")
    func change() {
        var s = PatternSetup(geometry: geometry, changing: true)
        #expect(s.title == "Draw your current pattern")
        let effects = drag(&s, [1, 2, 3, 5])
        #expect(checked(effects).isEmpty, "the current pattern is not judged")
        #expect(s.stage == .first)
        drag(&s, pattern(strong).dots)
        s.verdict(.acceptable, for: pattern(strong))
        _ = s.tap(.next)
        #expect(drag(&s, pattern(strong).dots) == [.enroll(new: pattern(strong), current: pattern("1235"))])
        s.notSaved("Wrong pattern — 4 attempts left.", back: .current)
        #expect(s.stage == .current)
        #expect(s.detail == "Wrong pattern — 4 attempts left.")
        s.notSaved("ignored", back: nil)
        #expect(s.stage == .current, "only an answer to a pending ENROLL counts")
    }

    @Test("while saving nothing is drawn and Cancel is not offered; a failure for good ends the setup")
    func saving() {
        var s = PatternSetup(geometry: geometry, changing: false)
        drag(&s, pattern(strong).dots)
        s.verdict(.acceptable, for: pattern(strong))
        _ = s.tap(.next)
        drag(&s, pattern(strong).dots)
        #expect(s.stage == .saving)
        #expect(enabled(s).isEmpty)
        #expect(drag(&s, [1, 2, 3, 6]).isEmpty)
        #expect(s.escape().isEmpty)
        s.notSaved("Your password was not confirmed, so nothing was changed.", back: nil)
        #expect(s.stage == .ended && s.failed)
        #expect(enabled(s) == [.close])
        #expect(s.tap(.close) == [.close(set: false)])
    }
}

/// A setup at `.saving` for `pattern`: a first pattern (or a change, with the
/// current one drawn first) confirmed and sent.
func saving(_ dots: String, changing: Bool = false, removing: Bool = false) -> PatternSetup {
    var s = PatternSetup(geometry: geometry, changing: changing || removing, removing: removing)
    let path = dots.map { Int(String($0))! }
    if changing || removing {
        drag(&s, [7, 8, 9, 6])
        if removing { return s }
    }
    drag(&s, path)
    s.verdict(.acceptable, for: pattern(dots))
    _ = s.tap(.next)
    drag(&s, path)
    return s
}

@Suite("The setup window's stage after the daemon's answer")
struct SetupAnswerTests {
    let strong = "2761834"

    @Test("OK sets the pattern; a refusal by the policy sends back to drawing with the reason")
    func setOrRefused() throws {
        var s = saving(strong)
        #expect(s.stage == .saving)
        s.daemonAnswered(.success(.okIterations(600_000)), new: pattern(strong), first: true, user: "alice")
        #expect(s.stage == .done)
        let common = pattern("1478")
        let refusal = try #require(EnrollPolicy().refusal(for: common))
        var r = saving(strong)
        r.daemonAnswered(.success(.refused(refusal)), new: common, first: true, user: "alice")
        #expect(r.stage == .first && r.detail == GuessFeedback.sentence(for: refusal, pattern: common))
    }

    @Test("a first pattern's password: refused, asked for by another program, the agent not started")
    func passwordProof() {
        var s = saving(strong)
        s.daemonAnswered(.success(.error(.passwordProofRequired)), new: pattern(strong), first: true, user: "alice")
        #expect(s.stage == .confirm && s.detail == PatternSetup.proofRefused)
        var p = saving(strong)
        p.daemonAnswered(.success(.error(.passwordProofInProgress)), new: pattern(strong), first: true, user: "alice")
        #expect(p.stage == .confirm && p.detail == ClientWording.proofInProgress)
        var a = saving(strong)
        a.daemonAnswered(
            .success(.error(.passwordProofRequired)), new: pattern(strong), first: true, user: "alice", agentFailed: true)
        #expect(a.stage == .confirm && a.detail == PatternSetup.agentFailed(user: "alice"))
        #expect(a.detail?.contains("sudo patternlockd enroll alice") == true)
    }

    @Test("a change whose current pattern was wrong asks for it again; one that locked it ends the setup")
    func wrongCurrent() {
        var s = saving(strong, changing: true)
        #expect(s.stage == .saving)
        s.daemonAnswered(.success(.fail(remaining: 3)), new: pattern(strong), first: false, user: "alice")
        #expect(s.stage == .current)
        #expect(s.detail == ClientWording.failure(for: .fail(remaining: 3), user: "alice", current: true).description)
        var l = saving(strong, changing: true)
        l.daemonAnswered(.success(.fail(remaining: 0)), new: pattern(strong), first: false, user: "alice")
        #expect(l.stage == .ended && l.failed)
        var e = saving(strong, changing: true)
        e.daemonAnswered(.success(.locked(retryAfter: 0)), new: pattern(strong), first: false, user: "alice")
        #expect(e.stage == .ended && e.failed)
    }

    @Test("no answer from the daemon ends the setup with why; removing: OK removes, none to remove says so")
    func noAnswerAndRemove() {
        var s = saving(strong)
        s.daemonAnswered(
            .failure(ClientError(description: "patternlockd is not running.", code: .unavailable)), new: pattern(strong),
            first: true, user: "alice")
        #expect(s.stage == .ended && s.detail == "patternlockd is not running.")
        var r = saving("7896", removing: true)
        #expect(r.stage == .saving)
        r.daemonAnswered(.success(.ok), new: pattern("7896"), first: false, user: "alice")
        #expect(r.stage == .done && r.detail == PatternSetup.removedDetail)
        var n = saving("7896", removing: true)
        n.daemonAnswered(.success(.notEnrolled), new: pattern("7896"), first: false, user: "alice")
        #expect(n.stage == .ended && n.detail == "You have no unlock pattern; nothing was removed.")
    }
}
