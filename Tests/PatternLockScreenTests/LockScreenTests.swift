// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockWire
import Testing

@testable import PatternLockScreen

/// The lock screen's state against scripted PAM conversations, as the module and
/// pam_unix hold them (common-auth: pam_patternlock, then pam_unix).
@Suite("The lock screen's state and its PAM conversation")
struct LockScreenTests {
    static let patternPrompt = "Pattern [123 456 789]: "
    static let wrong = "Wrong pattern — 3 attempts left."
    static let locked =
        "Pattern unlock for alice is locked after 5 failed attempts. Ask an administrator to run: patternlockd reset alice"

    func screen(_ options: LockScreen.Options = .init()) -> LockScreen {
        var s = LockScreen(options: options, geometry: geometry)
        s.attemptStarted()
        return s
    }

    func draw(_ s: inout LockScreen, _ dots: [Int], touch: Int32? = nil) -> [Effect] {
        var effects = s.press(at: centre(dots[0]), touch: touch)
        for d in dots.dropFirst() { s.move(to: centre(d), touch: touch) }
        effects += s.release(touch: touch)
        return effects
    }

    /// The bytes the screen sends the module for `pattern` in `layout`.
    func answerText(_ pattern: Pattern, _ layout: KeypadLayout) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { out in
            let n = LockScreen.answerKeys(pattern, layout: layout, into: out)
            return String(decoding: out[..<n], as: UTF8.self)
        }
    }

    func answers(_ effects: [Effect]) -> [Effect] {
        effects.filter { if case .log = $0 { return false } else { return true } }
    }

    @Test("a drawn pattern answers the pattern prompt; success unlocks")
    func drawnUnlocks() throws {
        var s = screen()
        #expect(s.pamPrompt(Self.patternPrompt, echo: false) == [.log("prompt kind=pattern")])
        #expect(s.phase == .pattern && s.showsGrid && !s.showsField)
        #expect(draw(&s, [1, 2, 3, 6]) == [.answerPattern(try Pattern(typed: "1236"), layout: .phone)])
        #expect(s.phase == .checking)
        // Input is ignored while PAM checks.
        #expect(s.press(at: centre(9)).isEmpty)
        #expect(s.key(.digit(5, text: [0x35])).isEmpty)
        #expect(s.gesture.dots == [1, 2, 3, 6])
        #expect(s.pamResult(success: true) == [.log("attempt result=success"), .unlock])
    }

    @Test(
        "a wrong pattern: the module's message, red, then pam_unix's prompt with the field and no grid; a tap goes back to the grid without answering it"
    )
    func wrongThenBack() throws {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&s, [1, 5, 9, 6])
        #expect(s.pamError(Self.wrong) == [.log("message \(Self.wrong)")])
        let effects = s.pamPrompt("Password: ", echo: false)
        #expect(effects == [.log("prompt kind=password"), .startFlash])
        #expect(s.flashing && s.showsGrid && s.gesture.dots == [1, 5, 9, 6])
        #expect(s.messages == [Self.wrong])
        s.flashEnded()
        #expect(!s.showsGrid && s.showsField && s.promptText == "Password: ")
        #expect(s.gesture.dots.isEmpty)
        #expect(s.showsBackHint)
        // A drawn path cannot reach pam_unix: a tap on the empty field starts a new attempt.
        #expect(s.press(at: centre(1)) == [.restartAttempt])
        s.attemptStarted()
        #expect(s.phase == .waiting && s.showsGrid)
        #expect(s.messages == [Self.wrong])
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        #expect(answers(draw(&s, [7, 8, 9, 6])) == [.answerPattern(try Pattern(typed: "7896"), layout: .phone)])
    }

    @Test("Escape on an empty password field goes back too; with text it clears the field")
    func escape() {
        var s = screen()
        _ = s.pamPrompt("Password: ", echo: false)
        _ = s.key(.text([0x61]))
        #expect(s.field.characters == 1)
        #expect(s.key(.escape).isEmpty)
        #expect(s.field.isEmpty)
        #expect(s.key(.escape) == [.restartAttempt])
    }

    @Test("the password typed at the pattern prompt skips it (empty answer) and answers pam_unix's prompt")
    func passwordAtPatternPrompt() {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = s.key(.text(KeyText("s".utf8)))
        #expect(s.showsField && s.fieldOpen)
        _ = s.key(.text(KeyText("ecret".utf8)))
        #expect(s.key(.enter) == [.answerEmpty])
        #expect(s.phase == .checking)
        #expect(answers(s.pamPrompt("Password: ", echo: false)) == [.answerField])
        #expect(s.field.withBytes { Array($0) } == Array("secret".utf8))
    }

    @Test("digits typed before a letter become the password's first characters")
    func digitsThenLetters() {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = s.key(.digit(1, text: [0x31]))
        _ = s.key(.digit(1, text: [0x31]))
        #expect(s.gesture.dots == [1])
        _ = s.key(.text([0x78]))
        #expect(s.gesture.dots.isEmpty)
        #expect(s.field.withBytes { Array($0) } == Array("11x".utf8))
        _ = s.key(.backspace)
        #expect(s.field.withBytes { Array($0) } == Array("11".utf8))
    }

    @Test("typed dots, in either layout, answer as a drawn path would; Backspace clears them")
    func keys() throws {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        for k in [1, 3] { _ = s.key(.digit(k, text: [UInt8(k) + 0x30])) }
        #expect(s.gesture.dots == [1, 2, 3])
        _ = s.key(.backspace)
        #expect(s.gesture.dots.isEmpty)
        for k in [1, 2, 3] { _ = s.key(.digit(k, text: [UInt8(k) + 0x30])) }
        #expect(s.key(.enter) == [.log("too short")])
        #expect(s.notice == LockScreen.tooShortNotice)
        for k in [1, 3, 9] { _ = s.key(.digit(k, text: [UInt8(k) + 0x30])) }
        #expect(s.key(.enter) == [.answerPattern(try Pattern(typed: "139"), layout: .phone)])  // 1-2-3-6-9

        // The numeric keypad (--layout numpad): 7 8 9 on top, whatever the module's layout.
        var n = screen(.init(layout: .numpad))
        _ = n.pamPrompt("Pattern [789 456 123]: ", echo: false)
        #expect(n.layout == .numpad && n.moduleLayout == .numpad)
        for k in [7, 8, 9, 6] { _ = n.key(.digit(k, text: [UInt8(k) + 0x30])) }
        #expect(n.gesture.dots == [1, 2, 3, 6])
        // The answer is in the module's layout, which turns it back into dots 1-2-3-6.
        #expect(n.key(.enter) == [.answerPattern(try Pattern(typed: "1236"), layout: .numpad)])
        #expect(answerText(try Pattern(typed: "1236"), .numpad) == "7896")

        var o = screen(.init(layout: .numpad))
        _ = o.pamPrompt(ModulePrompt.patternPrompt, echo: false)
        for k in [1, 2, 3] { _ = o.key(.digit(k, text: [UInt8(k) + 0x30])) }
        #expect(o.gesture.dots == [7, 8, 9])
    }

    @Test("--layout alone says which key lights which dot: the module's layout changes only how the answer is written")
    func keyboardLayoutIsTheOption() throws {
        // A phone keyboard layout under a numpad module: key 1 is the top-left dot.
        var s = screen()
        _ = s.pamInfo("Pattern unlock for alice: type the dots in order.\n  7 8 9\n  4 5 6\n  1 2 3")
        _ = s.pamPrompt("Pattern [789 456 123]: ", echo: false)
        #expect(s.layout == .phone && s.moduleLayout == .numpad)
        for k in [1, 2, 3, 6] { _ = s.key(.digit(k, text: [UInt8(k) + 0x30])) }
        #expect(s.gesture.dots == [1, 2, 3, 6])
        #expect(s.key(.enter) == [.answerPattern(try Pattern(typed: "1236"), layout: .numpad)])
        // A numpad keyboard layout under a phone module: key 7 is the top-left dot.
        var t = screen(.init(layout: .numpad))
        _ = t.pamPrompt("Pattern [123 456 789]: ", echo: false)
        #expect(t.layout == .numpad && t.moduleLayout == .phone)
        for k in [7, 8, 9, 6] { _ = t.key(.digit(k, text: [UInt8(k) + 0x30])) }
        #expect(t.gesture.dots == [1, 2, 3, 6])
        #expect(t.key(.enter) == [.answerPattern(try Pattern(typed: "1236"), layout: .phone)])
    }

    @Test("under a numpad module, a drawn pattern is answered in the module's keys, whichever way it named its layout")
    func numpadModuleAnswer() throws {
        let p = try Pattern(typed: "1236")
        #expect(answerText(p, .phone) == "1236")
        // Every valid pattern written in the numpad's keys and read back as the
        // module reads it (pl_layout_to_phone: the same self-inverse mapping) is itself.
        for typed in ["1236", "1598", "7412369", "2468", "18349"] {
            let q = try Pattern(typed: typed)
            let keys = answerText(q, .numpad).map { KeypadLayout.numpad.dot(forKey: Int(String($0)) ?? 0) }
            #expect(keys == q.dots)
        }
        // The prompt names the layout.
        var s = screen()
        _ = s.pamPrompt("Pattern [789 456 123] or password: ", echo: false)
        #expect(answers(draw(&s, [1, 2, 3, 6])) == [.answerPattern(p, layout: .numpad)])
        // The grid picture names it (PAM_SILENT off), the prompt does not.
        var t = screen()
        _ = t.pamInfo("Pattern unlock for alice: type the dots in order.\n  7 8 9\n  4 5 6\n  1 2 3")
        _ = t.pamPrompt(ModulePrompt.patternPrompt, echo: false)
        #expect(answers(draw(&t, [1, 2, 3, 6])) == [.answerPattern(p, layout: .numpad)])
        // Drawn before the prompt: answered when it comes, in its layout.
        var u = screen()
        _ = draw(&u, [1, 2, 3, 6])
        #expect(answers(u.pamPrompt("Pattern [789 456 123]: ", echo: false)) == [.answerPattern(p, layout: .numpad)])
    }

    @Test(
        "under a numpad module whose prompt shows no grid (nogrid, quiet), the drawn pattern is answered in the numpad's keys"
    )
    func numpadModuleWithoutGrid() throws {
        let p = try Pattern(typed: "1236")
        for prompt in [ModulePrompt.numpadPatternPrompt, ModulePrompt.numpadPatternOrPasswordPrompt] {
            var s = screen()
            _ = s.pamPrompt(prompt, echo: false)
            #expect(s.phase == .pattern && s.moduleLayout == .numpad)
            #expect(answers(draw(&s, [1, 2, 3, 6])) == [.answerPattern(p, layout: .numpad)])
            // Drawn before the prompt: answered in the numpad's keys when it comes.
            var t = screen()
            _ = draw(&t, [1, 2, 3, 6])
            #expect(answers(t.pamPrompt(prompt, echo: false)) == [.answerPattern(p, layout: .numpad)])
        }
    }

    @Test("the module's layout is read afresh each attempt: one attempt's grid picture does not name the next's")
    func moduleLayoutPerAttempt() throws {
        let p = try Pattern(typed: "1236")
        var s = screen()
        _ = s.pamInfo("Pattern unlock for alice: type the dots in order.\n  7 8 9\n  4 5 6\n  1 2 3")
        _ = s.pamPrompt(ModulePrompt.patternOrPasswordPrompt, echo: false)
        #expect(answers(draw(&s, [1, 2, 3, 6])) == [.answerPattern(p, layout: .numpad)])
        _ = s.pamResult(success: false)
        s.attemptStarted()
        s.flashEnded()
        // The phone's plain words, no grid picture: the phone's keys.
        _ = s.pamPrompt(ModulePrompt.patternOrPasswordPrompt, echo: false)
        #expect(s.moduleLayout == .phone)
        #expect(answers(draw(&s, [1, 2, 3, 6])) == [.answerPattern(p, layout: .phone)])
    }

    @Test("a path of fewer than 4 dots is not sent and says so")
    func tooShort() {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        #expect(draw(&s, [1, 2, 5]) == [.log("too short")])
        #expect(s.notice == "Connect at least 4 dots. This was not counted; try again.")
        #expect(s.phase == .pattern && s.gesture.dots.isEmpty)
    }

    @Test("once the pattern is locked, the module's sentence and pam_unix's prompt: the field, no grid, the password answers")
    func lockedPattern() {
        var s = screen()
        _ = s.pamError(Self.locked)
        _ = s.pamPrompt("Password: ", echo: false)
        #expect(!s.flashing && !s.showsGrid && s.showsField)
        #expect(s.messages == [Self.locked])
        #expect(!s.showsBackHint)  // the pattern was not asked for: no grid to go back to
        // A drawn path is impossible here: a tap on the empty field starts over.
        for b in "pw".utf8 { _ = s.key(.text([b])) }
        #expect(s.press(at: centre(5)).isEmpty)
        #expect(s.key(.enter) == [.answerField])
        #expect(s.pamResult(success: false) == [.log("attempt result=failure"), .restartAttempt])
        #expect(s.field.isEmpty)
        #expect(s.notice == LockScreen.failedNotice)
    }

    @Test("a pattern drawn before the prompt waits for it; a password prompt drops it")
    func drawnEarly() throws {
        var s = screen()
        #expect(draw(&s, [3, 2, 1, 4]).isEmpty)
        #expect(s.phase == .checking)
        #expect(answers(s.pamPrompt(Self.patternPrompt, echo: false)) == [.answerPattern(try Pattern(typed: "3214"), layout: .phone)])

        var t = screen()
        _ = draw(&t, [3, 2, 1, 4])
        #expect(answers(t.pamPrompt("Password: ", echo: false)) == [])
        #expect(t.phase == .password)
    }

    @Test("the module's grid picture is not shown; every other message is, each attempt's replacing the last's")
    func messages() {
        var s = screen()
        #expect(s.pamInfo("Pattern unlock for alice: type the dots in order.\n  7 8 9\n  4 5 6\n  1 2 3").isEmpty)
        #expect(s.messages.isEmpty && s.moduleLayout == .numpad && s.layout == .phone)
        _ = s.pamInfo("one")
        _ = s.pamError("two")
        #expect(s.messages == ["one", "two"])
        _ = s.pamResult(success: false)
        s.attemptStarted()
        #expect(s.messages == ["one", "two"])
        _ = s.pamError("three")
        #expect(s.messages == ["three"])
    }

    @Test("a failed result after a pattern flashes red and starts a new attempt; touch cancel clears a path")
    func failedResult() throws {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&s, [1, 2, 3, 6], touch: 4)
        #expect(answers(s.pamResult(success: false)) == [.startFlash, .restartAttempt])
        #expect(s.flashing)
        s.attemptStarted()
        s.flashEnded()
        #expect(s.gesture.dots.isEmpty)
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = s.press(at: centre(1), touch: 2)
        s.move(to: centre(3), touch: 2)
        s.cancel()
        #expect(s.gesture.dots.isEmpty && !s.gesture.active)
        #expect(s.release(touch: 2).isEmpty)
    }

    @Test("the pattern that locked it stays red for its whole flash when the next attempt asks the password at once")
    func redLastsIntoThePasswordPrompt() {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&s, [1, 2, 3, 6], touch: 4)
        _ = s.pamError("Wrong pattern. Pattern unlock is now locked.")
        #expect(answers(s.pamResult(success: false)) == [.startFlash, .restartAttempt])
        s.attemptStarted()
        _ = s.pamError("Pattern unlock is locked after 5 failed attempts.")
        _ = s.pamPrompt("Password: ", echo: false)
        #expect(s.flashing && s.showsGrid && s.gesture.dots == [1, 2, 3, 6])
        s.flashEnded()
        #expect(s.gesture.dots.isEmpty && !s.showsGrid && s.showsField)
    }

    @Test("the child lost without a result: a new attempt")
    func lost() {
        var s = screen()
        _ = s.pamPrompt("Password: ", echo: false)
        _ = s.key(.text([0x61]))
        #expect(s.pamLost() == [.restartAttempt])
        #expect(s.field.isEmpty && s.phase == .waiting)
    }

    @Test("an attempt that fails or ends having asked nothing is not restarted at once: the next waits for the user")
    func silentFailureWaits() {
        // pam_faillock's preauth refuses a locked user before any prompt.
        var s = screen()
        _ = s.pamError("The account is locked due to 3 failed logins.")
        #expect(answers(s.pamResult(success: false)) == [.endAttempt])
        #expect(s.phase == .waiting && s.messages == ["The account is locked due to 3 failed logins."])
        s.attemptStarted()
        #expect(s.pamLost() == [.endAttempt])
        // Once it asked something, the user is there: the next attempt starts at once.
        s.attemptStarted()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        #expect(s.pamLost() == [.restartAttempt])
    }

    @Test("an answer PAM keeps too long: the screen says so, and a tap or Escape ends the attempt and starts a new one")
    func stuckChecking() throws {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&s, [1, 2, 3, 6])
        #expect(s.phase == .checking)
        // Before the watchdog, a tap is ignored; Escape is not.
        #expect(s.press(at: centre(5)).isEmpty)
        #expect(answers(s.checkingTooLong()) == [])
        #expect(s.stuck && s.notice == LockScreen.stuckNotice)
        #expect(answers(s.press(at: centre(5))) == [.restartAttempt])
        #expect(s.phase == .waiting && !s.stuck && s.notice == nil && s.gesture.dots.isEmpty)
        s.attemptStarted()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&s, [1, 2, 3, 6])
        #expect(answers(s.key(.escape)) == [.restartAttempt])
        #expect(s.phase == .waiting)
        // The answer came after all: the notice goes.
        s.attemptStarted()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&s, [1, 2, 3, 6])
        _ = s.checkingTooLong()
        _ = s.pamError(Self.wrong)
        _ = s.pamPrompt("Password: ", echo: false)
        #expect(!s.stuck && s.notice == nil)
        // Not checking: the watchdog changes nothing.
        #expect(s.checkingTooLong().isEmpty && !s.stuck)
    }

    @Test("a key during the red flash only ends it: a dot typed then never reaches pam_unix's prompt")
    func keyDuringFlash() {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&s, [1, 5, 9, 6])
        _ = s.pamError(Self.wrong)
        _ = s.pamPrompt("Password: ", echo: false)
        #expect(s.flashing && s.phase == .password)
        #expect(s.key(.digit(1, text: [0x31])).isEmpty)
        #expect(!s.flashing && s.field.isEmpty)
        #expect(s.key(.enter).isEmpty)
        #expect(s.phase == .password)
        // Once the field shows, what is typed is the password.
        _ = s.key(.digit(1, text: [0x31]))
        #expect(s.field.withBytes { Array($0) } == [0x31])
    }

    @Test("a key's text is held inline, at most one key's worth, and typed keys go to the field without a copy")
    func keyText() {
        let t = KeyText("ab".utf8)
        #expect(t.count == 2 && t.withBytes { Array($0) } == Array("ab".utf8))
        #expect(KeyText(Array(repeating: 0x61, count: 20)).count == KeyText.capacity)
        #expect(MemoryLayout<KeyText>.size <= 16)  // inline: no heap storage to leave behind
        var w = t
        w.wipe()
        #expect(w.count == 0 && w.withBytes { Array($0) }.isEmpty)
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        for k in [1, 2, 1] { _ = s.key(.digit(k, text: [UInt8(k) + 0x30])) }
        _ = s.key(.text(KeyText("é".utf8)))
        #expect(s.field.withBytes { Array($0) } == Array("121é".utf8))
        _ = s.key(.escape)
        #expect(s.field.isEmpty && s.gesture.dots.isEmpty)
    }

    @Test("a success nobody answered a prompt for is held until a press, a touch or a key")
    func unansweredSuccessHeld() throws {
        // An empty password under nullok, not enrolled: PAM says yes at lock time.
        var s = screen()
        #expect(answers(s.pamResult(success: true)) == [])
        #expect(s.successHeld && s.notice == LockScreen.heldNotice)
        #expect(s.checkingTooLong().isEmpty && !s.stuck)  // no watchdog while held
        #expect(s.press(at: centre(5), touch: 1) == [.unlock])
        var k = screen()
        _ = k.pamResult(success: true)
        #expect(k.key(.escape) == [.unlock])
        // A pattern drawn before the prompt and answered by this attempt unlocks at once.
        var d = screen()
        _ = draw(&d, [1, 2, 3, 6])
        _ = d.pamPrompt(Self.patternPrompt, echo: false)
        #expect(answers(d.pamResult(success: true)) == [.unlock])
        // So does the password answered at pam_unix's prompt.
        var p = screen()
        _ = p.pamPrompt("Password: ", echo: false)
        _ = p.key(.text([0x61]))
        #expect(p.key(.enter) == [.answerField])
        #expect(answers(p.pamResult(success: true)) == [.unlock])
        // An attempt that answered nothing, after one that did, holds again.
        var n = screen()
        _ = n.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&n, [1, 5, 9, 6])
        _ = n.pamResult(success: false)
        n.attemptStarted()
        #expect(answers(n.pamResult(success: true)) == [] && n.successHeld)
    }

    @Test("after a held success whose child did not exit 0, the screen takes a pattern or a password again")
    func refusedHeldSuccessTakesInputAgain() throws {
        // A stack that says yes without asking, from a child that then exits
        // non-zero: the edge refuses the unlock (Attempt.swift) and reports the
        // attempt lost. The next press must start a path, not ask to unlock again.
        var s = screen()
        _ = s.pamResult(success: true)
        #expect(s.press(at: centre(5), touch: 1) == [.unlock])
        #expect(s.pamLost() == [.restartAttempt])
        #expect(!s.successHeld && s.notice == LockScreen.failedNotice && s.phase == .waiting)
        s.attemptStarted()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        #expect(answers(draw(&s, [1, 2, 3, 6])) == [.answerPattern(try Pattern(typed: "1236"), layout: .phone)])
        #expect(answers(s.pamResult(success: true)) == [.unlock])
        // A key after the refusal types: the password reaches pam_unix's prompt.
        var k = screen()
        _ = k.pamResult(success: true)
        #expect(k.key(.escape) == [.unlock])
        #expect(k.pamLost() == [.restartAttempt])
        k.attemptStarted()
        _ = k.pamPrompt("Password: ", echo: false)
        #expect(k.key(.text([0x61])).isEmpty)
        #expect(k.key(.enter) == [.answerField])
        #expect(k.field.withBytes { Array($0) } == [0x61])
    }

    @Test(
        "a right pattern the account stage refuses: no unlock and no red, the sentence naming the fix stays, and the next attempt asks again"
    )
    func accountRefused() throws {
        var s = screen()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = draw(&s, [1, 2, 3, 6])
        let sentence = LockScreen.accountRefusedSentence(user: "alice", expired: true)
        #expect(sentence.contains("has expired") && sentence.contains("chage -E -1 alice"))
        _ = s.pamError("Your account has expired; please contact your system administrator.")
        _ = s.pamError(sentence)
        #expect(answers(s.pamAccountRefused()) == [.restartAttempt])
        #expect(!s.flashing && s.notice == nil && s.phase == .waiting && s.gesture.dots.isEmpty)
        s.attemptStarted()
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        #expect(s.messages.last == sentence && s.showsGrid)
        #expect(answers(draw(&s, [1, 2, 3, 6])) == [.answerPattern(try Pattern(typed: "1236"), layout: .phone)])
        // A stack that asked nothing: the next attempt waits for the user.
        var n = screen()
        #expect(answers(n.pamAccountRefused()) == [.endAttempt])
        #expect(!n.successHeld)
        #expect(!LockScreen.accountRefusedSentence(user: "alice", expired: false).contains("expired"))
    }

    @Test("the answer to an echo-on prompt shows in clear; a password prompt's, and a password typed at the grid, masked")
    func echoOnInClear() {
        var s = screen()
        _ = s.pamPrompt("Token serial: ", echo: true)
        _ = s.key(.text([0x61]))
        #expect(s.showsField && s.showsFieldInClear)
        var p = screen()
        _ = p.pamPrompt("Password: ", echo: false)
        _ = p.key(.text([0x61]))
        #expect(p.showsField && !p.showsFieldInClear)
        var g = screen()
        _ = g.pamPrompt(Self.patternPrompt, echo: false)
        _ = g.key(.text([0x61]))
        #expect(g.showsField && !g.showsFieldInClear)
    }

    /// A keymap for the on-screen keyboard where each drawn key types one letter.
    static let letters: KeyboardKeymap = {
        var texts: [UInt32: [KeyText]] = [:]
        for (i, code) in KeyboardKeymap.Code.topRow.enumerated() {
            texts[code] = KeyLevel.combinations.map { $0.contains(.shift) ? [UInt8(0x41 + i)] : [UInt8(0x61 + i)] }
        }
        return KeyboardKeymap(texts: texts, hasAltGr: false)
    }()

    func tapKeys(_ s: inout LockScreen, _ codes: [UInt32]) -> [Effect] {
        codes.flatMap { s.keyboardTap(.character($0)) }
    }

    @Test("'Use password' opens the field with the on-screen keyboard and answers nothing until Enter; then the pattern prompt is skipped")
    func usePasswordCountsNothing() {
        var s = screen()
        s.keyboard.keymap = Self.letters
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        #expect(s.offersPassword && !s.showsKeyboard)
        #expect(s.usePassword() == [.log("use password")])
        #expect(s.showsField && s.showsKeyboard && !s.showsGrid && !s.offersPassword)
        #expect(s.phase == .pattern)  // the module's prompt is not answered yet
        let code = KeyboardKeymap.Code.topRow
        #expect(tapKeys(&s, [code[0], code[1]]).isEmpty)
        #expect(s.keyboardTap(.enter) == [.answerEmpty])
        #expect(answers(s.pamPrompt("Password: ", echo: false)) == [.answerField])
        #expect(s.field.withBytes { Array($0) } == Array("ab".utf8))
    }

    @Test("Escape on the on-screen keyboard closes the field opened from the grid; the grid and its button come back")
    func keyboardEscapeBackToGrid() {
        var s = screen()
        s.keyboard.keymap = Self.letters
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = s.usePassword()
        _ = tapKeys(&s, [KeyboardKeymap.Code.topRow[0]])
        #expect(s.keyboardTap(.escape).isEmpty)
        #expect(s.showsGrid && !s.showsField && s.offersPassword && s.field.isEmpty)
        #expect(s.phase == .pattern)
    }

    @Test("a hardware key hides the on-screen keyboard (the field stays, under the grid); a press or 'Show keyboard' brings it back")
    func hardwareKeyHidesKeyboard() {
        var s = screen()
        s.keyboard.keymap = Self.letters
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        _ = s.usePassword()
        _ = s.key(.text(KeyText("x".utf8)))
        #expect(s.showsField && !s.showsKeyboard && s.showsGrid && s.offersKeyboard)
        // Taps on keys of a hidden keyboard do nothing.
        #expect(tapKeys(&s, [KeyboardKeymap.Code.topRow[0]]).isEmpty)
        #expect(s.field.withBytes { Array($0) } == Array("x".utf8))
        s.showKeyboard()
        #expect(s.showsKeyboard && !s.showsGrid)
        _ = tapKeys(&s, [KeyboardKeymap.Code.topRow[1]])
        #expect(s.field.withBytes { Array($0) } == Array("xb".utf8))
    }

    @Test("after five wrong patterns pam_unix's prompt shows the field with the on-screen keyboard; the tapped password answers it")
    func lockedPatternTappedPassword() {
        var s = screen()
        s.keyboard.keymap = Self.letters
        _ = s.pamError(Self.locked)
        _ = s.pamPrompt("Password: ", echo: false)
        #expect(s.showsKeyboard && !s.showsGrid && !s.showsBackHint)
        _ = s.keyboardTap(.shift)
        _ = tapKeys(&s, KeyboardKeymap.Code.topRow.prefix(3).map { $0 })
        #expect(s.keyboardTap(.enter) == [.answerField])
        #expect(s.phase == .checking && !s.showsKeyboard)
        #expect(s.pamResult(success: true) == [.log("attempt result=success"), .unlock])
    }

    @Test("the keyboard's own keys never reach the grid: a tap on a key while the grid shows does nothing")
    func keyboardHiddenWithGrid() {
        var s = screen()
        s.keyboard.keymap = Self.letters
        _ = s.pamPrompt(Self.patternPrompt, echo: false)
        #expect(s.keyboardTap(.character(KeyboardKeymap.Code.topRow[0])).isEmpty)
        #expect(s.keyboardTap(.enter).isEmpty)
        #expect(s.phase == .pattern && !s.showsField)
    }
}
