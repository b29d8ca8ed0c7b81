// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

/// The exit statuses (`ExitStatus`, documented in patternlockd(8)), by the names
/// the commands use.
enum Exit {
    static let wrong = ExitStatus.wrong
    static let locked = ExitStatus.locked
    static let notEnrolled = ExitStatus.notEnrolled
    static let invalid = ExitStatus.invalid
    static let denied = ExitStatus.denied
    static let unavailable = ExitStatus.unavailable
    static let daemonError = ExitStatus.daemonError
    /// For `--help`.
    static let summary = ExitStatus.summary
}

extension ExitStatus {
    var exitCode: ExitCode { ExitCode(rawValue) }
}

/// The reply's sentence and exit status (`ClientWording`).
func failure(for reply: Reply, user: String, current: Bool = false) -> ClientError {
    ClientWording.failure(for: reply, user: user, current: current)
}

/// Prints a client error and exits with its code.
func fail(_ error: ClientError) -> ExitCode {
    printError(error.description)
    return error.code.exitCode
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
            throw ValidationError(
                "You ran sudo as '\(name)', which is not an account this command can use. Name the user: sudo patternlockd \(command) USER (or root)."
            )
        }
        return name
    }
}
