// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import Foundation
import Synchronization
import Testing

/// `pl_spawn_tied`, which starts the CLI's pkttyagent: the helper must not outlive
/// the command, whatever ends it.
@Suite("A helper tied to its starter")
struct TiedHelperTests {
    /// Starts `argv` with `pl_spawn_tied`; returns the pidfd (or -1) and errno.
    static func spawnTied(_ argv: [String]) -> (pid: pid_t, pidfd: Int32, errno: Int32) {
        var args: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for a in args { free(a) } }
        var pid: pid_t = 0
        let fd = pl_spawn_tied(argv[0], &args, environ, -1, SIGTERM, &pid)
        return (pid, fd, fd < 0 ? errno : 0)
    }

    /// Whether the process behind `pidfd` ends within `seconds`.
    static func ends(_ pidfd: Int32, within seconds: Double) -> Bool {
        var p = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, Int32(seconds * 1000)) == 1
    }

    @Test("A helper is sent SIGTERM when the thread that started it ends, and runs until then")
    func endsWithItsStarter() throws {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let child = Mutex<(pid: pid_t, pidfd: Int32, errno: Int32)>((0, -1, 0))
        let starter = Thread {
            child.withLock { $0 = TiedHelperTests.spawnTied(["/bin/sleep", "60"]) }
            started.signal()
            release.wait()
        }
        starter.start()
        started.wait()
        let (pid, pidfd, error) = child.withLock { $0 }
        try #require(pidfd >= 0, "pl_spawn_tied failed: errno \(error)")
        defer { close(pidfd) }
        #expect(!Self.ends(pidfd, within: 0.3), "the helper runs while its starter does")
        release.signal()
        let ended = Self.ends(pidfd, within: 10)
        if !ended { _ = pl_pidfd_kill(pidfd, SIGKILL) }
        #expect(ended, "the helper outlived the thread that started it")
        #expect(pl_wait_exit(pid) == 128 + SIGTERM)
    }

    @Test("A program that cannot be started is an error with its errno")
    func missingProgram() {
        let (_, pidfd, error) = Self.spawnTied(["/nonexistent/pkttyagent", "--fallback"])
        #expect(pidfd == -1 && error == ENOENT)
    }
}
