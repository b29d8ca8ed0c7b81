// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "patternlock",
    products: [
        .executable(name: "patternlockd", targets: ["patternlockd"]),
        .library(name: "PatternLock", targets: ["PatternLock"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // SHA-256 compression with SHA-NI (x86-64) / ARMv8 SHA-2, chosen at run time.
        .target(name: "CSHA256"),
        // What Swift cannot spell: SO_PEERCRED, getrandom, explicit_bzero.
        .target(name: "CPatternLockShims"),
        // Pattern rules, crypto, credentials, lockout, store. No sockets.
        .target(name: "PatternLock", dependencies: ["CSHA256", "CPatternLockShims"]),
        .executableTarget(
            name: "patternlockd",
            dependencies: [
                "PatternLock", "CPatternLockShims",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // The PAM module's C sources; the shipped .so is linked by `make` with plain cc.
        .target(name: "CPamPatternLock", linkerSettings: [.linkedLibrary("pam")]),
        .testTarget(name: "PatternLockTests", dependencies: ["PatternLock"], exclude: ["Vectors"]),
        // PatternLock too: the module and the CLI must word a lockout alike.
        .testTarget(name: "CPamPatternLockTests", dependencies: ["CPamPatternLock", "PatternLock"]),
        // Protocol, record and PHC parsers under libFuzzer (`make fuzz`); without
        // -DFUZZING a corpus replayer (`make fuzz-replay`).
        .executableTarget(name: "PatternLockFuzz", dependencies: ["PatternLock"], path: "Fuzz/Swift"),
    ],
    swiftLanguageModes: [.v6]
)
