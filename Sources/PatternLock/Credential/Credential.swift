// SPDX-License-Identifier: Apache-2.0
/// A stored pattern credential: PBKDF2-HMAC-SHA256 over HMAC(pepper, pattern digits),
/// kept as the PHC string `$pbkdf2-sha256$i=<N>[,o=<owner tag>]$<salt>$<hash>`.
///
/// The owner tag binds the credential to the user name and uid it was enrolled
/// for: an HMAC under a key derived from the pepper over the name, the uid and the
/// rest of the credential. Whoever can write the records but does not hold the key
/// (a fleet's database role) cannot move a credential onto another user. Records
/// made before the tag existed have none and get one at their next success.
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
    /// The owner tag (`ownerTagSize` bytes), nil in a credential made before it existed.
    public let ownerTag: [UInt8]?
    public static let ownerTagSize = 32

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        public var description: String {
            switch self {
            case .malformed(let why): return "The stored credential is malformed: \(why)."
            }
        }
    }

    public init(iterations: Int, salt: [UInt8], hash: [UInt8], ownerTag: [UInt8]? = nil) {
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
        self.ownerTag = ownerTag
    }

    /// Parses a PHC string, strictly.
    public init(phc: String) throws(ParseError) {
        let parts = phc.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty else { throw .malformed("expected 4 fields") }
        guard parts[1] == "pbkdf2-sha256" else { throw .malformed("unknown algorithm") }
        let params = parts[2].split(separator: ",", omittingEmptySubsequences: false)
        guard params.count <= 2, params[0].hasPrefix("i="), let n = Int(params[0].dropFirst(2)),
            String(n) == params[0].dropFirst(2), n >= 1, n <= Credential.maximumIterations
        else { throw .malformed("bad iteration count") }
        var ownerTag: [UInt8]?
        if params.count == 2 {
            guard params[1].hasPrefix("o="), let tag = Base64.decode(params[1].dropFirst(2)),
                tag.count == Credential.ownerTagSize
            else { throw .malformed("bad owner tag") }
            ownerTag = tag
        }
        guard let salt = Base64.decode(parts[3]), salt.count >= 8, salt.count <= 64 else { throw .malformed("bad salt") }
        guard let hash = Base64.decode(parts[4]), hash.count == Credential.hashSize else { throw .malformed("bad hash") }
        self.init(iterations: n, salt: salt, hash: hash, ownerTag: ownerTag)
    }

    public var phc: String {
        let tag = ownerTag.map { ",o=\(Base64.encode($0))" } ?? ""
        return "$pbkdf2-sha256$i=\(iterations)\(tag)$\(Base64.encode(salt))$\(Base64.encode(hash))"
    }

    /// The same credential with the owner tag for `user` and `uid` under `pepper`.
    public func bound(user: String, uid: UInt32, pepper: Pepper, backend: SHA256Backend = .default) -> Credential {
        Credential(
            iterations: iterations, salt: salt, hash: hash,
            ownerTag: ownerTag(user: user, uid: uid, pepper: pepper, backend: backend))
    }

    /// Whether the owner tag says this credential is `user`'s with `uid`: nil when
    /// it has no tag (made before tags existed), false when the tag is another
    /// owner's or made under another key.
    public func isBound(user: String, uid: UInt32, pepper: Pepper, backend: SHA256Backend = .default) -> Bool? {
        guard let ownerTag else { return nil }
        return constantTimeEquals(ownerTag, self.ownerTag(user: user, uid: uid, pepper: pepper, backend: backend))
    }

    /// HMAC-SHA256 under a key of its own derived from the pepper, over the name,
    /// the uid and the credential without its tag, each field length-prefixed so
    /// that no two owners share an input.
    private func ownerTag(user: String, uid: UInt32, pepper: Pepper, backend: SHA256Backend) -> [UInt8] {
        var key = HMACSHA256.authenticate(Array("patternlock owner tag key v1".utf8), key: pepper.bytes, backend: backend)
        defer { wipe(&key) }
        var input: [UInt8] = Array("patternlock owner tag v1".utf8)
        let unbound = Credential(iterations: iterations, salt: salt, hash: hash).phc
        for field in [Array(user.utf8), Array(String(uid).utf8), Array(unbound.utf8)] {
            let n = UInt32(field.count)
            input += [UInt8(n >> 24), UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)]
            input += field
        }
        return HMACSHA256.authenticate(input, key: key, backend: backend)
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
