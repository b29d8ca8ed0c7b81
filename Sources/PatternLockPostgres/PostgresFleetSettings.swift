// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import PatternLock
import PatternLockFleet
import PostgresNIO

/// The fleet's one row of settings: the check value that proves every host holds
/// the same key, the iteration target, the timed unlock and the failure limit.
extension PostgresStore {
    /// The settings a host proposes when it is the first to use the database.
    public struct Proposal: Sendable {
        public var iterations: Int
        public var unlockAfter: Int64
        public init(iterations: Int, unlockAfter: Int64) {
            self.iterations = iterations
            self.unlockAfter = unlockAfter
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
        hexHMAC("patternlock fleet key check v1", pepper)
    }

    /// The record that every credential of the fleet carries its owner tag, made at
    /// `at` (the database's clock): only a holder of the key can write it, so a
    /// writer of the tables cannot make one, nor move its time.
    public static func ownerTagsCheck(_ pepper: Pepper, at: Int64) -> String {
        hexHMAC("patternlock fleet owner tags done v2 at=\(at)", pepper)
    }

    /// The record as the first builds with it wrote it, without its time: still a
    /// record that the tags were done (only the key makes it), its time unproven.
    static func ownerTagsCheckWithoutTime(_ pepper: Pepper) -> String {
        hexHMAC("patternlock fleet owner tags done v1", pepper)
    }

    /// The record's two columns for now (the database's clock), to be written together.
    static func newOwnerTagsRecord(_ client: PostgresConnection, pepper: Pepper) async throws -> (check: String, at: Int64) {
        let rows = try await client.query("SELECT floor(extract(epoch FROM clock_timestamp()))::bigint", logger: logger)
        var at: Int64 = 0
        for try await (t) in rows.decode(Int64.self) { at = t }
        return (ownerTagsCheck(pepper, at: at), at)
    }

    private static func hexHMAC(_ text: String, _ pepper: Pepper) -> String {
        HMACSHA256.authenticate(Array(text.utf8), key: pepper.bytes)
            .map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// Reads the fleet's settings (first storing `proposal` and this key's check
    /// value when the database has none) and refuses a key other than the fleet's.
    static func checkKey(
        _ connections: PostgresConnections, url: DatabaseURL, pepper: Pepper, proposal: Proposal?,
        timeout: Double
    ) throws(StoreError) -> Settings {
        let check = keyCheck(pepper)
        let settings: Settings?
        do {
            settings = try blocking(timeout) { () async throws -> Settings? in
                try await connections.withConnection { client -> Settings? in
                    if let p = proposal {
                        // A fleet that begins now begins with owner tags: its record says so.
                        let tags = try await newOwnerTagsRecord(client, pepper: pepper)
                        try await client.query(
                            """
                            INSERT INTO patternlock_settings (id, key_check, iterations, unlock_after, owner_tags_check, owner_tags_at)
                            SELECT 1, \(check), \(p.iterations), \(p.unlockAfter), \(tags.check), \(tags.at)
                            WHERE \(unescaped: PostgresStore.durableCommit)
                            ON CONFLICT (id) DO NOTHING
                            """)
                    }
                    let rows = try await client.query(
                        "SELECT key_check, iterations, unlock_after, max_failures FROM patternlock_settings WHERE id = 1")
                    for try await (k, i, u, m) in rows.decode((String, Int, Int64, Int).self) {
                        return Settings(keyCheck: k, iterations: i, unlockAfter: u, maxFailures: m)
                    }
                    return nil
                }
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
        try recordOwnerTagsIfEveryRowIsTagged(connections, url: url, pepper: pepper, timeout: timeout)
        return settings
    }

    /// A fleet that predates the record (schema 2) but whose daemons tagged every
    /// credential they wrote never runs `db tag --yes`, which alone wrote it: the
    /// first holder of the key to open the database writes it now, when no row is
    /// without its tag. It only makes `db tag` stricter: an untagged row written
    /// later, by someone without the key, is then tagged only with --again-because.
    /// A row without its tag (one a daemon wrote before tags) leaves the record to
    /// the administrator's `db tag --yes`.
    static func recordOwnerTagsIfEveryRowIsTagged(
        _ connections: PostgresConnections, url: DatabaseURL, pepper: Pepper, timeout: Double
    ) throws(StoreError) {
        do {
            try blocking(timeout) {
                try await connections.withConnection { client in
                    var missing = false
                    let record = try await client.query(
                        "SELECT owner_tags_check IS NULL FROM patternlock_settings WHERE id = 1")
                    for try await (m) in record.decode(Bool.self) { missing = m }
                    guard missing else { return }
                    var untagged = false
                    let rows = try await client.query("SELECT credential FROM patternlock_users")
                    for try await (phc) in rows.decode(String.self) {
                        // An unreadable row is no row `db tag` could tag: it does not hold the record back.
                        if let c = try? Credential(phc: phc), c.ownerTag == nil { untagged = true }
                    }
                    guard !untagged else { return }
                    let tags = try await newOwnerTagsRecord(client, pepper: pepper)
                    try await client.query(
                        """
                        UPDATE patternlock_settings SET owner_tags_check = \(tags.check), owner_tags_at = \(tags.at)
                        WHERE id = 1 AND owner_tags_check IS NULL AND \(unescaped: PostgresStore.durableCommit)
                        """)
                }
            }
        } catch {
            throw .unavailable(
                "Cannot record in \(url) that every credential carries its owner tag: \(error.description)")
        }
    }

    /// Whether the database records, under the key, that the owner tags were done.
    public func ownerTagsRecord(pepper: Pepper) throws(StoreError) -> OwnerTagsRecord {
        let stored = try call { client -> (String?, Int64?) in
            let rows = try await client.query(
                "SELECT owner_tags_check, owner_tags_at FROM patternlock_settings WHERE id = 1")
            for try await (check, at) in rows.decode((String?, Int64?).self) { return (check, at) }
            return (nil, nil)
        }
        guard let check = stored.0 else { return .none }
        // The time is under the HMAC: a writer who moves it unmakes the record.
        if let at = stored.1, constantTimeEquals(Array(check.utf8), Array(PostgresStore.ownerTagsCheck(pepper, at: at).utf8)) {
            return .done(at: at)
        }
        if constantTimeEquals(Array(check.utf8), Array(PostgresStore.ownerTagsCheckWithoutTime(pepper).utf8)) {
            return .done(at: nil)
        }
        return .notTheKeys
    }

    /// Records, under the key, that the owner tags were done (`db tag --yes`), with the database's time.
    public func recordOwnerTags(pepper: Pepper) throws(StoreError) {
        try call { client in
            let tags = try await PostgresStore.newOwnerTagsRecord(client, pepper: pepper)
            _ = try await client.query(
                """
                UPDATE patternlock_settings SET owner_tags_check = \(tags.check), owner_tags_at = \(tags.at)
                WHERE id = 1 AND \(unescaped: PostgresStore.durableCommit)
                """)
        }
    }

    /// Changes the fleet's iteration target or timed unlock (`patternlockd db
    /// settings`); returns the settings now in force.
    public func update(iterations: Int?, unlockAfter: Int64?) throws(StoreError) -> (iterations: Int, unlockAfter: Int64) {
        try call { client in
            let rows = try await client.query(
                """
                UPDATE patternlock_settings SET iterations = coalesce(\(iterations), iterations),
                    unlock_after = coalesce(\(unlockAfter), unlock_after)
                WHERE id = 1 AND \(unescaped: PostgresStore.durableCommit) RETURNING iterations, unlock_after
                """)
            for try await (i, u) in rows.decode((Int, Int64).self) { return (i, u) }
            throw StoreError.refused("The database has no fleet settings.")
        }
    }
}
#endif
