// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockScreen
import PatternLockWire

/// Setting a pattern by drawing it, in Android's stages (its ChooseLockPattern):
/// draw it, see it recorded, continue, draw it again to confirm, and it is set.
/// What `patternlock-setup` shows comes from here only; its edges (the window,
/// the daemon's socket, polkit) call in with what happened and do the effects.
///
/// The policy's verdict comes while drawing: each time the path reaches the
/// fewest dots a pattern has, and each time it grows after that, the setup asks
/// for the daemon's `CHECK` of the path so far (`Effect.check`); the answer
/// (`verdict(_:for:)`) colours the path before the finger lifts and says why a
/// refused one is refused, in the sentence `patternlockd enroll` prints. An
/// answer for a path that has changed since is dropped. Nothing here is counted:
/// a refused, too short or mismatched pattern is simply drawn again.
///
/// Dots are kept as the path draws them and wiped when it is cleared; the
/// pattern is never turned into text here (`Effect` carries it to the edge,
/// which sends it to the daemon and wipes it).
public struct PatternSetup: Sendable {
    public enum Stage: Equatable, Sendable {
        /// A change: the current pattern drawn first (the daemon checks it with
        /// the new one, as an attempt).
        case current
        /// "Draw an unlock pattern".
        case first
        /// "Pattern recorded": Redraw or Continue.
        case recorded
        /// "Draw the pattern again to confirm".
        case confirm
        /// Sent to the daemon (for a first pattern, polkit asks the password meanwhile).
        case saving
        /// polkit's agent asks a question (the password) for the daemon: the
        /// field, the on-screen keyboard, Cancel and Authenticate.
        case password
        /// "Your new unlock pattern is set".
        case done
        /// Cancelled (the window closes), or failed for good: `detail` says why
        /// and who can help, and Close ends it.
        case ended
    }

    /// The policy's verdict on the path drawn so far.
    public enum Verdict: Equatable, Sendable {
        /// Too few dots to ask, or asked and not answered yet.
        case none
        case acceptable
        case refused(EnrollPolicy.Refusal)
        /// The daemon gave no verdict (no answer, or a daemon without CHECK):
        /// the path may go on, and ENROLL judges it at the end.
        case unavailable
    }

    /// What the setup asks its edges to do.
    public enum Effect: Equatable, Sendable {
        /// Ask the daemon's `CHECK` about this path (answer with `verdict(_:for:)`).
        case check(Pattern)
        /// Send `ENROLL` with the new pattern, and `current=` for a change
        /// (answer with `saved()` or `notSaved(_:back:)`).
        case enroll(new: Pattern, current: Pattern?)
        /// Send `REMOVE` with the current pattern (answered as `enroll` is).
        case remove(current: Pattern)
        /// Close the window; `set` says whether the new pattern was set.
        case close(set: Bool)
        /// Give the agent's question the field's bytes, then `answerSent()`.
        case answer
        /// End the agent's questions: the daemon then hears that the password
        /// was not confirmed, and nothing is set.
        case cancelProof
        /// The on-screen keyboard shows the keymap's next group (layout).
        case nextKeyboardGroup
    }

    /// The buttons under the grid, left to right; Enter presses the last one
    /// when it is enabled, Escape the first.
    public enum Button: Equatable, Sendable {
        case cancel, redraw, next, done, close, authenticate

        public var label: String {
            switch self {
            case .authenticate: return "Authenticate"
            case .cancel: return "Cancel"
            case .redraw: return "Redraw"
            case .next: return "Continue"
            case .done: return "Done"
            case .close: return "Close"
            }
        }
    }

    // The words on screen: one place for them in the code (the man page and the
    // README quote them; Tests/Contract/screens.txt holds them with the other
    // screens' words, one wording per meaning).
    public static let drawCurrentTitle = "Draw your current pattern"
    public static let drawTitle = "Draw an unlock pattern"
    public static let releaseTitle = "Release finger when done"
    public static let recordedTitle = "Pattern recorded"
    public static let confirmTitle = "Draw the pattern again to confirm"
    public static let savingTitle = "Setting your pattern…"
    public static let doneTitle = "Your new unlock pattern is set"
    public static let tooShortDetail = ScreenWords.tooShort
    public static let acceptableDetail = "Acceptable: not among the patterns people choose most."
    public static let mismatchDetail = "That was not the same pattern. Start again: draw an unlock pattern."
    public static let cancelledDetail = "Nothing was changed."
    public static let unavailableTitle = "The pattern cannot be set now"
    public static let unremovableTitle = "The pattern cannot be removed now"
    public static let removeTitle = "Draw your current pattern to remove it"
    public static let removingTitle = "Removing your pattern…"
    public static let removedTitle = "Your unlock pattern is removed"
    public static let removedDetail = "From now on your password is asked where the pattern was."
    public static let passwordTitle = "Enter your password"
    public static let chooseIdentityTitle = "Choose whose password to enter"
    public static let checkingTitle = "Checking your password…"

    /// Every sentence and button of the window by its key in
    /// Tests/Contract/screens.txt (`setup.NAME`), which a test holds it to.
    public static let words: [String: String] = {
        var all: [String: String] = [
            "setup.drawCurrentTitle": drawCurrentTitle,
            "setup.drawTitle": drawTitle,
            "setup.releaseTitle": releaseTitle,
            "setup.recordedTitle": recordedTitle,
            "setup.confirmTitle": confirmTitle,
            "setup.savingTitle": savingTitle,
            "setup.doneTitle": doneTitle,
            "setup.acceptableDetail": acceptableDetail,
            "setup.mismatchDetail": mismatchDetail,
            "setup.cancelledDetail": cancelledDetail,
            "setup.unavailableTitle": unavailableTitle,
            "setup.unremovableTitle": unremovableTitle,
            "setup.removeTitle": removeTitle,
            "setup.removingTitle": removingTitle,
            "setup.removedTitle": removedTitle,
            "setup.removedDetail": removedDetail,
            "setup.passwordTitle": passwordTitle,
            "setup.chooseIdentityTitle": chooseIdentityTitle,
            "setup.checkingTitle": checkingTitle,
        ]
        for button in [Button.authenticate, .cancel, .redraw, .next, .done, .close] {
            all["setup.button.\(button)"] = button.label
        }
        return all
    }()

    /// A first pattern's password was not confirmed (refused, or the agent was
    /// cancelled): drawn again, the password is asked again.
    public static let proofRefused =
        "Your password was not confirmed, so nothing was changed. Draw the pattern again to confirm, and enter your password when asked."

    /// polkit's text agent did not start, so the window could not ask.
    public static func agentFailed(user: String) -> String {
        "Your password was not confirmed, and this window could not ask for it: polkit's text agent did not start (is polkitd running?). Nothing was changed. On a terminal, run patternlockd enroll, or ask an administrator to run: sudo patternlockd enroll \(user)"
    }

    public private(set) var stage: Stage
    /// The current pattern is drawn to remove it, not to change it.
    public let removing: Bool
    /// Ended by a failure (the daemon's, or pattern unlock unavailable), not by
    /// the user: `detail` says why and who can help.
    public private(set) var failed = false
    /// The line under the title: the verdict's reason, or what went wrong.
    public private(set) var detail: String?
    public private(set) var verdict: Verdict = .none
    public var gesture: GestureTracker
    private var recorded: Pattern?
    private var current: Pattern?
    /// The path is being typed (keys 1–9), not drawn: Enter ends it.
    private var typing = false

    /// The answer to the agent's question, typed or tapped; wiped once sent.
    public let field = SecretField()
    /// The keyboard drawn under the field for touch and pointer.
    public var keyboard = OnScreenKeyboard()
    /// The agent's question now (`Password: `), while `stage == .password`.
    public private(set) var question: String?
    /// The question is polkit's choice of identity, answered in clear (a number).
    public private(set) var questionInClear = false
    /// What polkit says around its question: its message for the action, whose
    /// password it asks, PAM's information.
    public private(set) var proofLines: [String] = []
    /// An answer was given and the agent has not finished with it.
    public private(set) var checking = false
    /// The polkit action the agent asks about now: only the daemon's own
    /// (`PasswordProofTiming.action`) opens the password stage.
    private var proofAction: String?
    /// This window's process: a question is answered only when polkit's message
    /// names it (`PasswordProofTiming.message(_:names:)`), which only the
    /// daemon's check can do. nil: any message of the action (tests of stages).
    public var process: Int32?
    /// polkit's message for the question now names `process`.
    private var proofNamesUs = false
    /// A question came that this window's request did not start (another program
    /// asked polkit about this window's process): it was not answered, and the
    /// edge ends its agent, which ends that question.
    public private(set) var foreignQuestion = false

    /// `changing`: the user has a pattern already, so the current one is drawn
    /// first. `removing`: the current pattern drawn removes it (the user has one).
    public init(geometry: GridGeometry, changing: Bool, removing: Bool = false) {
        gesture = GestureTracker(geometry: geometry)
        self.removing = removing
        stage = changing || removing ? .current : .first
    }

    /// Nothing can be drawn that would help (pattern unlock is locked for the
    /// user, the record cannot be read, the daemon cannot be reached): the
    /// window says `sentence`, which names who can help, and Close.
    public static func unavailable(geometry: GridGeometry, sentence: String, removing: Bool = false) -> PatternSetup {
        var s = PatternSetup(geometry: geometry, changing: false, removing: removing)
        s.stage = .ended
        s.failed = true
        s.detail = sentence
        return s
    }

    public var title: String {
        switch stage {
        case .current: return gesture.active ? Self.releaseTitle : removing ? Self.removeTitle : Self.drawCurrentTitle
        case .first: return gesture.active ? Self.releaseTitle : Self.drawTitle
        case .recorded: return Self.recordedTitle
        case .confirm: return gesture.active ? Self.releaseTitle : Self.confirmTitle
        case .saving: return checking ? Self.checkingTitle : removing ? Self.removingTitle : Self.savingTitle
        case .password: return questionInClear ? Self.chooseIdentityTitle : Self.passwordTitle
        case .done: return removing ? Self.removedTitle : Self.doneTitle
        case .ended: return failed ? (removing ? Self.unremovableTitle : Self.unavailableTitle) : Self.cancelledDetail
        }
    }

    /// The buttons now, and which of them can be pressed.
    public var buttons: [(button: Button, enabled: Bool)] {
        switch stage {
        case .current, .first: return [(.cancel, true), (.next, false)]
        case .recorded: return [(.redraw, true), (.next, verdict == .acceptable || verdict == .unavailable)]
        case .confirm: return [(.cancel, true)]
        case .saving: return [(.cancel, checking)]
        case .password: return [(.cancel, true), (.authenticate, true)]
        case .done: return [(.done, true)]
        case .ended: return [(.close, true)]
        }
    }

    private var draws: Bool { stage == .current || stage == .first || stage == .confirm }

    // MARK: Drawing (pointer, touch, keys 1–9)

    public mutating func press(at p: Point, touch: Int32? = nil) -> [Effect] {
        guard draws, !gesture.active else { return [] }
        clearPath()
        gesture.press(at: p, touch: touch)
        return grew()
    }

    public mutating func move(to p: Point, touch: Int32? = nil) -> [Effect] {
        guard draws, !gesture.move(to: p, touch: touch).isEmpty else { return [] }
        return grew()
    }

    public mutating func release(touch: Int32? = nil) -> [Effect] {
        guard draws, gesture.active, touch == gesture.touchID else { return [] }
        return finished(gesture.release(touch: touch))
    }

    /// Touch cancel: the path clears, nothing else changes.
    public mutating func cancelTouch() {
        if gesture.active { clearPath() }
    }

    /// A dot typed (keys 1–9 as the edge's layout reads them): the path grows as
    /// a straight move to that dot would make it.
    public mutating func type(dot: Int) -> [Effect] {
        guard draws, !gesture.active else { return [] }
        if !typing {
            // The first key starts a new path, whatever was drawn before.
            clearPath()
            typing = true
        }
        guard !gesture.type(dot: dot).isEmpty else { return [] }
        return grew()
    }

    public mutating func backspace() {
        guard draws, !gesture.active else { return }
        clearPath()
        if stage == .first { detail = nil }
    }

    /// Enter: ends typed dots as a release would, else presses the last button
    /// unless it is Cancel (in the password stage, Authenticate).
    public mutating func enter() -> [Effect] {
        if draws && typing && !gesture.isEmpty {
            typing = false
            return finished(gesture.finish())
        }
        // Enter goes forward (Continue, Done, Close), never back: in the
        // confirmation the only button is Cancel, and an Enter too many must not
        // throw the drawing away.
        guard let last = buttons.last, last.enabled, last.button != .cancel else { return [] }
        return tap(last.button)
    }

    /// Escape presses the first button (Cancel, or Redraw once recorded).
    public mutating func escape() -> [Effect] {
        guard let first = buttons.first, first.enabled else { return [] }
        return tap(first.button)
    }

    // MARK: Buttons

    public mutating func tap(_ button: Button) -> [Effect] {
        guard buttons.contains(where: { $0.button == button && $0.enabled }) else { return [] }
        switch button {
        case .cancel where stage == .password || (stage == .saving && checking):
            checking = false
            field.clear()
            question = nil
            stage = .saving
            return [.cancelProof]
        case .authenticate:
            question = nil
            checking = true
            stage = .saving
            return [.answer]
        case .cancel:
            clearPath()
            forget()
            stage = .ended
            detail = Self.cancelledDetail
            return [.close(set: false)]
        case .redraw:
            clearPath()
            recorded = nil
            stage = .first
            detail = nil
            return []
        case .next:
            clearPath()
            stage = .confirm
            detail = nil
            return []
        case .done:
            return [.close(set: true)]
        case .close:
            return [.close(set: false)]
        }
    }

    // MARK: The daemon

    /// The daemon's `CHECK` answer for `pattern`: dropped unless it is still the
    /// path drawn (or the one recorded and waiting for its verdict).
    public mutating func verdict(_ answer: Verdict, for pattern: Pattern) {
        let path = stage == .recorded ? recorded?.dots : gesture.dots
        guard stage == .first || stage == .recorded, path == pattern.dots else { return }
        verdict = answer
        if case .refused(let refusal) = answer {
            detail = GuessFeedback.sentence(for: refusal, pattern: pattern)
            if stage == .recorded {
                // Recorded before its verdict came: refused after all, draw again.
                stage = .first
                recorded = nil
            }
        } else if answer == .acceptable {
            detail = Self.acceptableDetail
        } else if answer == .unavailable {
            detail = nil
        }
    }

    // MARK: The password (polkit's text agent, for a first pattern)

    /// What the agent said (`AgentTranscript`): a question opens the password
    /// stage with an empty field; the rest is shown around it.
    public mutating func agent(_ event: AgentTranscript.Event) {
        guard stage == .saving || stage == .password else { return }
        switch event {
        case .started(let action):
            proofAction = action
            proofNamesUs = false
            proofLines = []
        case .message(let text), .info(let text):
            if case .message = event { proofNamesUs = process.map { PasswordProofTiming.message(text, names: $0) } ?? true }
            proofLines.append(text)
            if proofLines.count > 4 { proofLines.removeFirst(proofLines.count - 4) }
        case .identity(let name):
            proofLines.append("Authenticating as: \(name)")
        case .question(let text):
            // A check some other process of the user asked about this window
            // (pkcheck --process): not the daemon's, so never answered here.
            guard proofAction == PasswordProofTiming.action, proofNamesUs else {
                foreignQuestion = true
                return
            }
            field.clear()
            keyboard.reset()
            question = text
            questionInClear = text.hasPrefix("Choose identity")
            checking = false
            stage = .password
        case .completed:
            proofAction = nil
            checking = false
            question = nil
            field.clear()
            if stage == .password { stage = .saving }
        }
    }

    /// The edge gave the agent the field's bytes (`Effect.answer`): wiped now.
    public mutating func answerSent() {
        field.clear()
    }

    /// A key in the password stage: text goes into the field, Backspace takes
    /// the last character off, Enter answers, Escape cancels.
    public mutating func passwordKey(_ key: Key) -> [Effect] {
        guard stage == .password else { return [] }
        switch key {
        case .digit(_, let text), .text(let text):
            _ = text.withBytes { field.append($0) }
            return []
        case .backspace:
            field.deleteLast()
            return []
        case .enter: return tap(.authenticate)
        case .escape: return tap(.cancel)
        }
    }

    /// A tap on a key of the on-screen keyboard: what that key does on the hardware.
    public mutating func keyboardTap(_ slot: KeySlot) -> [Effect] {
        guard stage == .password else { return [] }
        switch keyboard.tap(slot) {
        case nil: return []
        case .text(let text): return passwordKey(.text(text))
        case .enter: return passwordKey(.enter)
        case .backspace: return passwordKey(.backspace)
        case .escape: return passwordKey(.escape)
        case .nextGroup: return [.nextKeyboardGroup]
        }
    }

    // MARK: The daemon's answer

    /// `ENROLL` answered OK: the pattern is set.
    public mutating func saved() {
        guard stage == .saving || stage == .password else { return }
        endProof()
        forget()
        stage = .done
        detail = removing ? Self.removedDetail : nil
    }

    /// `ENROLL` did not set it: `sentence` says why (in the words the CLI uses);
    /// `back` is the stage to draw again from, nil when the setup cannot go on.
    public mutating func notSaved(_ sentence: String, back: Stage?) {
        guard stage == .saving || stage == .password else { return }
        endProof()
        clearPath()
        detail = sentence
        switch back {
        case .current?: current = nil; recorded = nil; stage = .current
        case .first?: recorded = nil; stage = .first
        case .confirm?: stage = .confirm
        default:
            forget()
            stage = .ended
            failed = true
        }
    }

    /// The daemon's answer to this window's ENROLL (or REMOVE), or why there is
    /// none: the stage it leads to and the sentence it shows. `new`: the pattern
    /// sent (a refusal names why it is guessed); `first`: a first pattern, whose
    /// password polkit asked; `agentFailed`: polkit's text agent did not start.
    public mutating func daemonAnswered(
        _ result: Result<Reply, ClientError>, new: Pattern, first: Bool, user: String, agentFailed: Bool = false
    ) {
        let reply: Reply
        switch result {
        case .failure(let error):
            notSaved(error.description, back: nil)
            return
        case .success(let r): reply = r
        }
        let failure = { (current: Bool) in ClientWording.failure(for: reply, user: user, current: current).description }
        if removing {
            switch reply {
            case .ok, .okMovedAside: saved()
            case .fail(let remaining, _) where remaining > 0: notSaved(failure(true), back: .current)
            case .notEnrolled: notSaved("You have no unlock pattern; nothing was removed.", back: nil)
            default: notSaved(failure(true), back: nil)
            }
            return
        }
        switch reply {
        case .okIterations: saved()
        case .refused(let r): notSaved(GuessFeedback.sentence(for: r, pattern: new), back: .first)
        case .fail(let remaining, _) where remaining > 0: notSaved(failure(true), back: .current)
        case .error(.passwordProofInProgress): notSaved(ClientWording.proofInProgress, back: .confirm)
        case .error(.passwordProofRequired) where foreignQuestion: notSaved(ClientWording.foreignQuestion, back: .confirm)
        case .error(.passwordProofRequired) where agentFailed: notSaved(Self.agentFailed(user: user), back: .confirm)
        case .error(.passwordProofRequired): notSaved(Self.proofRefused, back: .confirm)
        default: notSaved(failure(!first), back: nil)
        }
    }

    // MARK: Inside

    /// The path grew: ask for the verdict once it is a pattern (first stage only;
    /// the current pattern and the confirmation are not judged).
    private mutating func grew() -> [Effect] {
        guard stage == .first else { return [] }
        verdict = .none
        guard gesture.dots.count >= Pattern.minimumDots, let p = pathPattern() else {
            detail = nil
            return []
        }
        return [.check(p)]
    }

    private mutating func finished(_ result: GestureResult) -> [Effect] {
        typing = false
        switch result {
        case .none:
            return []
        case .tooShort:
            detail = Self.tooShortDetail
            verdict = .none
            return []
        case .pattern(let p):
            switch stage {
            case .current where removing:
                clearPath()
                stage = .saving
                detail = nil
                return [.remove(current: p)]
            case .current:
                current = p
                stage = .first
                detail = nil
                clearPath()
                return []
            case .first:
                if case .refused = verdict { return [] }  // its reason is shown; draw another
                recorded = p
                stage = .recorded
                if verdict == .none { detail = nil }
                return []
            case .confirm:
                guard let first = recorded else { return [] }
                if first.dots == p.dots {
                    // Off the screen once confirmed: nobody reads it over a shoulder
                    // while the daemon works or after it is set.
                    clearPath()
                    stage = .saving
                    detail = nil
                    return [.enroll(new: first, current: current)]
                }
                recorded = nil
                verdict = .none
                stage = .first
                detail = Self.mismatchDetail
                return []
            default:
                return []
            }
        }
    }

    private func pathPattern() -> Pattern? {
        var typed = gesture.dots.map { UInt8($0) + 0x30 }
        defer { wipe(&typed) }
        return try? Pattern(typed: SecretBytes(typed))
    }

    private mutating func clearPath() {
        gesture.clear()
        typing = false
        if stage != .recorded { verdict = .none }
    }

    private mutating func endProof() {
        proofAction = nil
        proofNamesUs = false
        foreignQuestion = false
        field.clear()
        question = nil
        checking = false
        proofLines = []
    }

    private mutating func forget() {
        recorded = nil
        current = nil
        verdict = .none
    }
}
