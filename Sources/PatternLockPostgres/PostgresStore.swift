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
/// beside it: PostgresBridge.swift (blocking calls with deadlines),
/// PostgresConnections.swift (the pool, which opens and checks every connection:
/// PostgresEndpointCheck.swift for the socket's listener, PostgresScramOnly.swift
/// for how the password may be asked), PostgresProbe.swift (the first connection,
/// whose failure names its cause),
/// PostgresMigration.swift with PostgresSchema.swift (the tables),
/// PostgresFleetSettings.swift (key check, fleet settings) and
/// PostgresRecords.swift (the users' records: the `Store` seam).
public final class PostgresStore: Store {
    public let url: DatabaseURL
    /// This host's failure limit: a count the database holds at or above it is a
    /// lock, whatever the database's settings say (a role that can write them must
    /// not buy guesses).
    public let maxFailures: Int
    /// The most iterations a credential from the database may ask for: a few times
    /// this host's own target. Above it the record is corrupt and never hashed (a
    /// row asking for 10^9 iterations would hold a verify for minutes).
    public let maximumIterations: Int
    /// The fleet's iteration target for new and re-hashed credentials (at most `maximumIterations`).
    public let iterations: Int
    /// The fleet's timed unlock as last read: every read of `policy` asks the
    /// database, so `db settings` applies to STATUS and FAIL at once; this is the
    /// answer when it cannot be asked.
    let lastUnlockAfter: Mutex<Int64>
    /// This host's name, written beside each failure it counts.
    public let hostName: String
    /// How long one database call may take before the store says `unavailable`.
    public let deadline: Double
    /// Every connection is opened and checked by the store (PostgresConnections.swift).
    let connections: PostgresConnections
    /// Until when (monotonic seconds) calls fail at once: the database was just
    /// found unreachable. Requests queued behind one that waited out the deadline
    /// (a user's attempts are serialized) then answer at once instead of each
    /// waiting in turn, so every answer stays within the PAM module's timeout.
    let downUntil = Mutex<Double>(0)
    /// Where the reason the database could not be used goes while serving (the
    /// daemon's log): a request's reply says only `store_unavailable`, and an
    /// administrator who changed pg_hba.conf or a certificate needs the sentence.
    let report: (@Sendable (String) -> Void)?
    /// The last reason reported and when (monotonic seconds): the same reason is
    /// said again at most once a minute, so a down database does not flood the log.
    let lastReport = Mutex<(why: String, at: Double)?>(nil)
    static let reportEvery = 60.0

    /// The one logger every transaction and statement logs to: one label, made once.
    static let logger = Logger(label: "patternlockd")

    public var location: String { url.description }

    /// Connects, migrates the schema when allowed, and checks this host's key
    /// against the fleet's check value (storing it, with `proposal`, when this is the
    /// first host). Throws a sentence that says what is wrong.
    public init(
        url: DatabaseURL, password: String?, pepper: Pepper, proposal: Proposal?, migrate: Bool = true,
        hostName: String = PostgresStore.localHostName(), deadline: Double = 1.5,
        startupTimeout: Double = 10, maxFailures: Int = LockoutPolicy.defaultMaxFailures,
        report: (@Sendable (String) -> Void)? = nil
    ) throws(StoreError) {
        self.url = url
        self.report = report
        self.maxFailures = maxFailures
        maximumIterations = PostgresStore.iterationCap(hostTarget: proposal?.iterations ?? Credential.minimumIterations)
        self.hostName = hostName
        self.deadline = deadline
        let connections = try PostgresConnections(url: url, password: password)
        self.connections = connections
        do {
            try PostgresStore.probe(connections, timeout: startupTimeout)
            try PostgresStore.checkSessionSettings(connections, url: url, timeout: startupTimeout)
            try PostgresStore.prepareSchema(connections, url: url, migrate: migrate, timeout: startupTimeout)
            let settings = try PostgresStore.checkKey(
                connections, url: url, pepper: pepper, proposal: proposal, timeout: startupTimeout)
            lastUnlockAfter = Mutex(settings.unlockAfter)
            iterations = min(settings.iterations, maximumIterations)
        } catch {
            connections.closeAll()
            throw error
        }
    }

    deinit { connections.closeAll() }

    /// Four times the host's own target: room for a fleet whose first host was
    /// faster, not for a row that asks for minutes of hashing.
    public static func iterationCap(hostTarget: Int) -> Int {
        min(4 * max(hostTarget, Credential.minimumIterations), Credential.maximumIterations)
    }

    /// A fleet's database may be written by a role without the key: it must not be
    /// able to strip an owner tag and have the credential used as an old one.
    public var acceptsUntaggedCredentials: Bool { false }

    /// This host's failure limit with the fleet's timed unlock as the database
    /// holds it now.
    public var policy: LockoutPolicy {
        let live = try? call { client -> Int64? in
            let rows = try await client.query("SELECT unlock_after FROM patternlock_settings WHERE id = 1")
            for try await (u) in rows.decode(Int64.self) { return u }
            return nil
        }
        let unlockAfter = lastUnlockAfter.withLock { last in
            if let live = live ?? nil { last = live }
            return last
        }
        return LockoutPolicy(maxFailures: maxFailures, unlockAfter: unlockAfter)
    }

    /// Creates or migrates the schema and nothing else (`patternlockd db init`).
    public static func initialize(url: DatabaseURL, password: String?, timeout: Double = 10) throws(StoreError) {
        let connections = try PostgresConnections(url: url, password: password)
        defer { connections.closeAll() }
        try probe(connections, timeout: timeout)
        try prepareSchema(connections, url: url, migrate: true, timeout: timeout)
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
            if url.tlsMode == .verifyCA { try checkVerifyCA(ca) }
            t.trustRoots = .file(ca)
        }
        return t
    }
}
#endif
