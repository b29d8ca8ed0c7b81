// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

extension PatternLockd {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a pattern, as the PAM module does (a wrong one counts as a failed attempt).",
            discussion: """
                Reads one pattern from the terminal (echo off) or one line of stdin, after \
                asking the daemon whether the user has a pattern and is not locked.
                Exit status: 0 right, 1 wrong, 2 locked, 3 no pattern, 4 not a pattern \
                (not counted), 5 permission denied, 6 daemon unreachable, 7 daemon error, \
                64 usage error.
                """)

        @OptionGroup var socketOptions: SocketOptions

        @OptionGroup var layoutOptions: LayoutOptions

        @Argument(help: "The user whose pattern to check (default: you; others need root).")
        var user: String?

        func validate() throws { _ = try targetUser(user) }

        func run() throws {
            let user = try targetUser(user)
            do {
                // As the PAM module does: nobody types a pattern that cannot be checked.
                switch try DaemonConnection.request(.status(user: user), socket: socketOptions.address) {
                case .status(let s) where s.corrupt: throw failure(for: .error(.recordUnreadable), user: user)
                case .status(let s) where !s.enrolled: throw failure(for: .notEnrolled, user: user)
                case .status(let s) where s.locked: throw failure(for: .locked(retryAfter: s.retryAfter), user: user)
                case .status: break
                case let other: throw failure(for: other, user: user)
                }
                PatternInput.showGrid(title: "Pattern for \(user): type the dots in order.", layout: layoutOptions.layout)
                guard let typed = PatternInput.read(prompt: "Pattern: "), !typed.isEmpty else {
                    throw ClientError(description: "No pattern was entered. This entry was not counted.", code: Exit.invalid)
                }
                // Not a pattern: said here in full (the daemon's reply names only the
                // rule), and never sent.
                do { _ = try Pattern(typed: typed, layout: layoutOptions.layout) } catch {
                    throw ClientError(description: "\(error.description) This entry was not counted.", code: Exit.invalid)
                }
                var tty = ""
                if let name = ttyname(0) { tty = String(cString: name) }
                let context = AttemptContext(service: "patternlockd-verify", tty: tty, rhost: "", ruser: Accounts.currentUserName ?? "")
                let reply = try DaemonConnection.request(
                    .verify(user: user, pattern: SecretBytes(layoutOptions.layout.phoneDigits(typed)), context: context),
                    socket: socketOptions.address)
                guard reply == .ok || reply == .okWeak else { throw failure(for: reply, user: user) }
                print("Pattern accepted.")
                if reply == .okWeak { print(EntryWording.weakAdvice) }
            } catch let error as ClientError {
                throw fail(error)
            }
        }
    }
}
