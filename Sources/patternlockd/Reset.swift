// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

extension PatternLockd {
    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unlock a user: clear its failure count and lockout (root only). The pattern stays.",
            discussion: """
                See who is locked first with: patternlockd status

                Says whether the user was locked ("unlocked") or not ("was not locked"). \
                Exit status: 0 done, 3 no pattern by that name (nothing to reset), 5 not root, \
                6 daemon (or its fleet database) unreachable, 7 daemon error, 64 usage error.
                """)

        @OptionGroup var socketOptions: SocketOptions

        @Argument(help: "The user to unlock.")
        var user: String?

        @Flag(help: "Unlock every user.")
        var all = false

        func validate() throws {
            if all && user != nil { throw ValidationError("Give a user or --all, not both.") }
            if !all && user == nil { throw ValidationError("Say which user to unlock (patternlockd reset alice), or use --all.") }
            if let user, !UserName.isValid(user) { throw ValidationError("'\(user)' is not a valid user name.") }
        }

        func run() throws {
            do {
                let request: Request = all ? .resetAll : .reset(user: user ?? "")
                guard geteuid() == 0 else {
                    // Asked all the same, so the refusal is in the daemon's log (a warning);
                    // the answer is known, and the sentence below says more.
                    _ = try? DaemonConnection.request(request, socket: socketOptions.address)
                    throw notRoot()
                }
                let reply = try DaemonConnection.request(request, socket: socketOptions.address)
                if case .notEnrolled = reply, let user {
                    // A record can outlive its account, so the daemon is asked first.
                    guard Accounts.uid(of: user) != nil else {
                        throw ClientError(
                            description:
                                "There is no user \(user) on this system, and no pattern under that name; there is nothing to reset. Check the name with: getent passwd \(user)",
                            code: Exit.notEnrolled)
                    }
                    throw ClientError(description: "\(user) has no pattern; there is nothing to reset.", code: Exit.notEnrolled)
                }
                guard case .okReset(let cleared, let locked) = reply else { throw failure(for: reply, user: user ?? "every user") }
                print(Self.sentence(user: all ? nil : user, cleared: cleared, locked: locked))
            } catch let error as ClientError {
                throw fail(error)
            }
        }

        /// What a reset did, from the daemon's count of cleared and locked users.
        static func sentence(user: String?, cleared: Int, locked: Int) -> String {
            guard let user else {
                if cleared == 0 { return "No user was locked or had failed attempts; nothing changed." }
                let others = cleared - locked
                var parts: [String] = []
                if locked > 0 { parts.append("unlocked \(locked) user\(locked == 1 ? "" : "s")") }
                if others > 0 {
                    parts.append(
                        "cleared the failure count\(others == 1 ? "" : "s") of \(others) user\(others == 1 ? "" : "s") who \(others == 1 ? "was" : "were") not locked"
                    )
                }
                let text = parts.joined(separator: "; ")
                return text.prefix(1).uppercased() + text.dropFirst() + "."
            }
            if locked > 0 { return "\(user) is unlocked: the lockout and the failure count are cleared." }
            if cleared > 0 { return "\(user) was not locked; the failure count is cleared." }
            return "\(user) was not locked and had no failed attempts; nothing changed."
        }

        /// Only root resets. A user asking about itself is told what it can do: wait
        /// for a timed unlock, or ask an administrator.
        private func notRoot() -> ClientError {
            let named = user ?? "every user"
            let command = "patternlockd reset \(all ? "--all" : named)"
            var text = "Only an administrator (root) can reset pattern unlock. "
            if let user, let me = Accounts.currentUserName, UserName.same(me, user),
                case .status(let s)? = try? DaemonConnection.request(.status(user: user), socket: socketOptions.address)
            {
                if s.corrupt {
                    text += ClientWording.recordUnreadable(user: user)
                } else if s.locked {
                    text += LockoutWording.locked(user: user, retryAfter: s.retryAfter)
                } else if s.enrolled {
                    text += "Pattern unlock for \(user) is not locked (\(s.remaining) attempt\(s.remaining == 1 ? "" : "s") left)."
                } else {
                    text += "\(user) has no pattern to unlock."
                }
            } else {
                text += "Ask an administrator to run: \(command)"
            }
            return ClientError(description: text, code: Exit.denied)
        }
    }
}
