// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import PatternLock
import PatternLockDaemon
#if canImport(Glibc)
import Glibc
#endif

/// polkit's text authentication agent for this process, started the way
/// systemctl does it (systemd's `polkit_agent_open`): on a terminal, for a user
/// that is not root, `pkttyagent --notify-fd 3 --fallback`, registered for this
/// process, and only used once pkttyagent has closed fd 3 (it is registered). When
/// the daemon then asks polkit about this process, the password prompt appears
/// right here. A desktop's own agent serves where there is no terminal.
struct PolkitTextAgent {
    static let path = "/usr/bin/pkttyagent"
    /// How long pkttyagent may take to register with polkit.
    static let registerSeconds = 15.0

    private let pid: pid_t
    private let pidfd: Int32

    /// Starts the agent when stdin is a terminal, the user is not root and
    /// pkttyagent is installed; nil otherwise (or when it cannot be started).
    static func start() -> PolkitTextAgent? {
        guard geteuid() != 0, isatty(0) == 1, access(path, X_OK) == 0 else { return nil }
        var notify: [Int32] = [-1, -1]
        guard pl_pipe_cloexec(&notify) == 0 else { return nil }
        defer { close(notify[0]) }
        var child: pid_t = 0
        let arguments = [path, "--process", String(getpid()), "--notify-fd", "3", "--fallback"]
        // The user's own environment (its language); stdin, stdout and stderr are the
        // terminal's. Tied to this command: whatever ends it (Ctrl-C stops the agent
        // through `stop`; a SIGKILL or a closed terminal would not), the agent gets
        // SIGTERM. `run` starts it on the main thread, whose end is the process's.
        let pidfd = withCStrings(arguments) { argv in
            pl_spawn_tied(path, argv, environ, notify[1], SIGTERM, &child)
        }
        close(notify[1])
        guard pidfd >= 0 else { return nil }
        // pkttyagent closes its end once it is registered, or exits: both end the wait.
        let deadline = Calibration.now() + registerSeconds
        while true {
            var p = pollfd(fd: notify[0], events: Int16(POLLIN), revents: 0)
            let left = deadline - Calibration.now()
            if left <= 0 { break }
            let rc = poll(&p, 1, Int32(left * 1000) + 1)
            if rc < 0 && errno == EINTR { continue }
            if rc != 0 { break }
        }
        return PolkitTextAgent(pid: child, pidfd: pidfd)
    }

    /// Stops the agent and waits for it.
    func stop() {
        _ = pl_pidfd_kill(pidfd, SIGTERM)
        _ = pl_wait_exit(pid)
        close(pidfd)
    }
}
