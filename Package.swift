// swift-tools-version:6.1
// SPDX-License-Identifier: Apache-2.0
import PackageDescription

let package = Package(
    name: "patternlock",
    products: [
        .executable(name: "patternlockd", targets: ["patternlockd"]),
        .executable(name: "patternlock-screen", targets: ["patternlock-screen"]),
        .executable(name: "patternlock-setup", targets: ["patternlock-setup"]),
        .library(name: "PatternLock", targets: ["PatternLock"]),
    ],
    // Fleet mode (one PostgreSQL database for many hosts) needs SwiftNIO and
    // postgres-nio, which take minutes to build: only `--traits PostgreSQL`
    // (`make fleet`) builds them. The default daemon stays small and quick to build.
    traits: [
        .trait(name: "PostgreSQL", description: "The PostgreSQL store for fleets of hosts (serve --store postgresql://...)."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // SHA-256 compression with SHA-NI (x86-64) / ARMv8 SHA-2, chosen at run time.
        .target(name: "CSHA256"),
        // What Swift cannot spell: SO_PEERCRED, getrandom, explicit_bzero.
        .target(name: "CPatternLockShims"),
        // Pattern rules, crypto, credentials, lockout, the Store seam and the file store.
        // No server or listener, no wire words, no NIO (only the Unix-socket syscall wrappers).
        .target(name: "PatternLock", dependencies: ["CSHA256", "CPatternLockShims"]),
        // The contract with the PAM module and the CLI: lines, requests, replies, the
        // reason and error-code enums, and every sentence a user reads.
        .target(name: "PatternLockWire", dependencies: ["PatternLock"]),
        // The daemon as a library: server, listener, request handling and authorization,
        // accounts, logging, and the client side of the socket. Unit-tested without a socket.
        .target(name: "PatternLockDaemon", dependencies: ["PatternLockWire", "PatternLock", "CPatternLockShims"]),
        // A fleet's administration that needs no database connection: the database
        // password file's checks, `db import`'s validation and tagging, `db tag`'s
        // sorting of rows and its loop, and their sentences. Built with or without the
        // PostgreSQL trait, so Tests/PatternLockFleetTests run without a server.
        .target(name: "PatternLockFleet", dependencies: ["PatternLock", "PatternLockWire"]),
        // The PostgreSQL store. Without the PostgreSQL trait it compiles to nothing and pulls in no NIO.
        .target(
            name: "PatternLockPostgres",
            dependencies: [
                "PatternLock", "PatternLockFleet", "CPatternLockShims",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
            ]),
        .executableTarget(
            name: "patternlockd",
            dependencies: [
                "PatternLockDaemon", "PatternLockWire", "PatternLock", "PatternLockFleet", "CPatternLockShims",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .target(name: "PatternLockPostgres", condition: .when(traits: ["PostgreSQL"])),
            ]),
        // The lock screen's pure part: grid geometry, gesture tracking, the screen's
        // state and PAM conversation, the message framing with its PAM child, text
        // wrapping. No Wayland, cairo or xkb: unit-tested in Tests/PatternLockScreenTests.
        .target(name: "PatternLockScreen", dependencies: ["PatternLock", "PatternLockWire", "CPatternLockShims"]),
        // The setup window's pure part: its stages (PatternSetup) and polkit's text
        // agent read as events (AgentTranscript), on the lock screen's gestures, keys
        // and on-screen keyboard. Unit-tested in Tests/PatternLockScreenTests.
        .target(name: "PatternLockSetup", dependencies: ["PatternLockScreen", "PatternLock", "PatternLockWire"]),
        // The lock screen's Wayland protocol code (wayland-scanner output, committed with
        // scripts/gen-wayland-protocols) and the Linux calls Swift cannot spell.
        .target(name: "CWaylandClient", linkerSettings: [.linkedLibrary("wayland-client")]),
        .systemLibrary(name: "CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev", "libfontconfig-dev"])]),
        .systemLibrary(name: "CXKBCommon", pkgConfig: "xkbcommon", providers: [.apt(["libxkbcommon-dev"])]),
        // The setup window's cursor (libwayland-cursor: the desktop's cursor theme, or its built-in one).
        .systemLibrary(name: "CWaylandCursor", pkgConfig: "wayland-cursor", providers: [.apt(["libwayland-dev"])]),
        // The on-screen keyboard's keymap, read through xkbcommon (its own target so
        // that the unit tests compare it with xkbcommon's tables).
        .target(name: "PatternLockScreenKeymap", dependencies: ["PatternLockScreen", "CXKBCommon", "CPatternLockShims"]),
        // The drawing the lock screen and the setup window share (cairo): the grid and
        // its path, text filled as outlines, buttons, the one font face, wl_shm buffers.
        .target(name: "PatternLockPainting", dependencies: ["PatternLockScreen", "CCairo", "CWaylandClient", "CPatternLockShims"]),
        // The Wayland edge the lock screen and the setup window share: the seat (pointer,
        // touch, keyboard through xkbcommon, devices that come and go) and the poll turn
        // (a full socket waits for POLLOUT). Each program keeps its surface and its job.
        .target(
            name: "PatternLockWayland",
            dependencies: ["PatternLockScreen", "PatternLockScreenKeymap", "CWaylandClient", "CXKBCommon"]),
        .systemLibrary(name: "CPamClient", pkgConfig: "pam", providers: [.apt(["libpam0g-dev"])]),
        // patternlock-screen: the Wayland and xkb edges, the cairo renderer, the poll
        // loop and the PAM child (`make screen`; `make` does not build it).
        .executableTarget(
            name: "patternlock-screen",
            dependencies: [
                "PatternLockScreen", "PatternLockWire", "PatternLock", "CPatternLockShims", "CWaylandClient", "CCairo",
                "CXKBCommon", "CPamClient", "PatternLockScreenKeymap", "PatternLockPainting", "PatternLockWayland",
            ]),
        // The window that sets the pattern by drawing it (`make setup`): an xdg_toplevel,
        // the lock screen's drawing and keys, the daemon's CHECK and ENROLL.
        .executableTarget(
            name: "patternlock-setup",
            dependencies: [
                "PatternLockSetup", "PatternLockScreen", "PatternLockPainting", "PatternLockScreenKeymap", "PatternLockDaemon",
                "PatternLockWire", "PatternLock", "CPatternLockShims", "CWaylandClient", "CCairo", "CXKBCommon",
                "CWaylandCursor", "PatternLockWayland",
            ]),
        // The PAM module's C sources; the shipped .so is linked by `make` with plain cc.
        .target(name: "CPamPatternLock", linkerSettings: [.linkedLibrary("pam"), .linkedLibrary("systemd")]),
        .testTarget(name: "PatternLockTests", dependencies: ["PatternLock", "PatternLockWire"], exclude: ["Vectors"]),
        .testTarget(name: "PatternLockWireTests", dependencies: ["PatternLockWire", "PatternLock"]),
        // The Store promises, one suite for both stores: the file store always, and a
        // real PostgreSQL named by PATTERNLOCK_TEST_POSTGRES when built with the
        // PostgreSQL trait (`make test-store-contract`).
        .testTarget(
            name: "StoreContractTests",
            dependencies: [
                "PatternLock", .target(name: "PatternLockPostgres", condition: .when(traits: ["PostgreSQL"])),
            ]),
        .testTarget(name: "PatternLockFleetTests", dependencies: ["PatternLockFleet", "PatternLockWire", "PatternLock"]),
        // What the test targets share: the contract files (Tests/Contract) and the
        // one runner of the screens' JavaScript under node, which they hold to the core.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "PatternLockScreenTests",
            dependencies: [
                "PatternLockScreen", "PatternLockSetup", "PatternLockScreenKeymap", "CXKBCommon", "PatternLockWire",
                "PatternLock", "TestSupport",
            ]),
        .testTarget(name: "PatternLockDaemonTests", dependencies: ["PatternLockDaemon", "PatternLockWire", "PatternLock"]),
        // The wire and its wording too: the module and the CLI must word a reply alike.
        .testTarget(
            name: "CPamPatternLockTests", dependencies: ["CPamPatternLock", "PatternLockWire", "PatternLock", "TestSupport"]),
        // Protocol, record and PHC parsers under libFuzzer (`make fuzz`); without
        // -DFUZZING a corpus replayer (`make fuzz-replay`).
        .executableTarget(name: "PatternLockFuzz", dependencies: ["PatternLockWire", "PatternLock"], path: "Fuzz/Swift"),
    ],
    swiftLanguageModes: [.v6]
)
