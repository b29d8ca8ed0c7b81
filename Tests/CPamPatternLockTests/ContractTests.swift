// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import Testing
import TestSupport

/// The module's reply parser and user-name rule against the shared corpus in
/// Tests/Contract, every line of it.
@Suite("The contract: replies and user names")
struct ContractTests {
    static let replies = ContractFiles.recordsOrNone("replies.txt")
    static let users = ContractFiles.recordsOrNone("users.txt")

    @Test("the corpus files load, and hold the cases that matter")
    func corpusLoads() throws {
        let replies = try ContractFiles.records("replies.txt")
        let users = try ContractFiles.records("users.txt")
        #expect(replies.count >= 100)
        #expect(users.count >= 30)
        let lines = Set(replies.map(\.key))
        for tricky in [
            "FAIL reaining=2 remaining=2", "FAIL remaining=3 remaining=2", "ERROR message=%4",
            "ERROR message=x\\{4082}", "OK\\x00", "OK\\x0D", "ERROR message=\\xC3\\xA9",
            "FAIL remaining=2147483647", "FAIL remaining=12345678901",
        ] {
            #expect(lines.contains(tricky), "replies.txt lacks \(tricky)")
        }
        #expect(replies.contains { $0.value == "reject" } && replies.contains { $0.value != "reject" })
        #expect(users.contains { $0.value == "valid" } && users.contains { $0.value == "invalid" })
    }

    @Test(
        "the escapes of the corpus",
        arguments: [
            ("OK", [UInt8]("OK".utf8)), ("\\\\", [0x5C]), ("a\\nb", [0x61, 0x0A, 0x62]), ("\\x00\\xC3", [0x00, 0xC3]),
            ("x\\{3}", [0x78, 0x78, 0x78]), ("\\x20\\{2}!", [0x20, 0x20, 0x21]), ("", []),
        ])
    func escapes(text: String, bytes: [UInt8]) throws {
        #expect(try ContractFiles.unescape(text) == bytes)
    }

    @Test("a malformed escape is an error, not a guess", arguments: ["\\", "\\q", "\\x4", "\\xZZ", "\\{3}", "a\\{x}", "a\\{0}"])
    func badEscapes(text: String) {
        #expect(throws: ContractFiles.FormatError.self) { try ContractFiles.unescape(text) }
    }

    @Test("the module reads each reply line as the corpus says", arguments: replies)
    func reply(record: ContractFiles.Record) throws {
        let bytes = try ContractFiles.unescape(record.key)
        let expected = try ExpectedReply(record.value)
        var reply = pl_reply()
        reply.verb = PL_VERB_OK  // a refused line must not leave this behind
        let rc = bytes.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { pl_parse_reply($0.baseAddress, $0.count, &reply) }
        }
        guard let expected else {
            #expect(rc == -1, "accepted a line the contract refuses")
            #expect(reply.verb == PL_VERB_NONE)
            return
        }
        try #require(rc == 0, "refused a line the contract accepts")
        #expect(reply.verb == expected.verb)
        #expect(reply.remaining == expected.remaining)
        #expect(reply.retry_after == expected.retryAfter)
        #expect(reply.reason == expected.reason)
        #expect(reply.enrolled == expected.enrolled)
        #expect(reply.locked == expected.locked)
        #expect(reply.weak == expected.weak)
    }

    @Test("user names as the corpus says", arguments: users)
    func userName(record: ContractFiles.Record) throws {
        let name = try ContractFiles.unescape(record.key)
        try #require(!name.contains(0), "a C string cannot hold a NUL")
        try #require(["valid", "invalid"].contains(record.value), "neither valid nor invalid")
        let cString = name.map { CChar(bitPattern: $0) } + [0]
        #expect(pl_user_name_valid(cString) == (record.value == "valid"))
    }
}

/// A parse as replies.txt writes it, as the C struct holds it: absent fields
/// take the struct's defaults. nil for `reject`.
struct ExpectedReply {
    var verb = PL_VERB_NONE
    var remaining = -1
    var retryAfter = 0
    var reason = PL_REASON_NONE
    var enrolled: Int32 = -1
    var locked: Int32 = -1
    var weak: Int32 = 0

    /// The test's own word tables, not the module's: a misspelt word in wire.c
    /// must not be read back by the same misspelling.
    static let verbs: [String: pl_verb] = [
        "OK": PL_VERB_OK, "FAIL": PL_VERB_FAIL, "LOCKED": PL_VERB_LOCKED, "NOT_ENROLLED": PL_VERB_NOT_ENROLLED,
        "INVALID": PL_VERB_INVALID, "DENIED": PL_VERB_DENIED, "BUSY": PL_VERB_BUSY, "ERROR": PL_VERB_ERROR,
        "STATUS": PL_VERB_STATUS,
    ]
    static let reasons: [String: pl_reason] = [
        "empty": PL_REASON_EMPTY, "not_a_dot": PL_REASON_NOT_A_DOT, "repeated_dot": PL_REASON_REPEATED_DOT,
        "too_short": PL_REASON_TOO_SHORT, "current_required": PL_REASON_CURRENT_REQUIRED,
    ]
    static let order = ["verb", "remaining", "retry_after", "reason", "enrolled", "locked", "weak"]

    init?(_ text: String) throws {
        if text == "reject" { return nil }
        func bad(_ why: String) -> ContractFiles.FormatError {
            ContractFiles.FormatError(description: "parse \"\(text)\": \(why)")
        }
        var last = -1
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let position = Self.order.firstIndex(of: String(parts[0])) else {
                throw bad("\(word) is not a known key=value")
            }
            guard position > last else { throw bad("\(parts[0]) out of order or repeated") }
            last = position
            let value = String(parts[1])
            switch parts[0] {
            case "verb":
                guard let v = Self.verbs[value] else { throw bad("unknown verb \(value)") }
                verb = v
            case "remaining":
                guard let n = Int(value) else { throw bad("remaining \(value)") }
                remaining = n
            case "retry_after":
                guard let n = Int(value) else { throw bad("retry_after \(value)") }
                retryAfter = n
            case "reason":
                reason = Self.reasons[value] ?? PL_REASON_OTHER
            case "enrolled", "locked", "weak":
                guard let n = Int32(value), n == 0 || n == 1 else { throw bad("\(parts[0]) \(value)") }
                switch parts[0] {
                case "enrolled": enrolled = n
                case "locked": locked = n
                default: weak = n
                }
            default:
                break
            }
        }
        guard last >= 0, verb != PL_VERB_NONE else { throw bad("no verb first") }
    }
}
