// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandCursor
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockDaemon
import PatternLockPainting
import PatternLockScreen
import PatternLockSetup
import PatternLockScreenKeymap
import PatternLockWayland
import PatternLockWire

/// The setup's effects on the daemon: CHECK for the verdict while drawing,
/// ENROLL and REMOVE on their own thread (DaemonJob), polkit's question.
extension SetupApp {
    func run(_ effects: [PatternSetup.Effect]) {
        for effect in effects {
            switch effect {
            case .check(let pattern):
                check(pattern)
            case .remove(let current):
                let request = Request.remove(user: user, current: Self.wire(current))
                if let job = DaemonJob.start(
                    request, address: options.address, timeout: 120, new: current, first: false, agent: nil)
                {
                    enrollJob = job
                } else {
                    setup.notSaved(
                        "patternlock-setup could not start its request to the daemon; nothing was changed.", back: nil)
                }
                dirty = true
            case .enroll(let new, let current):
                // Sent from its own thread: the window shows "Setting your pattern…"
                // and stays responsive while the daemon (and polkit) works.
                enroll(new, current: current)
                dirty = true
            case .close(let set):
                debug("close set=\(set ? 1 : 0)")
                exitCode = set ? 0 : setup.failed ? 2 : 1
            case .answer:
                answerPending = true
                giveAnswer()
                dirty = true
            case .cancelProof:
                // The agent ends; the daemon then hears the password was not
                // confirmed, and the window closes on that answer.
                answerPending = false
                enrollJob?.agent?.stop(wait: false)
                if let job = enrollJob, job.first { job.hangUp() }
                closeRequested = true
                dirty = true
            case .nextKeyboardGroup:
                nextKeyboardGroup()
                dirty = true
            }
        }
    }

    /// The daemon's verdict on the path so far. It answers at once (no record is
    /// read, nothing is hashed); one that gives none in a second is not asked
    /// again while this window is open, and ENROLL judges at the end.
    func check(_ pattern: Pattern) {
        guard !checkUnavailable else {
            setup.verdict(.unavailable, for: pattern)
            return
        }
        let reply = try? DaemonConnection.request(
            .check(pattern: Self.wire(pattern)), socket: options.address, timeout: 1)
        switch reply {
        case .ok?: setup.verdict(.acceptable, for: pattern)
        case .refused(let r)?: setup.verdict(.refused(r), for: pattern)
        default:
            checkUnavailable = true
            setup.verdict(.unavailable, for: pattern)
        }
    }

    func enroll(_ new: Pattern, current: Pattern?) {
        let first = current == nil
        let request = Request.enroll(
            user: user, pattern: Self.wire(new), current: current.map(Self.wire), iterations: nil)
        let timeout = first ? Double(PasswordProofTiming.clientSeconds) : 120
        // A first pattern needs the password: polkit asks it in this window
        // (through the desktop's own agent where it runs one).
        let agent = first ? AgentTerminal.open() : nil
        guard
            let job = DaemonJob.start(
                request, address: options.address, timeout: timeout, new: new, first: first, agent: agent)
        else {
            agent?.close()
            setup.notSaved("patternlock-setup could not start its request to the daemon; nothing was changed.", back: nil)
            return
        }
        enrollJob = job
    }

    /// ENROLL's (or REMOVE's) answer, or why there is none: PatternSetup maps it
    /// to the stage it leads to and the sentence it shows.
    func enrolled(_ result: Result<Reply, ClientError>, new: Pattern, first: Bool, agentFailed: Bool = false) {
        setup.daemonAnswered(result, new: new, first: first, user: user, agentFailed: agentFailed)
        // Failed for good: the window says why, with Close (exit status 2); so does stderr.
        if setup.stage == .ended, let detail = setup.detail { say(detail) }
        dirty = true
        describe()
        if closeRequested { close() }
    }

    /// Whether the daemon now holds a pattern for `user` (after a first pattern's
    /// request was hung up); false when it cannot say.
    static func enrolledNow(user: String, address: DaemonAddress) -> Bool {
        guard case .status(let s)? = try? DaemonConnection.request(.status(user: user), socket: address, timeout: 5)
        else { return false }
        return s.enrolled
    }

    /// A pattern's digits for a request, copied from the stack buffer the core
    /// wipes, never through a String (SecretBytes wipes its own copy).
    static func wire(_ p: Pattern) -> SecretBytes { p.withDigits { SecretBytes($0) } }

    /// The field's bytes to the agent once it no longer echoes (see `AgentTerminal.answer`).
    func giveAnswer() {
        guard answerPending else { return }
        guard let agent = enrollJob?.agent, setup.checking else {
            answerPending = false
            return
        }
        if agent.answer(setup.field, secret: !setup.questionInClear) {
            answerPending = false
            setup.answerSent()
        }
    }
}
