// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// The exit statuses of the client commands, all documented in patternlockd(8)
/// (EXIT STATUS) and in `--help`. Usage errors exit 64 (EX_USAGE, as
/// swift-argument-parser's `validationFailure`).
public enum ExitStatus: Int32, Sendable {
    /// A wrong pattern (counted).
    case wrong = 1
    /// Pattern unlock is locked for the user (verify, enroll's change, remove, `status USER`).
    case locked = 2
    /// The user has no pattern (verify, `remove`: nothing to remove, `status USER`).
    case notEnrolled = 3
    /// Input refused, nothing counted or changed: not a pattern, a pattern the policy
    /// refuses, two entries that differ, a user that does not exist, a count out of range.
    case invalid = 4
    /// Not allowed for the one who asked.
    case denied = 5
    /// The daemon cannot be reached: no socket, nothing listening, not root's, no
    /// answer in time; or, in a fleet, its database cannot be reached (nothing was
    /// checked or counted). Only this.
    case unavailable = 6
    /// The daemon was reached but could not do it: busy, its store failed, or an
    /// answer this client does not understand.
    case daemonError = 7

    /// For `--help`.
    public static let summary =
        "Exit status: 0 done, 1 wrong pattern, 2 locked, 3 no pattern, 4 input refused (nothing counted or changed), "
        + "5 permission denied, 6 daemon (or its fleet database) unreachable, 7 daemon error, 64 usage error."
}

/// A runtime failure of a client command: a sentence for stderr and an exit status.
public struct ClientError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public let code: ExitStatus

    public init(description: String, code: ExitStatus) {
        self.description = description
        self.code = code
    }
}

/// What the client commands say about a reply that is not the hoped-for one. The
/// PAM module says the same about a lock and a wrong pattern (`LockoutWording`,
/// checked against messages.c in full).
public enum ClientWording {
    /// The range `--iterations` takes, for `--help`, the check before sending, and the
    /// daemon's refusal alike.
    public static let iterationsRange =
        "--iterations must be between \(Credential.minimumIterations) (OWASP's floor for PBKDF2-HMAC-SHA256) and "
        + "\(Credential.maximumIterations); leave it out to get the daemon's calibrated count."

    /// What every command says about a record that is there but is not a valid
    /// record (`record_unreadable`, or `corrupt=1` in a STATUS), whoever asks, and
    /// what cures it: root's `remove` takes away whatever stands in its place.
    public static func recordUnreadable(user: String) -> String {
        "The pattern record of \(user) cannot be read, so pattern unlock is off for \(user). "
            + "An administrator removes it with: sudo patternlockd remove \(user) (then \(user) can enroll again)."
    }

    /// What the command and the setup window say when another program is asking
    /// polkit to set this user's first pattern (`password_proof_in_progress`): the
    /// dialog on the screen now is that program's, and a password typed into it
    /// would set that program's pattern.
    public static let proofInProgress =
        "Another program is asking to set your unlock pattern right now, so your password was not asked for this one "
        + "and nothing was changed. Do not enter your password in a password dialog you did not expect: it would set "
        + "that program's pattern. Close that dialog (its message names the program), then try again."

    /// What the setup window says when a password question reached it that its own
    /// request did not start (another program's polkit check of this window's
    /// process): it was not answered.
    public static let foreignQuestion =
        "Another program asked for your password through this window, so it was not answered and nothing was "
        + "changed. Draw the pattern again to confirm, and enter your password when this window asks for it."

    /// Turns a reply that is not the hoped-for one into a sentence and an exit status.
    /// `current`: the pattern checked was the user's current one (a change or a
    /// remove), so a wrong one changed nothing and says so.
    public static func failure(for reply: Reply, user: String, current: Bool = false) -> ClientError {
        switch reply {
        case .fail(let remaining, let retryAfter) where current:
            if remaining > 0 {
                return ClientError(
                    description:
                        "Wrong current pattern \u{2014} \(remaining) attempt\(remaining == 1 ? "" : "s") left. Nothing was changed.",
                    code: .wrong)
            }
            return ClientError(
                description: "Wrong current pattern. Nothing was changed. " + LockoutWording.nowLocked(user: user, retryAfter: retryAfter),
                code: .wrong)
        case .fail(let remaining, let retryAfter):
            return ClientError(description: LockoutWording.wrong(user: user, remaining: remaining, retryAfter: retryAfter), code: .wrong)
        case .locked(let retry):
            return ClientError(description: LockoutWording.locked(user: user, retryAfter: retry), code: .locked)
        case .notEnrolled:
            return ClientError(description: "\(user) has no pattern. Enroll one with: patternlockd enroll \(user)", code: .notEnrolled)
        case .invalid(.currentRequired):
            return ClientError(description: "Changing your own pattern needs your current pattern first.", code: .invalid)
        case .invalid(let reason):
            let sentence = EntryWording.invalid(reason) ?? "No dots were entered. This entry was not counted."
            return ClientError(description: sentence, code: .invalid)
        case .denied:
            return ClientError(description: "Permission denied: only root may do this for another user.", code: .denied)
        case .busy:
            return ClientError(
                description: "patternlockd is busy with other requests; nothing was done. Try again in a moment.", code: .daemonError)
        case .error(let code):
            return failure(for: code, user: user)
        default:
            return ClientError(description: "patternlockd sent an unexpected reply: \(reply.line)", code: .daemonError)
        }
    }

    static func failure(for code: ErrorCode, user: String) -> ClientError {
        switch code {
        case .noSuchUser:
            return ClientError(description: "There is no user \(user) on this system; nothing was changed.", code: .invalid)
        case .iterationsTooLow, .iterationsTooHigh:
            return ClientError(description: iterationsRange, code: .invalid)
        case .overrideRootOnly:
            return ClientError(
                description: "Only root can override the enroll policy; choose a pattern the policy accepts.", code: .denied)
        case .iterationsRootOnly:
            return ClientError(
                description: "Only root can choose the iteration count; leave out --iterations to get the daemon's calibrated count.",
                code: .denied)
        case .passwordProofRequired:
            return ClientError(
                description: "Setting your first pattern needs your password, and it was not confirmed (a wrong password, "
                    + "or the password prompt was closed or could not be shown); nothing was changed. Run patternlockd enroll "
                    + "again on a terminal of this machine and type your password when asked, or ask an administrator to run: "
                    + "patternlockd enroll \(user)",
                code: .denied)
        case .passwordProofInProgress:
            return ClientError(description: proofInProgress, code: .denied)
        case .passwordProofUnavailable:
            return ClientError(
                description: "This system cannot ask for your password (polkit is not installed or not running), so your "
                    + "first pattern must be set by an administrator: run sudo patternlockd enroll, or ask root to run: "
                    + "patternlockd enroll \(user). Nothing was changed.",
                code: .denied)
        case .storeFailed:
            return ClientError(
                description:
                    "patternlockd could not read or write its state; nothing was changed. See its log (journalctl -u patternlockd).",
                code: .daemonError)
        case .storeUnavailable:
            return ClientError(
                description: "patternlockd cannot reach its database now; nothing was checked or counted. "
                    + "Try again when the database is back, and see the log (journalctl -u patternlockd).",
                code: .unavailable)
        case .recordUnreadable:
            return ClientError(description: recordUnreadable(user: user), code: .daemonError)
        default:
            return ClientError(
                description: "patternlockd could not do this (\(code.rawValue)); see its log (journalctl -u patternlockd).",
                code: .daemonError)
        }
    }
}
