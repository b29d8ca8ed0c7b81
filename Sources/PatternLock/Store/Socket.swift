// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Unix-socket calls the daemon, its client and the fleet store's endpoint check
/// use, each retrying EINTR (`Sys` has the file calls).
package enum Socket {
    package static func retrying<T: BinaryInteger>(_ call: () -> T) -> Result<T, Errno> { Sys.retrying(call) }

    package static func makeAddress(_ path: String) -> sockaddr_un? {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return addr
    }

    /// A new AF_UNIX stream socket. The corresponding C function is `socket`.
    package static func unixStream() -> Result<Int32, Errno> {
        retrying { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
    }

    /// The corresponding C function is `connect`.
    package static func connect(_ fd: Int32, path: String) -> Result<Void, Errno> {
        guard var addr = makeAddress(path) else { return .failure(Errno(ENAMETOOLONG)) }
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                retrying { Glibc.connect(fd, sa, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }.map { _ in () }
    }

    /// The corresponding C function is `bind`.
    package static func bind(_ fd: Int32, path: String) -> Result<Void, Errno> {
        guard var addr = makeAddress(path) else { return .failure(Errno(ENAMETOOLONG)) }
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                retrying { Glibc.bind(fd, sa, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }.map { _ in () }
    }

    /// The corresponding C function is `accept4` (with SOCK_CLOEXEC).
    package static func accept(_ fd: Int32) -> Result<Int32, Errno> {
        retrying { pl_accept_cloexec(fd) }
    }

    /// Sets SO_RCVTIMEO / SO_SNDTIMEO. The corresponding C function is `setsockopt`.
    package static func setTimeout(_ fd: Int32, option: Int32, seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all bytes, never raising SIGPIPE. The corresponding C function is `send`.
    package static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Result<Void, Errno> {
        bytes.withUnsafeBufferPointer { sendAll(fd, $0) }
    }

    /// The same from a buffer the caller owns (a secret's: nothing is copied).
    package static func sendAll(_ fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Result<Void, Errno> {
        var done = 0
        while done < bytes.count {
            let r = retrying { send(fd, bytes.baseAddress.map { $0 + done }, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            switch r {
            case .failure(let e): return .failure(e)
            case .success(let n): done += n
            }
        }
        return .success(())
    }

    /// Waits until fd is readable or `deadline` (monotonic seconds) passes.
    /// The corresponding C function is `poll`.
    package static func waitReadable(_ fd: Int32, until deadline: Double) -> Bool {
        while true {
            let left = deadline - Calibration.now()
            if left <= 0 { return false }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let rc = poll(&p, 1, Int32(min(left * 1000 + 1, 60_000)))
            if rc > 0 { return true }
            if rc == 0 { continue }
            if errno != EINTR { return false }
        }
    }

    /// The uid of the peer of a connected AF_UNIX socket (SO_PEERCRED).
    package static func peerUID(_ fd: Int32) -> UInt32? {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        return pl_peer_credentials(fd, &pid, &uid, &gid) == 0 ? uid : nil
    }
}
