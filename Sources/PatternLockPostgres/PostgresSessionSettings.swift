// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import PatternLock
import PostgresNIO

/// The session settings every statement relies on: the server gives up on a
/// statement or a row lock that takes too long (a stuck one would otherwise hold a
/// user's row, and behind a pooler a server connection, past every deadline), and
/// commits each count to disk before it answers (a crash must not give back
/// guesses). Each connection asks for them at its start; a pooler in transaction
/// mode (pgbouncer) cannot pass such startup parameters on, so behind one they must
/// be the role's own on the server (docs/FLEET.md), and the store checks at start
/// that the sessions it gets have them.
extension PostgresStore {
    /// The server-side limit on a statement and on a wait for a row lock.
    static let serverTimeoutMilliseconds = 1500

    /// Sent in every connection's startup packet, the probe's and the pool's.
    static let startupParameters: [(String, String)] = [
        ("application_name", "patternlockd"), ("statement_timeout", "\(serverTimeoutMilliseconds)"),
        ("lock_timeout", "\(serverTimeoutMilliseconds)"), ("synchronous_commit", "on"),
    ]

    /// A condition that is always true and, where a write's statement evaluates it,
    /// turns `synchronous_commit` from off to on for the rest of that transaction
    /// (`set_config(..., true)`, as `SET LOCAL`): behind a pooler in transaction mode
    /// the session is shared with every client of the role, and one that ran `SET
    /// synchronous_commit = off` leaves it on the server connection for whoever gets
    /// it next. In the statement itself, so it costs no round trip; any row the
    /// statement writes has passed it. A stronger level (remote_write, remote_apply)
    /// or `local` is left as it is: each waits for this server's disk.
    static let durableCommit = """
        set_config('synchronous_commit', CASE current_setting('synchronous_commit') WHEN 'off' THEN 'on' \
        ELSE current_setting('synchronous_commit') END, true) IS NOT NULL
        """

    /// Refuses a database whose sessions run without the settings above: with
    /// `synchronous_commit = off` a count would be answered before it is on disk,
    /// and without the timeouts a stuck statement holds on past every deadline.
    static func checkSessionSettings(_ connections: PostgresConnections, url: DatabaseURL, timeout: Double) throws(StoreError) {
        let settings: [String: String]
        do {
            settings = try blocking(timeout) { () async throws -> [String: String] in
                try await connections.withConnection { client in
                    let rows = try await client.query(
                        "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit', 'statement_timeout', 'lock_timeout')")
                    var found: [String: String] = [:]
                    for try await (name, setting) in rows.decode((String, String).self) { found[name] = setting }
                    return found
                }
            }
        } catch {
            throw .unavailable("Cannot read the session settings of \(url): \(error.description)")
        }
        let limit = serverTimeoutMilliseconds
        var wrong: [String] = []
        let commit = settings["synchronous_commit"] ?? "?"
        if commit == "off" || commit == "?" { wrong.append("synchronous_commit = \(commit)") }
        for name in ["statement_timeout", "lock_timeout"] {
            let ms = settings[name].flatMap { Int($0) } ?? 0
            if ms <= 0 || ms > limit { wrong.append("\(name) = \(settings[name] ?? "?") ms") }
        }
        guard !wrong.isEmpty else { return }
        throw .refused(
            "The database sessions of role \(url.user) at \(url) run with \(wrong.joined(separator: ", ")): patternlockd needs synchronous_commit on and statement_timeout and lock_timeout between 1 and \(limit) ms. It asks for them when it connects, but a connection pooler (pgbouncer) drops them. Give the role these settings on the server, as the database's superuser: ALTER ROLE \(url.user) SET synchronous_commit = on; ALTER ROLE \(url.user) SET statement_timeout = \(limit); ALTER ROLE \(url.user) SET lock_timeout = \(limit); (docs/FLEET.md)"
        )
    }
}
#endif
