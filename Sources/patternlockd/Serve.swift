// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import CPatternLockShims
import PatternLock
import PatternLockDaemon
import PatternLockFleet
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

extension PatternLockd {
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the daemon in the foreground (systemd starts it from patternlockd.socket).",
            discussion: """
                Keeps each user's pattern as a peppered PBKDF2-HMAC-SHA256 hash in the state \
                directory and answers the line protocol described in PROTOCOL.md (installed \
                with the documentation: /usr/share/doc/patternlockd/ from the Debian package, \
                /usr/local/share/doc/patternlock/ after make install) on a Unix socket. \
                Logs go to stderr (the journal under systemd); patterns never do.

                The pepper is read from $CREDENTIALS_DIRECTORY/patternlock.key when systemd \
                passes one, else from --key-file, which is created (32 random bytes, mode \
                0600) when missing, with a log line. Back it up: without it no pattern can be \
                verified. A start that fails (the socket taken, a bad key) removes the key and \
                the state directory it created.

                At start the daemon measures this CPU and picks the iteration count that \
                makes one verify take about --budget milliseconds (never below 600000).

                Exit status: 0 after SIGTERM or SIGINT, 1 when it cannot start (the reason \
                is logged), 64 when its command line is refused (an unknown option, a value \
                out of range, --store in a build without PostgreSQL support).
                """)

        @Option(help: ArgumentHelp("The Unix socket to listen on, unless systemd passes one.", valueName: "path"))
        var socket: String = SocketOptions.defaultPath

        @Option(help: ArgumentHelp("Where the per-user records live (created with mode 0700).", valueName: "dir"))
        var stateDir: String = "/var/lib/patternlock"

        @Option(help: ArgumentHelp("The pepper: 32 random bytes, mode 0600, outside the state directory.", valueName: "file"))
        var keyFile: String = KeyFile.defaultPath

        @Option(
            help: ArgumentHelp(
                "Seconds after which a lockout lifts by itself, up to \(LockoutPolicy.maxUnlockAfter) (a year); 0 means only `patternlockd reset` unlocks.",
                valueName: "seconds"))
        var unlockAfter: Int64 = 0

        @Option(help: ArgumentHelp("Time one verify should take, in milliseconds; sets the iteration count.", valueName: "ms"))
        var budget: Int = Calibration.defaultBudgetMilliseconds

        @Option(help: ArgumentHelp("Use this iteration count instead of calibrating (at least 600000).", valueName: "n"))
        var iterations: Int?

        @OptionGroup(title: "Enroll policy") var policyOptions: PolicyOptions

        @OptionGroup(title: "Fleet (one PostgreSQL database for many hosts)") var storeOptions: Fleet.StoreOptions

        func validate() throws {
            guard (0...LockoutPolicy.maxUnlockAfter).contains(unlockAfter) else {
                throw ValidationError(
                    "--unlock-after must be 0 (only an administrator unlocks) or a number of seconds up to \(LockoutPolicy.maxUnlockAfter) (a year); it was \(unlockAfter)."
                )
            }
            guard budget >= 1 && budget <= 60_000 else { throw ValidationError("--budget must be between 1 and 60000 milliseconds.") }
            if let iterations, iterations < Credential.minimumIterations || iterations > Credential.maximumIterations {
                throw ValidationError("--iterations must be between \(Credential.minimumIterations) and \(Credential.maximumIterations).")
            }
            _ = try storeOptions.parsedURL()
        }

        func run() throws {
            umask(0o077)
            signal(SIGPIPE, SIG_IGN)
            // The daemon holds the key and every request's pattern: no core of it,
            // however it is started (nothing in systemd's unit does this for it).
            if pl_set_undumpable() != 0 {
                Log.warning("cannot turn off core dumps (\(Errno.current)); a crash could leave patterns and the key in one")
            }
            // What this start created, undone (newest first) when it fails: a daemon
            // that cannot start must not leave a fresh key or state directory behind.
            var undo: [() -> Void] = []
            func die(_ message: String) throws -> Never {
                for step in undo.reversed() { step() }
                Log.error(message)
                throw ExitCode(1)
            }
            // Checked before anything is created.
            do { try Listener.checkFree(path: socket) } catch { try die(error.description) }
            let policy: EnrollPolicy
            switch policyOptions.makePolicy() {
            case .failure(let e): try die(e.description)
            case .success(let p): policy = p
            }

            let databaseURL = try storeOptions.parsedURL()
            let stateExisted = Self.exists(stateDir)
            var fileStore: FileStore?
            if databaseURL == nil {
                do {
                    fileStore = try FileStore(directory: stateDir, exclusive: true, policy: LockoutPolicy(unlockAfter: unlockAfter))
                } catch { try die(error.description) }
            }
            if !stateExisted && fileStore != nil {
                let dir = stateDir
                undo.append {
                    _ = Sys.unlink("\(dir)/.lock")
                    _ = Glibc.rmdir(dir)
                }
            }
            let key = KeyFile.resolvePath(configured: keyFile)
            let keyExisted = Self.exists(key.path)
            let keyDirectoryExisted = Self.exists(Sys.splitPath(key.path).0)
            let pepper: Pepper
            do {
                pepper = try KeyFile.load(
                    path: key.path, create: true, isCredential: key.isCredential,
                    stateDirectory: fileStore == nil ? nil : stateDir,
                    existingRecords: fileStore?.users().count ?? 0)
            } catch {
                if !keyExisted && Self.exists(key.path) { _ = Sys.unlink(key.path) }
                try die(error.description)
            }
            if !keyExisted {
                let path = key.path
                undo.append {
                    _ = Sys.unlink(path)
                    if !keyDirectoryExisted { _ = Glibc.rmdir(Sys.splitPath(path).0) }
                }
                Log.warning(
                    "created a new key \(key.path) (32 random bytes, mode 0600). Back it up: without it no enrolled pattern can be verified."
                )
            }

            let backend = SHA256Backend.default
            var target: Int
            if let iterations {
                target = iterations
                Log.info("using \(target) iterations (--iterations), SHA-256 \(backend)")
            } else {
                let rate = Calibration.iterationsPerSecond(backend: backend)
                target = Calibration.iterations(forMilliseconds: budget, rate: rate)
                Log.info("calibrated \(target) iterations for \(budget) ms per verify (SHA-256 \(backend), \(Int(rate)) iterations/s)")
            }
            let store: any Store
            if let fileStore {
                store = fileStore
            } else {
                #if PostgreSQL
                guard let databaseURL else { return }
                do {
                    let fleet = try Fleet.open(
                        databaseURL, passwordFile: storeOptions.storePasswordFile, pepper: pepper,
                        proposal: .init(iterations: target, unlockAfter: unlockAfter),
                        report: { Log.warning($0) })
                    if fleet.iterations != target || fleet.policy.unlockAfter != unlockAfter {
                        Log.info(
                            "the fleet's settings apply: \(fleet.iterations) iterations, unlock after \(fleet.policy.unlockAfter) s (change them with patternlockd db settings)"
                        )
                    }
                    target = fleet.iterations
                    store = fleet
                } catch { try die(error.description) }
                #else
                try die(FleetSupport.notBuilt)
                #endif
            }
            let service = PatternService(
                store: store, pepper: pepper, targetIterations: target,
                backend: backend, accountUID: { Accounts.uid(of: $0) })

            // The ranking is built once here, so neither enroll nor verify waits for it.
            let modelStart = Calibration.now()
            _ = policy.ranking.keys.count
            Log.info(
                "enroll policy: \(PolicyOptions.summary(policy)) (guessing model ready in \(Int((Calibration.now() - modelStart) * 1000)) ms)"
            )

            let listener: (fd: Int32, created: Bool)
            do { listener = try Listener.open(path: socket) } catch { try die(error.description) }
            let server = Server(handler: RequestHandler(service: service, policy: policy), listenFD: listener.fd)

            // SIGTERM/SIGINT are taken by one thread with sigwait, which stops the accept loop.
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGTERM)
            sigaddset(&signals, SIGINT)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            let waitSet = signals
            _ = spawnThread { [server] in
                var set = waitSet
                var sig: Int32 = 0
                sigwait(&set, &sig)
                Log.info("stopping on signal \(sig)")
                server.stop()
            }
            Log.info(
                listener.created
                    ? "listening on \(socket) (state \(store.location), key \(key.path))"
                    : "listening on the socket from systemd (state \(store.location))")
            server.run()
            if listener.created { _ = Sys.unlink(socket) }
            Log.info("stopped")
        }

        private static func exists(_ path: String) -> Bool {
            if case .success = Sys.lstat(path) { return true }
            return false
        }
    }
}
