// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import PostgresNIO

/// The fleet's tables, one version at a time. `patternlock_schema` holds the
/// version the database is at; a daemon migrates it at start when its role may
/// (or `patternlockd db init` does, for sites that keep DDL rights apart), and
/// refuses a database newer than it knows.
enum PostgresSchema {
    static let version = 3

    /// A fixed key for `pg_advisory_xact_lock`: hosts starting together migrate one at a time.
    static let migrationLock: Int64 = 0x7061_7474_6c6b  // "pattlk"

    /// The statements that take a database from version `n - 1` to `n`.
    static let migrations: [Int: [String]] = [
        1: [
            """
            CREATE TABLE patternlock_settings (
                id integer PRIMARY KEY CHECK (id = 1),
                key_check text NOT NULL,
                iterations integer NOT NULL CHECK (iterations >= 600000),
                unlock_after bigint NOT NULL DEFAULT 0 CHECK (unlock_after >= 0),
                max_failures integer NOT NULL DEFAULT 5 CHECK (max_failures > 0))
            """,
            """
            CREATE TABLE patternlock_users (
                user_name text PRIMARY KEY,
                uid bigint,
                credential text NOT NULL,
                failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
                locked_since bigint NOT NULL DEFAULT 0 CHECK (locked_since >= 0))
            """,
            """
            CREATE TABLE patternlock_failures (
                id bigserial PRIMARY KEY,
                user_name text NOT NULL REFERENCES patternlock_users ON DELETE CASCADE,
                at bigint NOT NULL,
                uid bigint NOT NULL,
                service text NOT NULL,
                tty text NOT NULL,
                rhost text NOT NULL,
                ruser text NOT NULL DEFAULT '',
                host text NOT NULL)
            """,
            "CREATE INDEX patternlock_failures_user ON patternlock_failures (user_name, id)",
        ],
        // Issue 19: who made each failure (the caller's uid, its logind session and
        // seat or tty), so `status` names the culprit after a restart too. NULL for
        // failures counted before.
        2: [
            "ALTER TABLE patternlock_failures ADD COLUMN caller bigint",
            "ALTER TABLE patternlock_failures ADD COLUMN session text NOT NULL DEFAULT ''",
            "ALTER TABLE patternlock_failures ADD COLUMN seat text NOT NULL DEFAULT ''",
        ],
        // Issue 31: the record, under the fleet's key, that every credential carries
        // its owner tag (the fleet began with tags, or `db tag --yes` ran), so that a
        // second `db tag --yes` is refused. NULL in a fleet that began before.
        3: [
            "ALTER TABLE patternlock_settings ADD COLUMN owner_tags_check text",
            "ALTER TABLE patternlock_settings ADD COLUMN owner_tags_at bigint",
        ],
    ]
}
#endif
