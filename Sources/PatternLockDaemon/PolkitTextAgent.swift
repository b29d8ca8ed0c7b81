// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import PatternLock

#if canImport(Glibc)
import Glibc
#endif

/// polkit's text authentication agent for the calling process, started the way
/// systemctl starts it (systemd's `polkit_agent_open`): `pkttyagent --process
/// PID --notify-fd 3 --fallback`, and used only once it closed fd 3. The one
/// place both clients start it: `patternlockd enroll` on its terminal, and
/// the setup window on a pseudo-terminal of its own (`terminal`).
package enum PolkitTextAgent {
    package static let path = "/usr/bin/pkttyagent"
    /// How long pkttyagent may take to register with polkit.
    package static let registerSeconds = 15.0

    /// Starts the agent, tied to the calling thread (SIGTERM when it ends), on
    /// `terminal` (its controlling terminal, stdin, stdout and stderr; nil: this
    /// process's), with `environment`; waits until it registered. Its pid and
    /// pidfd, or nil when it did not start or ended at once (no D-Bus, polkitd
    /// not running), then reaped.
    package static func start(terminal: Int32?, environment: [String]) -> (pid: pid_t, pidfd: Int32)? {
        var notify: [Int32] = [-1, -1]
        guard pl_pipe_cloexec(&notify) == 0 else { return nil }
        defer { close(notify[0]) }
        var child: pid_t = 0
        let arguments = [path, "--process", String(getpid()), "--notify-fd", "3", "--fallback"]
        let pidfd = withCStrings(arguments) { argv in
            withCStrings(environment) { envp in
                pl_spawn_tied_on(path, argv, envp, notify[1], SIGTERM, terminal ?? -1, &child)
            }
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
        if pl_pidfd_exited(pidfd) == 1 {
            _ = pl_wait_exit(child)
            close(pidfd)
            return nil
        }
        return (child, pidfd)
    }

    /// This process's environment, as `environ` holds it.
    package static var currentEnvironment: [String] {
        var out: [String] = []
        var p = environ
        while let entry = p.pointee {
            out.append(String(cString: entry))
            p += 1
        }
        return out
    }
}
