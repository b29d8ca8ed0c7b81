import ArgumentParser
import PatternLock

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
        subcommands: [Serve.self, Enroll.self, Verify.self, Status.self, Reset.self, Remove.self, Policy.self, Benchmark.self, Db.self]
    )
}

/// The socket a client command talks to.
struct SocketOptions: ParsableArguments {
    static let defaultPath = "/run/patternlock/socket"

    @Option(name: .long, help: ArgumentHelp(
        "The daemon's socket (default: $PATTERNLOCK_SOCKET, else \(SocketOptions.defaultPath)).",
        valueName: "path"))
    var socket: String?

    var path: String {
        if let socket { return socket }
        if let env = getenvString("PATTERNLOCK_SOCKET"), !env.isEmpty { return env }
        return SocketOptions.defaultPath
    }
}
