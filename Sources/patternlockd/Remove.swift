// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

extension PatternLockd {
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user's pattern (root, or the user itself with its current pattern).",
            discussion: """
                Afterwards the PAM module skips that user and the password prompt follows.

                A user without a pattern exits 3 with nothing changed, before anything is \
                asked, so configuration management can treat 3 as "already absent". \
                \(Exit.summary)
                """)

        @OptionGroup var socketOptions: SocketOptions

        @OptionGroup var layoutOptions: LayoutOptions

        @Argument(help: "The user whose pattern to delete (default: you).")
        var user: String?

        func validate() throws { _ = try targetUser(user) }

        func run() throws {
            let user = try targetUser(user)
            do {
                // Known before any pattern is asked: a daemon that is down, a user with
                // nothing to remove, a lock that refuses the current pattern, a record
                // that cannot be read, which only root removes.
                let isRoot = geteuid() == 0
                switch try DaemonConnection.request(.status(user: user), socket: socketOptions.address) {
                case .status(let s) where s.corrupt && !isRoot: throw failure(for: .error(.recordUnreadable), user: user)
                // Root also removes a stale or unreadable record, which is not enrolled.
                case .status(let s) where !s.enrolled && !s.corrupt && (!isRoot || s.owner == .same):
                    throw ClientError(description: "\(user) has no pattern; nothing was removed.", code: Exit.notEnrolled)
                case .status(let s) where s.locked && geteuid() != 0:
                    throw ClientError(
                        description: LockoutWording.locked(user: user, retryAfter: s.retryAfter) + " Nothing was removed.",
                        code: Exit.locked)
                case .status: break
                // Root's REMOVE takes away whatever stands in the record's place, a
                // record the daemon cannot read now included: the cure `status` names.
                case .error(.storeFailed) where isRoot: break
                case .denied:
                    throw ClientError(
                        description: "You can remove only your own pattern; root can remove others (sudo patternlockd remove \(user)).",
                        code: Exit.denied)
                case let other: throw failure(for: other, user: user)
                }
                var current: String?
                if geteuid() != 0 {
                    PatternInput.showGrid(title: "Confirm with your current pattern for \(user).", layout: layoutOptions.layout)
                    guard let c = PatternInput.read(prompt: "Current pattern: "), !c.isEmpty else {
                        throw ClientError(description: "No pattern was entered; nothing was removed.", code: Exit.invalid)
                    }
                    current = layoutOptions.layout.phoneDigits(c)
                }
                let reply = try DaemonConnection.request(
                    .remove(user: user, current: current.map { SecretBytes($0) }), socket: socketOptions.address)
                switch reply {
                case .ok: print("The pattern of \(user) is removed.")
                case .okMovedAside(let path):
                    print(
                        "The pattern of \(user) is removed. A directory with files in it stood in its place; it is moved aside, "
                            + "not deleted, to \(TerminalText.escaped(path)). Look through it, then delete it by hand.")
                case .notEnrolled: throw ClientError(description: "\(user) has no pattern; nothing was removed.", code: Exit.notEnrolled)
                default: throw failure(for: reply, user: user, current: current != nil)
                }
            } catch let error as ClientError {
                throw fail(error)
            }
        }
    }
}
