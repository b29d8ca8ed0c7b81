// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

@main
struct PatternLockd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patternlockd",
        abstract: "Android-style pattern unlock for sudo, su, login and screen lockers.",
        discussion: """
            A pattern is a path over a 3×3 grid of dots, typed as the digits of the dots \
            in order on the phone-keypad layout:

                1 2 3
                4 5 6
                7 8 9

            A straight move over an unused dot takes it too ("13" is 1-2-3); at least 4 \
            dots, each used once. Five wrong patterns in a row lock pattern unlock for \
            that user until an administrator runs `patternlockd reset USER`.

            `patternlockd serve` is the daemon (normally started by systemd). Every other \
            command talks to it over its socket.
            """,
        version: "patternlockd \(PatternLockVersion.current)",
        subcommands: [Serve.self, Enroll.self, Verify.self, Status.self, Reset.self, Remove.self, Policy.self, Benchmark.self, Db.self]
    )
}

/// The socket a client command talks to.
struct SocketOptions: ParsableArguments {
    static let defaultPath = "/run/patternlock/socket"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's socket (default: $PATTERNLOCK_SOCKET, else \(SocketOptions.defaultPath)).",
            valueName: "path"))
    var socket: String?

    var path: String {
        if let socket { return socket }
        if let env = environmentSocket { return env }
        return SocketOptions.defaultPath
    }

    private var environmentSocket: String? {
        guard let env = getenvString("PATTERNLOCK_SOCKET"), !env.isEmpty else { return nil }
        return env
    }

    /// The socket with where it came from and what to try, for the connection.
    var address: DaemonAddress { DaemonAddress(path: path, origin: origin, hint: hint) }

    /// Where `path` came from, for a message that says which setting to fix.
    var origin: String {
        if socket != nil { return "from --socket" }
        if environmentSocket != nil { return "from $PATTERNLOCK_SOCKET" }
        return "the default socket"
    }

    /// What to try when the daemon cannot be reached: systemd's socket unit where
    /// systemd runs and this is its socket, else starting the daemon by hand.
    var hint: String {
        guard path == SocketOptions.defaultPath else {
            let fix =
                socket != nil
                ? "check the path given to --socket" : "check $PATTERNLOCK_SOCKET, or unset it to use \(SocketOptions.defaultPath)"
            return "Is a patternlockd serve --socket \(path) running? If not, \(fix)."
        }
        if SocketOptions.systemdRuns {
            return "Is it running? Try: systemctl status patternlockd.socket"
        }
        return "Is it running? Start it as root with: patternlockd serve"
    }

    /// sd_booted(3): systemd is the init system when /run/systemd/system exists.
    static var systemdRuns: Bool {
        guard case .success(let st) = Sys.lstat("/run/systemd/system") else { return false }
        return st.st_mode & S_IFMT == S_IFDIR
    }
}
