// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockWire

/// The UTF-8 text one key typed, held inline (never on the heap, so no copy of
/// a password's characters is left behind in freed memory); at most `capacity`
/// bytes (one key types one character, at most 4).
public struct KeyText: Equatable, Sendable, ExpressibleByArrayLiteral {
    public static let capacity = 8
    private var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0)
    public private(set) var count = 0

    /// The first `capacity` bytes of `source`.
    public init(_ source: some Sequence<UInt8>) {
        withUnsafeMutableBytes(of: &bytes) { raw in
            for b in source where count < Self.capacity {
                raw[count] = b
                count += 1
            }
        }
    }

    public init(arrayLiteral elements: UInt8...) { self.init(elements) }

    /// The bytes, for the duration of `body` only.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes(of: bytes) { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    public var first: UInt8? { count > 0 ? withBytes { $0[0] } : nil }

    /// Zeroes the bytes (the edge's copy, once the screen has taken them).
    public mutating func wipe() {
        bytes = (0, 0, 0, 0, 0, 0, 0, 0)
        count = 0
    }

    public static func == (a: KeyText, b: KeyText) -> Bool {
        a.withBytes { x in b.withBytes { y in x.elementsEqual(y) } }
    }
}

/// A key, as the keyboard edge reads it through xkbcommon.
public enum Key: Equatable, Sendable {
    /// One of the keys 1–9 (top row or numeric keypad), with the text it types.
    case digit(Int, text: KeyText)
    /// Any other printable key: its UTF-8 text.
    case text(KeyText)
    case enter
    case backspace
    case escape
}

/// What the lock screen asks its edges to do after an event.
public enum Effect: Equatable, Sendable {
    /// Answer the PAM child's prompt with this pattern, each dot written as the
    /// key it sits on in the module's layout (`LockScreen.answerKeys`): the module
    /// reads its answer in its own layout and turns it back into dots.
    case answerPattern(Pattern, layout: KeypadLayout)
    /// Answer it with the password field's bytes; the field is cleared after sending.
    case answerField
    /// Answer the pattern prompt with nothing (the module then asks no more and
    /// counts nothing): the typed password waits for the next prompt.
    case answerEmpty
    /// End the PAM child's attempt (SIGKILL if it still runs) and start a new one.
    case restartAttempt
    /// End the PAM child's attempt and start the next only at the next user input
    /// (press, touch or key): an attempt that failed without asking anything (a
    /// user pam_faillock has locked) would otherwise fail again at once, forever.
    case endAttempt
    /// Read the keymap's next group (layout) into the on-screen keyboard.
    case nextKeyboardGroup
    /// Arm the timer that ends the red flash (`LockScreen.flashSeconds`).
    case startFlash
    /// PAM said yes: unlock the session.
    case unlock
    /// A line for `--debug` (never a secret).
    case log(String)
}

/// The whole state of the lock screen: what is drawn comes from here only, and
/// every input or PAM event is a call that changes it and says what to do.
public struct LockScreen: Sendable {
    public enum Phase: Equatable, Sendable {
        /// A PAM attempt is starting; the grid shows and a drawn pattern waits for
        /// the module's prompt.
        case waiting
        /// The module asked for the pattern.
        case pattern
        /// Another prompt (pam_unix's `Password: `): the field shows, not the grid.
        case password
        /// An answer is with PAM: input is ignored.
        case checking
    }

    public static let flashSeconds = 1.0
    /// How long an answer may be with PAM before the screen offers to start again
    /// (a PAM module that hangs must not leave the screen with no way to unlock).
    public static let stuckSeconds = 12.0
    public static let stuckNotice = ScreenWords.stuck
    public static let tooShortNotice = ScreenWords.tooShort
    public static let failedNotice = ScreenWords.failed

    public var options: Options
    public private(set) var phase: Phase = .waiting {
        didSet {
            if phase != .checking && stuck {
                stuck = false
                if notice == Self.stuckNotice { notice = nil }
            }
        }
    }
    /// PAM has had the answer for `stuckSeconds`: a tap or Escape starts again.
    public private(set) var stuck = false
    public var gesture: GestureTracker
    /// The path shows red (a wrong pattern), for `flashSeconds`.
    public private(set) var flashing = false
    /// PAM's messages of the latest attempt that said something, verbatim.
    public private(set) var messages: [String] = []
    /// What the screen says of its own (too short, not unlocked).
    public private(set) var notice: String?
    /// The prompt's own text, while a password prompt shows.
    public private(set) var promptText: String?
    public private(set) var promptEcho = false
    /// The typed password (or other answer).
    public let field = SecretField()
    /// A printable key opened the field while the grid shows.
    public private(set) var fieldOpen = false
    /// The keys the dots are typed on: `--layout`, only. The module's layout says
    /// how the answer is written (`moduleLayout`), never which key lights which dot.
    public var layout: KeypadLayout { options.layout }
    /// The layout the module reads its answer in, read afresh each attempt: what
    /// its prompt names (every prompt of the module does but the phone's plain
    /// words), else the grid picture this attempt showed (a module older than the
    /// numpad's own prompt), else phone.
    public private(set) var moduleLayout: KeypadLayout = .phone
    /// The layout the grid picture of this attempt showed, if one came.
    private var gridLayout: KeypadLayout?

    /// This attempt asked for the pattern: a password prompt after it may be left
    /// for the grid (a new attempt), which the screen then offers.
    public private(set) var patternAsked = false
    /// What the screen offers under an empty password field after a pattern prompt.
    public static let backHint = ScreenWords.backHint
    public var showsBackHint: Bool { phase == .password && !flashing && patternAsked && field.isEmpty }

    private var pendingPattern: Pattern?
    private var passwordPending = false
    private var answeredPattern = false
    private var attemptSpoke = false
    /// This attempt asked something (any prompt).
    private var attemptPrompted = false
    /// The user answered a prompt of this attempt.
    private var attemptAnswered = false
    /// PAM said yes to an attempt nobody answered (a stack that asks nothing, as
    /// an empty password under `nullok`): the unlock waits for a person's press,
    /// touch or key, as swaylock waits for Enter.
    public private(set) var successHeld = false
    public static let heldNotice = ScreenWords.held
    /// The keys typed as dots so far, in a locked buffer wiped on clear.
    private let typedKeys = SecretField()

    /// The keyboard the screen draws for touch and pointer.
    public var keyboard = OnScreenKeyboard()
    /// The last input was a press or a touch, not a hardware key (or there was
    /// none yet): the on-screen keyboard shows with the field. A hardware key
    /// hides it; a press shows it again.
    public private(set) var keyboardWanted = true
    /// Whether the on-screen keyboard shows (with the grid hidden).
    public var showsKeyboard: Bool { showsField && keyboardWanted }
    /// Whether the grid screen offers its "Use password" button: the way to the
    /// password by touch before any failure.
    public var offersPassword: Bool {
        (phase == .waiting || phase == .pattern) && !fieldOpen && !successHeld
    }
    /// Whether the field shows without the keyboard (a hardware key hid it): a
    /// button on the screen brings it back.
    public var offersKeyboard: Bool { showsField && !keyboardWanted }
    public static let usePasswordLabel = ScreenWords.usePassword
    public static let showKeyboardLabel = ScreenWords.showKeyboard

    public struct Options: Sendable {
        public var hidePath: Bool
        public var layout: KeypadLayout
        public init(hidePath: Bool = false, layout: KeypadLayout = .phone) {
            self.hidePath = hidePath
            self.layout = layout
        }
    }

    public init(options: Options = Options(), geometry: GridGeometry) {
        self.options = options
        self.gesture = GestureTracker(geometry: geometry)
    }

    /// Whether the grid shows (the red flash of a wrong pattern included); not
    /// while the on-screen keyboard shows the field opened from the grid.
    public var showsGrid: Bool { flashing || (phase != .password && !(fieldOpen && keyboardWanted)) }
    /// Whether the field shows its text in clear: the answer to an echo-on prompt
    /// (PAM_PROMPT_ECHO_ON: a user name, a token's serial) is not secret.
    public var showsFieldInClear: Bool { phase == .password && promptEcho && showsField }
    /// Whether the password field shows.
    public var showsField: Bool { !flashing && (phase == .password || fieldOpen) }

    // MARK: PAM

    /// A new PAM attempt (child) started.
    public mutating func attemptStarted() {
        attemptSpoke = false
        attemptPrompted = false
        attemptAnswered = false
        patternAsked = false
        answeredPattern = false
        gridLayout = nil
        moduleLayout = .phone
        if phase != .checking || (pendingPattern == nil && !passwordPending) { phase = .waiting }
    }

    public mutating func pamPrompt(_ text: String, echo: Bool) -> [Effect] {
        let kind = ModulePrompt(prompt: text)
        if kind == .modulePassword {
            // The module's own prompt while the pattern cannot be used: answered
            // empty, so the field's password (a password of digits only too)
            // answers pam_unix's prompt after it. Nobody was asked: what the
            // person types meanwhile goes on into the field as before any prompt
            // (never dropped as while an answer is checked), and an attempt that
            // then fails waits for the user's input before the next.
            pendingPattern = nil
            promptText = nil
            if phase != .checking { phase = .waiting }
            return [.log("prompt kind=module-password"), .answerEmpty]
        }
        attemptPrompted = true
        if case .pattern(let named, _) = kind {
            moduleLayout = named ?? gridLayout ?? .phone
            patternAsked = true
            var effects: [Effect] = [.log("prompt kind=pattern")]
            promptText = nil
            if passwordPending {
                phase = .checking
                attemptAnswered = true
                effects.append(.answerEmpty)
            } else if let pattern = pendingPattern {
                pendingPattern = nil
                phase = .checking
                answeredPattern = true
                attemptAnswered = true
                effects.append(.answerPattern(pattern, layout: moduleLayout))
            } else {
                phase = .pattern
            }
            return effects
        }
        var effects: [Effect] = [.log("prompt kind=password")]
        pendingPattern = nil
        promptText = text
        promptEcho = echo
        if passwordPending {
            passwordPending = false
            fieldOpen = false
            phase = .checking
            attemptAnswered = true
            effects.append(.answerField)
            return effects
        }
        phase = .password
        fieldOpen = false
        if answeredPattern {
            // The module refused the pattern and PAM went on to the next module.
            answeredPattern = false
            flashing = true
            effects.append(.startFlash)
        } else if !gesture.active && !flashing {
            // During the red of the pattern the last attempt refused (the fifth,
            // after which the next attempt asks the password at once) the path
            // stays red for its whole second: flashEnded clears it.
            gesture.clear()
            clearTypedKeys()
        }
        return effects
    }

    public mutating func pamInfo(_ text: String) -> [Effect] {
        if let named = ModulePrompt.gridMessage(text) {
            gridLayout = named
            moduleLayout = named
            return []
        }
        return show(text)
    }

    public mutating func pamError(_ text: String) -> [Effect] { show(text) }

    private mutating func show(_ text: String) -> [Effect] {
        if !attemptSpoke {
            messages = []
            attemptSpoke = true
        }
        messages.append(text)
        notice = nil
        return [.log("message \(text)")]
    }

    public mutating func pamResult(success: Bool) -> [Effect] {
        var effects: [Effect] = [.log("attempt result=\(success ? "success" : "failure")")]
        if success {
            phase = .checking
            // Held only when nobody was asked anything either: a yes while a
            // prompt waits comes from an authenticator beside the conversation
            // (a fingerprint reader, on Plasma's screen), which the person used.
            if !attemptAnswered && !attemptPrompted {
                successHeld = true
                notice = Self.heldNotice
                gesture.clear()
                clearTypedKeys()
                field.clear()
                fieldOpen = false
                return effects + [.log("success held until the user acts")]
            }
            effects.append(.unlock)
            return effects
        }
        if answeredPattern {
            flashing = true
            effects.append(.startFlash)
        } else {
            // A wrong password: pam_unix says nothing, the screen does.
            notice = Self.failedNotice
        }
        effects.append(nextAttempt())
        endAttempt()
        return effects
    }

    /// The pattern or password was right, but the account stage refused (the
    /// child has sent `accountRefusedSentence` as a message): the screen stays
    /// locked, with no red (nothing entered was wrong) and the sentence shown
    /// under the grid of the next attempt, which asks again, so the unlock works
    /// once an administrator has fixed the account.
    public mutating func pamAccountRefused() -> [Effect] {
        let next = nextAttempt()
        endAttempt()
        notice = nil
        return [.log("attempt result=account refused"), next]
    }

    /// What the screen says when the account stage refuses a right pattern or
    /// password: the user cannot fix it, so the sentence names who can and how.
    public static func accountRefusedSentence(user: String, expired: Bool) -> String {
        if expired {
            return
                "The account \(user) has expired, so this screen stays locked: an administrator can renew it (chage -E -1 \(user)), then unlock again."
        }
        return
            "The system's account rules refuse \(user) now, so this screen stays locked: an administrator can allow the account again (its PAM account stage), then unlock again."
    }

    /// The PAM child ended without a result that counts: it crashed or was
    /// killed, or it said success but did not exit 0 (the edge then refuses to
    /// unlock). A success held for the user's action is dropped with it, so the
    /// next press, touch or key draws or types again instead of asking to unlock
    /// once more; the user has just acted, so the next attempt starts at once.
    public mutating func pamLost() -> [Effect] {
        let refusedHeld = successHeld
        let next = refusedHeld ? .restartAttempt : nextAttempt()
        endAttempt()
        if refusedHeld { notice = Self.failedNotice }
        return [next]
    }

    /// After an attempt that asked something, the next starts at once (the user
    /// is there); after one that asked nothing, at the next user input.
    private func nextAttempt() -> Effect { attemptPrompted ? .restartAttempt : .endAttempt }

    private mutating func endAttempt() {
        // A held success belongs to the attempt that said it: never to the next.
        successHeld = false
        answeredPattern = false
        passwordPending = false
        pendingPattern = nil
        promptText = nil
        fieldOpen = false
        field.clear()
        keyboard.reset()
        phase = .waiting
        if !flashing && !gesture.active {
            gesture.clear()
            clearTypedKeys()
        }
    }

    /// The answer has been with PAM for `stuckSeconds` (the edge's watchdog).
    public mutating func checkingTooLong() -> [Effect] {
        guard phase == .checking, !stuck, !successHeld else { return [] }
        stuck = true
        notice = Self.stuckNotice
        return [.log("no answer from PAM for \(Int(Self.stuckSeconds)) s")]
    }

    /// The user gave up on the answer with PAM: the attempt ends, a new one starts.
    private mutating func abandonChecking() -> [Effect] {
        endAttempt()
        notice = nil
        return [.log("attempt abandoned"), .restartAttempt]
    }

    /// The red flash is over.
    public mutating func flashEnded() {
        guard flashing else { return }
        flashing = false
        if !gesture.active { gesture.clear() }
        clearTypedKeys()
    }

    // MARK: Pointer and touch

    public mutating func press(at p: Point, touch: Int32? = nil) -> [Effect] {
        if successHeld { return [.unlock] }
        let gridHidden = !showsGrid
        if !keyboardWanted {
            keyboardWanted = true
            keyboard.reset()
        }
        switch phase {
        case .checking: return stuck ? abandonChecking() : []
        case .password:
            if flashing {
                flashEnded()
                return []
            }
            // Back to the grid without answering pam_unix: a new attempt.
            guard field.isEmpty else { return [] }
            endAttempt()
            return [.restartAttempt]
        case .waiting, .pattern:
            if gesture.active { return [] }
            if flashing { flashEnded() }
            if fieldOpen {
                guard field.isEmpty else { return [] }
                fieldOpen = false
                // The keyboard hid the grid: this press only brings it back.
                if gridHidden { return [] }
            }
            clearTypedKeys()
            if gesture.press(at: p, touch: touch) { notice = nil }
            return []
        }
    }

    public mutating func move(to p: Point, touch: Int32? = nil) {
        guard phase == .waiting || phase == .pattern else { return }
        gesture.move(to: p, touch: touch)
    }

    public mutating func release(touch: Int32? = nil) -> [Effect] {
        guard gesture.active, touch == gesture.touchID else { return [] }
        guard phase == .waiting || phase == .pattern else {
            gesture.clear()
            return []
        }
        return submit(gesture.release(touch: touch))
    }

    /// Touch cancel (the compositor took the touch): the path clears.
    public mutating func cancel() {
        if gesture.active { gesture.clear() }
    }

    private mutating func submit(_ result: GestureResult) -> [Effect] {
        switch result {
        case .none:
            gesture.clear()
            return []
        case .tooShort:
            gesture.clear()
            clearTypedKeys()
            notice = Self.tooShortNotice
            return [.log("too short")]
        case .pattern(let pattern):
            clearTypedKeys()
            notice = nil
            if phase == .pattern {
                phase = .checking
                answeredPattern = true
                attemptAnswered = true
                return [.answerPattern(pattern, layout: moduleLayout)]
            }
            pendingPattern = pattern
            phase = .checking
            return []
        }
    }

    // MARK: The on-screen keyboard and the way to it

    /// "Use password" tapped on the grid screen: the field opens with the
    /// on-screen keyboard, as a printable key opens it. Nothing is answered and
    /// nothing is counted until the password is entered (the pattern prompt is
    /// then answered empty, the password waits for the next prompt).
    public mutating func usePassword() -> [Effect] {
        guard offersPassword, !gesture.active else { return [] }
        if flashing { flashEnded() }
        gesture.clear()
        clearTypedKeys()
        field.clear()
        fieldOpen = true
        keyboardWanted = true
        keyboard.reset()
        notice = nil
        return [.log("use password")]
    }

    /// "Show keyboard" tapped: the field's keyboard shows again.
    public mutating func showKeyboard() {
        keyboardWanted = true
        keyboard.reset()
    }

    /// A tap on a key of the on-screen keyboard: the same as that key on the
    /// hardware keyboard, without hiding the on-screen one.
    public mutating func keyboardTap(_ slot: KeySlot) -> [Effect] {
        if successHeld { return [.unlock] }
        guard showsKeyboard else { return [] }
        switch keyboard.tap(slot) {
        case nil: return []
        case .text(let text): return key(.text(text), fromHardware: false)
        case .enter: return key(.enter, fromHardware: false)
        case .backspace: return key(.backspace, fromHardware: false)
        case .escape: return key(.escape, fromHardware: false)
        case .nextGroup: return [.nextKeyboardGroup]
        }
    }

    // MARK: Keyboard

    /// A key of the hardware keyboard (`fromHardware`: it hides the on-screen
    /// keyboard) or of the on-screen one.
    public mutating func key(_ key: Key, fromHardware: Bool = true) -> [Effect] {
        if fromHardware { keyboardWanted = false }
        if successHeld { return [.unlock] }
        if phase == .checking { return key == .escape ? abandonChecking() : [] }
        if flashing {
            // The key only ends the red: after a wrong pattern pam_unix's prompt is
            // already up, and a dot typed now must not become its answer.
            flashEnded()
            return []
        }
        let typing = phase == .password || fieldOpen
        switch key {
        case .digit(let k, let text):
            if typing {
                _ = text.withBytes { field.append($0) }
                return []
            }
            if gesture.active { return [] }
            // Kept as typed too: a later letter makes them a password's first characters.
            gesture.type(dot: layout.dot(forKey: k))
            _ = text.withBytes { typedKeys.append($0) }
            notice = nil
            return []
        case .text(let bytes):
            if typing {
                _ = bytes.withBytes { field.append($0) }
                return []
            }
            if gesture.active { return [] }
            // A password: the keys typed as dots so far were its first characters.
            fieldOpen = true
            field.clear()
            _ = typedKeys.withBytes { field.append($0) }
            _ = bytes.withBytes { field.append($0) }
            clearTypedKeys()
            gesture.clear()
            return []
        case .enter:
            if phase == .password {
                guard !field.isEmpty else { return [] }
                phase = .checking
                answeredPattern = false
                attemptAnswered = true
                return [.answerField]
            }
            if fieldOpen {
                guard !field.isEmpty else { return [] }
                passwordPending = true
                if phase == .pattern {
                    phase = .checking
                    attemptAnswered = true
                    return [.answerEmpty]
                }
                phase = .checking
                return []
            }
            if gesture.active || gesture.isEmpty { return [] }
            return submit(gesture.finish())
        case .backspace:
            if typing {
                field.deleteLast()
            } else if !gesture.active {
                gesture.clear()
                clearTypedKeys()
            }
            return []
        case .escape:
            if phase == .password {
                if field.isEmpty {
                    endAttempt()
                    return [.restartAttempt]
                }
                field.clear()
            } else if fieldOpen {
                field.clear()
                fieldOpen = false
            } else if !gesture.active {
                gesture.clear()
                clearTypedKeys()
            }
            return []
        }
    }

    private mutating func clearTypedKeys() { typedKeys.clear() }

    /// Writes `pattern` as the keys its dots sit on in `layout` (the layout is its
    /// own inverse) into `out`; returns how many bytes it wrote.
    public static func answerKeys(_ pattern: Pattern, layout: KeypadLayout, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        pattern.withDigits { digits in
            var n = 0
            for d in digits where n < out.count {
                out[n] = UInt8(layout.dot(forKey: Int(d) - 0x30)) + 0x30
                n += 1
            }
            return n
        }
    }
}
