// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import PatternLock
import PostgresNIO

/// Bringing the database to the schema in PostgresSchema.swift at start, or
/// refusing a database this daemon does not know how to use.
extension PostgresStore {
    public static var schemaVersion: Int { PostgresSchema.version }

    static func prepareSchema(_ connections: PostgresConnections, url: DatabaseURL, migrate: Bool, timeout: Double) throws(StoreError) {
        let current: Int?
        do {
            current = try blocking(timeout) { () async throws -> Int? in
                do {
                    return try await connections.withConnection { client -> Int? in
                        let rows = try await client.query("SELECT max(version) FROM patternlock_schema")
                        for try await (v) in rows.decode(Int?.self) { return v }
                        return nil
                    }
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
        try migrateSchema(connections, url: url, timeout: timeout)
    }

    /// Runs the missing migrations in one transaction, one host at a time (an advisory lock).
    static func migrateSchema(_ connections: PostgresConnections, url: DatabaseURL, timeout: Double) throws(StoreError) {
        do {
            try blocking(timeout) {
                try await connections.withConnection { connection in
                    try await connection.withTransaction(logger: logger) { c in
                        try await c.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))", logger: logger)
                        try await c.query("CREATE TABLE IF NOT EXISTS patternlock_schema (version integer NOT NULL)", logger: logger)
                        var version = 0
                        let rows = try await c.query("SELECT coalesce(max(version), 0) FROM patternlock_schema", logger: logger)
                        for try await (v) in rows.decode(Int.self) { version = v }
                        while version < PostgresSchema.version {
                            version += 1
                            for statement in PostgresSchema.migrations[version] ?? [] {
                                try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                            }
                            try await c.query("INSERT INTO patternlock_schema (version) VALUES (\(version))", logger: logger)
                        }
                    }
                }
            }
        } catch {
            if error.code == .unavailable, error.reason.contains("42501") {
                throw .refused(
                    "The database role \(url.user) may not create the patternlock tables in \(url.database). Create them once with a role that may: patternlockd db init --store postgresql://OWNER@.../\(url.database); after that \(url.user) needs only SELECT, INSERT, UPDATE and DELETE on them."
                )
            }
            throw .unavailable("Cannot create the patternlock tables in \(url): \(error.description)")
        }
    }
}
#endif
