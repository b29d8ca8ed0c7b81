// SPDX-License-Identifier: Apache-2.0
import PatternLock
import Testing

@testable import PatternLockScreen
@testable import PatternLockSetup

/// What pkttyagent 126 writes on its terminal for the daemon's first-pattern
/// check (Tests/system/booted/test_enroll_proof.py reads the same on a real one).
private let header = """
    ==== AUTHENTICATING FOR org.patternlock.enroll-self ====
    Setting your first unlock pattern needs your password.
    Authenticating as: Ada Lovelace (ada)

    """

private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

@Suite("polkit's text agent read as the setup window's password screen")
struct AgentTranscriptTests {
    @Test("the action, polkit's message and whose password come as events; the question once nothing more waits")
    func headerThenQuestion() {
        var t = AgentTranscript()
        #expect(
            t.feed(bytes(header + "Password: ")) == [
                .started(action: "org.patternlock.enroll-self"),
                .message("Setting your first unlock pattern needs your password."),
                .identity("Ada Lovelace (ada)"),
            ])
        #expect(t.question() == .question("Password: "))
        #expect(t.question() == nil, "a question is given once")
    }

    @Test("after an answer the rest of its line (an echo, were it on) never comes back as text")
    func answerLineDropped() {
        var t = AgentTranscript()
        _ = t.feed(bytes(header + "Password: "))
        _ = t.question()
        t.answered()
        let events = t.feed(bytes("Sesame-42\n==== AUTHENTICATION COMPLETE ====\n"))
        #expect(events == [.completed(true)])
        #expect(t.question() == nil)
    }

    @Test("a failed check: PAM's and the helper's lines are said, then the failure")
    func failure() {
        var t = AgentTranscript()
        _ = t.feed(bytes(header + "Password: "))
        _ = t.question()
        t.answered()
        let events = t.feed(
            bytes(
                "\npolkit-agent-helper-1: pam_authenticate failed: Authentication failure\n==== AUTHENTICATION FAILED ====\n"
            ))
        #expect(
            events == [
                .info("polkit-agent-helper-1: pam_authenticate failed: Authentication failure"), .completed(false),
            ])
    }

    @Test("colour escapes and carriage returns are removed; a question split over two reads is whole")
    func escapesAndSplits() {
        var t = AgentTranscript()
        let coloured = "\u{1B}[1;31m==== AUTHENTICATING FOR org.patternlock.enroll-self ====\u{1B}[0m\r\n"
        #expect(t.feed(bytes(coloured)) == [.started(action: "org.patternlock.enroll-self")])
        _ = t.feed(bytes("Setting it.\r\nPass"))
        _ = t.feed(bytes("word: "))
        #expect(t.question() == .question("Password: "))
    }

    @Test("polkit's choice of identity is a question too, after its list")
    func identityChoice() {
        var t = AgentTranscript()
        let out = """
            ==== AUTHENTICATING FOR org.patternlock.enroll-self ====
            Setting your first unlock pattern needs your password.
            Multiple identities can be used for authentication:
             1.  root
             2.  Ada Lovelace (ada)
            Choose identity to authenticate as (1-2): 
            """
        let events = t.feed(bytes(out))
        #expect(events.count == 5)
        #expect(events[2] == .info("Multiple identities can be used for authentication:"))
        #expect(t.question() == .question("Choose identity to authenticate as (1-2): "))
    }

    @Test("a line longer than the limit is cut, not kept growing")
    func longLine() {
        var t = AgentTranscript()
        let events = t.feed(bytes("x\n" + String(repeating: "y", count: 10_000) + "\n"))
        guard case .info(let s) = events.last else {
            Issue.record("no info event: \(events)")
            return
        }
        #expect(s.utf8.count == AgentTranscript.lineLimit)
    }
}

@Suite("The password polkit asks in the setup window")
struct SetupPasswordTests {
    /// A first pattern confirmed: the setup is saving, ENROLL sent.
    func saving() -> PatternSetup {
        var s = PatternSetup(geometry: geometry, changing: false)
        let dots = [2, 7, 6, 1, 8, 3, 4]
        drag(&s, dots)
        s.verdict(.acceptable, for: pattern("2761834"))
        _ = s.tap(.next)
        let effects = drag(&s, dots)
        #expect(s.stage == .saving)
        #expect(effects.count == 1)
        return s
    }

    func asked(_ s: inout PatternSetup, _ question: String = "Password: ") {
        s.agent(.started(action: "org.patternlock.enroll-self"))
        s.agent(.message("Setting your first unlock pattern needs your password."))
        s.agent(.identity("Ada (ada)"))
        s.agent(.question(question))
    }

    @Test("a question opens the password stage: its words, an empty masked field, Cancel and Authenticate")
    func questionOpensPassword() {
        var s = saving()
        asked(&s)
        #expect(s.stage == .password)
        #expect(s.title == PatternSetup.passwordTitle)
        #expect(s.question == "Password: ")
        #expect(!s.questionInClear)
        #expect(s.field.isEmpty)
        #expect(
            s.proofLines == ["Setting your first unlock pattern needs your password.", "Authenticating as: Ada (ada)"])
        #expect(enabled(s) == [.cancel, .authenticate])
        #expect(s.gesture.isEmpty, "nothing of the pattern shows")
    }

    @Test("keys type into the field (digits too), Backspace deletes, Enter answers and the field is wiped once sent")
    func typedAnswer() {
        var s = saving()
        asked(&s)
        for key: Key in [.text(KeyText(Array("S3".utf8))), .digit(4, text: KeyText([0x34])), .text(KeyText([0x78]))] {
            #expect(s.passwordKey(key).isEmpty)
        }
        #expect(s.passwordKey(.backspace).isEmpty)
        #expect(s.field.withBytes { Array($0) } == Array("S34".utf8))
        #expect(s.passwordKey(.enter) == [.answer])
        #expect(s.stage == .saving)
        #expect(s.title == PatternSetup.checkingTitle)
        #expect(s.field.characters == 3, "the edge sends the field, then says so")
        s.answerSent()
        #expect(s.field.isEmpty)
        s.saved()
        #expect(s.stage == .done)
    }

    @Test("the on-screen keyboard's keys type as the hardware's do, Enter on it answers")
    func tappedAnswer() {
        var s = saving()
        asked(&s)
        s.keyboard.keymap = KeyboardKeymap(
            texts: [24: [KeyText([0x71]), KeyText([0x51])] + Array(repeating: KeyText([0x71]), count: 6)],
            hasAltGr: false)
        #expect(s.keyboardTap(.shift).isEmpty)
        #expect(s.keyboardTap(.character(24)).isEmpty)
        #expect(s.keyboardTap(.character(24)).isEmpty)
        #expect(s.field.withBytes { Array($0) } == Array("Qq".utf8), "Shift holds for one key")
        #expect(s.keyboardTap(.enter) == [.answer])
    }

    @Test("Cancel ends the agent's question, wipes the field and waits for the daemon's answer")
    func cancel() {
        var s = saving()
        asked(&s)
        _ = s.passwordKey(.text(KeyText([0x61])))
        #expect(s.tap(.cancel) == [.cancelProof])
        #expect(s.field.isEmpty)
        #expect(s.stage == .saving)
        s.notSaved("Your password was not confirmed.", back: .confirm)
        #expect(s.stage == .confirm)
        #expect(s.detail == "Your password was not confirmed.")
    }

    @Test("a wrong password: the agent says it failed, the daemon's refusal sends the user back to confirm")
    func wrongPassword() {
        var s = saving()
        asked(&s)
        _ = s.passwordKey(.text(KeyText([0x61])))
        _ = s.passwordKey(.enter)
        s.answerSent()
        s.agent(.completed(false))
        #expect(s.stage == .saving)
        s.notSaved("Your password was not confirmed.", back: .confirm)
        #expect(s.stage == .confirm)
        #expect(s.proofLines.isEmpty)
        #expect(s.field.isEmpty)
    }

    @Test("the daemon's answer while the question is still open ends it (the field wiped)")
    func answerDuringQuestion() {
        var s = saving()
        asked(&s)
        _ = s.passwordKey(.text(KeyText([0x61])))
        s.notSaved("No answer from polkit.", back: nil)
        #expect(s.stage == .ended)
        #expect(s.field.isEmpty)
        #expect(s.question == nil)
    }

    @Test("polkit's choice of identity is answered in clear")
    func identityInClear() {
        var s = saving()
        asked(&s, "Choose identity to authenticate as (1-2): ")
        #expect(s.questionInClear)
        #expect(s.title == PatternSetup.chooseIdentityTitle)
    }

    @Test("a question for another polkit action (a check some other process asked about the window) is not opened")
    func otherAction() {
        var s = saving()
        s.agent(.started(action: "org.freedesktop.systemd1.manage-units"))
        s.agent(.question("Password: "))
        #expect(s.stage == .saving)
        #expect(s.question == nil)
        asked(&s)
        #expect(s.stage == .password)
    }

    @Test("a question whose message does not name the window's process is another program's: never opened")
    func questionNotNamingTheWindow() {
        var s = saving()
        s.process = 4242
        // Another process of the user asked polkit about the window, with no details:
        // the message shows the placeholders (or another process), never this one.
        for message in [
            "Setting your first unlock pattern needs your password. Asked by $(program) (process $(pid)).",
            "Setting your first unlock pattern needs your password. Asked by patternlock-setup (process 42420).",
        ] {
            s.agent(.started(action: "org.patternlock.enroll-self"))
            s.agent(.message(message))
            s.agent(.question("Password: "))
            #expect(s.stage == .saving, "\(message)")
            #expect(s.question == nil)
            #expect(s.foreignQuestion)
            s.agent(.completed(false))
        }
        // The daemon's own check names it: that one is answered here.
        s.agent(.started(action: "org.patternlock.enroll-self"))
        s.agent(.message("Setting your first unlock pattern needs your password. Asked by patternlock-setup (process 4242)."))
        s.agent(.question("Password: "))
        #expect(s.stage == .password)
        // The daemon's answer ends the proof, and with it what was noted.
        s.notSaved("no", back: .confirm)
        #expect(!s.foreignQuestion)
    }

    @Test("while the answer is being checked Cancel ends the question too")
    func cancelWhileChecking() {
        var s = saving()
        asked(&s)
        _ = s.passwordKey(.text(KeyText([0x61])))
        #expect(s.passwordKey(.enter) == [.answer])
        #expect(enabled(s) == [.cancel])
        #expect(s.tap(.cancel) == [.cancelProof])
        #expect(s.field.isEmpty)
        #expect(!s.checking)
        #expect(enabled(s).isEmpty, "nothing to cancel twice")
    }

    @Test("control characters from the terminal are not shown")
    func controlCharacters() {
        var t = AgentTranscript()
        let events = t.feed(Array("==== AUTHENTICATING FOR a ====\nSet\u{07}ting\u{08} it.\n".utf8))
        #expect(events == [.started(action: "a"), .message("Setting it.")])
    }

    @Test("the agent is heard only while the pattern is being saved")
    func agentOnlyWhileSaving() {
        var s = PatternSetup(geometry: geometry, changing: false)
        s.agent(.question("Password: "))
        #expect(s.stage == .first)
        #expect(s.question == nil)
    }
}

@Suite("Removing the pattern by drawing the current one")
struct SetupRemoveTests {
    @Test("the current pattern drawn sends REMOVE with it; the answer says the password is asked instead")
    func removed() {
        var s = PatternSetup(geometry: geometry, changing: true, removing: true)
        #expect(s.stage == .current)
        #expect(s.title == PatternSetup.removeTitle)
        let effects = drag(&s, [4, 6, 1, 8, 3])
        #expect(effects == [.remove(current: pattern("46183"))])
        #expect(s.stage == .saving)
        #expect(s.title == PatternSetup.removingTitle)
        #expect(s.gesture.isEmpty, "the current pattern leaves the screen at once")
        s.saved()
        #expect(s.stage == .done)
        #expect(s.title == PatternSetup.removedTitle)
        #expect(s.detail == PatternSetup.removedDetail)
        #expect(s.tap(.done) == [.close(set: true)])
    }

    @Test("a wrong current pattern: the attempts left, and the current pattern asked again")
    func wrongCurrent() {
        var s = PatternSetup(geometry: geometry, changing: true, removing: true)
        _ = drag(&s, [1, 2, 3, 6])
        s.notSaved("Wrong current pattern — 4 attempts left.", back: .current)
        #expect(s.stage == .current)
        #expect(s.title == PatternSetup.removeTitle)
        #expect(s.detail == "Wrong current pattern — 4 attempts left.")
    }

    @Test("too short a drawing is not sent")
    func tooShort() {
        var s = PatternSetup(geometry: geometry, changing: true, removing: true)
        #expect(drag(&s, [1, 2]).isEmpty)
        #expect(s.stage == .current)
        #expect(s.detail == PatternSetup.tooShortDetail)
    }

    @Test("when nothing can be removed the title says so")
    func unavailable() {
        let s = PatternSetup.unavailable(geometry: geometry, sentence: "You have no unlock pattern.", removing: true)
        #expect(s.title == PatternSetup.unremovableTitle)
        #expect(enabled(s) == [.close])
    }
}
