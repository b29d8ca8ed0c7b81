// SPDX-License-Identifier: Apache-2.0
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

/// Words an administrator used to faillock or fprintd types first (`list`,
/// `delete`, `--user`), answered with the command that does it instead of an
/// option error from the parser.
enum UnknownCommand {
    /// What each command does, in the words of the hint.
    static let commands: [(name: String, does: String)] = [
        ("serve", "runs the daemon"), ("enroll", "sets or changes a pattern"), ("verify", "checks a pattern"),
        ("status", "shows enrolled users, their failures and lockouts"), ("reset", "unlocks a user"),
        ("remove", "deletes a user's pattern"), ("policy", "shows the enroll policy"),
        ("benchmark", "measures PBKDF2 on this CPU"), ("db", "sets up and fills a fleet's PostgreSQL database"),
    ]

    /// faillock's, fprintd's and other tools' words for the same jobs.
    static let aliases: [String: String] = [
        "list": "status", "show": "status", "info": "status", "query": "status", "faillock": "status",
        "delete": "remove", "del": "remove", "rm": "remove", "unenroll": "remove", "erase": "remove",
        "unlock": "reset", "clear": "reset", "--reset": "reset",
        "add": "enroll", "set": "enroll", "change": "enroll", "passwd": "enroll", "new": "enroll",
        "check": "verify", "test": "verify", "auth": "verify",
        "start": "serve", "run": "serve", "daemon": "serve", "bench": "benchmark",
    ]

    /// What the root command itself accepts (swift-argument-parser's own flags).
    static let rootOptions: Set<String> = [
        "-h", "--help", "help", "--version", "--generate-completion-script",
        "--experimental-dump-help",
    ]

    /// The sentence for a first argument that is no command, or nil to let the
    /// parser go on (a command, one of its own flags, nothing at all).
    static func hint(for arguments: [String]) -> String? {
        guard let first = arguments.first, !first.isEmpty else { return nil }
        if rootOptions.contains(first) || commands.contains(where: { $0.name == first }) { return nil }
        if first.hasPrefix("--generate-completion-script=") { return nil }
        let list = "Commands: " + commands.map(\.name).joined(separator: ", ") + " (patternlockd --help)."
        if first == "--user" || first == "-u" {
            return
                "patternlockd takes the user as an argument, not \(first): patternlockd status USER shows one user, patternlockd reset USER unlocks one, patternlockd remove USER deletes a pattern."
        }
        let printable = TerminalText.escaped(first)
        guard let name = aliases[first.lowercased()] ?? closest(to: first.lowercased()),
            let command = commands.first(where: { $0.name == name })
        else { return "Unknown command '\(printable)'. \(list)" }
        return "Unknown command '\(printable)'. Did you mean: patternlockd \(command.name) (it \(command.does))? \(list)"
    }

    /// The command within two edits of `word` (a typo), if there is one.
    static func closest(to word: String) -> String? {
        let best = commands.map { (name: $0.name, distance: distance(word, $0.name)) }.min { $0.distance < $1.distance }
        guard let best, best.distance <= 2 else { return nil }
        return best.name
    }

    /// Levenshtein distance.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}

extension PatternLockd {
    /// Answers a first word that is no command before the parser sees it; usage
    /// errors exit 64 (EX_USAGE), like the parser's own.
    static func main() {
        if let hint = UnknownCommand.hint(for: Array(CommandLine.arguments.dropFirst())) {
            printError(hint)
            Glibc.exit(64)
        }
        main(nil)
    }
}
