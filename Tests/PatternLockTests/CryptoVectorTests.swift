// SPDX-License-Identifier: Apache-2.0
import Testing
import PatternLock

struct SHA256Vector: Decodable { let comment: String; let message: String; let `repeat`: Int; let digest: String }
struct HMACVector: Decodable { let `case`: Int; let key: String; let data: String; let mac: String; let truncated: Bool? }
struct PBKDF2Vector: Decodable { let source: String; let password: String; let salt: String; let iterations: Int; let dk: String }

/// Every vector runs on every backend this CPU has (both on x86-64 with SHA-NI).
@Suite("Crypto vectors")
struct CryptoVectorTests {
    static let backends = SHA256Backend.available

    @Test("NIST SHA-256 examples", arguments: backends)
    func sha256(backend: SHA256Backend) throws {
        for v in try Vectors.load("sha256_nist.json", as: [SHA256Vector].self) {
            var h = SHA256(backend: backend)
            let chunk = Array(v.message.utf8)
            for _ in 0..<v.repeat { h.update(chunk) }
            #expect(hex(h.finalize()) == v.digest, "\(v.comment)")
        }
    }

    @Test("RFC 4231 HMAC-SHA256", arguments: backends)
    func hmac(backend: SHA256Backend) throws {
        for v in try Vectors.load("rfc-4231-HMAC-SHA256.json", as: [HMACVector].self) {
            let mac = HMACSHA256.authenticate(hex(v.data), key: hex(v.key), backend: backend)
            let got = v.truncated == true ? Array(mac.prefix(16)) : mac
            #expect(hex(got) == v.mac, "case \(v.case)")
        }
    }

    @Test("RFC 7914 §11 PBKDF2-HMAC-SHA256", arguments: backends)
    func rfc7914(backend: SHA256Backend) throws {
        try checkPBKDF2("rfc-7914-PBKDF2-SHA256.json", backend: backend)
    }

    @Test("PBKDF2-HMAC-SHA256 at 1, 2, 4096 and 16,777,216 iterations", arguments: backends)
    func common(backend: SHA256Backend) throws {
        try checkPBKDF2("pbkdf2-hmac-sha256-common.json", backend: backend)
    }

    func checkPBKDF2(_ file: String, backend: SHA256Backend) throws {
        for v in try Vectors.load(file, as: [PBKDF2Vector].self) {
            let dk = try PBKDF2.sha256(
                password: hex(v.password), salt: hex(v.salt), iterations: v.iterations,
                length: v.dk.count / 2, backend: backend)
            #expect(hex(dk) == v.dk, "\(v.source), \(v.iterations) iterations")
        }
    }

    @Test("The accelerated and portable backends agree on random inputs")
    func backendsAgree() throws {
        guard SHA256Backend.accelerated.isAvailable else { return }
        var rng = SystemRandomNumberGenerator()
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000] {
            let msg = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(SHA256.hash(msg, backend: .accelerated) == SHA256.hash(msg, backend: .portable))
        }
        for _ in 0..<50 {
            let pw = (0..<Int.random(in: 0...100)).map { _ in UInt8.random(in: 0...255) }
            let salt = (0..<Int.random(in: 0...40)).map { _ in UInt8.random(in: 0...255) }
            let n = Int.random(in: 1...300), len = Int.random(in: 1...80)
            #expect(
                try PBKDF2.sha256(password: pw, salt: salt, iterations: n, length: len, backend: .accelerated)
                    == PBKDF2.sha256(password: pw, salt: salt, iterations: n, length: len, backend: .portable))
        }
    }

    @Test("PBKDF2 refuses zero iterations and empty output")
    func pbkdf2Bounds() {
        #expect(throws: PBKDF2.Error.iterationsOutOfRange(0)) { try PBKDF2.sha256(password: [1], salt: [2], iterations: 0) }
        #expect(throws: PBKDF2.Error.lengthOutOfRange(0)) { try PBKDF2.sha256(password: [1], salt: [2], iterations: 1, length: 0) }
    }

    @Test("Constant-time compare")
    func compare() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([], []))
    }
}
