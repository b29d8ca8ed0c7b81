// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import PatternLock
import PatternLockWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Caps concurrent connections: 256 in all, 32 per non-root uid, and the last 32
/// slots kept for root, so that local users flooding the socket, alone or together,
/// cannot starve root (sudo, login) or each other. A setuid program that runs PAM
/// (su, polkit-agent-helper-1) is a root peer, so these caps alone do not bound what
/// one user asks through it: `RequestShares` does, once the request is read.
final class ConnectionLimiter: Sendable {
    static let maxTotal = 256
    static let maxPerUser = 32
    static let reservedForRoot = 32
    private let state = Mutex<(total: Int, perUID: [UInt32: Int])>((0, [:]))

    func admit(_ uid: UInt32) -> Bool {
        state.withLock { s in
            guard s.total < ConnectionLimiter.maxTotal else { return false }
            let mine = s.perUID[uid, default: 0]
            if uid != 0 {
                let others = s.total - s.perUID[0, default: 0]
                guard mine < ConnectionLimiter.maxPerUser,
                    others < ConnectionLimiter.maxTotal - ConnectionLimiter.reservedForRoot
                else { return false }
            }
            s.total += 1
            s.perUID[uid] = mine + 1
            return true
        }
    }

    func release(_ uid: UInt32) {
        state.withLock { s in
            s.total -= 1
            let mine = s.perUID[uid, default: 1] - 1
            s.perUID[uid] = mine == 0 ? nil : mine
        }
    }

    var active: Int { state.withLock { $0.total } }
}

/// How many requests one caller, and one user name, may have in hand at once
/// (waiting for the user's lock, or holding it), so that nobody, through any client,
/// can keep the daemon from answering another user. Every request about a user runs
/// under that user's lock, one at a time, and a right pattern hashes each time: a
/// user running `su SELF` 256 times at once would otherwise hold every connection
/// until its turn. A request over either cap is answered BUSY at once, before
/// anything is read or counted, and its connection is closed.
///
/// The caller is who ran the program that asks (`RequestHandler.caller`): the peer's
/// own uid, or for a root peer (a setuid program) the uid the module names, which
/// that user cannot change. Root's own requests (caller 0: sudo run by root, an
/// administrator's `patternlockd`, a login manager) take no share: only the
/// connection caps bound them. A pure decision; the daemon holds it in a mutex.
package struct RequestShares: Sendable {
    /// One caller's requests in hand, whichever users they are about: as many as one
    /// uid's own connections.
    package static let perCaller = ConnectionLimiter.maxPerUser
    /// Requests about one user name in hand, from every caller together: about as
    /// many as its lock gets through, at the calibrated ~250 ms a hash, within the
    /// module's deadline for a VERIFY (13 s). A request beyond them would only wait
    /// past it, holding a connection.
    package static let perUser = 32

    private var byCaller: [UInt32: Int] = [:]
    private var byUser: [String: Int] = [:]

    package init() {}

    /// Takes a share for a request about `user` asked by `caller`; false, taking
    /// nothing, when the caller or the user name has its whole share already.
    package mutating func admit(user: String, caller: UInt32) -> Bool {
        if caller == 0 { return true }
        let mine = byCaller[caller, default: 0], theirs = byUser[user, default: 0]
        guard mine < Self.perCaller, theirs < Self.perUser else { return false }
        byCaller[caller] = mine + 1
        byUser[user] = theirs + 1
        return true
    }

    /// Gives back the share `admit` took.
    package mutating func release(user: String, caller: UInt32) {
        if caller == 0 { return }
        let mine = byCaller[caller, default: 1] - 1, theirs = byUser[user, default: 1] - 1
        byCaller[caller] = mine > 0 ? mine : nil
        byUser[user] = theirs > 0 ? theirs : nil
    }

    /// The requests in hand for one caller, and about one user name.
    package func held(caller: UInt32) -> Int { byCaller[caller, default: 0] }
    package func held(user: String) -> Int { byUser[user, default: 0] }

    /// Who a request is about and who asks it, when it takes a share: a request about
    /// one user (STATUS, VERIFY, ENROLL, REMOVE, RESET of one user) from a caller who
    /// is not root. PING, CHECK and LIST wait for no user's lock.
    package static func subject(of request: Request, peerUID: UInt32) -> (user: String, caller: UInt32)? {
        let user: String, claimed: Caller?
        switch request {
        case .status(let u, let c): (user, claimed) = (u, c)
        case .verify(let u, _, let context): (user, claimed) = (u, context.caller)
        case .enroll(let u, _, _, _, _), .remove(let u, _), .reset(let u): (user, claimed) = (u, nil)
        case .ping, .check, .list, .resetAll: return nil
        }
        let caller = RequestHandler.caller(claimed: claimed, peerUID: peerUID).uid
        return caller == 0 ? nil : (user, caller)
    }
}

/// The listening side: a small POSIX loop. One thread accepts; each connection gets
/// its own thread, which reads its line under a deadline and runs the request. A
/// verify's hash therefore never blocks another connection, and a per-user lock in
/// the service keeps one user's attempts in order. Why not SwiftNIO: every request is
/// one short line answered after a CPU-bound hash, and the peer's SO_PEERCRED must be
/// read on the accepted fd; blocking threads with hard caps say this in ~200 lines,
/// start in milliseconds, and keep the idle daemon small.
package final class Server: Sendable {
    static let idleSeconds = 5.0

    let handler: RequestHandler
    let listenFD: Int32
    let limiter = ConnectionLimiter()
    let turns = TurnTaking()
    private let shares = Mutex(RequestShares())
    private let stopping = Atomic<Bool>(false)
    private let wakeFDs: (read: Int32, write: Int32)

    package init(handler: RequestHandler, listenFD: Int32) {
        self.handler = handler
        self.listenFD = listenFD
        var fds: [Int32] = [0, 0]
        _ = pl_pipe_cloexec(&fds)
        wakeFDs = (fds[0], fds[1])
    }

    /// Stops accepting; called from the signal thread.
    package func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        var b: UInt8 = 1
        _ = write(wakeFDs.write, &b, 1)
    }

    /// Accepts until `stop()`, then waits a little for connections in flight.
    package func run() {
        var nextReport = Calibration.now() + LogBudget.reportSeconds
        while !stopping.load(ordering: .sequentiallyConsistent) {
            var fds = [
                pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeFDs.read, events: Int16(POLLIN), revents: 0),
            ]
            // Woken at least every LogBudget.reportSeconds to say what the log budgets dropped.
            let rc = poll(&fds, 2, Int32(LogBudget.reportSeconds * 1000))
            if rc < 0 { if errno == EINTR { continue }; Log.error("poll failed: \(Errno.current)"); break }
            if Calibration.now() >= nextReport {
                Log.reportSuppressed()
                nextReport = Calibration.now() + LogBudget.reportSeconds
            }
            if fds[1].revents != 0 { break }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            switch Socket.accept(listenFD) {
            case .failure(let e):
                if e.rawValue == EMFILE || e.rawValue == ENFILE {
                    Log.warning("accept failed: \(e); out of file descriptors")
                    usleep(50_000)
                }
            case .success(let fd):
                if !spawnThread({ [self] in self.serve(fd) }) {
                    _ = Socket.sendAll(fd, Array((Reply.busy.line + "\n").utf8))
                    close(fd)
                }
            }
        }
        let deadline = Calibration.now() + 5
        while limiter.active > 0 && Calibration.now() < deadline { usleep(20_000) }
        Log.reportSuppressed()
    }

    /// What a line came to in its uid's turn.
    private enum Step {
        case answered([Reply])
        case rejected(Line.ParseError)
        case request(Request)
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        // Read at accept: who connected, and (for a password proof) which process.
        guard let peer = PeerProcess(socket: fd) else { return }
        let uid = peer.uid
        Socket.setTimeout(fd, option: SO_SNDTIMEO, seconds: Server.idleSeconds)
        guard limiter.admit(uid) else {
            _ = Socket.sendAll(fd, Array((Reply.busy.line + "\n").utf8))
            return
        }
        defer { limiter.release(uid) }
        let reader = LineReader(fd: fd, capacity: Line.maxRequestBytes)
        let writer = ConnectionWriter(fd: fd)
        while writer.isOpen && !stopping.load(ordering: .relaxed) {
            let deadline = Calibration.now() + Server.idleSeconds
            switch reader.next(maxBytes: Line.maxRequestBytes, deadline: deadline) {
            case .timedOut, .closed:
                return
            case .tooLong:
                writer.write([.error(.lineTooLong)])
                return
            case .line(let bytes):
                // In this uid's turn (`TurnTaking`): the parse, and the answers that
                // need no user's lock. The line stays bytes; a pattern in it becomes
                // secret bytes, never a String.
                let step: Step = turns.take(uid) {
                    do throws(Line.ParseError) {
                        let request = try bytes.withUnsafeBytes { (b) throws(Line.ParseError) in
                            try Request(try Line(parsing: b))
                        }
                        return handler.immediate(request).map { .answered($0) } ?? .request(request)
                    } catch {
                        return .rejected(error)
                    }
                }
                switch step {
                case .answered(let replies):
                    writer.write(replies)
                case .rejected(let error):
                    Log.write(.info, "request rejected uid=\(uid) error=\(error.code)", from: uid)
                    writer.write([.error(error.code)])
                    if error.closesConnection { return }
                case .request(let request):
                    guard let subject = RequestShares.subject(of: request, peerUID: uid) else {
                        handler.handle(request, peerUID: uid, peer: peer, hangUp: fd, writer: writer)
                        continue
                    }
                    guard shares.withLock({ $0.admit(user: subject.user, caller: subject.caller) }) else {
                        // Closed, as a connection over the caps is: the slot is free at once.
                        writer.write([.busy])
                        return
                    }
                    defer { shares.withLock { $0.release(user: subject.user, caller: subject.caller) } }
                    handler.handle(request, peerUID: uid, peer: peer, hangUp: fd, writer: writer)
                }
            }
        }
    }
}

/// The listening socket: from systemd (socket activation) or bound here.
package enum Listener {
    package struct Failure: Error, CustomStringConvertible { package let description: String }

    /// The sockets systemd passed (sd_listen_fds), asked once: the call clears
    /// `LISTEN_FDS` so that children do not inherit it, and a second call sees none.
    static let passedSockets = pl_listen_fds()

    /// Refuses a path that is not a socket or that another daemon listens on; a
    /// stale socket is left for `open` to replace. Changes nothing: `serve` asks this
    /// before it creates a state directory or a key, so a start that fails here
    /// leaves nothing behind. Nothing to check when systemd passes the socket.
    package static func checkFree(path: String) throws(Failure) {
        guard passedSockets < 1, case .success(let st) = Sys.lstat(path) else { return }
        guard st.st_mode & S_IFMT == S_IFSOCK else {
            throw Failure(description: "\(path) exists and is not a socket. Remove it or choose another path with --socket.")
        }
        if case .success(let probe) = Socket.unixStream() {
            defer { close(probe) }
            if case .success = Socket.connect(probe, path: path) {
                throw Failure(
                    description:
                        "Another patternlockd is already listening on \(path). Stop it first (systemctl stop patternlockd.socket patternlockd.service), or give this one its own --socket."
                )
            }
        }
    }

    /// Returns the fd and whether this process created the socket file.
    package static func open(path: String) throws(Failure) -> (fd: Int32, created: Bool) {
        if passedSockets >= 1 {
            return (3, false)
        }
        try checkFree(path: path)
        let (dir, _) = Sys.splitPath(path)
        if case .failure(let e) = Sys.lstat(dir), e == .noEntry {
            if case .failure(let e) = Sys.mkdir(dir, 0o755) {
                throw Failure(description: "Cannot create the socket directory \(dir): \(e).")
            }
            _ = chmod(dir, 0o755)
        }
        if case .success = Sys.lstat(path) { _ = Sys.unlink(path) }
        // The path appears only once the socket accepts: a client that sees it (a
        // PAM module during a restart, a script waiting for it) never gets
        // "connection refused". Bound under a temporary name in the same directory,
        // listening, its mode set, it is renamed into place.
        let (_, name) = Sys.splitPath(path)
        // (A path within a few bytes of sun_path's 108 is bound in place.)
        let temp = ["\(dir)/.\(name).\(getpid())", "\(dir)/.\(getpid())"].first { $0.utf8.count < 108 } ?? path
        _ = Sys.unlink(temp)
        let fd: Int32
        switch Socket.unixStream() {
        case .failure(let e): throw Failure(description: "Cannot create a socket: \(e).")
        case .success(let f): fd = f
        }
        func fail(_ description: String) throws(Failure) -> Never {
            close(fd)
            if temp != path { _ = Sys.unlink(temp) }
            throw Failure(description: description)
        }
        if case .failure(let e) = Socket.bind(fd, path: temp) { try fail("Cannot bind \(path): \(e).") }
        guard Glibc.listen(fd, 128) == 0 else { try fail("Cannot listen on \(path): \(Errno.current).") }
        // Every request is authorized by SO_PEERCRED, so anyone may connect.
        guard chmod(temp, 0o666) == 0 else { try fail("Cannot set the mode of \(path): \(Errno.current).") }
        if temp != path && pl_rename_noreplace(temp, path) != 0 {
            let e = Errno.current
            try fail(
                e.rawValue == EEXIST
                    ? "Another patternlockd is already listening on \(path)."
                    : "Cannot put the socket in place at \(path): \(e).")
        }
        return (fd, true)
    }
}
