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
struct PolkitTextAgentProcess {
    private let pid: pid_t
    private let pidfd: Int32

    /// Starts the agent when stdin is a terminal, the user is not root and
    /// pkttyagent is installed; nil otherwise (or when it cannot be started).
    /// The user's own environment (its language); stdin, stdout and stderr are
    /// the terminal's. Tied to this command: whatever ends it (Ctrl-C stops the
    /// agent through `stop`; a SIGKILL or a closed terminal would not), the agent
    /// gets SIGTERM. `run` starts it on the main thread, whose end is the process's.
    static func start() -> PolkitTextAgentProcess? {
        guard geteuid() != 0, isatty(0) == 1, access(PolkitTextAgent.path, X_OK) == 0,
            let agent = PolkitTextAgent.start(terminal: nil, environment: PolkitTextAgent.currentEnvironment)
        else { return nil }
        return PolkitTextAgentProcess(pid: agent.pid, pidfd: agent.pidfd)
    }

    /// Stops the agent and waits for it.
    func stop() {
        _ = pl_pidfd_kill(pidfd, SIGTERM)
        _ = pl_wait_exit(pid)
        close(pidfd)
    }
}
