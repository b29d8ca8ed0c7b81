import ArgumentParser
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// Exit statuses of the client commands, all documented in patternlockd(8) (EXIT
/// STATUS) and in `--help`. Usage errors exit 64 (EX_USAGE, swift-argument-parser's
/// `validationFailure`).
enum Exit {
    /// A wrong pattern (counted).
    static let wrong = ExitCode(1)
    /// Pattern unlock is locked for the user (verify, enroll's change, remove, `status USER`).
    static let locked = ExitCode(2)
    /// The user has no pattern (verify, `remove`: nothing to remove, `status USER`).
    static let notEnrolled = ExitCode(3)
    /// Input refused, nothing counted or changed: not a pattern, a pattern the policy
    /// refuses, two entries that differ, a user that does not exist, a count out of range.
    static let invalid = ExitCode(4)
    /// Not allowed for the one who asked.
    static let denied = ExitCode(5)
    /// The daemon cannot be reached: no socket, nothing listening, not root's, no
    /// answer in time; or, in a fleet, its database cannot be reached (nothing was
    /// checked or counted). Only this.
    static let unavailable = ExitCode(6)
    /// The daemon was reached but could not do it: busy, its store failed, or an
    /// answer this client does not understand.
    static let daemonError = ExitCode(7)

    /// For `--help`.
    static let summary = "Exit status: 0 done, 1 wrong pattern, 2 locked, 3 no pattern, 4 input refused (nothing counted or changed), 5 permission denied, 6 daemon (or its fleet database) unreachable, 7 daemon error, 64 usage error."
}

/// A runtime failure of a client command: a sentence for stderr and an exit code.
struct ClientError: Error, CustomStringConvertible {
    let description: String
    let code: ExitCode
}

/// A connection to the daemon. Before sending anything, it checks that the socket
/// is a socket owned by root (or by the user running this command, for a private
/// daemon), and that the process listening is one of those too.
struct DaemonConnection {
    let fd: Int32
    let path: String
    var reader: LineReader

    init(socket: SocketOptions) throws(ClientError) {
        let path = socket.path
        func unavailable(_ why: String) -> ClientError {
            ClientError(description: "Cannot reach patternlockd at \(path) (\(socket.origin)): \(why). \(socket.hint)",
                        code: Exit.unavailable)
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
    mutating func send(_ request: Request, timeout: Double = 120) throws(ClientError) -> [Reply] {
        var bytes = Array((request.line.encoded() + "\n").utf8)
        defer { pl_wipe_bytes(&bytes) }
        guard bytes.count <= Line.maxRequestBytes else {
            throw ClientError(description: "The request is too long; nothing was sent.", code: Exit.invalid)
        }
        if case .failure(let e) = Socket.sendAll(fd, bytes) {
            throw ClientError(description: "Cannot send to patternlockd: \(e).", code: Exit.unavailable)
        }
        var replies: [Reply] = []
        let deadline = Calibration.now() + timeout
        repeat {
            switch reader.next(maxBytes: Line.maxReplyBytes, deadline: deadline) {
            case .line(let l):
                guard let text = l.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }), let reply = Reply(line: text) else {
                    throw ClientError(description: "patternlockd sent a reply this client does not understand; is this command older than the daemon? Use the patternlockd that came with the running daemon.", code: Exit.daemonError)
                }
                replies.append(reply)
            case .timedOut:
                throw ClientError(description: "patternlockd did not answer within \(Int(timeout)) seconds.", code: Exit.unavailable)
            case .closed, .tooLong:
                throw ClientError(description: "patternlockd closed the connection without an answer.", code: Exit.unavailable)
            }
        } while request == .list && replies.last != .end
        return replies
    }

    func close() { Glibc.close(fd) }

    /// One request on a fresh connection.
    static func request(_ request: Request, socket: SocketOptions) throws(ClientError) -> Reply {
        var c = try DaemonConnection(socket: socket)
        defer { c.close() }
        return try c.send(request)[0]
    }
}

/// Turns a reply that is not the hoped-for one into a sentence and an exit code.
/// `current`: the pattern checked was the user's current one (a change or a
/// remove), so a wrong one changed nothing and says so.
func failure(for reply: Reply, user: String, current: Bool = false) -> ClientError {
    switch reply {
    case .fail(let remaining, let retryAfter) where current:
        if remaining > 0 {
            return ClientError(description: "Wrong current pattern \u{2014} \(remaining) attempt\(remaining == 1 ? "" : "s") left. Nothing was changed.",
                               code: Exit.wrong)
        }
        return ClientError(description: "Wrong current pattern. Nothing was changed, and pattern unlock for \(user) is now locked after \(LockoutPolicy.defaultMaxFailures) failed attempts. "
                           + LockoutWording.wayOut(user: user, retryAfter: retryAfter), code: Exit.wrong)
    case .fail(let remaining, let retryAfter):
        return ClientError(description: LockoutWording.wrong(user: user, remaining: remaining, retryAfter: retryAfter), code: Exit.wrong)
    case .locked(let retry):
        return ClientError(description: LockoutWording.locked(user: user, retryAfter: retry), code: Exit.locked)
    case .notEnrolled:
        return ClientError(description: "\(user) has no pattern. Enroll one with: patternlockd enroll \(user)", code: Exit.notEnrolled)
    case .invalid(let reason):
        if reason == "current_required" {
            return ClientError(description: "Changing your own pattern needs your current pattern first.", code: Exit.invalid)
        }
        let sentence = PatternError(reason: reason)?.description ?? "That is not a valid pattern (\(reason))."
        return ClientError(description: "\(sentence) This entry was not counted.", code: Exit.invalid)
    case .denied:
        return ClientError(description: "Permission denied: only root may do this for another user.", code: Exit.denied)
    case .busy:
        return ClientError(description: "patternlockd is busy with other requests; nothing was done. Try again in a moment.", code: Exit.daemonError)
    case .error(let m):
        switch m {
        case "no_such_user":
            return ClientError(description: "There is no user \(user) on this system; nothing was changed.", code: Exit.invalid)
        case "iterations_too_low", "iterations_too_high":
            return ClientError(description: PatternLockd.Enroll.iterationsRange, code: Exit.invalid)
        case "override_root_only":
            return ClientError(description: "Only root can override the enroll policy; choose a pattern the policy accepts.", code: Exit.denied)
        case "iterations_root_only":
            return ClientError(description: "Only root can choose the iteration count; leave out --iterations to get the daemon's calibrated count.", code: Exit.denied)
        case "store_failed":
            return ClientError(description: "patternlockd could not read or write its state; nothing was changed. See its log (journalctl -u patternlockd).", code: Exit.daemonError)
        case "store_unavailable":
            return ClientError(description: "patternlockd cannot reach its database now; nothing was checked or counted. Try again when the database is back, and see the log (journalctl -u patternlockd).", code: Exit.unavailable)
        case "record_unreadable":
            return ClientError(description: "The pattern record of \(user) exists but cannot be read, so it cannot be changed without an administrator. Ask one to run: patternlockd remove \(user)", code: Exit.daemonError)
        default:
            return ClientError(description: "patternlockd could not do this (\(m)); see its log (journalctl -u patternlockd).", code: Exit.daemonError)
        }
    default:
        return ClientError(description: "patternlockd sent an unexpected reply: \(reply.line)", code: Exit.daemonError)
    }
}

/// Prints a client error and exits with its code.
func fail(_ error: ClientError) -> ExitCode {
    printError(error.description)
    return error.code
}

func printError(_ s: String) {
    var line = s + "\n"
    _ = line.withUTF8 { write(2, $0.baseAddress, $0.count) }
}

extension ParsableCommand {
    /// The user a command is about: the argument, else the invoking user. Under
    /// sudo the invoking user is the one who ran sudo (`SUDO_USER`), not root:
    /// `sudo patternlockd enroll` is alice asking for her own pattern, and enrolling
    /// root by accident would leave her with none.
    func targetUser(_ given: String?) throws -> String {
        if let given {
            guard UserName.isValid(given) else { throw ValidationError("'\(given)' is not a valid user name.") }
            return given
        }
        if let sudoUser = try sudoUser() { return sudoUser }
        guard let me = Accounts.currentUserName else { throw ValidationError("Cannot find your user name; give it as an argument.") }
        return me
    }

    /// The user who ran sudo, when this command runs as root under sudo for someone
    /// else; nil otherwise. Refuses (naming the fix) when `SUDO_USER` is not an
    /// account of this system or disagrees with `SUDO_UID`.
    func sudoUser() throws -> String? {
        guard geteuid() == 0, let name = getenvString("SUDO_USER"), !name.isEmpty, name != "root" else { return nil }
        let command = Self._commandName
        guard UserName.isValid(name), let uid = Accounts.uid(of: name),
              getenvString("SUDO_UID").map({ UInt32($0) == uid }) ?? true
        else {
            throw ValidationError("You ran sudo as '\(name)', which is not an account this command can use. Name the user: sudo patternlockd \(command) USER (or root).")
        }
        return name
    }
}
