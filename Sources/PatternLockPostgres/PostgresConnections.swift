// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import PatternLock
import PostgresNIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The store's connections to the database, each opened by the store itself so
/// that every one of them, the first and every later one (after an idle close, a
/// PostgreSQL restart, a broken connection), is checked before the password can
/// leave: a Unix socket is connected here and its listener checked (SO_PEERCRED,
/// PostgresEndpointCheck.swift), a TCP connection gets TLS with the certificate
/// checked, and `ScramOnly` lets no request for the password through but
/// SCRAM-SHA-256's. postgres-nio's own pool (PostgresClient) opens its connections
/// itself, with no hook for either, so this small pool stands in for it.
final class PostgresConnections: Sendable {
    let url: DatabaseURL
    private let password: String?
    private let tls: NIOSSLContext?
    /// At most this many connections at once; more callers wait (within their deadline).
    static let maximum = 16
    /// A connection unused this long is closed (a firewall or a pooler may have
    /// dropped it silently, and an idle host should hold no connection): checked
    /// every `sweepEvery` seconds and before each use. Nothing is sent on an idle
    /// connection (postgres-nio's pool sent `SELECT 1` every 15 s).
    static let idleLimit = 60.0
    static let sweepEvery = 15.0

    private struct State {
        var idle: [(connection: PostgresConnection, since: Double)] = []
        var open = 0
        var nextID = 0
        var closed = false
    }
    private let state = Mutex(State())
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    init(url: DatabaseURL, password: String?) throws(StoreError) {
        self.url = url
        self.password = password
        if let t = try PostgresStore.tlsConfiguration(url) {
            do { tls = try NIOSSLContext(configuration: t) } catch {
                throw .refused("The TLS settings of --store \(url) cannot be used: \(error).")
            }
        } else {
            tls = nil
        }
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(PostgresConnections.sweepEvery))
                guard let self else { return }
                self.sweep()
            }
        }
        sweeper.withLock { $0 = task }
    }

    deinit { sweeper.withLock { $0?.cancel() } }

    /// Closes the idle connections that are closed already or unused for `idleLimit`.
    private func sweep() {
        let now = Calibration.now()
        let stale = state.withLock { s -> [PostgresConnection] in
            let old = s.idle.filter { $0.connection.isClosed || now - $0.since >= Self.idleLimit }
            s.idle.removeAll { $0.connection.isClosed || now - $0.since >= Self.idleLimit }
            s.open -= old.count
            return old.map(\.connection)
        }
        for c in stale { c.close().whenComplete { _ in } }
    }

    /// Runs `body` on a connection of the pool. A connection whose body failed or
    /// was cancelled (its deadline passed) is closed, never reused: it may be in the
    /// middle of a transaction.
    func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await lease()
        let value: T
        do {
            value = try await body(connection)
        } catch {
            giveBack(connection, reusable: false)
            throw error
        }
        giveBack(connection, reusable: !Task.isCancelled)
        return value
    }

    /// Closes every idle connection and stops the sweeps; connections in use are
    /// closed when they are given back.
    func closeAll() {
        sweeper.withLock { $0?.cancel() }
        let idle = state.withLock { s in
            defer {
                s.open -= s.idle.count
                s.idle = []
                s.closed = true
            }
            return s.idle.map(\.connection)
        }
        for c in idle { c.close().whenComplete { _ in } }
    }

    private enum Next {
        case closed
        case use(PostgresConnection)
        case open(Int)
        case wait
    }

    private func lease() async throws -> PostgresConnection {
        while true {
            try Task.checkCancellation()
            let now = Calibration.now()
            var stale: [PostgresConnection] = []
            let next = state.withLock { s -> Next in
                while let last = s.idle.popLast() {
                    if !last.connection.isClosed && now - last.since < Self.idleLimit { return .use(last.connection) }
                    stale.append(last.connection)
                    s.open -= 1
                }
                guard !s.closed else { return .closed }
                guard s.open < Self.maximum else { return .wait }
                s.open += 1
                s.nextID += 1
                return .open(s.nextID)
            }
            for c in stale { c.close().whenComplete { _ in } }
            switch next {
            case .closed: throw StoreError.unavailable("The store's connections are closed.")
            case .use(let c): return c
            case .wait: try await Task.sleep(for: .milliseconds(5))
            case .open(let id):
                do {
                    return try await open(id: id)
                } catch {
                    state.withLock { $0.open -= 1 }
                    throw error
                }
            }
        }
    }

    private func giveBack(_ connection: PostgresConnection, reusable: Bool) {
        let keep = state.withLock { s -> Bool in
            guard reusable, !s.closed, !connection.isClosed else {
                s.open -= 1
                return false
            }
            s.idle.append((connection, Calibration.now()))
            return true
        }
        if !keep { connection.close().whenComplete { _ in } }
    }

    /// Opens one connection the checked way. A refusal (a socket that is not
    /// PostgreSQL's account's, a request for the password other than SCRAM) is
    /// thrown as `StoreError.refused` with its sentence; everything else as
    /// postgres-nio reports it (PostgresProbe.swift words it).
    func open(id: Int) async throws -> PostgresConnection {
        let refusal = AuthRefusal()
        let group = PostgresConnection.defaultEventLoopGroup
        let place: String
        let useTLS = tls != nil
        let user = url.user
        var serverName: String?
        let channel: any Channel
        switch url.endpoint {
        case .unixSocket(let path):
            place = "the socket \(path)"
            let fd = try PostgresStore.connectSocket(path, in: url)
            channel = try await ClientBootstrap(group: group)
                .channelInitializer { ch in
                    ch.eventLoop.makeCompletedFuture {
                        try ch.pipeline.syncOperations.addHandler(
                            ScramOnly(tls: useTLS, refusal: refusal, place: place, role: user))
                    }
                }
                .withConnectedSocket(fd).get()
        case .tcp(let host, let port):
            place = "\(host) port \(port)"
            if !Self.isIPAddress(host) { serverName = host }
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.milliseconds(Int64(url.connectTimeout * 1000)))
                .channelInitializer { ch in
                    ch.eventLoop.makeCompletedFuture {
                        try ch.pipeline.syncOperations.addHandler(
                            ScramOnly(tls: useTLS, refusal: refusal, place: place, role: user))
                    }
                }
                .connect(host: host, port: port).get()
        }
        var config = PostgresConnection.Configuration(
            establishedChannel: channel, tls: tls.map { .require($0) } ?? .disable, username: url.user,
            password: password, database: url.database)
        config.options.connectTimeout = .milliseconds(Int64(url.connectTimeout * 1000))
        config.options.tlsServerName = serverName
        // PostgresSessionSettings.swift: what the server must do for every statement.
        config.options.additionalStartupParameters = PostgresStore.startupParameters
        do {
            return try await PostgresConnection.connect(
                on: channel.eventLoop, configuration: config, id: id, logger: PostgresStore.logger)
        } catch {
            channel.close(promise: nil)
            if let why = refusal.sentence.withLock({ $0 }) { throw StoreError.refused(why) }
            throw error
        }
    }

    /// An IP literal is no name for TLS's server name indication (NIOSSL then checks the certificate against the address).
    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}

extension PostgresConnection {
    /// A statement logged to the store's one logger.
    @discardableResult
    func query(_ query: PostgresQuery, file: String = #fileID, line: Int = #line) async throws -> PostgresRowSequence {
        try await self.query(query, logger: PostgresStore.logger, file: file, line: line)
    }
}
#endif
