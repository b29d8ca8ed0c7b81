import ArgumentParser
import PatternLock

extension PatternLockd {
    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unlock a user: clear its failure count and lockout (root only). The pattern stays.",
            discussion: "See who is locked first with: patternlockd status")

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
            let request: Request = all ? .resetAll : .reset(user: user ?? "")
            do {
                let reply = try DaemonConnection.request(request, socket: socketOptions.path)
                guard case .okCount(let n) = reply else { throw failure(for: reply, user: user ?? "every user") }
                if all {
                    print("Cleared the failure counts of \(n) user\(n == 1 ? "" : "s").")
                } else {
                    print("\(user ?? "") is unlocked: failure count cleared.")
                }
            } catch let error as ClientError {
                throw fail(error)
            }
        }
    }
}
