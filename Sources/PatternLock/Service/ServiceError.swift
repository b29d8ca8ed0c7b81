// SPDX-License-Identifier: Apache-2.0
/// What the service could not do, apart from a verdict on the pattern. The wire
/// turns each into its `ERROR message=` code; the core speaks no wire words.
public enum ServiceError: Error, Equatable, Sendable {
    /// The store could not read or write.
    case storeFailed
    /// The store cannot be reached now (a fleet's database): nothing was checked or counted.
    case storeUnavailable
    /// The user's record exists but cannot be read, so it cannot be changed without root.
    case recordUnreadable
    /// No account of that name.
    case noSuchUser
    case iterationsTooLow
    case iterationsTooHigh
    /// A user's first pattern (no record of its own) without a proof of its
    /// password: a pattern is never easier to obtain than the password it stands in
    /// for. Nothing was written.
    case passwordProofRequired

    /// The store's failure, as the service reports it.
    public init(_ error: StoreError) {
        if case .unavailable = error { self = .storeUnavailable } else { self = .storeFailed }
    }
}
