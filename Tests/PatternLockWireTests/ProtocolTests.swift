// SPDX-License-Identifier: Apache-2.0
import Testing
import PatternLock
import PatternLockWire

@Suite("Protocol lines")
struct ProtocolTests {
    @Test("Requests parse with percent-decoding")
    func parse() throws {
        let line = try Line(parsing: Array("VERIFY user=alice pattern=1397 service=sudo tty=%2Fdev%2Fpts%2F0 rhost= ruser=bob".utf8))
        #expect(
            try Request(line)
                == .verify(
                    user: "alice", pattern: "1397",
                    context: AttemptContext(service: "sudo", tty: "/dev/pts/0", rhost: "", ruser: "bob")))
        #expect(try Request(Line(parsing: Array("RESET all=1".utf8))) == .resetAll)
        #expect(try Request(Line(parsing: Array("PING".utf8))) == .ping)
    }

    @Test("The module's caller fields are optional on STATUS and VERIFY")
    func callerFields() throws {
        func request(_ text: String) throws -> Request { try Request(Line(parsing: Array(text.utf8))) }
        #expect(try request("STATUS user=alice") == .status(user: "alice", caller: nil))
        #expect(try request("STATUS user=alice caller=1001") == .status(user: "alice", caller: Caller(uid: 1001)))
        #expect(
            try request("STATUS user=alice caller=1001 session=4 seat=seat0")
                == .status(user: "alice", caller: Caller(uid: 1001, session: "4", seat: "seat0")))
        #expect(
            try request("VERIFY user=alice pattern=1397 service=polkit-1 tty= rhost= ruser=alice caller=1001 session=c2 seat=pts%2F3")
                == .verify(
                    user: "alice", pattern: "1397",
                    context: AttemptContext(
                        service: "polkit-1", ruser: "alice", caller: Caller(uid: 1001, session: "c2", seat: "pts/3"))))
    }

    @Test("A client's line is built as secret bytes, byte for byte the encoded line and its LF")
    func clientLineIsSecretBytes() throws {
        for request in [
            Request.enroll(user: "alice", pattern: "1397", current: SecretBytes("74 5%"), iterations: nil),
            Request.check(pattern: "2761834"), Request.status(user: "bob"), Request.ping,
        ] {
            let bytes = request.line.encodedLine()
            #expect(bytes.withUnsafeBytes { Array($0) } == Array((request.line.encoded() + "\n").utf8))
            #expect(try Request(try Line(parsing: bytes.withUnsafeBytes { Array($0.dropLast()) })) == request)
        }
    }

    @Test("A pattern is parsed into secret bytes, never a string field")
    func patternsAreSecret() throws {
        let line = try Line(parsing: Array("ENROLL user=alice pattern=%31%33%39%37 current=7415".utf8))
        #expect(line["pattern"] == nil && line["current"] == nil)
        #expect(line.secret("pattern") == "1397" && line.secret("current") == "7415")
        #expect(line.keys == ["user", "pattern", "current"])
        #expect(!"\(SecretBytes("1397"))".contains("1397"), "a secret never prints its bytes")
        #expect(throws: Line.ParseError.malformed(.badEncoding)) { try Line(parsing: Array("VERIFY pattern=%FF".utf8)) }
    }

    @Test(
        "Malformed requests say why",
        arguments: [
            ("verify user=a pattern=1", "bad_verb"), ("VERIFY user=alice", "missing_pattern"),
            ("VERIFY user=alice pattern=1234 colour=red", "unknown_key"), ("STATUS user=alice user=bob", "duplicate_key"),
            ("STATUS user=%zz", "bad_encoding"), ("STATUS user=..%2Fetc", "bad_user"), ("FLY user=a", "unknown_verb"),
            ("STATUS  user=a", "bad_field"), ("STATUS user=a\r", "carriage_return"), ("", "bad_verb"),
            ("ENROLL user=a pattern=1234 iterations=1e6", "bad_iterations"), ("RESET all=yes", "bad_all"),
            ("STATUS user=a caller=-1", "bad_caller"), ("STATUS user=a caller=4294967296", "bad_caller"),
            ("STATUS user=a caller=01001", "bad_caller"), ("STATUS user=a caller=", "bad_caller"),
            ("VERIFY user=a pattern=1234 session=4", "bad_caller"), ("STATUS user=a seat=seat0", "bad_caller"),
            ("ENROLL user=a pattern=1234 caller=1000", "unknown_key"), ("STATUS user=a caller=1 colour=red", "unknown_key"),
        ])
    func malformed(text: String, message: String) {
        do {
            _ = try Request(try Line(parsing: Array(text.utf8)))
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code.rawValue == message)
            #expect(!error.closesConnection)
        }
    }

    @Test("Framing errors close the connection")
    func framing() {
        #expect(throws: Line.ParseError.tooLong) { try Line(parsing: [UInt8](repeating: 0x41, count: 1024)) }
        #expect(throws: Line.ParseError.nulByte) { try Line(parsing: Array("PING\u{0}".utf8)) }
        #expect(throws: Line.ParseError.notUTF8) { try Line(parsing: [0x50, 0xff]) }
    }

    @Test("Requests and replies round-trip")
    func roundTrip() throws {
        let requests: [Request] = [
            .ping, .status(user: "a"), .status(user: "a", caller: Caller(uid: 0)),
            .status(user: "a", caller: Caller(uid: 1001, session: "4", seat: "seat0")),
            .verify(user: "a", pattern: "12 34=%", context: AttemptContext(service: "s s", tty: "t/1", rhost: "h", ruser: "")),
            .verify(
                user: "a", pattern: "1234",
                context: AttemptContext(service: "sudo", caller: Caller(uid: 1001, session: "c1", seat: "pts/0"))),
            .enroll(user: "a", pattern: "1234", current: "9876", iterations: 700_000),
            .enroll(user: "a", pattern: "1234", current: nil, iterations: nil),
            .remove(user: "a", current: "1234"), .reset(user: "a"), .resetAll, .list,
            .check(pattern: "2586"),
        ]
        for r in requests { #expect(try Request(Line(parsing: Array(r.line.encoded().utf8))) == r) }
        let status = UserStatus(
            user: "alice", enrolled: true, failures: 2, remaining: 3, iterations: 600_000,
            recent: [
                FailureEntry(when: 5, uid: 1000, service: "su,do;x", tty: "pts/0", rhost: ""),
                FailureEntry(when: 6, uid: 0),
                FailureEntry(when: 7, uid: 0, service: "polkit-1", ruser: "alice", caller: 1001, session: "4", seat: "seat0"),
                FailureEntry(when: 8, uid: 0, service: "sudo", host: "hostb", caller: 0, session: "", seat: "pts/1,;"),
            ])
        let replies: [Reply] = [
            .ok, .okIterations(600_000), .okCount(3), .fail(remaining: 0), .locked(retryAfter: 30),
            .notEnrolled, .invalid(.tooShort), .denied, .busy, .error(.storeUnavailable), .pong,
            .status(status), .status(UserStatus(user: "bob")), .user("carol"), .end,
        ]
        for r in replies { #expect(Reply(line: r.line) == r, "\(r.line)") }
    }

    @Test(
        "The reply parser is strict",
        arguments: [
            "OKAY", "OK ", "OK x=1", "FAIL remaining=abc", "FAIL remaining=-1",
            "FAIL", "LOCKED", "ok", "OK\u{0}", "FAIL remaining=01",
        ])
    func strictReplies(text: String) {
        #expect(Reply(line: text) == nil)
    }
}

@Suite("A first pattern without a password proof")
struct PasswordProofWordingTests {
    @Test(
        "Each refusal is an ERROR line the client reads back, and its sentence names the fix",
        arguments: [
            (ErrorCode.passwordProofRequired, "ERROR message=password_proof_required", "type your password when asked"),
            (.passwordProofUnavailable, "ERROR message=password_proof_unavailable", "run sudo patternlockd enroll"),
        ])
    func refusal(code: ErrorCode, line: String, fix: String) {
        #expect(Reply.error(code).line == line)
        #expect(Reply(line: line) == .error(code))
        let error = ClientWording.failure(for: .error(code), user: "bob")
        #expect(error.code == .denied)
        #expect(error.description.contains(fix), "\(error.description)")
        #expect(error.description.contains("patternlockd enroll bob"), "root's way is named: \(error.description)")
        #expect(error.description.contains("first pattern"))
    }

    @Test("The core's refusal is the wire's password_proof_required")
    func coreToWire() {
        #expect(ErrorCode(ServiceError.passwordProofRequired) == .passwordProofRequired)
        #expect(Reply(PatternService.Outcome.error(.passwordProofRequired)).line == "ERROR message=password_proof_required")
    }
}
