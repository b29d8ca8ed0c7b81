import ArgumentParser
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

extension PatternLockd {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show who is enrolled, failure counts, lockouts and where the failures came from.",
            discussion: """
                Like faillock: one block per user with its recent failures (when, PAM service, \
                tty, remote host, requesting uid). Root sees every user; others only themselves.
                """)

        @OptionGroup var socketOptions: SocketOptions

        @Argument(help: "Show only this user (default: every user for root, else you).")
        var user: String?

        func run() throws {
            do {
                var connection = try DaemonConnection(path: socketOptions.path)
                defer { connection.close() }
                var users: [String]
                if let user {
                    users = [try targetUser(user)]
                } else if geteuid() == 0 {
                    users = try connection.send(.list).compactMap { if case .user(let u) = $0 { return u } else { return nil } }
                    if users.isEmpty { print("No user has a pattern yet. Enroll one with: patternlockd enroll USER"); return }
                } else {
                    users = [try targetUser(nil)]
                }
                for (i, u) in users.enumerated() {
                    let reply = try connection.send(.status(user: u))[0]
                    guard case .status(let s) = reply else { throw failure(for: reply, user: u) }
                    if i > 0 { print("") }
                    print(Self.render(s))
                }
            } catch let error as ClientError {
                throw fail(error)
            }
        }

        static func render(_ s: UserStatus) -> String {
            var lines: [String] = []
            let state: String
            if s.corrupt {
                state = "record unreadable (treated as not enrolled; re-enroll with: patternlockd enroll \(s.user))"
            } else if !s.enrolled {
                state = "not enrolled"
            } else if s.locked {
                let until = s.retryAfter > 0 ? ", unlocks in \(minutesText(s.retryAfter))" : "; unlock with: patternlockd reset \(s.user)"
                state = "LOCKED since \(timestamp(s.lockedSince))\(until)"
            } else {
                state = "enrolled, \(s.failures) failure\(s.failures == 1 ? "" : "s"), \(s.remaining) attempt\(s.remaining == 1 ? "" : "s") left"
            }
            lines.append("\(s.user): \(state)")
            if s.enrolled { lines.append("  hash: PBKDF2-HMAC-SHA256, \(s.iterations) iterations") }
            if !s.recent.isEmpty {
                lines.append("  " + pad("When", 21) + pad("Service", 22) + pad("TTY", 14) + pad("Remote host", 18) + "UID")
                for f in s.recent {
                    lines.append("  " + pad(timestamp(f.when), 21) + pad(f.service.isEmpty ? "-" : f.service, 22)
                                 + pad(f.tty.isEmpty ? "-" : f.tty, 14) + pad(f.rhost.isEmpty ? "-" : f.rhost, 18) + String(f.uid))
                }
            }
            return lines.joined(separator: "\n")
        }

        static func pad(_ s: String, _ width: Int) -> String {
            let clean = String(s.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
            return clean.count >= width ? clean + " " : clean + String(repeating: " ", count: width - clean.count)
        }

        static func timestamp(_ t: Int64) -> String {
            var time = time_t(t)
            var tmv = tm()
            localtime_r(&time, &tmv)
            var buf = [CChar](repeating: 0, count: 32)
            strftime(&buf, buf.count, "%Y-%m-%d %H:%M:%S", &tmv)
            return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
    }
}
