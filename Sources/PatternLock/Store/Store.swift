// SPDX-License-Identifier: Apache-2.0
/// Where the records live: the seam between the service and a storage engine.
///
/// Two stores keep the same promises: the file store (one atomic, durable file per
/// user, the default) and the PostgreSQL store of a fleet (its own target, so the
/// core stays free of NIO). Every promise that guards the guess budget is the
/// store's: `countAttempt` counts an attempt durably and atomically before any hash
/// is computed, and refuses once the user is locked. A store that cannot answer
/// says `unavailable`; nothing here ever turns an error into success.
public protocol Store: Sendable {
    /// Where the records are, for logs (never a password).
    var location: String { get }

    /// The lockout rule and the clock the store counts by. The file store uses the
    /// daemon's options and this host's clock; a fleet uses the database's.
    var policy: LockoutPolicy { get }

    /// Whether a credential without an owner tag (made before tags existed) may
    /// still be used until its next success tags it. The file store's records are
    /// written by root only; a fleet's database may be written by a role that
    /// does not hold the key, which must not be able to strip a tag, so a fleet
    /// takes only tagged credentials.
    var acceptsUntaggedCredentials: Bool { get }

    /// Seconds since the epoch on the store's clock.
    func now() -> Int64

    /// A user's record.
    func load(_ user: String) -> Loaded

    /// Writes a whole record (enroll): creates or replaces it.
    func save(_ record: UserRecord) throws(StoreError)

    /// Removes a user's record; false when there was none.
    @discardableResult
    func remove(_ user: String) throws(StoreError) -> Bool

    /// The users that have a record, in name order.
    func users() throws(StoreError) -> [String]

    /// Counts one attempt for `user` before its hash is computed: durable (and
    /// atomic across every daemon sharing the store) before this returns. Lifts a
    /// timed lock that is due; refuses with `.locked` when the user is locked. A
    /// record that does not belong to `accountUID` (nil: no such account) is
    /// `.missing` and nothing is counted.
    func countAttempt(user: String, accountUID: UInt32?, entry: FailureEntry) -> AttemptCount

    /// A verified pattern: clears the count, the lock and the failure history of
    /// `record.user` (as counted by `countAttempt`, which returned `record`).
    func recordSuccess(_ record: UserRecord) throws(StoreError)

    /// Replaces a credential with a re-hashed one of the same pattern, unless the
    /// record changed meanwhile (re-enrolled, removed).
    func replaceCredential(user: String, previous: Credential, with fresh: Credential) throws(StoreError)

    /// Clears one user's count and lock (`patternlockd reset`). Returns the record as
    /// it was before, nil when the user has none.
    func reset(_ user: String) throws(StoreError) -> UserRecord?
}

extension Store {
    public var acceptsUntaggedCredentials: Bool { true }
}

/// A user's record as read from a store.
public enum Loaded: Equatable, Sendable {
    case missing
    /// The record exists but is not a valid record: never success.
    case corrupt(String)
    /// The record could not be read now (out of descriptors or memory, an I/O
    /// error, the database down): it may well exist, so nothing may treat it as missing.
    case unreadable(String)
    /// The store cannot be reached now (a fleet's database down or slow).
    case unavailable(String)
    case record(UserRecord)
}

/// What counting an attempt found.
public enum AttemptCount: Equatable, Sendable {
    /// Counted and durable; `record` is the record after counting (its credential
    /// is the one to check), `now` the store's time of the attempt.
    case counted(UserRecord, now: Int64)
    /// Locked: nothing was counted and no hash may be computed.
    case locked(retryAfter: Int64)
    /// No record for this account (none, or one of another uid): nothing counted.
    case missing
    /// A record that is not valid: treated as not enrolled, never success.
    case corrupt
    /// The store could not read or write the count: the attempt must not be evaluated.
    case failed(String)
    /// The store cannot be reached now (a fleet's database): not evaluated either.
    case unavailable(String)
}

public enum StoreError: Swift.Error, Equatable, CustomStringConvertible {
    case unsafeDirectory(String)
    case io(String, Errno)
    /// The store cannot be reached or did not answer in time (a fleet's database).
    case unavailable(String)
    /// The store refuses to serve (schema too new, another key, bad settings).
    case refused(String)

    public var description: String {
        switch self {
        case .unsafeDirectory(let why): return why
        case .io(let what, let e): return "\(what): \(e)."
        case .unavailable(let why): return why
        case .refused(let why): return why
        }
    }
}
