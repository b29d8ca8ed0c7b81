// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

extension PatternLockd {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show who is enrolled, failure counts, lockouts and where the failures came from.",
            discussion: """
                Like faillock: one block per user with its recent failures (when, in this \
                machine's local time with its zone; who made the attempt, as "By": the user \
                who ran the program that asked, with its logind session and seat or tty; PAM \
                service; tty; remote host; the user the program reported, PAM_RUSER, as \
                "From"; and the uid of the program that asked, 0 for sudo, su and polkit). \
                Root sees every user; others only themselves.

                Exit status, for monitoring: 0 when no user shown is locked, 2 when one is, \
                3 for `status USER` when USER has no pattern; 5 permission denied, \
                6 daemon unreachable, 7 daemon error (a user's record that cannot be read \
                included), 64 usage error.
                """)

        @OptionGroup var socketOptions: SocketOptions

        @Argument(help: "Show only this user (default: every user for root, else you).")
        var user: String?

        func run() throws {
            do {
                var connection = try DaemonConnection(socket: socketOptions.address)
                defer { connection.close() }
                var users: [String]
                if let user {
                    users = [try targetUser(user)]
                } else if geteuid() == 0 {
                    let replies = try connection.send(.list)
                    if let last = replies.last, last != .end { throw failure(for: last, user: "every user") }
                    users = replies.compactMap { if case .user(let u) = $0 { return u } else { return nil } }
                    if users.isEmpty { print("No user has a pattern yet. Enroll one with: patternlockd enroll USER"); return }
                } else {
                    users = [try targetUser(nil)]
                }
                // One user's unreadable status must not hide everyone after it.
                var firstError: ClientError?
                var anyLocked = false
                var notEnrolled = false
                for (i, u) in users.enumerated() {
                    var reply = try connection.send(.status(user: u))[0]
                    if i > 0 { print("") }
                    // A record that cannot be read tells the story every command tells.
                    if case .status(let s) = reply, s.corrupt { reply = .error(.recordUnreadable) }
                    guard case .status(let s) = reply else {
                        let error = failure(for: reply, user: u)
                        // One user asked for: the error is the whole answer, said once (by `fail`).
                        if users.count == 1 { throw error }
                        print("\(TerminalText.escaped(u)): \(error.description)")
                        if firstError == nil { firstError = error }
                        continue
                    }
                    print(Self.render(s, asRoot: geteuid() == 0))
                    anyLocked = anyLocked || s.locked
                    notEnrolled = !s.enrolled
                }
                // Each failure is already in its user's block; the status says which kind came first.
                if let firstError { throw firstError.code.exitCode }
                // For monitoring: a lock is worth an exit status, like faillock's users.
                if anyLocked { throw Exit.locked.exitCode }
                if user != nil && notEnrolled { throw Exit.notEnrolled.exitCode }
            } catch let error as ClientError {
                throw fail(error)
            }
        }

        /// `asRoot`: whoever reads it may run `reset`; a user is told to ask.
        static func render(_ s: UserStatus, asRoot: Bool = true) -> String {
            var lines: [String] = []
            let state: String
            if s.owner == .gone {
                state =
                    "not enrolled: the pattern on record belongs to an account that no longer exists; remove it with: patternlockd remove \(s.user)"
            } else if s.owner == .changed {
                state =
                    "not enrolled: the pattern on record was enrolled by an earlier account of this name (another uid) and is not accepted; remove it with: patternlockd remove \(s.user)"
            } else if s.corrupt {
                state = ClientWording.recordUnreadable(user: s.user)
            } else if !s.enrolled {
                state = "not enrolled"
            } else if s.locked {
                let until = s.retryAfter > 0 ? ", unlocks by itself in \(LockoutWording.duration(s.retryAfter))" : ""
                let how =
                    asRoot
                    ? "unlock with: patternlockd reset \(s.user)"
                    : "ask an administrator to run: patternlockd reset \(s.user)"
                state = "LOCKED since \(TerminalText.timestamp(s.lockedSince))\(until); \(how)"
            } else {
                state =
                    "enrolled, \(s.failures) failure\(s.failures == 1 ? "" : "s"), \(s.remaining) attempt\(s.remaining == 1 ? "" : "s") left"
            }
            lines.append("\(TerminalText.escaped(s.user)): \(state)")
            if s.enrolled { lines.append("  hash: PBKDF2-HMAC-SHA256, \(s.iterations) iterations") }
            if !s.recent.isEmpty {
                // Columns as wide as their longest cell (escaped), so long names do
                // not push the next column out of line. In a fleet each failure also
                // says which host counted it.
                let fleet = s.recent.contains { !$0.host.isEmpty }
                let header = ["When"] + (fleet ? ["Host"] : []) + ["By", "Service", "TTY", "Remote host", "From", "UID"]
                let rows = s.recent.map { f in
                    ([TerminalText.timestamp(f.when)] + (fleet ? [f.host] : []) + [
                        by(f), f.service, f.tty, f.rhost, f.ruser, String(f.uid),
                    ])
                    .map { $0.isEmpty ? "-" : TerminalText.escaped($0) }
                }
                let widths = header.indices.map { c in ([header] + rows).map { $0[c].count }.max() ?? 0 }
                for row in [header] + rows {
                    let cells = row.indices.map { c in
                        c == row.count - 1 ? row[c] : row[c] + String(repeating: " ", count: widths[c] - row[c].count + 2)
                    }
                    lines.append("  " + cells.joined())
                }
            }
            return lines.joined(separator: "\n")
        }

        /// Who made a failed attempt: the caller's user name (its uid when it has
        /// none here, as for another host's user in a fleet), with the logind session
        /// and its seat or tty: "mallory (session 4, seat0)". Empty for failures
        /// recorded before the caller was kept.
        static func by(_ f: FailureEntry) -> String {
            guard let caller = f.caller else { return "" }
            let name = Accounts.name(of: caller) ?? "uid \(caller)"
            guard !f.session.isEmpty else { return f.seat.isEmpty ? name : "\(name) (\(f.seat))" }
            return "\(name) (session \(f.session)\(f.seat.isEmpty ? "" : ", \(f.seat)"))"
        }
    }
}
