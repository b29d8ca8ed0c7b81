// SPDX-License-Identifier: Apache-2.0
/// What a user's status looks like on the wire and in `patternlockd status`.
public struct UserStatus: Equatable, Sendable {
    public var user: String
    public var enrolled: Bool
    /// Whether the record is the account's: a record of a deleted or re-created
    /// account is not enrolled, and `status` says so.
    public var owner: RecordOwner
    public var corrupt: Bool
    public var failures: Int
    public var remaining: Int
    public var locked: Bool
    public var lockedSince: Int64
    public var retryAfter: Int64
    public var iterations: Int
    public var recent: [FailureEntry]

    public init(
        user: String, enrolled: Bool = false, owner: RecordOwner = .same, corrupt: Bool = false,
        failures: Int = 0, remaining: Int = 0, locked: Bool = false, lockedSince: Int64 = 0,
        retryAfter: Int64 = 0, iterations: Int = 0, recent: [FailureEntry] = []
    ) {
        self.user = user
        self.enrolled = enrolled
        self.owner = owner
        self.corrupt = corrupt
        self.failures = failures
        self.remaining = remaining
        self.locked = locked
        self.lockedSince = lockedSince
        self.retryAfter = retryAfter
        self.iterations = iterations
        self.recent = recent
    }
}
