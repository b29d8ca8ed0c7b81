// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen
import PatternLockScreenKeymap

/// The PAM attempts: one child process each, their messages and their end.
extension App {
    // MARK: PAM

    func startAttempt() {
        endAttempt()
        guard let a = PamAttempt.start() else {
            say("could not start the PAM child: \(String(cString: strerror(errno))).")
            return
        }
        attempt = a
        state.attemptStarted()
    }

    /// Ends the running attempt (if any); the next starts at the next user input.
    func endAttempt() {
        if let a = attempt {
            a.end()
            if !a.reap() { zombies.append((a.pid, a.pidfd)) }
            attempt = nil
        }
    }

    /// The attempt's child ended (its pidfd): what it sent is read first; an end
    /// without a result is a lost attempt, even while a process it left holds its
    /// end of the socket open (then no EOF ever comes).
    func attemptExited() {
        guard let a = attempt else { return }
        pamReadable()
        guard attempt === a, a.reap() else { return }
        if a.unlockOnExit {
            if a.exitStatus == 0 { unlock() }
            refuseUnlock()
            invalidateAll()
        } else if !a.gotResult {
            run(state.pamLost())
            invalidateAll()
        }
    }

    /// Arms the watchdog while an answer is with PAM, disarms it otherwise.
    func syncWatchdog() {
        let want = state.phase == .checking && !state.stuck && !state.successHeld
        guard want != watchdogArmed else { return }
        _ = pls_timerfd_arm(watchdog, want ? Int(LockScreen.stuckSeconds * 1000) : 0)
        watchdogArmed = want
    }

    func watchdogFired() {
        var expirations: UInt64 = 0
        _ = read(watchdog, &expirations, 8)
        watchdogArmed = false
        run(state.checkingTooLong())
        invalidateAll()
    }

    func pamReadable() {
        guard let a = attempt else { return }
        while true {
            guard let received = a.receive() else {
                // The child went away: without a result, a lost attempt; after
                // one (a success held for the user's action), nothing more to read.
                if !a.gotResult { run(state.pamLost()) } else { a.end() }
                invalidateAll()
                return
            }
            guard let message = received else { return }
            let look = screenLook()
            var effects: [Effect]
            switch message {
            case .prompt(let text, let echo): effects = state.pamPrompt(text, echo: echo)
            case .info(let text): effects = state.pamInfo(text)
            case .error(let text): effects = state.pamError(text)
            case .result(let ok, _):
                a.gotResult = true
                effects = state.pamResult(success: ok)
            case .accountRefused:
                a.gotResult = true
                effects = state.pamAccountRefused()
            }
            // A prompt that leaves the screen as it was draws nothing: the
            // pattern's prompt at the start of each attempt only makes the grid
            // wait for a pattern. Drawn again, the frame was the same as the one
            // before, and at start it took a second buffer (2.9 MB at 1920×1080,
            // the compositor still holding the first) that the idle screen kept.
            var unchanged = false
            if case .prompt = message {
                let quiet = effects.allSatisfy { if case .log = $0 { true } else { false } }
                unchanged = quiet && screenLook() == look
            }
            if !unchanged { invalidateAll() }
            run(effects)
            if attempt !== a { return }
        }
    }

    func run(_ effects: [Effect]) {
        for e in effects {
            switch e {
            case .log(let line): debug(line)
            case .answerPattern(let p, let layout):
                attempt?.answer { out in LockScreen.answerKeys(p, layout: layout, into: out) }
            case .answerField:
                attempt?.answer { out in
                    state.field.withBytes { bytes in
                        for (i, b) in bytes.enumerated() where i < out.count { out[i] = b }
                        return min(bytes.count, out.count)
                    }
                }
                state.field.clear()
            case .answerEmpty: attempt?.answer { _ in 0 }
            case .nextKeyboardGroup: nextKeyboardGroup()
            case .restartAttempt: startAttempt()
            case .endAttempt: endAttempt()
            case .startFlash: _ = pls_timerfd_arm(timer, Int(LockScreen.flashSeconds * 1000))
            case .unlock:
                // The result message alone is not enough: the child must also have
                // ended with status 0 (what it exits with after PAM_SUCCESS). One
                // still running (a loaded machine) is waited for by the loop.
                // A second request while the first still waits (a held success
                // tapped again, its child alive all along) is refused, so that a
                // child that never exits cannot hold the screen.
                guard let a = attempt, a.gotResult, !a.unlockOnExit else {
                    refuseUnlock()
                    continue
                }
                switch a.waitExit(milliseconds: 500) {
                case 0: unlock()
                case nil:
                    a.unlockOnExit = true
                    debug("the PAM child said success; unlocking once it exits 0")
                default: refuseUnlock()
                }
            }
        }
    }

    /// The PAM child said success but did not end with status 0: no unlock, and
    /// the screen takes the pattern or password again.
    func refuseUnlock() {
        debug("the PAM child said success but did not exit 0; not unlocking")
        endAttempt()
        run(state.pamLost())
    }

    func flashTimer() {
        var expirations: UInt64 = 0
        _ = read(timer, &expirations, 8)
        state.flashEnded()
        invalidateAll()
    }
}
