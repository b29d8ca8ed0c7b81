// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
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
///
/// This file holds the store's state and how it connects; the other jobs live
/// beside it: PostgresBridge.swift (blocking calls with deadlines), PostgresProbe.swift
/// (the first connection, whose failure names its cause),
/// PostgresMigration.swift with PostgresSchema.swift (the tables),
/// PostgresFleetSettings.swift (key check, fleet settings) and
/// PostgresRecords.swift (the users' records: the `Store` seam).
public final class PostgresStore: Store {
    public let url: DatabaseURL
    public let policy: LockoutPolicy
    /// The fleet's iteration target for new and re-hashed credentials.
    public let iterations: Int
    /// This host's name, written beside each failure it counts.
    public let hostName: String
    /// How long one database call may take before the store says `unavailable`.
    public let deadline: Double
    let client: PostgresClient
    private let runner: Task<Void, Never>
    /// Until when (monotonic seconds) calls fail at once: the database was just
    /// found unreachable. Requests queued behind one that waited out the deadline
    /// (a user's attempts are serialized) then answer at once instead of each
    /// waiting in turn, so every answer stays within the PAM module's timeout.
    let downUntil = Mutex<Double>(0)

    /// The one logger every transaction and statement logs to: one label, made once.
    static let logger = Logger(label: "patternlockd")

    public var location: String { url.description }

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
            try PostgresStore.probe(url, password: password, timeout: startupTimeout)
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

    /// Creates or migrates the schema and nothing else (`patternlockd db init`).
    public static func initialize(url: DatabaseURL, password: String?, timeout: Double = 10) throws(StoreError) {
        let client = PostgresClient(configuration: try configuration(url, password: password))
        let runner = Task.detached { await client.run() }
        defer { runner.cancel() }
        try probe(url, password: password, timeout: timeout)
        try prepareSchema(client, url: url, migrate: true, timeout: timeout)
    }

    public static func localHostName() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count - 1) == 0 else { return "unknown" }
        return String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The TLS a TCP connection uses, nil for `sslmode=disable`.
    static func tlsConfiguration(_ url: DatabaseURL) throws(StoreError) -> TLSConfiguration? {
        guard url.tlsMode != .disable else { return nil }
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
        return t
    }

    static func configuration(_ url: DatabaseURL, password: String?) throws(StoreError) -> PostgresClient.Configuration {
        var config: PostgresClient.Configuration
        switch url.endpoint {
        case .unixSocket(let path):
            config = .init(unixSocketPath: path, username: url.user, password: password, database: url.database)
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS = try tlsConfiguration(url).map { .require($0) } ?? .disable
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
}
#endif
