// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// The word of an `ERROR message=` reply (docs/PROTOCOL.md). One extensible type,
/// as postgres-nio's `PSQLError.Code`: a code is named once here, so a misspelt
/// one cannot compile, and a code from a newer daemon still parses.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    // The store.
    /// The daemon could not read or write its state (a record that cannot be read
    /// now included), or its store refused to serve.
    public static let storeFailed = ErrorCode(rawValue: "store_failed")
    /// The store cannot be reached now (a fleet's database); nothing was checked or counted.
    public static let storeUnavailable = ErrorCode(rawValue: "store_unavailable")
    /// The user's record exists and is not a valid record (`StoreError.Code.corrupt`):
    /// every verb about the user answers this (STATUS shows it as `corrupt=1`), and
    /// root's REMOVE takes it away; a user cannot replace it.
    public static let recordUnreadable = ErrorCode(rawValue: "record_unreadable")

    // ENROLL.
    public static let noSuchUser = ErrorCode(rawValue: "no_such_user")
    public static let iterationsTooLow = ErrorCode(rawValue: "iterations_too_low")
    public static let iterationsTooHigh = ErrorCode(rawValue: "iterations_too_high")
    public static let iterationsRootOnly = ErrorCode(rawValue: "iterations_root_only")
    public static let overrideRootOnly = ErrorCode(rawValue: "override_root_only")
    /// A user's first pattern needs a proof of its password, and the proof was not
    /// given (polkit said no: a wrong password, a dismissed or missing prompt).
    /// Nothing was written.
    public static let passwordProofRequired = ErrorCode(rawValue: "password_proof_required")
    /// A user's first pattern needs a proof of its password, and this system cannot
    /// ask for one (polkit is not installed or not running): root must set it.
    /// Nothing was written.
    public static let passwordProofUnavailable = ErrorCode(rawValue: "password_proof_unavailable")
    /// A user's first pattern needs a proof of its password, and another proof for
    /// the same user is asking now (another program's ENROLL): this one was not
    /// asked, so a password typed into that program's dialog would not set this
    /// client's pattern but that program's. Nothing was written.
    public static let passwordProofInProgress = ErrorCode(rawValue: "password_proof_in_progress")

    // A line that is not a request (the connection stays open for the next one).
    public static let carriageReturn = ErrorCode(rawValue: "carriage_return")
    public static let badVerb = ErrorCode(rawValue: "bad_verb")
    public static let badField = ErrorCode(rawValue: "bad_field")
    public static let badKey = ErrorCode(rawValue: "bad_key")
    public static let duplicateKey = ErrorCode(rawValue: "duplicate_key")
    public static let badEncoding = ErrorCode(rawValue: "bad_encoding")
    public static let unknownVerb = ErrorCode(rawValue: "unknown_verb")
    public static let unknownKey = ErrorCode(rawValue: "unknown_key")
    public static let badUser = ErrorCode(rawValue: "bad_user")
    public static let badIterations = ErrorCode(rawValue: "bad_iterations")
    public static let badOverride = ErrorCode(rawValue: "bad_override")
    public static let badAll = ErrorCode(rawValue: "bad_all")
    /// `caller=` is not a uid, or `session=`/`seat=` came without it.
    public static let badCaller = ErrorCode(rawValue: "bad_caller")
    /// A required key is missing: `missing_user`, `missing_pattern`.
    public static func missing(_ key: String) -> ErrorCode { ErrorCode(rawValue: "missing_\(key)") }

    // Framing errors (the connection is closed).
    public static let lineTooLong = ErrorCode(rawValue: "line_too_long")
    public static let nulByte = ErrorCode(rawValue: "nul_byte")
    public static let notUTF8 = ErrorCode(rawValue: "not_utf8")

    /// The code for what the service could not do.
    public init(_ error: ServiceError) {
        switch error {
        case .store(let code): self.init(code)
        case .noSuchUser: self = .noSuchUser
        case .iterationsTooLow: self = .iterationsTooLow
        case .iterationsTooHigh: self = .iterationsTooHigh
        case .passwordProofRequired: self = .passwordProofRequired
        }
    }

    /// The one word for each kind of store failure. A store that cannot be reached
    /// (a fleet's database) is told apart from one that failed to read or write (a
    /// record that cannot be read now is that, on every verb, in every store); a
    /// record that is not a valid record only root can replace.
    public init(_ code: StoreError.Code) {
        switch code {
        case .unavailable: self = .storeUnavailable
        case .corrupt: self = .recordUnreadable
        default: self = .storeFailed
        }
    }
}
