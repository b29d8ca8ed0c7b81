// SPDX-License-Identifier: Apache-2.0
/// Where the records live: the seam between the service and a storage engine.
///
/// Two stores keep the same promises: the file store (one atomic, durable file per
/// user, the default) and the PostgreSQL store of a fleet (its own target, so the
/// core stays free of NIO). Every promise that guards the guess budget is the
/// store's: `countAttempt` counts an attempt durably and atomically before any hash
/// is computed, and refuses once the user is locked. Every failure is one
/// `StoreError`, whose code says what kind it is; nothing here ever turns an error
/// into success. Tests/StoreContractTests/StoreContractTests.swift holds both stores
/// to these promises (docs/ARCHITECTURE.md).
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

    /// A user's record; nil when it has none. A record that is not a valid record
    /// throws `.corrupt`; one that cannot be read now throws `.io` (it may well
    /// exist, so nothing may treat it as missing); a store that cannot be reached
    /// throws `.unavailable`.
    func load(_ user: String) throws(StoreError) -> UserRecord?

    /// Writes a whole record (enroll): creates or replaces it.
    func save(_ record: UserRecord) throws(StoreError)

    /// Removes a user's record, or whatever stands in its place (root's cure for a
    /// record that cannot be read); `.none` when there was nothing.
    @discardableResult
    func remove(_ user: String) throws(StoreError) -> Removal

    /// The users that have a record, in name order.
    func users() throws(StoreError) -> [String]

    /// Counts one attempt for `user` before its hash is computed: durable (and
    /// atomic across every daemon sharing the store) before this returns. Lifts a
    /// timed lock that is due; refuses with `.locked` when the user is locked. A
    /// record that does not belong to `accountUID` (nil: no such account) is
    /// `.missing` and nothing is counted. Throws when nothing could be counted: the
    /// attempt must then not be evaluated.
    func countAttempt(user: String, accountUID: UInt32?, entry: FailureEntry) throws(StoreError) -> AttemptCount

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

/// What `Store.remove` took away.
public enum Removal: Equatable, Sendable {
    /// Nothing stood in the record's place.
    case none
    /// The record is gone, or what stood in its place: a file, a link, an empty directory.
    case removed
    /// A directory with entries in it stood in the record's place: it is moved
    /// aside, whole, to this path in the store's directory, never deleted, so no
    /// one's files are lost.
    case movedAside(String)
}

/// What counting an attempt found, when the store could count.
public enum AttemptCount: Equatable, Sendable {
    /// Counted and durable; `record` is the record after counting (its credential
    /// is the one to check), `now` the store's time of the attempt.
    case counted(UserRecord, now: Int64)
    /// Locked: nothing was counted and no hash may be computed.
    case locked(retryAfter: Int64)
    /// No record for this account (none, or one of another uid): nothing counted.
    case missing
}

/// Every failure of a store, as postgres-nio's `PSQLError`: one type with an
/// extensible code, and a sentence for the log. The service turns the code into
/// its outcome (`ServiceError.store`) and the wire into its error word
/// (`ErrorCode(_: StoreError.Code)`), each in one place; the sentence never
/// reaches a client.
public struct StoreError: Swift.Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure it is: what a client is told depends on this alone.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A record exists and is not a valid record (malformed, not a regular
        /// file, a credential that cannot be used): never success.
        public static let corrupt = Code(rawValue: "corrupt")
        /// The store could not read or write now (an I/O error, out of descriptors
        /// or memory): a record it could not read may well exist.
        public static let io = Code(rawValue: "io")
        /// The store cannot be reached now or did not answer in time (a fleet's
        /// database): nothing was checked or counted.
        public static let unavailable = Code(rawValue: "unavailable")
        /// The store refuses to serve: an unsafe state directory, a schema too new,
        /// another key, bad settings.
        public static let refused = Code(rawValue: "refused")
    }

    public let code: Code
    /// A whole sentence for the log and the administrator's terminal: what failed and why.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    public static func corrupt(_ why: String) -> StoreError { StoreError(.corrupt, why) }
    public static func io(_ what: String, _ errno: Errno) -> StoreError { StoreError(.io, "\(what): \(errno).") }
    public static func unavailable(_ why: String) -> StoreError { StoreError(.unavailable, why) }
    public static func refused(_ why: String) -> StoreError { StoreError(.refused, why) }
}
