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
    static let defaultPath = DaemonAddress.defaultPath

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's socket (default: $PATTERNLOCK_SOCKET, else \(SocketOptions.defaultPath)).",
            valueName: "path"))
    var socket: String?

    /// The socket with where it came from and what to try, for the connection.
    var address: DaemonAddress { DaemonAddress.resolve(socket: socket) }
}
