// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import PatternLock
import PatternLockWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Proof that the user at the other end of a connection knows its account
/// password, which a user's first pattern needs: a pattern is never easier to
/// obtain than the password it stands in for. Asked of a trusted component, never
/// of the client; `.polkit` asks polkit, as fprintd does. Injectable, like
/// `AccountLookup`, so that unit tests can give their own verdicts.
package struct PasswordProof: Sendable {
    package enum Verdict: Equatable, Sendable {
        /// The password was checked and right.
        case proven
        /// No proof: a wrong password, a prompt dismissed or never shown, a process
        /// that went away. `why` is for the log.
        case refused(why: String)
        /// This system cannot check a password here (no polkit, or polkit does not
        /// know the action): only root can set the first pattern.
        case unavailable(why: String)
        /// Another proof for the same uid is asking now: this one was not asked,
        /// so that a password typed into that dialog proves nothing for this
        /// client. Its own reply (not `refused`), so the client can warn the user.
        case inProgress(why: String)
    }

    /// Asks for the proof about `peer` (nil: a connection whose process cannot be
    /// named). `hangUp` is the connection, watched while waiting: a client that
    /// goes away ends the wait.
    package var check: @Sendable (_ peer: PeerProcess?, _ hangUp: Int32) -> Verdict

    package init(check: @escaping @Sendable (_ peer: PeerProcess?, _ hangUp: Int32) -> Verdict) {
        self.check = check
    }

    /// polkit's `pkcheck` about the action `org.patternlock.enroll-self`.
    package static let polkit = PasswordProof { peer, hangUp in Polkit.check(peer, hangUp: hangUp) }
}

/// The polkit side of `PasswordProof`: runs `pkcheck`, polkit's own command, for
/// the connecting process, named by pid, start time and uid (the form pkcheck(1)
/// asks daemons to use), with user interaction allowed, so that polkit asks the
/// user's authentication agent (`pkttyagent`, which `patternlockd enroll` starts on
/// a terminal, or the desktop's). No D-Bus library in the daemon: pkcheck is
/// started by absolute path, without a shell, with an empty environment.
///
/// polkit lets a caller ask about a process of another user only when the caller
/// is root or an owner the action names (`org.freedesktop.policykit.owner`
/// in org.patternlock.policy: unix-user:patternlock, the daemon's user).
package enum Polkit {
    package static let pkcheck = "/usr/bin/pkcheck"
    package static let action = PasswordProofTiming.action
    /// How long a user may take to type its password. The client waits a little longer.
    package static var timeoutSeconds: Double { Double(PasswordProofTiming.daemonSeconds) }

    /// One proof at a time per uid: a user's processes cannot pile up password
    /// dialogs (and pkcheck processes) in the daemon.
    private static let inFlight = Mutex<Set<UInt32>>([])

    static func check(_ peer: PeerProcess?, hangUp: Int32) -> PasswordProof.Verdict {
        guard let peer else { return .refused(why: "the connecting process cannot be named") }
        guard inFlight.withLock({ $0.insert(peer.uid).inserted }) else {
            return .inProgress(why: "another password check for this uid is in progress")
        }
        defer { _ = inFlight.withLock { $0.remove(peer.uid) } }
        let pid: Int32, start: UInt64
        switch peer.identity() {
        case .success(let identity): (pid, start) = identity
        case .failure(.gone): return .refused(why: "the connecting process \(peer.pid) has exited")
        case .failure(.unreadable):
            return .unavailable(why: "/proc/\(peer.pid)/stat of the connecting process cannot be read (is /proc hidden from the daemon?)")
        }
        let verdict = run(pid: pid, startTime: start, uid: peer.uid, program: peer.program(), hangUp: hangUp)
        // polkit found the session and the agent by pid: the answer is about this
        // process only if it was alive throughout (with a pidfd, its pid was not reused).
        if verdict == .proven && !peer.stillAlive() {
            return .refused(why: "the connecting process \(pid) exited during the password check")
        }
        return verdict
    }

    /// What a pkcheck exit status means (pkcheck(1), RETURN VALUE): 0 authorized;
    /// 1 not authorized, 2 authentication needed but no agent could ask, 3 the
    /// request was dismissed; 126 (bad options, or no connection to polkit) and 127
    /// (an error: polkitd not reachable, the action not installed, the caller not
    /// trusted) say that polkit cannot decide here.
    package static func verdict(exitStatus: Int32, output: String) -> PasswordProof.Verdict {
        let said = output.split(whereSeparator: \.isNewline).map { String($0.drop { $0 == " " }) }
            .filter { !$0.isEmpty }.joined(separator: " / ")
        let detail = "pkcheck exit \(exitStatus)" + (said.isEmpty ? "" : ": \(said)")
        switch exitStatus {
        case 0: return .proven
        case 1, 2, 3: return .refused(why: detail)
        default: return .unavailable(why: detail)
        }
    }

    /// pkcheck's words for one check: the process by pid, start time and uid, and
    /// the details polkit puts in the action's message (`$(program)`, `$(pid)`):
    /// the dialog names the program asking. polkit takes details only from root
    /// or the action's owner (the daemon), never from another process of the
    /// user, so a message that names the process is the daemon's check: the
    /// setup window answers only a question whose message names it.
    package static func arguments(pid: Int32, startTime: UInt64, uid: UInt32, program: String?) -> [String] {
        [
            pkcheck, "--action-id", action, "--process", "\(pid),\(startTime),\(uid)",
            "--detail", "program", program ?? "a program", "--detail", "pid", "\(pid)", "--allow-user-interaction",
        ]
    }

    private static func run(pid: Int32, startTime: UInt64, uid: UInt32, program: String?, hangUp: Int32)
        -> PasswordProof.Verdict
    {
        var pipe: [Int32] = [-1, -1]
        guard pl_pipe_cloexec(&pipe) == 0 else { return .unavailable(why: "cannot make a pipe: \(Errno.current)") }
        defer { close(pipe[0]) }
        let devNull: Int32
        switch Sys.open("/dev/null", O_RDONLY) {
        case .success(let fd): devNull = fd
        case .failure(let e):
            close(pipe[1])
            return .unavailable(why: "cannot open /dev/null: \(e)")
        }
        let arguments = arguments(pid: pid, startTime: startTime, uid: uid, program: program)
        var child: pid_t = 0
        var spawnError = Errno(0)
        let pidfd = withCStrings(arguments) { argv in
            withCStrings([]) { envp in
                let fd = pl_spawn(pkcheck, argv, envp, devNull, pipe[1], pipe[1], -1, &child)
                spawnError = Errno.current
                return fd
            }
        }
        close(devNull)
        close(pipe[1])
        guard pidfd >= 0 else {
            if spawnError == .noEntry { return .unavailable(why: "\(pkcheck) is not installed") }
            return .unavailable(why: "cannot run \(pkcheck): \(spawnError)")
        }
        defer { close(pidfd) }
        var output: [UInt8] = []
        let deadline = Calibration.now() + timeoutSeconds
        var ended: String?
        // Until pkcheck exits; its output is drained meanwhile (at most 4 KiB kept).
        while ended == nil {
            var fds = [
                pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0),
                // POLLHUP (always reported): the client closed its end. A half-close
                // after the request (shutdown(SHUT_WR)) still waits for the answer.
                pollfd(fd: hangUp, events: 0, revents: 0),
            ]
            let left = deadline - Calibration.now()
            if left <= 0 { ended = "no answer within \(Int(timeoutSeconds)) seconds"; break }
            let rc = poll(&fds, hangUp >= 0 ? 3 : 2, Int32(min(left * 1000 + 1, 60_000)))
            if rc < 0 && errno != EINTR { ended = "poll failed: \(Errno.current)"; break }
            if fds[1].revents != 0 { drain(pipe[0], into: &output) }
            if fds[0].revents != 0 { break }
            if hangUp >= 0 && fds[2].revents != 0 { ended = "the client hung up while waiting for the password" }
        }
        if let ended {
            // pkcheck has nothing to clean up; polkitd drops the request of a caller that is gone.
            _ = pl_pidfd_kill(pidfd, SIGKILL)
            _ = pl_wait_exit(child)
            return .refused(why: ended)
        }
        drain(pipe[0], into: &output)
        let status = pl_wait_exit(child)
        return verdict(exitStatus: status, output: String(decoding: output, as: UTF8.self))
    }

    private static func drain(_ fd: Int32, into output: inout [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            if output.count < 4096 { output += buffer[..<min(n, 4096 - output.count)] }
        }
    }
}

/// Runs `body` with a NULL-terminated C array of the strings.
package func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return body(pointers)
}
