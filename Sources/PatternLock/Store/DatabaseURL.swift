// SPDX-License-Identifier: Apache-2.0
/// A fleet's database address in libpq's URI form, checked before anything connects:
///
///     postgresql://USER@HOST:PORT/DB?sslmode=verify-full&sslrootcert=/etc/patternlock/db-ca.pem
///     postgresql://USER@/DB?host=/run/postgresql          (a Unix socket directory)
///
/// A password is never part of it (argv and unit files are readable by others):
/// it comes from `--store-password-file` or the systemd credential `patternlock.dbpass`.
public struct DatabaseURL: Equatable, Sendable, CustomStringConvertible {
    public enum TLSMode: String, Equatable, Sendable, CaseIterable {
        /// No TLS (a Unix socket, or loopback).
        case disable
        /// TLS, the server's certificate not checked (libpq's `require`).
        case require
        /// TLS, the certificate checked against `sslrootcert`, not the host name.
        case verifyCA = "verify-ca"
        /// TLS, the certificate checked against `sslrootcert` and the host name.
        case verifyFull = "verify-full"
    }

    public enum Endpoint: Equatable, Sendable {
        case tcp(host: String, port: Int)
        /// The socket file itself: `DIRECTORY/.s.PGSQL.PORT`, as libpq names it.
        case unixSocket(path: String)
    }

    public var user: String
    public var database: String
    public var endpoint: Endpoint
    public var tlsMode: TLSMode
    /// The CA certificates (PEM) that sign the server's certificate.
    public var rootCertificate: String?
    /// Seconds to wait for a connection (libpq's `connect_timeout`), 1 by default:
    /// a verify must answer within the PAM module's timeout even when the database is down.
    public var connectTimeout: Double

    public struct Error: Swift.Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public static let example =
        "postgresql://patternlock@db.example.org:5432/patternlock?sslmode=verify-full&sslrootcert=/etc/patternlock/db-ca.pem"

    public static func isDatabaseURL(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    public init(parsing text: String) throws(DatabaseURL.Error) {
        let scheme: String
        if text.hasPrefix("postgresql://") {
            scheme = "postgresql://"
        } else if text.hasPrefix("postgres://") {
            scheme = "postgres://"
        } else {
            throw Error("--store must be a PostgreSQL URI such as \(DatabaseURL.example); it was \(text).")
        }
        var rest = Substring(text.dropFirst(scheme.count))
        var query = Substring("")
        if let q = rest.firstIndex(of: "?") { query = rest[rest.index(after: q)...]; rest = rest[..<q] }
        var path = Substring("")
        if let slash = rest.firstIndex(of: "/") { path = rest[rest.index(after: slash)...]; rest = rest[..<slash] }
        var userPart: Substring?
        if let at = rest.lastIndex(of: "@") { userPart = rest[..<at]; rest = rest[rest.index(after: at)...] }
        if let u = userPart, u.contains(":") {
            throw Error(
                "The --store URI holds a password. Put the password in a file named by --store-password-file (or the systemd credential patternlock.dbpass) and remove it from the URI: command lines and unit files are readable by others."
            )
        }
        var params: [String: String] = [:]
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, let key = PercentEncoding.decode(kv[0]), let value = PercentEncoding.decode(kv[1]) else {
                throw Error("The --store URI has a malformed parameter \(pair); write it as name=value.")
            }
            guard ["host", "port", "user", "dbname", "sslmode", "sslrootcert", "connect_timeout", "application_name"].contains(key)
            else {
                if key == "password" {
                    throw Error(
                        "The --store URI holds a password. Put it in a file named by --store-password-file (or the systemd credential patternlock.dbpass) instead: command lines are readable by others."
                    )
                }
                throw Error(
                    "The --store URI parameter \(key) is not supported; use host, port, user, dbname, sslmode, sslrootcert or connect_timeout."
                )
            }
            params[key] = value
        }
        var host = ""
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw Error("The --store URI has an unclosed [ in its host.") }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw Error("The --store URI has text after its host [\(host)].")
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        } else {
            host = String(rest)
        }
        guard let decodedHost = PercentEncoding.decode(host) else { throw Error("The --store URI host is not valid percent-encoding.") }
        host = params["host"] ?? decodedHost
        if let p = params["port"] { portText = Substring(p) }
        var port = 5432
        if let portText {
            guard let n = Int(portText), (1...65535).contains(n) else {
                throw Error("The --store URI port must be a number from 1 to 65535; it was \(portText).")
            }
            port = n
        }
        guard let decodedUser = PercentEncoding.decode(userPart ?? "") else {
            throw Error("The --store URI user is not valid percent-encoding.")
        }
        user = params["user"] ?? decodedUser
        guard !user.isEmpty else {
            throw Error("The --store URI names no database role; write it as postgresql://ROLE@HOST/DATABASE.")
        }
        guard let decodedPath = PercentEncoding.decode(path) else {
            throw Error("The --store URI database name is not valid percent-encoding.")
        }
        database = params["dbname"] ?? decodedPath
        if database.isEmpty { database = user }
        if host.isEmpty { host = "/var/run/postgresql" }
        endpoint = host.hasPrefix("/") ? .unixSocket(path: "\(host)/.s.PGSQL.\(port)") : .tcp(host: host, port: port)
        rootCertificate = params["sslrootcert"]
        if let t = params["connect_timeout"] {
            guard let n = Double(t), n > 0, n <= 60 else {
                throw Error("The --store URI connect_timeout must be a number of seconds from 1 to 60; it was \(t).")
            }
            connectTimeout = n
        } else {
            connectTimeout = 1
        }
        if let mode = params["sslmode"] {
            guard let m = TLSMode(rawValue: mode) else {
                throw Error("The --store URI sslmode must be one of disable, require, verify-ca or verify-full; it was \(mode).")
            }
            tlsMode = m
        } else {
            // A Unix socket never leaves the host; over TCP the certificate is checked unless told otherwise.
            tlsMode = host.hasPrefix("/") ? .disable : .verifyFull
        }
        if case .unixSocket = endpoint, tlsMode != .disable {
            throw Error(
                "The --store URI asks for TLS (sslmode=\(tlsMode.rawValue)) over a Unix socket; use sslmode=disable for a socket directory."
            )
        }
        // Without a checked certificate anyone who answers on the port is taken for
        // the database and may ask for the password in clear text. On loopback too:
        // any local user can listen on the port while PostgreSQL restarts or before
        // it starts. A database on this host is reached by its Unix socket, whose
        // owner is checked.
        if case .tcp(let h, _) = endpoint, tlsMode == .disable || tlsMode == .require {
            let where_ = Self.isLoopback(h) ? "on this host's loopback" : "over the network"
            throw Error(
                "The --store URI reaches \(h) \(where_) with sslmode=\(tlsMode.rawValue), which does not check the database's certificate: anyone who listens on that port (any local user, while PostgreSQL is down) could answer for it and be sent the password. Use sslmode=verify-full&sslrootcert=/path/to/ca.pem, or for a database on this host its Unix socket (postgresql://ROLE@/DATABASE?host=/var/run/postgresql)."
            )
        }
        if tlsMode == .verifyFull || tlsMode == .verifyCA, rootCertificate == nil {
            throw Error(
                "The --store URI asks the database's certificate to be checked (sslmode=\(tlsMode.rawValue)) but names no CA file: add sslrootcert=/path/to/ca.pem (or, for a database on this host, use its Unix socket)."
            )
        }
    }

    /// localhost, 127.0.0.0/8 or ::1: a connection that never leaves this host.
    static func isLoopback(_ host: String) -> Bool {
        let h = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { p in UInt8(p).map { String($0) == p } ?? false }
    }

    /// The URI without anything secret (it never holds one), for logs and messages.
    public var description: String {
        switch endpoint {
        case .tcp(let host, let port):
            let h = host.contains(":") ? "[\(host)]" : host
            return "postgresql://\(user)@\(h):\(port)/\(database)?sslmode=\(tlsMode.rawValue)"
        case .unixSocket(let path):
            // The port is part of the socket's name: without it a copied URI would
            // name the server on 5432.
            let (directory, name) = Sys.splitPath(path)
            let port = name.split(separator: ".").last.map(String.init) ?? "5432"
            return "postgresql://\(user)@/\(database)?host=\(directory)" + (port == "5432" ? "" : "&port=\(port)")
        }
    }
}
