// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import Glibc
import PatternLock
import PatternLockDaemon
import PatternLockScreen
import PatternLockSetup
import Synchronization

/// polkit's text agent for this window: `pkttyagent --process PID --notify-fd 3
/// --fallback` (as systemctl starts it, and `patternlockd enroll` on a terminal)
/// on a pseudo-terminal whose other side the window reads and writes, so that
/// the password polkit asks for a first pattern is asked in the window itself,
/// with its field and on-screen keyboard, on a desktop that runs no agent of its
/// own (sway, a phone shell). `--fallback`: where the desktop runs one (GNOME,
/// Plasma), polkit asks through that one instead, and this one stays silent.
///
/// The agent is started and stopped by the ENROLL's own thread (`DaemonJob`):
/// it is tied to that thread, and ends with it whatever ends the window.
final class AgentTerminal: @unchecked Sendable {
    /// The master side, non-blocking: read by the window's loop, answered by it.
    let master: Int32
    /// The terminal side: the agent's controlling terminal, kept open here so
    /// that its echo setting can be read before an answer is written.
    private let terminal: Int32
    private let agent = Mutex<(pid: pid_t, pidfd: Int32)?>(nil)
    private(set) var transcript = AgentTranscript()

    private init(master: Int32, terminal: Int32) {
        self.master = master
        self.terminal = terminal
    }

    /// A terminal for the agent when this process is not root (root sets a
    /// pattern without a password) and pkttyagent is installed; nil otherwise.
    static func open() -> AgentTerminal? {
        guard geteuid() != 0, access(PolkitTextAgent.path, X_OK) == 0 else { return nil }
        var master: Int32 = -1
        var terminal: Int32 = -1
        guard pl_open_pty(&master, &terminal) == 0 else { return nil }
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        return AgentTerminal(master: master, terminal: terminal)
    }

    /// On the ENROLL's thread: starts the agent for this process on the
    /// terminal and waits until it is registered. False when it did not start or
    /// ended at once (no D-Bus, polkitd not running).
    func start() -> Bool {
        // The user's environment, in the C locale: the window's words are
        // English, and the transcript is read by polkit's English lines (its
        // colour escapes, which pkttyagent writes anyway, are removed there).
        var environment = PolkitTextAgent.currentEnvironment.filter {
            !$0.hasPrefix("TERM=") && !$0.hasPrefix("LC_") && !$0.hasPrefix("LANG=") && !$0.hasPrefix("LANGUAGE=")
        }
        environment += ["TERM=dumb", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"]
        guard let started = PolkitTextAgent.start(terminal: terminal, environment: environment) else { return false }
        agent.withLock { $0 = started }
        return true
    }

    /// Ends the agent (its question too): from the loop's thread (Cancel) the
    /// signal only; from the ENROLL's, which started it, the signal and the wait.
    /// The signal goes under the lock, so never to a pidfd already closed.
    func stop(wait: Bool) {
        let taken = agent.withLock { a -> (pid: pid_t, pidfd: Int32)? in
            guard let running = a else { return nil }
            _ = pl_pidfd_kill(running.pidfd, SIGTERM)
            if wait { a = nil }
            return wait ? running : nil
        }
        guard let taken else { return }
        _ = pl_wait_exit(taken.pid)
        Glibc.close(taken.pidfd)
    }

    /// On the loop's thread, when `master` is readable: what the agent said (at
    /// most 64 KiB a time, so a flood cannot hold the window; the rest stays
    /// readable for the next turn of the loop).
    func read() -> [AgentTranscript.Event] {
        var events: [AgentTranscript.Event] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var total = 0
        var drained = false
        while total < 65536 {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
            if n > 0 {
                total += n
                events += transcript.feed(buffer[..<n])
                continue
            }
            if n < 0 && errno == EINTR { continue }
            drained = true
            break
        }
        wipe(&buffer)
        if drained, let q = transcript.question() { events.append(q) }
        return events
    }

    /// Writes `field` and a line end as the answer to the question, and forgets
    /// the rest of that line; false (nothing written) while the terminal still
    /// echoes and the question is secret: pkttyagent writes the question, then
    /// turns echo off (discarding what was typed before), so the window tries
    /// again a moment later and the answer is never echoed nor lost.
    func answer(_ field: SecretField, secret: Bool) -> Bool {
        if secret {
            var t = termios()
            guard tcgetattr(terminal, &t) == 0, t.c_lflag & tcflag_t(ECHO) == 0 else { return false }
        }
        transcript.answered()
        field.withBytes { write($0) }
        [UInt8(ascii: "\n")].withUnsafeBufferPointer { write($0) }
        return true
    }

    private func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard var at = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = Glibc.write(master, at, left)
            if n > 0 {
                at += n
                left -= n
            } else if n < 0 && (errno == EINTR || errno == EAGAIN) {
                var p = pollfd(fd: master, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 100)
            } else {
                return
            }
        }
    }

    func close() {
        stop(wait: false)
        Glibc.close(master)
        Glibc.close(terminal)
    }
}
