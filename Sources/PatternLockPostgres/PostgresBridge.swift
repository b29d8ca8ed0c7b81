// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import Dispatch
import PatternLock
import PostgresNIO
import Synchronization

/// Calling async postgres-nio from the daemon's threads: every call waits at most
/// its deadline, and a database just found unreachable fails the next calls at once.
extension PostgresStore {
    /// How long a failure to reach the database is trusted before trying again.
    public static let retryAfterDown = 1.0

    private final class Outcome<T: Sendable>: Sendable {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
    }

    /// Runs `body` on the client and waits at most `seconds` for it. The daemon's
    /// connection threads are plain threads (not the concurrency pool), so they may block.
    static func blocking<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) throws(StoreError) -> T {
        let outcome = Outcome<T>()
        let task = Task.detached {
            let r: Result<T, any Error>
            do { r = .success(try await body()) } catch { r = .failure(error) }
            outcome.result.withLock { $0 = r }
            outcome.done.signal()
        }
        if outcome.done.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .timedOut {
            task.cancel()
            throw .unavailable("The database did not answer within \(seconds) seconds.")
        }
        switch outcome.result.withLock({ $0 }) {
        case .success(let v)?: return v
        case .failure(let e)?: throw PostgresStore.storeError(e)
        case nil: throw .unavailable("The database call ended without a result.")
        }
    }

    /// Runs `body` within the store's deadline, unless the database was found
    /// unreachable less than `retryAfterDown` ago.
    func call<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) throws(StoreError) -> T {
        let connections = self.connections
        if downUntil.withLock({ $0 }) > Calibration.now() {
            throw .unavailable("The database could not be reached a moment ago; trying again in under \(PostgresStore.retryAfterDown) s.")
        }
        do {
            return try PostgresStore.blocking(deadline) { try await connections.withConnection { try await body($0) } }
        } catch {
            if error.code == .unavailable, !error.reason.contains("SQLSTATE") {
                downUntil.withLock { $0 = Calibration.now() + PostgresStore.retryAfterDown }
            }
            reportProblem(error)
            // Whatever kept the database from answering (down, slow, a connection
            // this host refused to use, a statement the server refused), it cannot
            // be used now, on every verb alike: nothing was checked or counted. A
            // record that is not valid is an answer, returned rather than thrown.
            throw error.code == .unavailable ? error : StoreError(.unavailable, error.reason)
        }
    }

    /// Says why the database could not be used, once per reason a minute.
    private func reportProblem(_ error: StoreError) {
        guard let report else { return }
        let why = error.description, now = Calibration.now()
        let say = lastReport.withLock { last -> Bool in
            if let last, last.why == why, now - last.at < PostgresStore.reportEvery { return false }
            last = (why, now)
            return true
        }
        if say { report("the database at \(url) cannot be used: \(why)") }
    }

    /// A database error as a sentence. Connection trouble, timeouts and a server
    /// shutting down are `unavailable`; the rest (permissions, constraints) too, as
    /// nothing about them is success — but they name what the server said.
    static func storeError(_ error: any Error) -> StoreError {
        if let e = error as? StoreError { return e }
        if let p = error as? PSQLError {
            if let message = p.serverInfo?[.message] {
                let state = p.serverInfo?[.sqlState] ?? "?"
                return .unavailable("The database refused: \(message) (SQLSTATE \(state)).")
            }
            return .unavailable("Cannot reach the database: \(p.code).")
        }
        return .unavailable("Cannot reach the database: \(error).")
    }

    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}
#endif
