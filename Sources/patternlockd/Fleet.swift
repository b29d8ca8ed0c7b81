// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockFleet
import PatternLockWire
#if PostgreSQL
import PatternLockPostgres
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Fleet mode: the daemon's records in one PostgreSQL database shared by many hosts.
/// The logic lives in PatternLockFleet (trait-free, unit-tested) and
/// PatternLockPostgres; the commands here parse, call and print.
enum Fleet {
    #if PostgreSQL
    static let isAvailable = true
    #else
    static let isAvailable = false
    #endif

    /// The password file, shared by `serve` and the `db` commands.
    struct PasswordOption: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "A file holding the database password (one line, mode 0600 or 0640). Under systemd the credential patternlock.dbpass is used instead.",
                valueName: "file"))
        var storePasswordFile: String?
    }

    /// `serve`'s fleet options: without --store the records stay in --state-dir.
    struct StoreOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "Keep the records in this PostgreSQL database, shared by every host of a fleet (libpq URI: postgresql://ROLE@HOST:PORT/DB?sslmode=verify-full&sslrootcert=CA.pem, or postgresql://ROLE@/DB?host=/socket/dir). Never put a password in it.",
                valueName: "uri"))
        var store: String?

        @OptionGroup var password: PasswordOption
        var storePasswordFile: String? { password.storePasswordFile }

        func parsedURL() throws -> DatabaseURL? {
            guard let store else {
                if storePasswordFile != nil { throw ValidationError("--store-password-file needs --store postgresql://...") }
                return nil
            }
            return try Fleet.parse(store)
        }
    }

    /// The `db` commands' options, where --store is required (and `--help` shows it so).
    struct RequiredStoreOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "The fleet's PostgreSQL database (libpq URI: postgresql://ROLE@HOST:PORT/DB?sslmode=verify-full&sslrootcert=CA.pem, or postgresql://ROLE@/DB?host=/socket/dir). Never put a password in it.",
                valueName: "uri"))
        var store: String

        @OptionGroup var password: PasswordOption
        var storePasswordFile: String? { password.storePasswordFile }

        /// Checked at parse time: a build without the trait refuses every `db` command here.
        func validate() throws { _ = try Fleet.parse(store) }

        func parsedURL() throws -> DatabaseURL { try Fleet.parse(store) }
    }

    /// The one not-built guard: every --store goes through it, at parse time (exit 64).
    static func parse(_ store: String) throws -> DatabaseURL {
        guard Fleet.isAvailable else { throw ValidationError(FleetSupport.notBuilt) }
        do { return try DatabaseURL(parsing: store) } catch { throw ValidationError(error.description) }
    }

    /// Runs a `db` command's work: its sentence on stderr and exit 1 on a store
    /// failure (or, with `anyError`, any failure).
    static func running(anyError: Bool = true, _ work: () throws -> Void) throws {
        do {
            try work()
        } catch let e as StoreError {
            printError(e.description)
            throw ExitCode(1)
        } catch let e as ExitCode {
            throw e
        } catch {
            guard anyError else { throw error }
            printError("\(error)")
            throw ExitCode(1)
        }
    }

    #if PostgreSQL
    static func open(
        _ url: DatabaseURL, passwordFile: String?, pepper: Pepper, proposal: PostgresStore.Proposal?,
        migrate: Bool = true, report: (@Sendable (String) -> Void)? = nil
    ) throws(StoreError) -> PostgresStore {
        let password = try DatabasePassword.read(file: passwordFile)
        return try PostgresStore(
            url: url, password: password, pepper: pepper, proposal: proposal, migrate: migrate, report: report)
    }
    #endif
}

/// A `db` command. Its options check --store at parse time, where a build without
/// the PostgreSQL trait refuses it; its work needs the PostgreSQL store.
protocol FleetCommand: ParsableCommand {
    var storeOptions: Fleet.RequiredStoreOptions { get }
    #if PostgreSQL
    func run(url: DatabaseURL) throws
    #endif
}

extension FleetCommand {
    func run() throws {
        let url = try storeOptions.parsedURL()
        #if PostgreSQL
        try run(url: url)
        #else
        _ = url
        #endif
    }
}

extension PatternLockd {
    struct Db: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "db",
            abstract: "Set up and fill a fleet's PostgreSQL database (fleet-capable builds: make fleet).",
            subcommands: [Init.self, Import.self, Tag.self, Settings.self])

        struct Init: FleetCommand {
            static let configuration = CommandConfiguration(
                abstract: "Create or migrate the patternlock tables, for sites whose daemons' role has no DDL rights.",
                discussion: """
                    Run it as a role that may create tables in the database. The daemons' role then \
                    needs only SELECT on patternlock_schema, SELECT, INSERT, UPDATE and DELETE on \
                    patternlock_settings, patternlock_users and patternlock_failures, and USAGE on \
                    patternlock_failures_id_seq.
                    """)
            @OptionGroup var storeOptions: Fleet.RequiredStoreOptions

            #if PostgreSQL
            func run(url: DatabaseURL) throws {
                try Fleet.running {
                    let password = try DatabasePassword.read(file: storeOptions.storePasswordFile)
                    try PostgresStore.initialize(url: url, password: password)
                }
                print("The patternlock tables in \(url) are at schema version \(PostgresStore.schemaVersion).")
            }
            #endif
        }

        struct Tag: FleetCommand {
            static let configuration = CommandConfiguration(
                abstract: "Give the credentials a fleet daemon wrote before owner tags their tags, trusting the rows as they are now.",
                discussion: """
                    A fleet takes only credentials whose owner tag names their user and uid under \
                    the fleet's key; a row a fleet daemon wrote before tags shows as unreadable in \
                    status and never verifies, and the daemon does not tag it on its own: a row \
                    copied onto another user before the upgrade would be tagged as that user's. \
                    Run this once after upgrading, as root on a host with the fleet's key, when \
                    you trust the rows as they are (nobody but the daemons wrote \
                    patternlock_users). It lists what it would tag and writes nothing without \
                    --yes. A row with no uid takes the uid of this host's account of that name. \
                    A row whose salt another row holds was copied from one to the other (the \
                    daemons never draw a salt twice): it is named and never tagged. The database \
                    then records, under the key, that the tags were done (a fleet that began \
                    with tags has that record from its start, and one whose rows all carry \
                    their tags gets it when a daemon with the key starts), and a later --yes is \
                    refused unless --again-because says why. Where there is no record, --yes \
                    also needs --first-time: a writer of the database can erase the record, \
                    and only the administrator knows whether this is the first tagging.
                    """)
            @OptionGroup var storeOptions: Fleet.RequiredStoreOptions

            @Option(help: ArgumentHelp("The fleet's key (the same on every host).", valueName: "file"))
            var keyFile: String = KeyFile.defaultPath

            @Flag(help: "Write the tags (without it, only list the rows that would be tagged).")
            var yes = false

            @Option(
                help: ArgumentHelp(
                    "Tag again although the database records that the tags were done, and say why. Every credential the daemons wrote since carries its tag, so an untagged row now was written by someone without the key: if it was copied from another user's row that is gone, that user's pattern will open this account on every host.",
                    valueName: "reason"))
            var againBecause: String?

            @Flag(
                help: ArgumentHelp(
                    "State that this is the fleet's first tagging, where the database holds no record of an earlier one. Use it only right after upgrading a fleet whose daemons predate owner tags; at any other time a missing record means someone who can write patternlock_settings erased it, and the untagged rows are theirs."
                ))
            var firstTime = false

            func validate() throws {
                if firstTime, !yes {
                    throw ValidationError("--first-time goes with --yes: without --yes nothing is written.")
                }
                if let againBecause {
                    guard yes else { throw ValidationError("--again-because goes with --yes: without --yes nothing is written.") }
                    guard againBecause.contains(where: { !$0.isWhitespace }) else {
                        throw ValidationError(
                            "--again-because needs the reason the rows are to be tagged again, for instance --again-because \"restored patternlock_users from a backup made before the upgrade\"."
                        )
                    }
                }
            }

            #if PostgreSQL
            func run(url: DatabaseURL) throws {
                var done = true
                // A key file that cannot be loaded is reported by the parser, as it always was.
                try Fleet.running(anyError: false) {
                    let pepper = try FleetKey.pepper(keyFile: keyFile)
                    // Opening checks that the key is the fleet's before anything is read.
                    let store = try Fleet.open(
                        url, passwordFile: storeOptions.storePasswordFile, pepper: pepper, proposal: nil, migrate: false)
                    done = try OwnerTagging.run(
                        store.untaggedCredentials(), record: store.ownerTagsRecord(pepper: pepper),
                        request: .init(yes: yes, firstTime: firstTime, againBecause: againBecause), url: url,
                        pepper: pepper, accountUID: { Accounts.uid(of: $0) }, writer: store
                    ) { line in
                        switch line {
                        case .out(let text): print(text)
                        case .err(let text): printError(text)
                        }
                    }
                }
                if !done { throw ExitCode(1) }
            }
            #endif
        }

        struct Import: FleetCommand {
            static let configuration = CommandConfiguration(
                abstract: "Copy a host's file records (credentials, counts, locks, failures) into the fleet's database.",
                discussion: """
                    Run it as root on the host, with its daemon stopped, and with the fleet's key. \
                    A user the database already has is left as it is, so running it again, even \
                    after the fleet is in use, changes nothing. A key file that is not the fleet's \
                    is refused: the whole import stops before anything is written.
                    """)
            @OptionGroup var storeOptions: Fleet.RequiredStoreOptions

            @Option(help: ArgumentHelp("The file store to copy from.", valueName: "dir"))
            var stateDir: String = "/var/lib/patternlock"

            @Option(help: ArgumentHelp("The fleet's key (the same on every host).", valueName: "file"))
            var keyFile: String = KeyFile.defaultPath

            #if PostgreSQL
            func run(url: DatabaseURL) throws {
                try Fleet.running {
                    let pepper = try FleetKey.pepper(keyFile: keyFile)
                    let prepared = try FleetImport.prepare(
                        FleetImport.records(stateDir: stateDir), pepper: pepper, accountUID: { Accounts.uid(of: $0) },
                        stateDir: stateDir, keyFile: keyFile)
                    let store = try Fleet.open(
                        url, passwordFile: storeOptions.storePasswordFile, pepper: pepper,
                        proposal: .init(iterations: prepared.proposedIterations, unlockAfter: 0))
                    // The key check above proves the database's key is this host's; the
                    // records were made with this key if their state dir's key is it.
                    // A user the database already has is left as it is: a re-run, or an
                    // import after the fleet is in use, never lowers a count, lifts a lock
                    // or brings an old pattern back.
                    var added = 0
                    for r in prepared.records {
                        if try store.insertIfAbsent(r) { added += 1 }
                    }
                    for line in FleetImport.summary(prepared, added: added, stateDir: stateDir, url: url, keyFile: keyFile) {
                        print(line)
                    }
                }
            }
            #endif
        }

        struct Settings: FleetCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show or change the fleet's iteration target and timed unlock.",
                discussion: """
                    Every host counts by the database's settings. Locking follows a change at \
                    once; each daemon takes a new iteration target when it starts again.
                    """)
            @OptionGroup var storeOptions: Fleet.RequiredStoreOptions

            @Option(help: ArgumentHelp("The fleet's iteration target for new and re-hashed patterns.", valueName: "n"))
            var iterations: Int?

            @Option(help: ArgumentHelp("Seconds after which a lockout lifts by itself; 0 means only reset unlocks.", valueName: "seconds"))
            var unlockAfter: Int64?

            @Option(help: ArgumentHelp("The fleet's key (the same on every host).", valueName: "file"))
            var keyFile: String = KeyFile.defaultPath

            func validate() throws {
                if let iterations, iterations < Credential.minimumIterations || iterations > Credential.maximumIterations {
                    throw ValidationError(
                        "--iterations must be between \(Credential.minimumIterations) and \(Credential.maximumIterations).")
                }
                if let unlockAfter, !(0...LockoutPolicy.maxUnlockAfter).contains(unlockAfter) {
                    throw ValidationError(
                        "--unlock-after must be 0 (only an administrator unlocks) or a number of seconds up to \(LockoutPolicy.maxUnlockAfter) (a year); it was \(unlockAfter)."
                    )
                }
            }

            #if PostgreSQL
            func run(url: DatabaseURL) throws {
                try Fleet.running {
                    let store = try Fleet.open(
                        url, passwordFile: storeOptions.storePasswordFile,
                        pepper: try FleetKey.pepper(keyFile: keyFile), proposal: nil, migrate: false)
                    let now = try store.update(iterations: iterations, unlockAfter: unlockAfter)
                    print("iterations=\(now.iterations) unlock_after=\(now.unlockAfter)")
                }
            }
            #endif
        }
    }
}
