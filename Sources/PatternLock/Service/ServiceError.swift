// SPDX-License-Identifier: Apache-2.0
/// What the service could not do, apart from a verdict on the pattern. The wire
/// turns each into its `ERROR message=` code (`ErrorCode(_: ServiceError)`); the
/// core speaks no wire words.
public enum ServiceError: Error, Equatable, Sendable {
    /// The store failed (its code says how: `.io`, `.unavailable`, `.corrupt` for a
    /// record a user may not replace without root, ...); nothing was checked,
    /// counted or changed.
    case store(StoreError.Code)
    /// No account of that name.
    case noSuchUser
    case iterationsTooLow
    case iterationsTooHigh
    /// A user's first pattern (no record of its own) without a proof of its
    /// password: a pattern is never easier to obtain than the password it stands in
    /// for. Nothing was written.
    case passwordProofRequired

    /// The store's failure, as the service reports it: by its code alone (the
    /// reason is the log's, not a client's).
    public init(_ error: StoreError) { self = .store(error.code) }
}
