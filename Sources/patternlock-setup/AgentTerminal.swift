// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import Glibc
import PatternLock
import PatternLockDaemon
import PatternLockScreen
import Synchronization

/// polkit's text agent for this window: `pkttyagent --process PID --notify-fd 3
/// --fallback` (as systemctl starts it, and `patternlockd enroll` on a terminal)
/// on a pseudo-terminal whose other side the window reads and writes, so that
/// the password polkit asks for a first pattern is asked in the window itself,
/// with its field and on-screen keyboard, on a desktop that runs no agent of its
/// own (sway, a phone shell). `--fallback`: where the desktop runs one (GNOME,
/// Plasma), polkit asks through that one instead, and this one stays silent.
///
/// The agent is started and stopped by the ENROLL's own thread (`EnrollJob`):
/// it is tied to that thread, and ends with it whatever ends the window.
final class AgentTerminal: @unchecked Sendable {
    static let path = "/usr/bin/pkttyagent"
    /// How long pkttyagent may take to register with polkit.
    static let registerSeconds = 15.0

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
        guard geteuid() != 0, access(path, X_OK) == 0 else { return nil }
        var master: Int32 = -1
        var terminal: Int32 = -1
        guard pl_open_pty(&master, &terminal) == 0 else { return nil }
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        return AgentTerminal(master: master, terminal: terminal)
    }

    /// On the ENROLL's thread: starts the agent for this process and waits until
    /// it is registered (it closes fd 3) or gave up. False when it did not start.
    func start() -> Bool {
        var notify: [Int32] = [-1, -1]
        guard pl_pipe_cloexec(&notify) == 0 else { return false }
        defer { Glibc.close(notify[0]) }
        let arguments = [Self.path, "--process", String(getpid()), "--notify-fd", "3", "--fallback"]
        // The user's environment, in the C locale: the window's words are
        // English, and the transcript is read by polkit's English lines (its
        // colour escapes, which pkttyagent writes anyway, are removed there).
        var environment = Self.environment().filter {
            !$0.hasPrefix("TERM=") && !$0.hasPrefix("LC_") && !$0.hasPrefix("LANG=") && !$0.hasPrefix("LANGUAGE=")
        }
        environment += ["TERM=dumb", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"]
        var child: pid_t = 0
        let pidfd = withCStrings(arguments) { argv in
            withCStrings(environment) { envp in
                pl_spawn_tied_on(Self.path, argv, envp, notify[1], SIGTERM, terminal, &child)
            }
        }
        Glibc.close(notify[1])
        guard pidfd >= 0 else { return false }
        agent.withLock { $0 = (child, pidfd) }
        let deadline = Calibration.now() + Self.registerSeconds
        while true {
            var p = pollfd(fd: notify[0], events: Int16(POLLIN), revents: 0)
            let left = deadline - Calibration.now()
            if left <= 0 { break }
            let rc = poll(&p, 1, Int32(left * 1000) + 1)
            if rc < 0 && errno == EINTR { continue }
            if rc != 0 { break }
        }
        // fd 3 closes both when the agent registered and when it exited (no
        // D-Bus, polkitd not running, an agent already registered for this
        // process): the latter is not an agent.
        if pl_pidfd_exited(pidfd) == 1 {
            agent.withLock { $0 = nil }
            _ = pl_wait_exit(child)
            Glibc.close(pidfd)
            return false
        }
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

    private static func environment() -> [String] {
        var out: [String] = []
        var p = environ
        while let entry = p.pointee {
            out.append(String(cString: entry))
            p += 1
        }
        return out
    }
}
