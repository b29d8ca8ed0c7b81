// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

extension PatternLockd {
    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set or change a user's pattern.",
            discussion: """
                Root may enroll any user on the system. A user may enroll itself; changing an \
                existing pattern asks for the current one first, and a wrong current pattern \
                counts as a failed attempt.

                A user's first pattern needs its password, once: after the pattern is drawn, \
                polkit asks for the password (on a terminal this command starts pkttyagent for \
                it; a desktop uses its own agent). Where polkit is not installed an \
                administrator sets the first pattern: sudo patternlockd enroll (which enrolls \
                the user who ran sudo, whose password sudo has just checked), or, as root, \
                patternlockd enroll USER.

                On a terminal the grid is shown and the pattern is read twice with echo off; \
                a pattern the enroll policy refuses may be replaced at once, up to three \
                patterns in all (none is counted as an attempt). \
                Otherwise stdin is read line by line: the new pattern and the new pattern \
                again; for a user who already has a pattern and is not root, three lines: \
                the current pattern, the new one, the new one again.

                Before anything is asked, the daemon is asked whether the user is locked (a \
                change is then refused at once) and whether a pattern exists.

                Example: draw an L from the top-left corner down and right:
                  1 . .
                  4 . .      type 14789, or just 179 — a dot passed over is joined
                  7 8 9      automatically.

                With --layout numpad, type on a keyboard's numeric keypad, where 7 8 9 is the \
                top row: the same L is 74123 there, and it is the same pattern.

                \(Exit.summary)
                """)

        @OptionGroup var socketOptions: SocketOptions

        @OptionGroup var layoutOptions: LayoutOptions

        @Argument(help: "The user to enroll (default: you).")
        var user: String?

        @Option(
            help: ArgumentHelp(
                "Root only: PBKDF2 iterations for this pattern, \(Credential.minimumIterations) to \(Credential.maximumIterations) (default: the daemon's calibrated count).",
                valueName: "n"))
        var iterations: Int?

        @Flag(name: .customLong("override-policy"), help: "Root only: enroll a pattern the enroll policy refuses (logged).")
        var overridePolicy = false

        func validate() throws {
            if overridePolicy && geteuid() != 0 {
                throw ValidationError("Only root can override the enroll policy; choose a pattern the policy accepts.")
            }
            if iterations != nil && geteuid() != 0 {
                throw ValidationError(
                    "Only root can choose the iteration count; leave out --iterations to get the daemon's calibrated count.")
            }
            if let iterations, !(Credential.minimumIterations...Credential.maximumIterations).contains(iterations) {
                throw ValidationError(ClientWording.iterationsRange)
            }
            _ = try targetUser(user)
        }

        func run() throws {
            let sudoDefault = user == nil ? try sudoUser() : nil
            let user = try targetUser(user)
            if let sudoDefault {
                printError(
                    "You ran sudo, so this is the pattern of \(sudoDefault) (not root). To enroll root, run: sudo patternlockd enroll root")
            }
            do {
                if geteuid() == 0 && !Accounts.exists(user) {
                    throw ClientError(description: "There is no user \(user) on this system; nothing was changed.", code: Exit.invalid)
                }
                // The daemon drops a connection idle for 5 seconds, and typing takes
                // longer: ask what is needed, read the patterns, then connect again.
                // Asked of root too, so nobody types a pattern for a daemon that is down.
                let changing: Bool
                switch try DaemonConnection.request(.status(user: user), socket: socketOptions.address) {
                // Only root replaces a record that cannot be read.
                case .status(let s) where s.corrupt && geteuid() != 0:
                    throw failure(for: .error(.recordUnreadable), user: user)
                case .status(let s):
                    changing = s.enrolled
                    // A user's change is checked against the current pattern, which a
                    // lock refuses: say so before asking for three patterns.
                    if s.locked && geteuid() != 0 {
                        throw ClientError(
                            description: LockoutWording.locked(user: user, retryAfter: s.retryAfter) + " Nothing was changed.",
                            code: Exit.locked)
                    }
                case .denied:
                    throw ClientError(
                        description: "You can enroll only your own pattern; root can enroll others (sudo patternlockd enroll \(user)).",
                        code: Exit.denied)
                case let other: throw failure(for: other, user: user)
                }
                let needsCurrent = changing && geteuid() != 0
                // A user's own first pattern: the daemon has polkit check the password.
                let first = !changing && geteuid() != 0
                if first && access(Polkit.pkcheck, X_OK) != 0 {
                    // No polkit on this machine: say so before anything is drawn.
                    throw failure(for: .error(.passwordProofUnavailable), user: user)
                }
                PatternInput.showGrid(
                    title: changing
                        ? "Change the pattern of \(user): type the dots in order (at least 4)."
                        : "Enroll a pattern for \(user): type the dots in order (at least 4).",
                    layout: layoutOptions.layout)
                if first && PatternInput.isTerminal {
                    print("This is your first pattern: after you draw it, you are asked for your password, once.")
                }
                // Piped input gives no prompts to read: a missing line is explained.
                let threeLines =
                    needsCurrent && !PatternInput.isTerminal
                    ? "\(user) already has a pattern, so enroll reads three lines from stdin: the current pattern, the new pattern, and the new pattern again. "
                    : ""
                var current: String?
                if needsCurrent {
                    guard let c = PatternInput.read(prompt: "Current pattern: "), !c.isEmpty else {
                        throw ClientError(
                            description: threeLines + "No current pattern was entered; nothing was changed.", code: Exit.invalid)
                    }
                    current = layoutOptions.layout.phoneDigits(c)
                }
                // On a terminal a refused pattern may be replaced at once (nothing was counted),
                // up to three in all.
                let tries = PatternInput.isTerminal ? 3 : 1
                var refusals = 0
                func refuse(_ pattern: Pattern, _ refusal: EnrollPolicy.Refusal) throws(ClientError) {
                    refusals += 1
                    let why = GuessFeedback.sentence(for: refusal, pattern: pattern) + "\n" + pattern.picture
                    if refusals < tries {
                        printError(why + "\nThis entry was not counted. Choose another pattern.")
                        return
                    }
                    throw ClientError(
                        description: why
                            + (tries > 1
                                ? "\nThat was the third pattern the policy refused; nothing was changed, and none of them was counted as an attempt. Run patternlockd enroll again with another pattern."
                                : "\nNothing was changed, and this entry was not counted as an attempt. Run patternlockd enroll again with another pattern."),
                        code: Exit.invalid)
                }
                // Asked after the first draw, before the confirmation: a refused pattern
                // is drawn once, not twice. A daemon that does not know CHECK, or an
                // override, leaves the verdict to ENROLL.
                let socket = socketOptions.address
                let override = overridePolicy
                func refusedEarly(_ pattern: Pattern) throws(ClientError) -> Bool {
                    guard PatternInput.isTerminal, !override,
                        case .refused(let r)? = try? DaemonConnection.request(
                            .check(pattern: SecretBytes(pattern.digits)), socket: socket)
                    else { return false }
                    try refuse(pattern, r)
                    return true
                }
                var enrolled: Pattern?
                // For a first pattern, polkit's prompt for the password, on this terminal.
                var agent: PolkitTextAgentProcess?
                defer { agent?.stop() }
                while enrolled == nil {
                    let pattern = try readNewPattern(missingLine: threeLines, refusedEarly: refusedEarly)
                    if first && agent == nil { agent = PolkitTextAgentProcess.start() }
                    let reply = try DaemonConnection.request(
                        .enroll(
                            user: user, pattern: SecretBytes(pattern.digits), current: current.map { SecretBytes($0) },
                            iterations: iterations, override: overridePolicy),
                        socket: socketOptions.address,
                        // A person types a password meanwhile.
                        timeout: first ? Double(PasswordProofTiming.clientSeconds) : 120)
                    switch reply {
                    case .okIterations(let n):
                        print("Pattern enrolled for \(user) (\(n) PBKDF2 iterations).")
                        // The daemon's model is this binary's: rank the pattern here.
                        print(GuessFeedback.strength(guesses: GuessRanking.published.rank(of: pattern)))
                        enrolled = pattern
                    case .refused(let refusal):
                        try refuse(pattern, refusal)
                    default:
                        throw failure(for: reply, user: user, current: current != nil)
                    }
                }
                guard let pattern = enrolled else {
                    throw ClientError(description: "No pattern was accepted; nothing was changed.", code: Exit.invalid)
                }
                if PatternInput.isTerminal {
                    print("Your pattern, dots numbered in the order you draw them:")
                    print(pattern.picture)
                    print(EntryWording.digitPasswordAdvice)
                }
            } catch let error as ClientError {
                throw fail(error)
            }
        }

        /// Reads the new pattern twice; on a terminal, retries a mistyped one.
        /// `missingLine` starts the sentence for input that ends too soon;
        /// `refusedEarly` is asked before the confirmation and, when it has explained
        /// a refusal, the pattern is asked for again.
        private func readNewPattern(
            missingLine: String, refusedEarly: (Pattern) throws(ClientError) -> Bool
        ) throws(ClientError) -> Pattern {
            let tries = PatternInput.isTerminal ? 3 : 1
            var mistakes = 0
            while true {
                guard let typed = PatternInput.read(prompt: "New pattern: ") else {
                    throw ClientError(description: missingLine + "No new pattern was entered; nothing was changed.", code: Exit.invalid)
                }
                let pattern: Pattern
                do { pattern = try Pattern(typed: typed, layout: layoutOptions.layout) } catch {
                    mistakes += 1
                    if mistakes < tries { printError(error.description + " Try again."); continue }
                    throw ClientError(description: error.description + " Nothing was changed.", code: Exit.invalid)
                }
                if try refusedEarly(pattern) { continue }
                guard let again = PatternInput.read(prompt: "Draw it again to confirm: ") else {
                    throw ClientError(
                        description: missingLine + "The new pattern was not confirmed; nothing was changed.", code: Exit.invalid)
                }
                if let confirmed = try? Pattern(typed: again, layout: layoutOptions.layout), confirmed == pattern { return pattern }
                mistakes += 1
                if mistakes < tries { printError("The two patterns differ. Try again."); continue }
                throw ClientError(description: "The two patterns differ; nothing was changed.", code: Exit.invalid)
            }
        }
    }
}
