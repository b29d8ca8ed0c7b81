import ArgumentParser
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

extension PatternLockd {
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user's pattern (root, or the user itself with its current pattern).",
            discussion: "Afterwards the PAM module skips that user and the password prompt follows.")

        @OptionGroup var socketOptions: SocketOptions

        @Argument(help: "The user whose pattern to delete (default: you).")
        var user: String?

        func validate() throws { _ = try targetUser(user) }

        func run() throws {
            let user = try targetUser(user)
            var current: String?
            if geteuid() != 0 {
                PatternInput.showGrid(title: "Confirm with your current pattern for \(user).")
                guard let c = PatternInput.read(prompt: "Current pattern: "), !c.isEmpty else {
                    throw fail(ClientError(description: "No pattern was entered; nothing was removed.", code: Exit.invalid))
                }
                current = c
            }
            do {
                let reply = try DaemonConnection.request(.remove(user: user, current: current.map { SecretBytes($0) }), socket: socketOptions.path)
                guard reply == .ok else { throw failure(for: reply, user: user) }
                print("The pattern of \(user) is removed.")
            } catch let error as ClientError {
                throw fail(error)
            }
        }
    }
}
