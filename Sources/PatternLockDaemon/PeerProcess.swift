// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// The process at the other end of a connection: the one that called connect(),
/// as the kernel recorded it (SO_PEERCRED, SO_PEERPIDFD). A password proof is
/// asked about this process, named by pid and start time so that polkit cannot be
/// pointed at another process that got the same pid.
///
/// Where the kernel gives a pidfd (Linux 6.5), the start time is read when it is
/// needed and then the pidfd is asked whether the process is still alive: if it
/// is, the pid had not been reused, so the start time read was this process's.
/// Older kernels give no pidfd: the start time is read at accept, right after
/// connect(), which leaves a small race (docs/SECURITY.md).
package final class PeerProcess: Sendable {
    package let pid: Int32
    package let uid: UInt32
    /// -1 when the kernel has none to give.
    private let pidfd: Int32
    /// Read at accept when the kernel has no SO_PEERPIDFD; nil otherwise, or when it
    /// could not be read.
    private let startTimeAtAccept: UInt64?
    /// The kernel knows SO_PEERPIDFD but gave no pidfd (the peer has exited, or the
    /// daemon is out of descriptors): the process cannot be named safely, and the
    /// racy start-time path is not taken in its place.
    private let pidfdFailed: Bool

    /// The peer of a connected socket; nil when SO_PEERCRED cannot be read.
    package init?(socket fd: Int32) {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        guard pl_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        self.pid = pid
        self.uid = uid
        pidfd = pl_peer_pidfd(fd)
        let unsupported = pidfd < 0 && errno == ENOPROTOOPT
        pidfdFailed = pidfd < 0 && !unsupported
        // A peer in another pid namespace shows pid 0: no process can be named.
        startTimeAtAccept = unsupported && pid > 0 ? PeerProcess.startTime(of: pid) : nil
    }

    deinit { if pidfd >= 0 { close(pidfd) } }

    /// Whether the connecting process can be told apart from any later process of
    /// the same pid for as long as it lives.
    package var hasPidfd: Bool { pidfd >= 0 }

    /// Why a process cannot be named.
    package enum Unnamed: Error, Equatable {
        /// It has exited (a process that is gone cannot be asked about), or it is in
        /// another pid namespace (pid 0).
        case gone
        /// It is alive, but its /proc/PID/stat cannot be read here (/proc hidden from
        /// the daemon, e.g. ProtectProc=invisible).
        case unreadable
    }

    /// The pid and start time that name this process to polkit now.
    package func identity() -> Result<(pid: Int32, startTime: UInt64), Unnamed> {
        guard pid > 0, !pidfdFailed else { return .failure(.gone) }
        if pidfd >= 0 {
            let start = PeerProcess.startTime(of: pid)
            // Alive after the read: the pid was not reused, so the read was this process's.
            guard stillAlive() else { return .failure(.gone) }
            guard let start else { return .failure(.unreadable) }
            return .success((pid, start))
        }
        guard let start = startTimeAtAccept else { return .failure(.unreadable) }
        guard PeerProcess.startTime(of: pid) == start else { return .failure(.gone) }
        return .success((pid, start))
    }

    /// True while the process has not exited: with a pidfd, its pid has not been
    /// reused in between; without one, the pid still shows the start time it had at
    /// accept.
    package func stillAlive() -> Bool {
        if pidfd >= 0 { return pl_pidfd_exited(pidfd) == 0 }
        guard let start = startTimeAtAccept else { return false }
        return PeerProcess.startTime(of: pid) == start
    }

    /// The name the process gives itself: the last part of its argv[0] (as
    /// /proc/PID/cmdline shows it to any local user), its letters, digits and
    /// `._+-` only, at most 64 bytes;
    /// nil when it cannot be read. What polkit's dialog names as the program
    /// asking: it is what the process says of itself, not proof of what it is.
    package func program() -> String? {
        guard pid > 0, case .success(let fd) = Sys.open("/proc/\(pid)/cmdline", O_RDONLY) else { return nil }
        defer { Sys.close(fd) }
        guard case .success(let bytes) = Sys.readAll(fd, upTo: 4096) else { return nil }
        return PeerProcess.program(cmdline: bytes)
    }

    /// The program's name in the text of a /proc/PID/cmdline file.
    package static func program(cmdline bytes: [UInt8]) -> String? {
        let argv0 = bytes.prefix { $0 != 0 }
        let base = argv0.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).last ?? []
        // A name's own characters only: it is shown in a dialog, in a sentence
        // whose parentheses and `$(…)` are polkit's, and written in a log.
        let shown = base.filter { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
        }.prefix(64)
        return shown.isEmpty ? nil : String(decoding: shown, as: UTF8.self)
    }

    /// Field 22 of /proc/PID/stat (starttime, clock ticks after boot), which polkit
    /// reads too. The fields are counted after the last ')', as the command name
    /// before it may hold spaces and parentheses.
    package static func startTime(of pid: Int32) -> UInt64? {
        guard case .success(let fd) = Sys.open("/proc/\(pid)/stat", O_RDONLY) else { return nil }
        defer { Sys.close(fd) }
        guard case .success(let bytes) = Sys.readAll(fd, upTo: 4096) else { return nil }
        return startTime(stat: bytes)
    }

    /// The start time in the text of a /proc/PID/stat file.
    package static func startTime(stat bytes: [UInt8]) -> UInt64? {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // Field 3 (state) is the first after ") "; field 22 is the 20th.
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard fields.count >= 20 else { return nil }
        return UInt64(String(decoding: fields[fields.startIndex + 19], as: UTF8.self))
    }
}
