// SPDX-License-Identifier: Apache-2.0
/// A stored pattern credential: PBKDF2-HMAC-SHA256 over HMAC(pepper, pattern digits),
/// kept as the PHC string `$pbkdf2-sha256$i=<N>$<salt>$<hash>`.
///
/// The pepper (a 32-byte key kept apart from the records) is what makes a stolen
/// record worthless: the whole pattern space is only 389,112 patterns.
public struct Credential: Equatable, Sendable, CustomStringConvertible {
    /// OWASP's floor for PBKDF2-HMAC-SHA256; nothing here goes below it.
    public static let minimumIterations = 600_000
    /// Above this a record is taken as corrupt rather than hashed for minutes.
    public static let maximumIterations = 1_000_000_000
    public static let saltSize = 16
    public static let hashSize = 32

    public let iterations: Int
    public let salt: [UInt8]
    public let hash: [UInt8]

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        public var description: String {
            switch self {
            case .malformed(let why): return "The stored credential is malformed: \(why)."
            }
        }
    }

    public init(iterations: Int, salt: [UInt8], hash: [UInt8]) {
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    /// Parses a PHC string, strictly.
    public init(phc: String) throws(ParseError) {
        let parts = phc.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty else { throw .malformed("expected 4 fields") }
        guard parts[1] == "pbkdf2-sha256" else { throw .malformed("unknown algorithm") }
        guard parts[2].hasPrefix("i="), let n = Int(parts[2].dropFirst(2)), String(n) == parts[2].dropFirst(2),
            n >= 1, n <= Credential.maximumIterations
        else { throw .malformed("bad iteration count") }
        guard let salt = Base64.decode(parts[3]), salt.count >= 8, salt.count <= 64 else { throw .malformed("bad salt") }
        guard let hash = Base64.decode(parts[4]), hash.count == Credential.hashSize else { throw .malformed("bad hash") }
        self.init(iterations: n, salt: salt, hash: hash)
    }

    public var phc: String {
        "$pbkdf2-sha256$i=\(iterations)$\(Base64.encode(salt))$\(Base64.encode(hash))"
    }

    public var description: String { phc }

    /// The PBKDF2 password: HMAC-SHA256 keyed with the pepper over the pattern's digits.
    static func password(for pattern: Pattern, pepper: Pepper, backend: SHA256Backend) -> [UInt8] {
        pattern.withDigits { HMACSHA256.authenticate($0, key: pepper.bytes, backend: backend) }
    }

    /// A new credential with a fresh random salt.
    public static func make(
        pattern: Pattern, pepper: Pepper, iterations: Int, backend: SHA256Backend = .default
    ) throws -> Credential {
        let salt = try SecureRandom.bytes(saltSize)
        var password = password(for: pattern, pepper: pepper, backend: backend)
        defer { wipe(&password) }
        let hash = try PBKDF2.sha256(password: password, salt: salt, iterations: iterations, length: hashSize, backend: backend)
        return Credential(iterations: iterations, salt: salt, hash: hash)
    }

    /// True when `pattern` is the one this credential was made from. Constant-time compare.
    public func matches(_ pattern: Pattern, pepper: Pepper, backend: SHA256Backend = .default) -> Bool {
        var password = Credential.password(for: pattern, pepper: pepper, backend: backend)
        defer { wipe(&password) }
        guard
            var candidate = try? PBKDF2.sha256(
                password: password, salt: salt, iterations: iterations,
                length: hash.count, backend: backend)
        else { return false }
        defer { wipe(&candidate) }
        return constantTimeEquals(candidate, hash)
    }
}

/// The 32-byte secret key mixed into every credential. Its bytes never leave memory.
public struct Pepper: Sendable {
    public static let size = 32
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Pepper.size else { return nil }
        self.bytes = bytes
    }
}
