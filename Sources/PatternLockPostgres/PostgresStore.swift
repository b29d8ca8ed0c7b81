#if PostgreSQL
import Dispatch
import PatternLock
import PostgresNIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The fleet's store: every host's daemon shares one PostgreSQL database, so one
/// enrolment is valid everywhere and the 5-guess budget is the fleet's, not each
/// host's. Each attempt is counted by one statement that increments the count only
/// while the user is not locked and returns the credential; it is committed
/// (synchronous commit) before the hash is computed. Every call has a deadline: a
/// database that is down, refusing or slow makes the store `unavailable` in time
/// for the PAM module's timeout, never success, and nothing is kept locally.
public final class PostgresStore: Store {
    public let url: DatabaseURL
    public let policy: LockoutPolicy
    /// The fleet's iteration target for new and re-hashed credentials.
    public let iterations: Int
    /// This host's name, written beside each failure it counts.
    public let hostName: String
    /// How long one database call may take before the store says `unavailable`.
    public let deadline: Double
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    /// Until when (monotonic seconds) calls fail at once: the database was just
    /// found unreachable. Requests queued behind one that waited out the deadline
    /// (a user's attempts are serialized) then answer at once instead of each
    /// waiting in turn, so every answer stays within the PAM module's timeout.
    private let downUntil = Mutex<Double>(0)
    /// How long a failure to reach the database is trusted before trying again.
    public static let retryAfterDown = 1.0

    public var location: String { url.description }

    /// Stands in where only a record's count and lock matter; matches no pattern.
    static let noCredential = Credential(
        iterations: Credential.minimumIterations, salt: [UInt8](repeating: 0, count: 16),
        hash: [UInt8](repeating: 0, count: Credential.hashSize))

    /// The settings a host proposes when it is the first to use the database.
    public struct Proposal: Sendable {
        public var iterations: Int
        public var unlockAfter: Int64
        public init(iterations: Int, unlockAfter: Int64) {
            self.iterations = iterations
            self.unlockAfter = unlockAfter
        }
    }

    /// Connects, migrates the schema when allowed, and checks this host's key
    /// against the fleet's check value (storing it, with `proposal`, when this is the
    /// first host). Throws a sentence that says what is wrong.
    public init(
        url: DatabaseURL, password: String?, pepper: Pepper, proposal: Proposal?, migrate: Bool = true,
        hostName: String = PostgresStore.localHostName(), deadline: Double = 1.5,
        startupTimeout: Double = 10
    ) throws(StoreError) {
        self.url = url
        self.hostName = hostName
        self.deadline = deadline
        let client = PostgresClient(configuration: try PostgresStore.configuration(url, password: password))
        self.client = client
        runner = Task.detached { await client.run() }
        do {
            try PostgresStore.prepareSchema(client, url: url, migrate: migrate, timeout: startupTimeout)
            let settings = try PostgresStore.checkKey(client, url: url, pepper: pepper, proposal: proposal, timeout: startupTimeout)
            policy = LockoutPolicy(maxFailures: settings.maxFailures, unlockAfter: settings.unlockAfter)
            iterations = settings.iterations
        } catch {
            runner.cancel()
            throw error
        }
    }

    deinit { runner.cancel() }

    public static var schemaVersion: Int { PostgresSchema.version }

    /// Creates or migrates the schema and nothing else (`patternlockd db init`).
    public static func initialize(url: DatabaseURL, password: String?, timeout: Double = 10) throws(StoreError) {
        let client = PostgresClient(configuration: try configuration(url, password: password))
        let runner = Task.detached { await client.run() }
        defer { runner.cancel() }
        try prepareSchema(client, url: url, migrate: true, timeout: timeout)
    }

    public static func localHostName() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count - 1) == 0 else { return "unknown" }
        return String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func configuration(_ url: DatabaseURL, password: String?) throws(StoreError) -> PostgresClient.Configuration {
        var config: PostgresClient.Configuration
        switch url.endpoint {
        case .unixSocket(let path):
            config = .init(unixSocketPath: path, username: url.user, password: password, database: url.database)
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS
            switch url.tlsMode {
            case .disable:
                tls = .disable
            case .require, .verifyCA, .verifyFull:
                var t = TLSConfiguration.makeClientConfiguration()
                switch url.tlsMode {
                case .require: t.certificateVerification = .none
                case .verifyCA: t.certificateVerification = .noHostnameVerification
                default: t.certificateVerification = .fullVerification
                }
                if let ca = url.rootCertificate {
                    guard case .success = Sys.lstat(ca) else {
                        throw .refused(
                            "The CA file \(ca) named by sslrootcert in --store cannot be read. Copy the database's CA certificate (PEM) there."
                        )
                    }
                    t.trustRoots = .file(ca)
                }
                tls = .require(t)
            }
            config = .init(host: host, port: port, username: url.user, password: password, database: url.database, tls: tls)
        }
        config.options.connectTimeout = .milliseconds(Int64(url.connectTimeout * 1000))
        // The server itself gives up on a statement or a row lock that takes too long,
        // and commits every count to disk before it answers.
        config.options.additionalStartupParameters = [
            ("application_name", "patternlockd"), ("statement_timeout", "1500"), ("lock_timeout", "1500"),
            ("synchronous_commit", "on"),
        ]
        config.options.maximumConnections = 16
        config.options.keepAliveBehavior = .init(frequency: .seconds(15))
        return config
    }

    // MARK: - Calling async postgres-nio from the daemon's threads

    private final class Outcome<T: Sendable>: Sendable {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
    }

    /// Runs `body` on the client and waits at most `seconds` for it. The daemon's
    /// connection threads are plain threads (not the concurrency pool), so they may block.
    static func blocking<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) throws(StoreError) -> T {
        let outcome = Outcome<T>()
        let task = Task.detached {
            let r: Result<T, any Error>
            do { r = .success(try await body()) } catch { r = .failure(error) }
            outcome.result.withLock { $0 = r }
            outcome.done.signal()
        }
        if outcome.done.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .timedOut {
            task.cancel()
            throw .unavailable("The database did not answer within \(seconds) seconds.")
        }
        switch outcome.result.withLock({ $0 }) {
        case .success(let v)?: return v
        case .failure(let e)?: throw PostgresStore.storeError(e)
        case nil: throw .unavailable("The database call ended without a result.")
        }
    }

    private func call<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) throws(StoreError) -> T {
        let client = self.client
        if downUntil.withLock({ $0 }) > Calibration.now() {
            throw .unavailable("The database could not be reached a moment ago; trying again in under \(PostgresStore.retryAfterDown) s.")
        }
        do {
            return try PostgresStore.blocking(deadline) { try await body(client) }
        } catch {
            if case .unavailable(let why) = error, !why.contains("SQLSTATE") {
                downUntil.withLock { $0 = Calibration.now() + PostgresStore.retryAfterDown }
            }
            throw error
        }
    }

    /// A database error as a sentence. Connection trouble, timeouts and a server
    /// shutting down are `unavailable`; the rest (permissions, constraints) too, as
    /// nothing about them is success — but they name what the server said.
    static func storeError(_ error: any Error) -> StoreError {
        if let e = error as? StoreError { return e }
        if let p = error as? PSQLError {
            if let message = p.serverInfo?[.message] {
                let state = p.serverInfo?[.sqlState] ?? "?"
                return .unavailable("The database refused: \(message) (SQLSTATE \(state)).")
            }
            return .unavailable("Cannot reach the database: \(p.code).")
        }
        return .unavailable("Cannot reach the database: \(error).")
    }

    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    // MARK: - Start: schema and key

    static func prepareSchema(_ client: PostgresClient, url: DatabaseURL, migrate: Bool, timeout: Double) throws(StoreError) {
        let current: Int?
        do {
            current = try blocking(timeout) { () async throws -> Int? in
                do {
                    let rows = try await client.query("SELECT max(version) FROM patternlock_schema")
                    for try await (v) in rows.decode(Int?.self) { return v }
                    return nil
                } catch  where sqlState(error) == "42P01" {  // undefined_table
                    return nil
                }
            }
        } catch {
            throw .unavailable(
                "Cannot use the database \(url): \(error.description) Check that PostgreSQL runs and that --store and the password are right."
            )
        }
        if let current, current > PostgresSchema.version {
            throw .refused(
                "The database \(url) has schema version \(current), newer than this patternlockd knows (\(PostgresSchema.version)). Upgrade patternlockd on this host to the version the other hosts run."
            )
        }
        if current == PostgresSchema.version { return }
        guard migrate else {
            throw .refused(
                "The database \(url) has no patternlock schema yet (or an older one). Create it with: patternlockd db init --store \(url)")
        }
        try migrateSchema(client, url: url, timeout: timeout)
    }

    static func migrateSchema(_ client: PostgresClient, url: DatabaseURL, timeout: Double) throws(StoreError) {
        do {
            try blocking(timeout) {
                try await client.withConnection { connection in
                    try await connection.withTransaction(logger: Logger(label: "patternlockd")) { c in
                        try await c.query(
                            "SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))", logger: Logger(label: "patternlockd"))
                        try await c.query(
                            "CREATE TABLE IF NOT EXISTS patternlock_schema (version integer NOT NULL)",
                            logger: Logger(label: "patternlockd"))
                        var version = 0
                        let rows = try await c.query(
                            "SELECT coalesce(max(version), 0) FROM patternlock_schema", logger: Logger(label: "patternlockd"))
                        for try await (v) in rows.decode(Int.self) { version = v }
                        while version < PostgresSchema.version {
                            version += 1
                            for statement in PostgresSchema.migrations[version] ?? [] {
                                try await c.query(PostgresQuery(unsafeSQL: statement), logger: Logger(label: "patternlockd"))
                            }
                            try await c.query(
                                "INSERT INTO patternlock_schema (version) VALUES (\(version))", logger: Logger(label: "patternlockd"))
                        }
                    }
                }
            }
        } catch {
            if case .unavailable(let why) = error, why.contains("42501") {
                throw .refused(
                    "The database role \(url.user) may not create the patternlock tables in \(url.database). Create them once with a role that may: patternlockd db init --store postgresql://OWNER@.../\(url.database); after that \(url.user) needs only SELECT, INSERT, UPDATE and DELETE on them."
                )
            }
            throw .unavailable("Cannot create the patternlock tables in \(url): \(error.description)")
        }
    }

    struct Settings: Sendable {
        var keyCheck: String
        var iterations: Int
        var unlockAfter: Int64
        var maxFailures: Int
    }

    /// A value derived from the key that shows whether two hosts hold the same key
    /// without telling anything about it.
    public static func keyCheck(_ pepper: Pepper) -> String {
        HMACSHA256.authenticate(Array("patternlock fleet key check v1".utf8), key: pepper.bytes)
            .map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static func checkKey(
        _ client: PostgresClient, url: DatabaseURL, pepper: Pepper, proposal: Proposal?,
        timeout: Double
    ) throws(StoreError) -> Settings {
        let check = keyCheck(pepper)
        let settings: Settings?
        do {
            settings = try blocking(timeout) { () async throws -> Settings? in
                if let p = proposal {
                    try await client.query(
                        """
                        INSERT INTO patternlock_settings (id, key_check, iterations, unlock_after)
                        VALUES (1, \(check), \(p.iterations), \(p.unlockAfter)) ON CONFLICT (id) DO NOTHING
                        """)
                }
                let rows = try await client.query(
                    "SELECT key_check, iterations, unlock_after, max_failures FROM patternlock_settings WHERE id = 1")
                for try await (k, i, u, m) in rows.decode((String, Int, Int64, Int).self) {
                    return Settings(keyCheck: k, iterations: i, unlockAfter: u, maxFailures: m)
                }
                return nil
            }
        } catch {
            throw .unavailable("Cannot read the fleet's settings from \(url): \(error.description)")
        }
        guard let settings else {
            throw .refused(
                "The database \(url) has no fleet settings yet. Start one host's patternlockd serve against it first, or run: patternlockd db import --store \(url)"
            )
        }
        guard constantTimeEquals(Array(settings.keyCheck.utf8), Array(check.utf8)) else {
            throw .refused(
                "This host's key does not match the key the fleet's records in \(url) were made with. Copy the fleet's key file (the same 32 bytes on every host) to this host's --key-file (or the credential patternlock.key) and start again; with another key every pattern would fail and lock its user out."
            )
        }
        return settings
    }

    // MARK: - Store

    public func now() -> Int64 {
        (try? call { client in
            let rows = try await client.query("SELECT floor(extract(epoch FROM clock_timestamp()))::bigint")
            for try await (t) in rows.decode(Int64.self) { return t }
            return Int64(time(nil))
        }) ?? Int64(time(nil))
    }

    public func load(_ user: String) -> Loaded {
        guard UserName.isValid(user) else { return .missing }
        do {
            return try call { client -> Loaded in
                let rows = try await client.query(
                    """
                    SELECT u.uid, u.credential, u.failures, u.locked_since, f.at, f.uid, f.service, f.tty, f.rhost, f.ruser, f.host
                    FROM patternlock_users u LEFT JOIN patternlock_failures f ON f.user_name = u.user_name
                    WHERE u.user_name = \(user) ORDER BY f.id
                    """)
                var record: UserRecord?
                var bad: String?
                for try await (uid, phc, failures, lockedSince, at, fuid, service, tty, rhost, ruser, host)
                    in rows.decode((Int64?, String, Int, Int64, Int64?, Int64?, String?, String?, String?, String?, String?).self)
                {
                    if record == nil {
                        guard let credential = try? Credential(phc: phc) else { bad = "the credential is not a valid PHC string"; continue }
                        record = UserRecord(
                            user: user, uid: uid.flatMap { UInt32(exactly: $0) }, credential: credential,
                            failures: failures, lockedSince: lockedSince)
                    }
                    if let at, let fuid, let service, let tty, let rhost, let ruser, let host {
                        record?.recent.append(
                            FailureEntry(
                                when: at, uid: UInt32(clamping: fuid), service: service, tty: tty,
                                rhost: rhost, ruser: ruser, host: host))
                    }
                }
                if let bad { return .corrupt(bad) }
                return record.map { .record($0) } ?? .missing
            }
        } catch {
            return .unavailable(error.description)
        }
    }

    /// Creates or replaces a record with its count, lock and failure history, in one transaction.
    public func save(_ record: UserRecord) throws(StoreError) {
        guard UserName.isValid(record.user) else { throw .refused("Invalid user name.") }
        let uid = record.uid.map { Int64($0) }
        try call { client in
            try await client.withTransaction(logger: Logger(label: "patternlockd")) { c in
                try await c.query(
                    """
                    INSERT INTO patternlock_users (user_name, uid, credential, failures, locked_since)
                    VALUES (\(record.user), \(uid), \(record.credential.phc), \(record.failures), \(record.lockedSince))
                    ON CONFLICT (user_name) DO UPDATE SET uid = EXCLUDED.uid, credential = EXCLUDED.credential,
                        failures = EXCLUDED.failures, locked_since = EXCLUDED.locked_since
                    """, logger: Logger(label: "patternlockd"))
                try await c.query(
                    "DELETE FROM patternlock_failures WHERE user_name = \(record.user)", logger: Logger(label: "patternlockd"))
                for f in record.recent {
                    try await c.query(
                        """
                        INSERT INTO patternlock_failures (user_name, at, uid, service, tty, rhost, ruser, host)
                        VALUES (\(record.user), \(f.when), \(Int64(f.uid)), \(f.service), \(f.tty), \(f.rhost), \(f.ruser), \(f.host))
                        """, logger: Logger(label: "patternlockd"))
                }
            }
        }
    }

    /// Adds a record with its count, lock and history unless the database already
    /// has one for the user (db import: a record in use is never overwritten).
    /// True when it was added.
    public func insertIfAbsent(_ record: UserRecord) throws(StoreError) -> Bool {
        guard UserName.isValid(record.user) else { throw .refused("Invalid user name.") }
        let uid = record.uid.map { Int64($0) }
        return try call { client in
            try await client.withTransaction(logger: Logger(label: "patternlockd")) { c in
                let rows = try await c.query(
                    """
                    INSERT INTO patternlock_users (user_name, uid, credential, failures, locked_since)
                    VALUES (\(record.user), \(uid), \(record.credential.phc), \(record.failures), \(record.lockedSince))
                    ON CONFLICT (user_name) DO NOTHING RETURNING 1
                    """, logger: Logger(label: "patternlockd"))
                var added = false
                for try await _ in rows { added = true }
                guard added else { return false }
                for f in record.recent {
                    try await c.query(
                        """
                        INSERT INTO patternlock_failures (user_name, at, uid, service, tty, rhost, ruser, host)
                        VALUES (\(record.user), \(f.when), \(Int64(f.uid)), \(f.service), \(f.tty), \(f.rhost), \(f.ruser), \(f.host))
                        """, logger: Logger(label: "patternlockd"))
                }
                return true
            }
        }
    }

    @discardableResult
    public func remove(_ user: String) throws(StoreError) -> Bool {
        guard UserName.isValid(user) else { return false }
        return try call { client in
            let rows = try await client.query("DELETE FROM patternlock_users WHERE user_name = \(user) RETURNING 1")
            for try await _ in rows.decode(Int.self) { return true }
            return false
        }
    }

    public func users() throws(StoreError) -> [String] {
        try call { client in
            let rows = try await client.query("SELECT user_name FROM patternlock_users ORDER BY user_name COLLATE \"C\"")
            var names: [String] = []
            for try await (name) in rows.decode(String.self) { names.append(name) }
            return names
        }
    }

    public func countAttempt(user: String, accountUID: UInt32?, entry: FailureEntry) -> AttemptCount {
        guard UserName.isValid(user), let accountUID else { return .missing }
        let uid = Int64(accountUID), peer = Int64(entry.uid), host = hostName
        let keep = UserRecord.recentLimit - 1
        do {
            return try call { client -> AttemptCount in
                // One statement: the increment only happens while the user is not
                // locked (or its timed lock is due), the attempt that reaches the limit
                // locks, the failure is written beside it, and the history is kept to
                // the newest entries. Concurrent attempts wait on the row. In an explicit
                // transaction, so the credential is handed out only once COMMIT has
                // answered: rows arrive before an implicit transaction commits.
                let counted = try await client.withTransaction(logger: Logger(label: "patternlockd")) { c -> AttemptCount? in
                    let rows = try await c.query(
                        """
                        WITH s AS (
                            SELECT floor(extract(epoch FROM clock_timestamp()))::bigint AS t, unlock_after, max_failures
                            FROM patternlock_settings WHERE id = 1),
                        up AS (
                            UPDATE patternlock_users AS u SET
                                failures = CASE WHEN u.locked_since <> 0 THEN 1 ELSE u.failures + 1 END,
                                locked_since = CASE WHEN (CASE WHEN u.locked_since <> 0 THEN 1 ELSE u.failures + 1 END) >= s.max_failures
                                               THEN greatest(s.t, 1) ELSE 0 END,
                                uid = coalesce(u.uid, \(uid))
                            FROM s
                            WHERE u.user_name = \(user) AND (u.uid IS NULL OR u.uid = \(uid))
                              AND (u.locked_since = 0 OR (s.unlock_after > 0 AND s.t >= u.locked_since + s.unlock_after))
                            RETURNING u.credential, u.failures, u.locked_since, s.t),
                        ins AS (
                            INSERT INTO patternlock_failures (user_name, at, uid, service, tty, rhost, ruser, host)
                            SELECT \(user), up.t, \(peer), \(entry.service), \(entry.tty), \(entry.rhost), \(entry.ruser), \(host) FROM up),
                        pruned AS (
                            DELETE FROM patternlock_failures f
                            WHERE EXISTS (SELECT 1 FROM up) AND f.user_name = \(user) AND f.id NOT IN (
                                SELECT id FROM patternlock_failures WHERE user_name = \(user) ORDER BY id DESC LIMIT \(keep)))
                        SELECT credential, failures, locked_since, t FROM up
                        """, logger: Logger(label: "patternlockd"))
                    var found: AttemptCount?
                    for try await (phc, failures, lockedSince, t) in rows.decode((String, Int, Int64, Int64).self) {
                        guard let credential = try? Credential(phc: phc) else { found = .corrupt; continue }
                        found = .counted(
                            UserRecord(
                                user: user, uid: accountUID, credential: credential, failures: failures,
                                lockedSince: lockedSince), now: t)
                    }
                    return found
                }
                if let counted { return counted }
                // Nothing counted: say why.
                let why = try await client.query(
                    """
                    SELECT u.uid, u.locked_since, s.unlock_after, floor(extract(epoch FROM clock_timestamp()))::bigint
                    FROM patternlock_users u, patternlock_settings s WHERE s.id = 1 AND u.user_name = \(user)
                    """)
                for try await (storedUID, lockedSince, unlockAfter, t) in why.decode((Int64?, Int64, Int64, Int64).self) {
                    if let storedUID, storedUID != uid { return .missing }
                    let record = UserRecord(
                        user: user, uid: accountUID, credential: PostgresStore.noCredential,
                        lockedSince: lockedSince)
                    let policy = LockoutPolicy(unlockAfter: unlockAfter)
                    return .locked(retryAfter: record.retryAfter(now: t, policy: policy))
                }
                return .missing
            }
        } catch {
            return .unavailable(error.description)
        }
    }

    public func recordSuccess(_ record: UserRecord) throws(StoreError) {
        let user = record.user
        try call { client in
            _ = try await client.query(
                """
                WITH c AS (UPDATE patternlock_users SET failures = 0, locked_since = 0 WHERE user_name = \(user) RETURNING user_name)
                DELETE FROM patternlock_failures f USING c WHERE f.user_name = c.user_name
                """)
        }
    }

    public func replaceCredential(user: String, previous: Credential, with fresh: Credential) throws(StoreError) {
        try call { client in
            _ = try await client.query(
                """
                UPDATE patternlock_users SET credential = \(fresh.phc) WHERE user_name = \(user) AND credential = \(previous.phc)
                """)
        }
    }

    public func reset(_ user: String) throws(StoreError) -> UserRecord? {
        guard UserName.isValid(user) else { return nil }
        return try call { client -> UserRecord? in
            let rows = try await client.query(
                """
                WITH old AS (
                    SELECT user_name, uid, credential, failures, locked_since FROM patternlock_users
                    WHERE user_name = \(user) FOR UPDATE),
                c AS (UPDATE patternlock_users u SET failures = 0, locked_since = 0 FROM old
                      WHERE u.user_name = old.user_name RETURNING u.user_name),
                d AS (DELETE FROM patternlock_failures f USING c WHERE f.user_name = c.user_name)
                SELECT uid, credential, failures, locked_since FROM old
                """)
            for try await (uid, phc, failures, lockedSince) in rows.decode((Int64?, String, Int, Int64).self) {
                return UserRecord(
                    user: user, uid: uid.flatMap { UInt32(exactly: $0) },
                    credential: (try? Credential(phc: phc)) ?? PostgresStore.noCredential,
                    failures: failures, lockedSince: lockedSince)
            }
            return nil
        }
    }

    // MARK: - Fleet settings (patternlockd db settings)

    /// Changes the fleet's iteration target or timed unlock; returns the settings now in force.
    public func update(iterations: Int?, unlockAfter: Int64?) throws(StoreError) -> (iterations: Int, unlockAfter: Int64) {
        try call { client in
            let rows = try await client.query(
                """
                UPDATE patternlock_settings SET iterations = coalesce(\(iterations), iterations),
                    unlock_after = coalesce(\(unlockAfter), unlock_after)
                WHERE id = 1 RETURNING iterations, unlock_after
                """)
            for try await (i, u) in rows.decode((Int, Int64).self) { return (i, u) }
            throw StoreError.refused("The database has no fleet settings.")
        }
    }
}
#endif
