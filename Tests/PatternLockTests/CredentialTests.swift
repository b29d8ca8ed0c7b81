// SPDX-License-Identifier: Apache-2.0
import Testing
import PatternLock

@Suite("Credentials and records")
struct CredentialTests {
    @Test("A credential verifies its pattern only, and round-trips as a PHC string")
    func roundTrip() throws {
        let p = try Pattern(typed: "1397")
        let c = try Credential.make(pattern: p, pepper: testPepper, iterations: Credential.minimumIterations)
        #expect(c.phc.hasPrefix("$pbkdf2-sha256$i=600000$"))
        #expect(!c.phc.split(separator: "$").suffix(2).joined().contains("="), "no base64 padding")
        #expect(c.salt.count == 16 && c.hash.count == 32)
        let parsed = try Credential(phc: c.phc)
        #expect(parsed == c)
        #expect(parsed.matches(p, pepper: testPepper))
        #expect(parsed.matches(try Pattern(typed: "1236987"), pepper: testPepper), "typed forms normalize alike")
        #expect(!parsed.matches(try Pattern(typed: "1235"), pepper: testPepper))
        let otherPepper = Pepper(bytes: [UInt8](repeating: 8, count: 32))!
        #expect(!parsed.matches(p, pepper: otherPepper), "the pepper is part of the hash")
    }

    @Test("The hash is PBKDF2 over HMAC(pepper, digits), as documented")
    func construction() throws {
        let p = try Pattern(typed: "1235")
        let c = try Credential.make(pattern: p, pepper: testPepper, iterations: 600_000)
        let password = HMACSHA256.authenticate(Array("1235".utf8), key: testPepper.bytes)
        #expect(try PBKDF2.sha256(password: password, salt: c.salt, iterations: 600_000) == c.hash)
    }

    @Test("Two enrollments of one pattern get different salts")
    func salts() throws {
        let p = try Pattern(typed: "7415963")
        let a = try Credential.make(pattern: p, pepper: testPepper, iterations: 600_000)
        let b = try Credential.make(pattern: p, pepper: testPepper, iterations: 600_000)
        #expect(a.salt != b.salt && a.hash != b.hash)
    }

    @Test(
        "Malformed PHC strings are refused",
        arguments: [
            "", "$pbkdf2-sha256$i=600000$c2FsdHNhbHRzYWx0$", "$pbkdf2-sha1$i=1$c2FsdHNhbHQ$AAAA",
            "$pbkdf2-sha256$i=0$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ",
            "$pbkdf2-sha256$i=0600000$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ",
            "$pbkdf2-sha256$i=600000$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ=",
            "$pbkdf2-sha256$i=600000$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMR",
            "$pbkdf2-sha256$i=600000$c2Fs dHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ",
            "$pbkdf2-sha256$i=600000$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ$x",
            "$pbkdf2-sha256$i=600000,o=AAAA$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ",
            "$pbkdf2-sha256$i=600000,x=oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ",
            "$pbkdf2-sha256$o=oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ,i=600000$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ",
        ])
    func malformed(phc: String) {
        #expect(throws: Credential.ParseError.self) { try Credential(phc: phc) }
    }

    @Test("The owner tag names the user, the uid and the key; it round-trips and leaves the hash alone")
    func ownerTag() throws {
        let plain = try Credential.make(pattern: Pattern(typed: "1397"), pepper: testPepper, iterations: 600_000)
        #expect(plain.ownerTag == nil)
        #expect(plain.isBound(user: "alice", uid: 1000, pepper: testPepper) == nil)
        let tagged = plain.bound(user: "alice", uid: 1000, pepper: testPepper)
        #expect(tagged.hash == plain.hash && tagged.salt == plain.salt)
        #expect(try Credential(phc: tagged.phc) == tagged)
        #expect(tagged.phc.hasPrefix("$pbkdf2-sha256$i=600000,o="))
        #expect(tagged.isBound(user: "alice", uid: 1000, pepper: testPepper) == true)
        #expect(tagged.isBound(user: "bob", uid: 1000, pepper: testPepper) == false)
        #expect(tagged.isBound(user: "alice", uid: 0, pepper: testPepper) == false)
        let other = try #require(Pepper(bytes: [UInt8](repeating: 8, count: 32)))
        #expect(tagged.isBound(user: "alice", uid: 1000, pepper: other) == false)
        #expect(try tagged.matches(Pattern(typed: "1397"), pepper: testPepper))
        // The tag covers the iteration count: a row asking for more is not the owner's.
        let raised = Credential(iterations: 700_000, salt: tagged.salt, hash: tagged.hash, ownerTag: tagged.ownerTag)
        #expect(raised.isBound(user: "alice", uid: 1000, pepper: testPepper) == false)
    }

    @Test("A record round-trips; a damaged one is refused")
    func record() throws {
        let c = try Credential(phc: "$pbkdf2-sha256$i=600000$c2FsdHNhbHRzYWx0$oyxxfCUZHhT7bWsn2dkYke9U2bUK5fGM3rjPaOoGQMQ")
        let r = UserRecord(
            user: "alice", uid: 1000, credential: c, failures: 2, lockedSince: 0,
            recent: [FailureEntry(when: 10, uid: 1000, service: "sudo", tty: "pts/0", rhost: "a,b;c")])
        #expect(try UserRecord(serialized: r.serialized) == r)
        let text = r.serialized
        for damaged in [
            String(text.dropLast()), text.replacingOccurrences(of: "failures=2", with: "failures=-1"),
            text + "failures=3\n", text + "color=blue\n", "x" + text,
            text.replacingOccurrences(of: "user=alice", with: "user=../etc"),
        ] {
            #expect(throws: UserRecord.ParseError.self) { try UserRecord(serialized: damaged) }
        }
    }

    @Test("User names: what useradd and sssd make, nothing that leaves the directory")
    func userNames() {
        for ok in ["alice", "a", "bob.smith", "svc_web-1", "alice@example.com", "MACHINE$", String(repeating: "x", count: 64)] {
            #expect(UserName.isValid(ok), "\(ok)")
        }
        for bad in ["", "$", "..", "../etc", ".hidden", "-rf", "a/b", "a b", "a\u{0}b", "a$b", "é", String(repeating: "x", count: 65)] {
            #expect(!UserName.isValid(bad), "\(bad)")
        }
    }
}

import Foundation
