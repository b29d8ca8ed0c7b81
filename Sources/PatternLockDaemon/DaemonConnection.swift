// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import PatternLock
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

/// Where a client finds the daemon, and what to say when it is not there.
package struct DaemonAddress: Sendable {
    package var path: String
    /// Where `path` came from ("from --socket"), for a message that names the setting to fix.
    package var origin: String
    /// What to try when the daemon cannot be reached.
    package var hint: String

    package init(path: String, origin: String, hint: String) {
        self.path = path
        self.origin = origin
        self.hint = hint
    }

    package static let defaultPath = "/run/patternlock/socket"

    /// The socket a client talks to: `socket` (its --socket), else
    /// $PATTERNLOCK_SOCKET, else the default; with where it came from and what to
    /// try when nothing answers there (systemd's socket unit where systemd runs).
    package static func resolve(socket: String?) -> DaemonAddress {
        let environment = getenv("PATTERNLOCK_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        let path = socket ?? environment ?? defaultPath
        let origin = socket != nil ? "from --socket" : environment != nil ? "from $PATTERNLOCK_SOCKET" : "the default socket"
        let hint: String
        if path != defaultPath {
            let fix =
                socket != nil
                ? "check the path given to --socket" : "check $PATTERNLOCK_SOCKET, or unset it to use \(defaultPath)"
            hint = "Is a patternlockd serve --socket \(path) running? If not, \(fix)."
        } else if systemdRuns {
            hint = "Is it running? Try: systemctl status patternlockd.socket"
        } else {
            hint = "Is it running? Start it as root with: patternlockd serve"
        }
        return DaemonAddress(path: path, origin: origin, hint: hint)
    }

    /// sd_booted(3): systemd is the init system when /run/systemd/system exists.
    package static var systemdRuns: Bool {
        guard case .success(let st) = Sys.lstat("/run/systemd/system") else { return false }
        return st.st_mode & S_IFMT == S_IFDIR
    }
}

/// A connection to the daemon. Before sending anything, it checks that the socket
/// is a socket owned by root (or by the user running this command, for a private
/// daemon), and that the process listening is one of those too.
package struct DaemonConnection {
    package let fd: Int32
    package let path: String
    var reader: LineReader

    package init(socket: DaemonAddress) throws(ClientError) {
        let path = socket.path
        func unavailable(_ why: String) -> ClientError {
            ClientError(
                description: "Cannot reach patternlockd at \(path) (\(socket.origin)): \(why). \(socket.hint)",
                code: .unavailable)
        }
        let me = geteuid()
        switch Sys.lstat(path) {
        case .failure(let e): throw unavailable("\(e)")
        case .success(let st):
            guard st.st_mode & S_IFMT == S_IFSOCK else { throw unavailable("it is not a socket") }
            guard st.st_uid == 0 || st.st_uid == me else { throw unavailable("the socket is owned by uid \(st.st_uid), not by root") }
        }
        guard case .success(let fd) = Socket.unixStream() else { throw unavailable("cannot create a socket") }
        if case .failure(let e) = Socket.connect(fd, path: path) { Glibc.close(fd); throw unavailable("\(e)") }
        guard let peer = Socket.peerUID(fd), peer == 0 || peer == me else {
            Glibc.close(fd)
            throw unavailable("the process listening is not running as root")
        }
        Socket.setTimeout(fd, option: SO_SNDTIMEO, seconds: 10)
        self.fd = fd
        self.path = path
        self.reader = LineReader(fd: fd, capacity: Line.maxReplyBytes)
    }

    /// Sends one request and reads one reply (or, for LIST, lines up to END).
    package mutating func send(_ request: Request, timeout: Double = 120) throws(ClientError) -> [Reply] {
        // The line's bytes are secret (a pattern): never a String, wiped when sent.
        let bytes = request.line.encodedLine()
        guard bytes.count <= Line.maxRequestBytes else {
            throw ClientError(description: "The request is too long; nothing was sent.", code: .invalid)
        }
        if case .failure(let e) = bytes.withUnsafeBytes({ Socket.sendAll(fd, $0) }) {
            throw ClientError(
                description:
                    "Cannot send to patternlockd: \(e). The daemon stopped or could not start; its log says why: journalctl -u patternlockd.service (or the log of the daemon you started with patternlockd serve).",
                code: .unavailable)
        }
        var replies: [Reply] = []
        let deadline = Calibration.now() + timeout
        repeat {
            switch reader.next(maxBytes: Line.maxReplyBytes, deadline: deadline) {
            case .line(let l):
                guard let text = l.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }), let reply = Reply(line: text) else {
                    throw ClientError(
                        description:
                            "patternlockd sent a reply this client does not understand; is this command older than the daemon? Use the patternlockd that came with the running daemon.",
                        code: .daemonError)
                }
                replies.append(reply)
            case .timedOut:
                throw ClientError(description: "patternlockd did not answer within \(Int(timeout)) seconds.", code: .unavailable)
            case .closed, .tooLong:
                // Most often a daemon that cannot start: systemd accepted the connection
                // for it, and its reason is in the journal.
                throw ClientError(
                    description:
                        "patternlockd closed the connection without an answer: the daemon stopped or could not start. Its log says why: journalctl -u patternlockd.service (or the log of the daemon you started with patternlockd serve).",
                    code: .unavailable)
            }
            // LIST is answered with USER lines up to END, or with one error instead.
        } while request == .list && { if case .user? = replies.last { return true } else { return false } }()
        return replies
    }

    package func close() { Glibc.close(fd) }

    /// One request on a fresh connection; `timeout`: how long to wait for the answer.
    package static func request(_ request: Request, socket: DaemonAddress, timeout: Double = 120) throws(ClientError) -> Reply {
        var c = try DaemonConnection(socket: socket)
        defer { c.close() }
        return try c.send(request, timeout: timeout)[0]
    }
}
