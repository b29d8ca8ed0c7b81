// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import PatternLock
import PostgresNIO
#if canImport(Glibc)
import Glibc
#endif

/// One connection made at start, the way the pool makes them, before anything else
/// is asked: it fails at once, bounded by `connect_timeout`, and its error says
/// what is wrong (a wrong password, a missing socket) in the administrator's words.
extension PostgresStore {
    static func probe(_ connections: PostgresConnections, timeout: Double) throws(StoreError) {
        let url = connections.url
        let seconds = url.connectTimeout
        try blocking(timeout) {
            let c: PostgresConnection
            do {
                c = try await connections.open(id: 0)
            } catch let refused as StoreError {
                throw refused
            } catch {
                throw StoreError.unavailable(
                    "Cannot use the database \(url): \(connectionFailure(error, url: url, seconds: seconds))")
            }
            try? await c.close()
        }
    }

    /// What went wrong with a connection, in the administrator's words, with the fix.
    static func connectionFailure(_ error: any Error, url: DatabaseURL, seconds: Double) -> String {
        let place: String
        switch url.endpoint {
        case .tcp(let host, let port): place = "\(host) port \(port)"
        case .unixSocket(let path): place = "the socket \(path)"
        }
        if let p = error as? PSQLError, let state = p.serverInfo?[.sqlState] {
            let message = p.serverInfo?[.message] ?? "no message"
            switch state {
            case "28P01", "28000":
                return
                    ("The database at \(place) refused role \(url.user): \(message) (SQLSTATE \(state)). Check the password in --store-password-file (or the credential patternlock.dbpass) and the role's line in pg_hba.conf.")
            case "3D000":
                return
                    ("The database at \(place) has no database \(url.database): \(message). Fix the database name in --store, or create it.")
            case _ where message.contains("unsupported startup parameter"):
                return
                    ("The database at \(place) refused the connection: \(message). It is a connection pooler (pgbouncer) that cannot pass on the session settings patternlockd asks for. Add to its ini: ignore_startup_parameters = statement_timeout, lock_timeout, synchronous_commit; and give role \(url.user) the same settings on the server (docs/FLEET.md).")
            default:
                return ("The database at \(place) refused the connection: \(message) (SQLSTATE \(state)).")
            }
        }
        if let p = error as? PSQLError, p.code == .unsupportedAuthMechanism || p.code == .authMechanismRequiresPassword {
            return
                ("The database at \(place) asks role \(url.user) for a password, and none was given. Give it with --store-password-file FILE (or the credential patternlock.dbpass).")
        }
        let underlying = (error as? PSQLError)?.underlying.map { "\($0)" } ?? "\(error)"
        let errno = Self.errnoName(underlying)
        switch errno {
        case "ECONNREFUSED":
            return
                ("Nothing accepts connections at \(place) (connection refused). Start PostgreSQL there, or fix the host and port in --store.")
        case "ENOENT":
            return ("Nothing listens at \(place): it does not exist. Start PostgreSQL, or fix host= and port= in --store.")
        default:
            if underlying.lowercased().contains("timeout") || underlying.lowercased().contains("timed out") {
                return
                    ("The database at \(place) did not accept the connection within \(seconds) seconds (connect_timeout). Check that the host is up and reachable.")
            }
            return ("Cannot connect to the database at \(place): \(underlying).")
        }
    }

    /// ECONNREFUSED or ENOENT when NIO's description names them.
    private static func errnoName(_ text: String) -> String? {
        if text.contains("errno: \(ECONNREFUSED)") || text.lowercased().contains("connection refused") { return "ECONNREFUSED" }
        if text.contains("errno: \(ENOENT)") || text.lowercased().contains("no such file") { return "ENOENT" }
        return nil
    }
}
#endif
