// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import PatternLock
import PatternLockFleet
import PostgresNIO
#if canImport(Glibc)
import Glibc
#endif

/// The users' records: the `Store` seam on the fleet's tables. The attempt is
/// counted and committed before the credential is handed to the hash; success
/// clears it; a database error is never success.
extension PostgresStore {
    /// Stands in where only a record's count and lock matter; matches no pattern.
    static let noCredential = Credential(
        iterations: Credential.minimumIterations, salt: [UInt8](repeating: 0, count: 16),
        hash: [UInt8](repeating: 0, count: Credential.hashSize))

    public func now() -> Int64 {
        (try? call { client in
            let rows = try await client.query("SELECT floor(extract(epoch FROM clock_timestamp()))::bigint")
            for try await (t) in rows.decode(Int64.self) { return t }
            return Int64(time(nil))
        }) ?? Int64(time(nil))
    }

    public func load(_ user: String) throws(StoreError) -> UserRecord? {
        guard UserName.isValid(user) else { return nil }
        let cap = maximumIterations
        // A row that is not a valid record is the answer, not a failure to reach the
        // database: it comes back as a value, so the store is not marked down for it.
        return try call { client -> Result<UserRecord?, StoreError> in
            let rows = try await client.query(
                """
                SELECT u.uid, u.credential, u.failures, u.locked_since, f.at, f.uid, f.service, f.tty, f.rhost, f.ruser, f.host,
                    f.caller, f.session, f.seat
                FROM patternlock_users u LEFT JOIN patternlock_failures f ON f.user_name = u.user_name
                WHERE u.user_name = \(user) ORDER BY f.id
                """)
            var record: UserRecord?
            var bad: String?
            for try await (uid, phc, failures, lockedSince, at, fuid, service, tty, rhost, ruser, host, caller, session, seat)
                in rows.decode(
                    (
                        Int64?, String, Int, Int64, Int64?, Int64?, String?, String?, String?, String?, String?, Int64?,
                        String?, String?
                    ).self)
            {
                if record == nil {
                    guard let credential = try? Credential(phc: phc) else { bad = "the credential is not a valid PHC string"; continue }
                    guard credential.iterations <= cap else {
                        bad =
                            "the credential asks for \(credential.iterations) iterations, more than this host's cap of \(cap)"
                        continue
                    }
                    guard failures >= 0, lockedSince >= 0 else {
                        bad = "the record holds a negative failure count or lock time, which no host writes"
                        continue
                    }
                    record = UserRecord(
                        user: user, uid: uid.flatMap { UInt32(exactly: $0) }, credential: credential,
                        failures: failures, lockedSince: lockedSince)
                }
                if let at, let fuid, let service, let tty, let rhost, let ruser, let host {
                    record?.recent.append(
                        FailureEntry(
                            when: at, uid: UInt32(clamping: fuid), service: service, tty: tty,
                            rhost: rhost, ruser: ruser, host: host, caller: caller.flatMap { UInt32(exactly: $0) },
                            session: session ?? "", seat: seat ?? ""))
                }
            }
            if let bad { return .failure(.corrupt("The record of \(user) in the database is not valid: \(bad).")) }
            return .success(record)
        }.get()
    }

    /// Creates or replaces a record with its count, lock and failure history, in one transaction.
    public func save(_ record: UserRecord) throws(StoreError) {
        guard UserName.isValid(record.user) else { throw .refused("\(record.user) is not a valid user name.") }
        let uid = record.uid.map { Int64($0) }
        try call { client in
            try await client.withTransaction(logger: PostgresStore.logger) { c in
                try await c.query(
                    """
                    INSERT INTO patternlock_users (user_name, uid, credential, failures, locked_since)
                    SELECT \(record.user), \(uid), \(record.credential.phc), \(record.failures), \(record.lockedSince)
                    WHERE \(unescaped: PostgresStore.durableCommit)
                    ON CONFLICT (user_name) DO UPDATE SET uid = EXCLUDED.uid, credential = EXCLUDED.credential,
                        failures = EXCLUDED.failures, locked_since = EXCLUDED.locked_since
                    """, logger: PostgresStore.logger)
                try await c.query(
                    "DELETE FROM patternlock_failures WHERE user_name = \(record.user)", logger: PostgresStore.logger)
                for f in record.recent {
                    try await c.query(
                        """
                        INSERT INTO patternlock_failures (user_name, at, uid, service, tty, rhost, ruser, host, caller, session, seat)
                        VALUES (\(record.user), \(f.when), \(Int64(f.uid)), \(f.service), \(f.tty), \(f.rhost), \(f.ruser), \(f.host),
                            \(f.caller.map { Int64($0) }), \(f.session), \(f.seat))
                        """, logger: PostgresStore.logger)
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
            try await client.withTransaction(logger: PostgresStore.logger) { c in
                let rows = try await c.query(
                    """
                    INSERT INTO patternlock_users (user_name, uid, credential, failures, locked_since)
                    SELECT \(record.user), \(uid), \(record.credential.phc), \(record.failures), \(record.lockedSince)
                    WHERE \(unescaped: PostgresStore.durableCommit)
                    ON CONFLICT (user_name) DO NOTHING RETURNING 1
                    """, logger: PostgresStore.logger)
                var added = false
                for try await _ in rows { added = true }
                guard added else { return false }
                for f in record.recent {
                    try await c.query(
                        """
                        INSERT INTO patternlock_failures (user_name, at, uid, service, tty, rhost, ruser, host, caller, session, seat)
                        VALUES (\(record.user), \(f.when), \(Int64(f.uid)), \(f.service), \(f.tty), \(f.rhost), \(f.ruser), \(f.host),
                            \(f.caller.map { Int64($0) }), \(f.session), \(f.seat))
                        """, logger: PostgresStore.logger)
                }
                return true
            }
        }
    }

    @discardableResult
    public func remove(_ user: String) throws(StoreError) -> Removal {
        guard UserName.isValid(user) else { return .none }
        return try call { client in
            let rows = try await client.query(
                "DELETE FROM patternlock_users WHERE user_name = \(user) AND \(unescaped: PostgresStore.durableCommit) RETURNING 1")
            for try await _ in rows.decode(Int.self) { return Removal.removed }
            return Removal.none
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

    public func countAttempt(user: String, accountUID: UInt32?, entry: FailureEntry) throws(StoreError) -> AttemptCount {
        guard UserName.isValid(user), let accountUID else { return .missing }
        let uid = Int64(accountUID), peer = Int64(entry.uid), host = hostName, caller = entry.caller.map { Int64($0) }
        let keep = UserRecord.recentLimit - 1, limit = maxFailures, cap = maximumIterations
        let corrupt = StoreError.corrupt(
            "The record of \(user) in the database is not valid: its credential is not a usable PHC string, or its count or lock time is negative."
        )
        // A row that is not a valid record comes back as a value (see `load`).
        return try call { client -> Result<AttemptCount, StoreError> in
            // One statement: the increment only happens while the user is not
            // locked (or its timed lock is due), the attempt that reaches the limit
            // locks, the failure is written beside it, and the history is kept to
            // the newest entries. Concurrent attempts wait on the row. In an explicit
            // transaction, so the credential is handed out only once COMMIT has
            // answered: rows arrive before an implicit transaction commits.
            let counted = try await client.withTransaction(logger: PostgresStore.logger) {
                c -> Result<AttemptCount, StoreError>? in
                let rows = try await c.query(
                    """
                    WITH s AS (
                        SELECT floor(extract(epoch FROM clock_timestamp()))::bigint AS t, unlock_after
                        FROM patternlock_settings WHERE id = 1 AND \(unescaped: PostgresStore.durableCommit)),
                    up AS (
                        UPDATE patternlock_users AS u SET
                            failures = CASE WHEN u.locked_since <> 0 THEN 1 ELSE u.failures + 1 END,
                            locked_since = CASE WHEN (CASE WHEN u.locked_since <> 0 THEN 1 ELSE u.failures + 1 END) >= \(limit)
                                           THEN greatest(s.t, 1) ELSE 0 END
                        FROM s
                        WHERE u.user_name = \(user) AND u.uid = \(uid) AND u.failures >= 0 AND u.locked_since >= 0
                          AND ((u.locked_since = 0 AND u.failures < \(limit))
                               OR (u.locked_since <> 0 AND s.unlock_after > 0 AND s.t >= u.locked_since + s.unlock_after))
                        RETURNING u.credential, u.failures, u.locked_since, s.t),
                    ins AS (
                        INSERT INTO patternlock_failures (user_name, at, uid, service, tty, rhost, ruser, host, caller, session, seat)
                        SELECT \(user), up.t, \(peer), \(entry.service), \(entry.tty), \(entry.rhost), \(entry.ruser), \(host),
                            \(caller), \(entry.session), \(entry.seat) FROM up),
                    pruned AS (
                        DELETE FROM patternlock_failures f
                        WHERE EXISTS (SELECT 1 FROM up) AND f.user_name = \(user) AND f.id NOT IN (
                            SELECT id FROM patternlock_failures WHERE user_name = \(user) ORDER BY id DESC LIMIT \(keep)))
                    SELECT credential, failures, locked_since, t FROM up
                    """, logger: PostgresStore.logger)
                var found: Result<AttemptCount, StoreError>?
                for try await (phc, failures, lockedSince, t) in rows.decode((String, Int, Int64, Int64).self) {
                    guard let credential = try? Credential(phc: phc), credential.iterations <= cap else {
                        found = .failure(corrupt)
                        continue
                    }
                    found = .success(
                        .counted(
                            UserRecord(
                                user: user, uid: accountUID, credential: credential, failures: failures,
                                lockedSince: lockedSince), now: t))
                }
                return found
            }
            if let counted { return counted }
            // Nothing counted: say why.
            let why = try await client.query(
                """
                SELECT u.uid, u.failures, u.locked_since, s.unlock_after, floor(extract(epoch FROM clock_timestamp()))::bigint
                FROM patternlock_users u, patternlock_settings s WHERE s.id = 1 AND u.user_name = \(user)
                """)
            for try await (storedUID, failures, lockedSince, unlockAfter, t) in why.decode(
                (Int64?, Int, Int64, Int64, Int64).self)
            {
                // A NULL uid is never adopted: the row is not this account's.
                guard storedUID == uid else { return .success(.missing) }
                // No host writes a negative count or lock time: one would buy guesses.
                guard failures >= 0, lockedSince >= 0 else { return .failure(corrupt) }
                let record = UserRecord(
                    user: user, uid: accountUID, credential: PostgresStore.noCredential,
                    lockedSince: lockedSince)
                let policy = LockoutPolicy(unlockAfter: unlockAfter)
                return .success(.locked(retryAfter: record.retryAfter(now: t, policy: policy)))
            }
            return .success(.missing)
        }.get()
    }

    public func recordSuccess(_ record: UserRecord) throws(StoreError) {
        let user = record.user
        try call { client in
            _ = try await client.query(
                """
                WITH c AS (UPDATE patternlock_users SET failures = 0, locked_since = 0
                    WHERE user_name = \(user) AND \(unescaped: PostgresStore.durableCommit) RETURNING user_name)
                DELETE FROM patternlock_failures f USING c WHERE f.user_name = c.user_name
                """)
        }
    }

    /// The rows of `patternlock_users`, sorted by `UntaggedRows` into the ones
    /// `db tag` may tag and the ones it must not (copies by salt, unreadable
    /// credentials, names no account can have).
    public func untaggedCredentials() throws(StoreError) -> UntaggedRows {
        try call { client in
            let rows = try await client.query(
                "SELECT user_name, uid, credential FROM patternlock_users ORDER BY user_name COLLATE \"C\"")
            var all: [(user: String, uid: Int64?, phc: String)] = []
            for try await (user, uid, phc) in rows.decode((String, Int64?, String).self) { all.append((user, uid, phc)) }
            return UntaggedRows(rows: all)
        }
    }

    /// Writes `fresh` (the same credential with its owner tag) and the uid it names,
    /// only while the row still holds `previous` and no other uid; false when it changed.
    public func tagCredential(user: String, uid: UInt32, previous: Credential, with fresh: Credential) throws(StoreError)
        -> Bool
    {
        let id = Int64(uid)
        return try call { client in
            let rows = try await client.query(
                """
                UPDATE patternlock_users SET credential = \(fresh.phc), uid = \(id)
                WHERE user_name = \(user) AND credential = \(previous.phc) AND (uid IS NULL OR uid = \(id))
                    AND \(unescaped: PostgresStore.durableCommit)
                RETURNING 1
                """)
            for try await _ in rows { return true }
            return false
        }
    }

    public func replaceCredential(user: String, previous: Credential, with fresh: Credential) throws(StoreError) {
        try call { client in
            _ = try await client.query(
                """
                UPDATE patternlock_users SET credential = \(fresh.phc) WHERE user_name = \(user) AND credential = \(previous.phc)
                    AND \(unescaped: PostgresStore.durableCommit)
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
                    WHERE user_name = \(user) AND \(unescaped: PostgresStore.durableCommit) FOR UPDATE),
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
}
/// `db tag` writes its tags and its record through the fleet's store.
extension PostgresStore: OwnerTagWriter {}
#endif
