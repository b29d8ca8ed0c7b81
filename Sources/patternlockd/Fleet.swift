// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if PostgreSQL
import PatternLockPostgres
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Fleet mode: the daemon's records in one PostgreSQL database shared by many hosts.
enum Fleet {
    static let credentialName = "patternlock.dbpass"

    #if PostgreSQL
    static let isAvailable = true
    #else
    static let isAvailable = false
    #endif

    static let notBuilt = """
        This patternlockd was built without PostgreSQL support, so it cannot use --store postgresql://... \
        Run patternlockd-fleet instead: install the package patternlockd-postgresql, or build it with \
        make fleet and install it with make install FLEET=1. Or leave out --store to keep the records in --state-dir.
        """

    /// Options shared by `serve` and the `db` commands.
    struct StoreOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "Keep the records in this PostgreSQL database, shared by every host of a fleet (libpq URI: postgresql://ROLE@HOST:PORT/DB?sslmode=verify-full&sslrootcert=CA.pem, or postgresql://ROLE@/DB?host=/socket/dir). Never put a password in it.",
                valueName: "uri"))
        var store: String?

        @Option(
            help: ArgumentHelp(
                "A file holding the database password (one line, mode 0600 or 0640). Under systemd the credential patternlock.dbpass is used instead.",
                valueName: "file"))
        var storePasswordFile: String?

        func parsedURL() throws -> DatabaseURL? {
            guard let store else {
                if storePasswordFile != nil { throw ValidationError("--store-password-file needs --store postgresql://...") }
                return nil
            }
            return try Fleet.parse(store)
        }
    }

    /// The same options for the `db` commands, where --store is required (and
    /// `--help` shows it so).
    struct RequiredStoreOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "The fleet's PostgreSQL database (libpq URI: postgresql://ROLE@HOST:PORT/DB?sslmode=verify-full&sslrootcert=CA.pem, or postgresql://ROLE@/DB?host=/socket/dir). Never put a password in it.",
                valueName: "uri"))
        var store: String

        @Option(
            help: ArgumentHelp(
                "A file holding the database password (one line, mode 0600 or 0640). Under systemd the credential patternlock.dbpass is used instead.",
                valueName: "file"))
        var storePasswordFile: String?

        func parsedURL() throws -> DatabaseURL? { try Fleet.parse(store) }
    }

    static func parse(_ store: String) throws -> DatabaseURL {
        guard Fleet.isAvailable else { throw ValidationError(Fleet.notBuilt) }
        do { return try DatabaseURL(parsing: store) } catch { throw ValidationError(error.description) }
    }

    /// The database password: the systemd credential when there is one, else the
    /// file, else none (peer or trust authentication over a Unix socket). Never from
    /// argv or the environment, and never logged.
    static func password(file: String?) throws(StoreError) -> String? {
        var path = file
        if let dir = getenvString("CREDENTIALS_DIRECTORY"), !dir.isEmpty,
            case .success = Sys.lstat("\(dir)/\(credentialName)")
        {
            path = "\(dir)/\(credentialName)"
        }
        guard let path else { return nil }
        let fd: Int32
        // No symbolic link: the file itself must be the administrator's.
        switch Sys.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) {
        case .failure(let e):
            throw .refused(
                "Cannot open the database password file \(path): \(e). Create it with the role's password on one line, mode 0600.")
        case .success(let f): fd = f
        }
        defer { Sys.close(fd) }
        guard case .success(let st) = Sys.fstat(fd), st.st_mode & S_IFMT == S_IFREG else {
            throw .refused("The database password file \(path) is not a regular file.")
        }
        // Whoever may change it chooses which database, and so which credentials, this
        // host trusts: as for the key, only root or the daemon's own user.
        guard st.st_uid == 0 || st.st_uid == geteuid() else {
            throw .refused(
                "The database password file \(path) belongs to uid \(st.st_uid), not to root or the daemon's user. Fix it with: chown root \(path)"
            )
        }
        guard st.st_mode & 0o027 == 0 else {
            throw .refused(
                "The database password file \(path) may be read by others or changed by its group (mode \(String(st.st_mode & 0o7777, radix: 8))). Fix it with: chmod 600 \(path)"
            )
        }
        guard case .success(var bytes) = Sys.readAll(fd, upTo: 1025), bytes.count <= 1024 else {
            throw .refused("The database password file \(path) cannot be read or is longer than 1024 bytes.")
        }
        defer { wipe(&bytes) }
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty, let text = String(validating: bytes, as: UTF8.self) else {
            throw .refused("The database password file \(path) is empty or not UTF-8.")
        }
        return text
    }

    /// Loads the pepper for a fleet host: it must exist (every host gets a copy of
    /// the fleet's key; a new one here would not match the others).
    static func pepper(keyFile: String) throws -> Pepper {
        let key = KeyFile.resolvePath(configured: keyFile)
        // `serve` would make a new key here, and a new key never matches the fleet's.
        if !key.isCredential, case .failure(let e) = Sys.lstat(key.path), e == .noEntry {
            throw StoreError.refused(
                "The key file \(key.path) does not exist. Every host of a fleet uses the fleet's one key: copy it here from a host of the fleet (mode 0600, owned by root), or give its path with --key-file FILE. Do not start patternlockd serve to create one: a new key would not match the fleet's."
            )
        }
        return try KeyFile.load(path: key.path, create: false, isCredential: key.isCredential)
    }

    #if PostgreSQL
    static func open(
        _ url: DatabaseURL, passwordFile: String?, pepper: Pepper, proposal: PostgresStore.Proposal?,
        migrate: Bool = true, report: (@Sendable (String) -> Void)? = nil
    ) throws(StoreError) -> PostgresStore {
        let password = try Fleet.password(file: passwordFile)
        return try PostgresStore(
            url: url, password: password, pepper: pepper, proposal: proposal, migrate: migrate, report: report)
    }
    #endif
}

extension PatternLockd {
    struct Db: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "db",
            abstract: "Set up and fill a fleet's PostgreSQL database (fleet-capable builds: make fleet).",
            subcommands: [Init.self, Import.self, Tag.self, Settings.self])

        struct Init: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Create or migrate the patternlock tables, for sites whose daemons' role has no DDL rights.",
                discussion: """
                    Run it as a role that may create tables in the database. The daemons' role then \
                    needs only SELECT on patternlock_schema, SELECT, INSERT, UPDATE and DELETE on \
                    patternlock_settings, patternlock_users and patternlock_failures, and USAGE on \
                    patternlock_failures_id_seq.
                    """)
            @OptionGroup var storeOptions: Fleet.RequiredStoreOptions

            func validate() throws {
                _ = try storeOptions.parsedURL()
            }

            func run() throws {
                #if PostgreSQL
                guard let url = try storeOptions.parsedURL() else { return }
                do {
                    let password = try Fleet.password(file: storeOptions.storePasswordFile)
                    try PostgresStore.initialize(url: url, password: password)
                } catch {
                    printError(error.description)
                    throw ExitCode(1)
                }
                print("The patternlock tables in \(url) are at schema version \(PostgresStore.schemaVersion).")
                #else
                printError(Fleet.notBuilt)
                throw ExitCode(1)
                #endif
            }
        }

        struct Tag: ParsableCommand {
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
                _ = try storeOptions.parsedURL()
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

            func run() throws {
                #if PostgreSQL
                guard let url = try storeOptions.parsedURL() else { return }
                do {
                    let pepper = try Fleet.pepper(keyFile: keyFile)
                    // Opening checks that the key is the fleet's before anything is read.
                    let store = try Fleet.open(
                        url, passwordFile: storeOptions.storePasswordFile, pepper: pepper, proposal: nil,
                        migrate: false)
                    let found = try store.untaggedCredentials()
                    let record = try store.ownerTagsRecord(pepper: pepper)
                    // Names come from the database, which a writer without the key may
                    // fill with control sequences that hide lines in root's terminal.
                    let shown = PatternLockd.Status.escaped
                    for name in found.invalidNames {
                        print(
                            "\(shown(name)): this user name is not one an account can have (shown escaped), and no daemon writes one, so the row was left untagged. Find out who can write patternlock_users, then delete the row with SQL."
                        )
                    }
                    for user in found.unreadable {
                        print(
                            "\(user): the credential is not a valid PHC string, so it cannot be tagged; re-enroll the user (patternlockd enroll \(user))."
                        )
                    }
                    for copy in found.copies {
                        let rows = copy.sharing.count == 1 ? "the row" : "the rows"
                        let others = copy.sharing.map(shown).joined(separator: ", ")
                        print(
                            "\(copy.user): the credential has the same salt as \(rows) of \(others), and the daemons never draw a salt twice: one was copied from another, so it was left untagged. Re-enroll \(copy.user) (patternlockd enroll \(copy.user)), and find out who can write patternlock_users."
                        )
                    }
                    var skipped = found.invalidNames.count + found.unreadable.count + found.copies.count
                    if found.untagged.isEmpty {
                        if yes, record == .none { try store.recordOwnerTags(pepper: pepper) }
                        print(
                            skipped == 0
                                ? "Every credential in \(url) has its owner tag: nothing to do."
                                : "Every other credential in \(url) has its owner tag.")
                        if skipped > 0 { throw ExitCode(1) }
                        return
                    }
                    if yes, record != .none, againBecause == nil {
                        printError(Self.refusal(record, url: url, firstTime: firstTime))
                        throw ExitCode(1)
                    }
                    if yes, record == .none {
                        printError(
                            "The database \(url) holds no record of an earlier tagging: either this is the fleet's first db tag --yes since its daemons were upgraded to owner tags, or someone who can write patternlock_settings erased the record, and then the untagged rows are theirs and may hold another user's credential."
                        )
                        guard firstTime else {
                            printError(
                                "Nothing was tagged. If this is the fleet's first tagging, right after the upgrade, run again with --yes --first-time; otherwise re-enroll those users (patternlockd enroll USER)."
                            )
                            throw ExitCode(1)
                        }
                    }
                    if let againBecause { print("Tagging again because: \(againBecause)") }
                    var tagged = 0, would = 0
                    for row in found.untagged {
                        if let stored = row.uid, UInt32(exactly: stored) == nil {
                            skipped += 1
                            print(
                                "\(row.user): the database's uid \(stored) is no uid, so it was left untagged; re-enroll the user (patternlockd enroll \(row.user))."
                            )
                            continue
                        }
                        guard let uid = row.uid.flatMap({ UInt32(exactly: $0) }) ?? Accounts.uid(of: row.user) else {
                            skipped += 1
                            print(
                                "\(row.user): no uid in the database and no account \(row.user) here, so left untagged; re-enroll the user on a host that has the account (patternlockd enroll \(row.user))."
                            )
                            continue
                        }
                        guard yes else {
                            would += 1
                            print("\(row.user) (uid \(uid)): would be tagged.")
                            continue
                        }
                        let fresh = row.credential.bound(user: row.user, uid: uid, pepper: pepper)
                        if try store.tagCredential(user: row.user, uid: uid, previous: row.credential, with: fresh) {
                            tagged += 1
                            print("\(row.user) (uid \(uid)): tagged.")
                        } else {
                            skipped += 1
                            print("\(row.user): the row changed while this ran, so it was left as it is; run again.")
                        }
                    }
                    if !yes {
                        print(
                            "\(would) credential\(would == 1 ? "" : "s") would be tagged. If nobody but the daemons wrote patternlock_users, run again with --yes."
                        )
                        if record == .none {
                            print(
                                "The database holds no record that the owner tags were done: this is the fleet's first db tag since the upgrade, or someone who can write patternlock_settings removed the record. Only for the first, run again with --yes --first-time."
                            )
                        } else {
                            print(Self.refusal(record, url: url, firstTime: false))
                        }
                    } else {
                        try store.recordOwnerTags(pepper: pepper)
                        print("Tagged \(tagged) credential\(tagged == 1 ? "" : "s") in \(url).")
                    }
                    if skipped > 0 { throw ExitCode(1) }
                } catch let e as StoreError {
                    printError(e.description)
                    throw ExitCode(1)
                }
                #else
                printError(Fleet.notBuilt)
                throw ExitCode(1)
                #endif
            }

            #if PostgreSQL
            /// Why a `--yes` is refused once the database records that the tags were done.
            static func refusal(_ record: PostgresStore.OwnerTagsRecord, url: DatabaseURL, firstTime: Bool) -> String {
                let said: String
                switch record {
                case .done(let at?): said = "records that the owner tags were done (\(PatternLockd.Status.timestamp(at)))"
                case .done(nil): said = "records that the owner tags were done"
                case .notTheKeys, .none:
                    said =
                        "records that the owner tags were done, but the record was not made with the fleet's key (someone without the key wrote it)"
                }
                return (firstTime ? "--first-time does not apply: this is not the fleet's first tagging. " : "")
                    + "The database \(url) \(said): every credential the daemons wrote since carries its tag, so an untagged row now was written by someone without the key and may be another user's credential. Nothing was tagged. Re-enroll those users (patternlockd enroll USER); to tag them anyway, run again with --yes --again-because REASON."
            }
            #endif
        }

        struct Import: ParsableCommand {
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

            func validate() throws {
                _ = try storeOptions.parsedURL()
            }

            /// The directory `path` names, symbolic links followed; nil when it is none.
            static func resolvedDirectory(_ path: String) -> String? {
                guard let real = realpath(path, nil) else { return nil }
                defer { free(real) }
                let resolved = String(cString: real)
                var st = stat()
                guard lstat(resolved, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return nil }
                return resolved
            }

            func run() throws {
                #if PostgreSQL
                guard let url = try storeOptions.parsedURL() else { return }
                do {
                    let pepper = try Fleet.pepper(keyFile: keyFile)
                    // FileStore would create a missing directory: a mistyped path is an error.
                    // Under systemd /var/lib/patternlock is a link to /var/lib/private/patternlock,
                    // and FileStore takes no link: the directory it points to is read.
                    guard let directory = Self.resolvedDirectory(stateDir) else {
                        throw StoreError.refused(
                            "There is no state directory \(stateDir) to import from. Give the one patternlockd serve used with --state-dir DIR (under systemd: /var/lib/private/patternlock)."
                        )
                    }
                    // Under systemd the directory is the daemon's DynamicUser's, not root's.
                    let files = try FileStore(directory: directory, ownedByAnyone: true)
                    var records: [UserRecord] = []
                    var untagged = 0
                    for user in files.users() {
                        do throws(StoreError) {
                            if let r = try files.load(user) { records.append(r) }
                        } catch {
                            throw StoreError.refused(
                                "The record of \(user) in \(stateDir) cannot be imported: \(error.reason) Re-enroll the user or move the file away, then import again."
                            )
                        }
                    }
                    // The fleet takes only credentials whose owner tag names their user
                    // and uid under the fleet's key (issue 22): a tagged record made with
                    // another key stops the whole import before the database is touched (an
                    // empty one would take that key); an untagged one is tagged now.
                    for (i, r) in records.enumerated() {
                        guard let uid = r.uid ?? Accounts.uid(of: r.user) else {
                            throw StoreError.refused(
                                "The record of \(r.user) in \(stateDir) has no uid and there is no account \(r.user) now: nothing was imported. Remove it with: patternlockd remove \(r.user)"
                            )
                        }
                        switch r.credential.isBound(user: r.user, uid: uid, pepper: pepper) {
                        case true?: break
                        case false?:
                            throw StoreError.refused(
                                "The record of \(r.user) in \(stateDir) was not made with the key in \(keyFile) (or not for \(r.user)): nothing was imported. Import with the key file the host's daemon used (--key-file), which must be the fleet's."
                            )
                        case nil:
                            untagged += 1
                            records[i].credential = r.credential.bound(user: r.user, uid: uid, pepper: pepper)
                        }
                        records[i].uid = uid
                    }
                    let store = try Fleet.open(
                        url, passwordFile: storeOptions.storePasswordFile, pepper: pepper,
                        proposal: .init(
                            iterations: records.map(\.credential.iterations).max()
                                ?? Credential.minimumIterations, unlockAfter: 0))
                    // The key check above proves the database's key is this host's; the
                    // records were made with this key if their state dir's key is it.
                    // A user the database already has is left as it is: a re-run, or an
                    // import after the fleet is in use, never lowers a count, lifts a lock
                    // or brings an old pattern back.
                    var added = 0
                    for r in records {
                        if try store.insertIfAbsent(r) { added += 1 }
                    }
                    let kept = records.count - added
                    print(
                        "Imported \(added) record\(added == 1 ? "" : "s") from \(stateDir) into \(url)"
                            + (kept > 0 ? "; \(kept) already there, left as \(kept == 1 ? "it is" : "they are")." : "."))
                    if untagged > 0 {
                        print(
                            "\(untagged) record\(untagged == 1 ? " was" : "s were") made before owner tags and cannot show which key \(untagged == 1 ? "it was" : "they were") made with: tagged now with the key in \(keyFile). If that is not the key the host's daemon used, those patterns fail until re-enrolled."
                        )
                    }
                } catch let e as StoreError {
                    printError(e.description)
                    throw ExitCode(1)
                } catch {
                    printError("\(error)")
                    throw ExitCode(1)
                }
                #else
                printError(Fleet.notBuilt)
                throw ExitCode(1)
                #endif
            }
        }

        struct Settings: ParsableCommand {
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
                _ = try storeOptions.parsedURL()
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

            func run() throws {
                #if PostgreSQL
                guard let url = try storeOptions.parsedURL() else { return }
                do {
                    let store = try Fleet.open(
                        url, passwordFile: storeOptions.storePasswordFile,
                        pepper: try Fleet.pepper(keyFile: keyFile), proposal: nil, migrate: false)
                    let now = try store.update(iterations: iterations, unlockAfter: unlockAfter)
                    print("iterations=\(now.iterations) unlock_after=\(now.unlockAfter)")
                } catch let e as StoreError {
                    printError(e.description)
                    throw ExitCode(1)
                } catch {
                    printError("\(error)")
                    throw ExitCode(1)
                }
                #else
                printError(Fleet.notBuilt)
                throw ExitCode(1)
                #endif
            }
        }
    }
}
